// Edits of a COLMAP model (colmap_model.h) for tests, benchmarks and
// make_colmap_scene: its scale, a perturbation of its values so that bundle
// adjustment has work to do, the points' stored errors, COLMAP 4's trivial
// rigs for a model without rigs, and the images' poses derived from frames
// and rigs.
#ifndef CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_EDITS_H_
#define CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_EDITS_H_

#include <cstdint>

#include "colmap_model.h"

namespace ceres_sqrtba {
namespace examples {

// The scene's scale: the median distance of the 3D points from their
// componentwise median (1 when there are none).
double ColmapSceneScale(const ColmapModel& model);

// Perturbs a model (its index built) so that bundle adjustment has work to
// do: points and camera centres (the frames' centres in a rig model, whose
// images' poses are then derived again; the rigs' calibration is kept) moved
// by 0.03 * ColmapSceneScale, rotations by 0.005 rad (centres kept before
// their own move), focal lengths scaled by
// 2 %, extra (distortion) parameters moved by 0.01 (OPENCV's tangential p1,
// p2 by 0.001); Gaussian, standard deviations, all times `perturbation`.
// Principal points are left as they are. Each point's ERROR is then updated.
void PerturbColmapModel(double perturbation, uint64_t seed, ColmapModel* model);

// Gives a model without rigs the rigs and frames COLMAP 4 reads it with
// (and writes for it): one rig per camera (rig id = camera id, the camera its
// reference sensor) and one frame per image (frame id = image id, its
// rig_from_world the image's pose). The model's index is built again.
void AddTrivialRigs(ColmapModel* model);

// Sets each point's ERROR to its track's mean reprojection error (pixels) at
// the model's values, as COLMAP stores it (index built).
void UpdateColmapPointErrors(ColmapModel* model);

// Every image's pose set to ColmapCamFromWorld (its frame's rig_from_world
// and its camera's sensor_from_rig), as COLMAP derives it; a rig model with
// its index built.
void DeriveColmapImagePoses(ColmapModel* model);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_EDITS_H_
