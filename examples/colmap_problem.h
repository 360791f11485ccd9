// The bundle adjustment problem COLMAP 4.1.1's bundle adjuster builds from a
// model (src/colmap/estimators/bundle_adjustment_ceres.cc,
// DefaultBundleAdjuster with every image in the configuration and the gauge
// TWO_CAMS_FROM_WORLD, as `colmap bundle_adjuster` runs it), as a
// ceres::Problem for ceres_sqrtba::Solve or ceres::Solve:
//
// - one residual block of 2 values per observation (2D point of an image that
//   refers to a 3D point), in image id order and, within an image, in 2D
//   point order; COLMAP's projection for the camera's model, autodiff;
//   residuals 0 when the point is behind the camera (as COLMAP's cost
//   functions do). An image that is its frame's reference sensor (every image
//   of a legacy model) has its block on (point xyz, rig_from_world, camera
//   intrinsics); any other on (point xyz, sensor_from_rig, rig_from_world,
//   intrinsics), cam_from_world = sensor_from_rig * rig_from_world, or, when
//   sensor_from_rig is not refined, on (point xyz, rig_from_world,
//   intrinsics) with sensor_from_rig a constant of the cost function;
// - poses as 7-vector blocks: Eigen's quaternion layout (x, y, z, w) then the
//   translation, on ProductManifold<EigenQuaternionManifold,
//   EuclideanManifold<3>>, normalized first: one rig_from_world per frame
//   (per image in a legacy model, whose frames are its images, as COLMAP
//   reads such a model) and one sensor_from_rig per non-reference sensor of
//   a rig (shared by the rig's frames); rig_from_world constant when not
//   refined (refine_rig_from_world, COLMAP 3's refine_extrinsics), its
//   rotation constant with constant_rig_from_world_rotation; the
//   sensor_from_rig of a rig whose reference sensor has no image in the
//   problem held constant (otherwise the rig's pose and its sensors' would be
//   free together);
// - one intrinsics block per camera, shared by the images that use it; the
//   groups not refined (focal length, principal point, extra parameters) held
//   on a SubsetManifold, the whole block constant when nothing is refined;
// - points constant when not refined (refine_points3D); observations of
//   points whose track is shorter than min_track_length (when > 0) left out,
//   and so are those of points whose track has fewer than 2 elements (COLMAP
//   refuses such points in its bundle adjuster; here they are skipped and the
//   point is left as it is);
// - the loss (trivial, soft L1, Cauchy, Huber) with its scale on every
//   residual;
// - the gauge fixed as COLMAP 4.1.1 does (TWO_CAMS_FROM_WORLD, when
//   rig_from_world is refined): of the images in id order, the first whose
//   sensor pose is fixed (a reference sensor, or sensor_from_rig constant)
//   gives the frame held constant; of the later such images in another
//   frame, the first whose frame's baseline (the translation of
//   frame1_from_frame2) has a coordinate above 1e-9 gives the frame whose
//   translation coordinate with the largest baseline is held fixed; without
//   such an image three linearly independent points are held constant.
#ifndef CERES_SQRTBA_EXAMPLES_COLMAP_PROBLEM_H_
#define CERES_SQRTBA_EXAMPLES_COLMAP_PROBLEM_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "colmap_model.h"

namespace ceres_sqrtba {
namespace examples {

enum class ColmapLoss { kTrivial, kSoftL1, kCauchy, kHuber };

// "TRIVIAL", "SOFT_L1", "CAUCHY", "HUBER" (case-insensitive).
bool StringToColmapLoss(const std::string& name, ColmapLoss* loss);

// COLMAP 4.1.1's BundleAdjustmentOptions (and CeresBundleAdjustmentOptions'
// loss), with its defaults.
struct ColmapBundleOptions {
  bool refine_focal_length = true;
  bool refine_principal_point = false;
  bool refine_extra_params = true;
  bool refine_rig_from_world = true;  // COLMAP 3: refine_extrinsics
  bool refine_sensor_from_rig = true;
  bool refine_points3D = true;
  bool constant_rig_from_world_rotation = false;
  int min_track_length = 0;  // 0: every track of 2 or more
  ColmapLoss loss = ColmapLoss::kTrivial;
  double loss_scale = 1.0;
  // The residuals built with ceres_sqrtba::AutoDiffCostFunction, whose
  // Jacobians a single precision square-root solve evaluates in float;
  // false: ceres::AutoDiffCostFunction.
  bool float_jacobians = true;
  // Under mpirun (docs/distributed.md): the rank of each 3D point of the
  // model (model order) and this process's rank. The problem then holds this
  // rank's points with all their residual blocks, and every camera-side
  // block the whole problem uses, with the same manifolds and constness on
  // every rank; everything else (the counts, the gauge, the statistics) is
  // the whole problem's. nullptr: one process, every point.
  const std::vector<int>* point_rank = nullptr;
  int rank = 0;
};

class ColmapProblem {
 public:
  // Builds *problem (empty, with Ceres' default ownership: it takes the cost
  // and loss functions) from *model, whose values are copied into this
  // object's parameter blocks. False with a message when there is nothing to
  // adjust.
  bool Build(const ColmapBundleOptions& options, const ColmapModel& model,
             ceres::Problem* problem, std::string* error);

