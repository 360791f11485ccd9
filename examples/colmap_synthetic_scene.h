// A deterministic synthetic COLMAP model (the in-memory ColmapModel of
// colmap_model.h, so that WriteColmapModel saves it as text or binary) for
// testing and benchmarking colmap_bundle_adjuster at chosen sizes.
//
// Ground truth:
// - num_cameras physical cameras, the models taken in turn from OPENCV
//   (non-zero k1, k2, p1, p2), SIMPLE_RADIAL and PINHOLE, each with its own
//   image size, focal length(s), principal point and distortion;
// - num_images images, image i taken with camera i mod num_cameras, on poses
//   around the scene as a photo collection of a landmark has them: centres at
//   distance 2.5 to 5 from the origin, at azimuths drawn uniformly and
//   elevations of 0 to 35 degrees, each looking at a point near the origin
//   (jittered by 0.3), with a small roll;
// - points on a statue-like object (within 0.05 of the unit sphere, 70 %)
//   and on the ground around it (the plane z = -1 out to radius 3, 30 %):
//   ground points can lie behind an image's camera.
// Rigs (num_rigs > 0; a model with rig and frame files, as COLMAP 3.12+
// writes them): the cameras form num_rigs rigs, camera c in rig c mod
// num_rigs, the rig's first camera its reference sensor; the k-th further
// camera of a rig sits 0.12 * ceil(k / 2) to the right (odd k) or left (even
// k) of the reference camera and is turned by 20 * ceil(k / 2) degrees
// outwards about its vertical axis (its sensor_from_rig, the same in the
// truth and in the initial values: a known calibration). Frames are drawn
// as the legacy images' poses (the reference camera's pose is the frame's
// rig_from_world), rig f mod num_rigs for frame f, each with one image per
// camera of its rig, until there are at least num_images images; each
// image's pose is sensor_from_rig * rig_from_world.
// Tracks: each point gets a track length, drawn either from a heavy-tailed
// distribution (P(length >= k) = (min / k)^1.3 between min_track_length and
// max_track_length: most tracks are short, a few are hundreds long, as in
// real reconstructions) or uniformly in [min_track_length, max_track_length]
// (TrackLengths::kUniform, e.g. 100..300 for long tracks). The images that
// observe it are those, among the ones in whose image it lies (in front of the
// camera, inside the image, at most 45 degrees off the optical axis
// horizontally and vertically), whose
// direction from the point is closest to a jittered "visible side" of the
// point, so that nearby images share points as in a real capture; a point
// that fewer images see gets a shorter track, and one seen by fewer than 2 is
// not kept. Points are added until the model has num_observations
// observations (the last point may overshoot by less than a track).
// Observations: the true projection plus Gaussian pixel noise, kept only
// when it lies inside the image. Each image also has some 2D points without a
// 3D point (20 % of its observations), as COLMAP's images have.
// Initial values, what the model holds: the ground truth perturbed by
// PerturbColmapModel (below); principal points are exact (COLMAP does not
// refine them by default). Each point's
// ERROR is its track's mean reprojection error at those values.
//
// The same options give the same model on every platform (splitmix64).
#ifndef CERES_SQRTBA_EXAMPLES_COLMAP_SYNTHETIC_SCENE_H_
#define CERES_SQRTBA_EXAMPLES_COLMAP_SYNTHETIC_SCENE_H_

#include <cstdint>
#include <string>

#include "colmap_model.h"
#include "colmap_model_edits.h"  // PerturbColmapModel, UpdateColmapPointErrors, ...

namespace ceres_sqrtba {
namespace examples {

struct ColmapSceneOptions {
  enum class TrackLengths { kHeavyTailed, kUniform };

  // Observations (track elements) to reach.
  int64_t num_observations = 100000;
  // 0: from num_observations (DefaultNumImages).
  int num_images = 0;
  int num_cameras = 3;
  // 0: a legacy model (every image its own pose); > 0: this many rigs
  // (above), at most num_cameras.
  int num_rigs = 0;
  TrackLengths track_lengths = TrackLengths::kHeavyTailed;
  int min_track_length = 2;
  int max_track_length = 300;  // capped at the number of images
  double pixel_noise = 1.0;    // standard deviation, pixels
  double perturbation = 1.0;   // scale of the initial values' errors, 0..10
  uint64_t seed = 1;
  // Refuse options whose model needs more than this many bytes (plus
  // solve_bytes_per_observation per observation, for the caller's solve);
  // 0: ceres_sqrtba::AvailableMemoryInBytes().
  int64_t memory_limit_in_bytes = 0;
  int64_t solve_bytes_per_observation = 0;
};

// The long-track setting: every point observed by 100 to 300 images (drawn
// uniformly), 400 images or one per 2 500 observations, whichever is more.
void SetLongTracks(ColmapSceneOptions* options);

// The number of images used when num_images is 0: one per 700 observations
// (COLMAP models have hundreds to a few thousand observations per image), at
// least 2 (400 for long tracks, see SetLongTracks).
int DefaultNumImages(const ColmapSceneOptions& options);

// Checks the options; false with a message naming the problem.
bool ValidateColmapSceneOptions(const ColmapSceneOptions& options, std::string* error);

// Generates the model (ids from 1, index built). False with a message when
// the options are invalid or the images see too few points. When truth is not
// null it receives the same model with the true poses, intrinsics and points.
bool MakeColmapScene(const ColmapSceneOptions& options, ColmapModel* model,
                     std::string* error, ColmapModel* truth = nullptr);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COLMAP_SYNTHETIC_SCENE_H_