  // The refined values into *model (the one Build was given): the frames'
  // rig_from_world and the rigs' sensor_from_rig (rig model) and every
  // image's pose (derived from them, or the image's own in a legacy model),
  // camera parameters, points, and each adjusted point's error (the mean
  // reprojection error of its track, as COLMAP updates it after a bundle
  // adjustment).
  void WriteBack(ColmapModel* model) const;

  // Points eliminated first (group 0), poses and cameras after (group 1):
  // the points of this rank's problem.
  std::shared_ptr<ceres::ParameterBlockOrdering> PointsFirstOrdering() const;

  // The camera-side blocks of the problem (frames' rig_from_world, sensors'
  // sensor_from_rig, cameras' intrinsics), in that order: the same list on
  // every rank (SolveDistributed's camera_blocks).
  std::vector<double*> CameraBlocks();

  // The values of 3D point p (model order): 3 doubles, those of points p, p
  // + 1, ... following (BroadcastLandmarkShares).
  double* mutable_point(int p) { return points_[p].data(); }

  // The mean reprojection error (pixels) at the current values as COLMAP
  // reports it (Reconstruction::ComputeMeanReprojectionError): each point's
  // error is the mean over its observations of the distance between
  // projection and observed pixel, and this is the mean of the points'
  // errors, over the points in the problem. Observations whose point does not
  // project are counted in *not_projected (if given) and left out.
  double MeanReprojectionError(int64_t* not_projected = nullptr) const;

  // The pose blocks whose covariance is an image's cam_from_world: per
  // adjusted image of a reference sensor (every image of a legacy model) its
  // id and its frame's rig_from_world block (which is its cam_from_world);
  // images of other sensors compose two blocks and are left out. And the
  // adjusted points with their ids.
  void ImagePoseBlocks(const ColmapModel& model, std::vector<uint64_t>* ids,
                       std::vector<const double*>* blocks) const;
  void PointBlocks(const ColmapModel& model, std::vector<uint64_t>* ids,
                   std::vector<const double*>* blocks) const;

  int num_images() const { return num_images_; }
  // Frames (rig_from_world blocks) and sensor_from_rig blocks in the
  // problem; a legacy model's frames are its images, and it has no sensor
  // blocks.
  int num_frames() const { return num_frames_; }
  int num_sensor_poses() const { return num_sensor_poses_; }
  int num_cameras() const { return num_cameras_; }
  int num_points() const { return num_points_; }
  int num_observations() const { return static_cast<int>(observations_.size()); }
  int skipped_observations() const { return skipped_observations_; }
  // Image ids whose frame's pose is held fixed (wholly or in one coordinate)
  // for the gauge, and those frames' ids (the images' own ids in a legacy
  // model); empty when points were fixed instead (see gauge_fixed_points).
  const std::vector<uint32_t>& gauge_images() const { return gauge_images_; }
  const std::vector<uint32_t>& gauge_frames() const { return gauge_frames_; }
  int gauge_fixed_points() const { return gauge_fixed_points_; }

 private:
  struct Observation {
    int image;
    int camera;
    int point;
    double x;
    double y;
  };
  void FixGauge(const ColmapModel& model, const ColmapBundleOptions& options,
                ceres::Problem* problem);
  // cam_from_world of observation o's image at the current values, Eigen
  // layout.
  std::array<double, 7> CamFromWorld(int image) const;
  // Per point of the model: the sum and number of its observations'
  // reprojection errors.
  void PointErrors(std::vector<double>* sum, std::vector<int>* count,
                   int64_t* not_projected) const;

  // rig_from_world per frame of the model (per image of a legacy model).
  std::vector<std::array<double, 7>> frame_poses_;
  // sensor_from_rig per non-reference sensor of each rig, rig by rig.
  std::vector<std::array<double, 7>> sensor_poses_;
  std::vector<int> image_frame_;   // per image: its index in frame_poses_
  std::vector<int> image_sensor_;  // per image: its index in sensor_poses_, -1 reference
  std::vector<int> sensor_rig_;    // per sensor pose: its rig's index
  std::vector<char> frame_used_, sensor_used_;
  std::vector<std::vector<double>> cameras_;  // per camera of the model
  std::vector<int> camera_models_;
  std::vector<std::array<double, 3>> points_;  // per 3D point of the model
  std::vector<char> image_used_, camera_used_, point_used_;
  std::vector<Observation> observations_;
  int num_images_ = 0;
  int num_frames_ = 0;
  int num_sensor_poses_ = 0;
  bool rig_model_ = false;
  int num_cameras_ = 0;
  int num_points_ = 0;
  int skipped_observations_ = 0;
  bool OwnsPoint(int p) const {
    return point_rank_ == nullptr || (*point_rank_)[p] == rank_;
  }
  const std::vector<int>* point_rank_ = nullptr;
  int rank_ = 0;
  std::vector<uint32_t> gauge_images_;
  std::vector<uint32_t> gauge_frames_;
  int gauge_fixed_points_ = 0;
};

// A residual block's cost function for a camera model (null for an unknown
// one): the autodiff reprojection error of one observation on (point xyz,
// pose 7-vector, camera parameters); float_jacobians as in
// ColmapBundleOptions.
ceres::CostFunction* CreateColmapReprojectionError(int model_id, double x, double y,
                                                   bool float_jacobians = true);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COLMAP_PROBLEM_H_
