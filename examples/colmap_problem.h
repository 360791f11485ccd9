// The bundle adjustment problem COLMAP's bundle adjuster builds from a model
// (src/colmap/estimators/bundle_adjustment_ceres.cc, current version), as a
// ceres::Problem for ceres_sqrtba::Solve or ceres::Solve:
//
// - one residual block of 2 values per observation (2D point of an image that
//   refers to a 3D point), on (point xyz, image pose, camera intrinsics), in
//   image id order and, within an image, in 2D point order; COLMAP's
//   projection for the camera's model, autodiff; residuals 0 when the point
//   is behind the camera (as COLMAP's cost functions do);
// - poses as one 7-vector block per image, camera from world: Eigen's
//   quaternion layout (x, y, z, w) then the translation, on
//   ProductManifold<EigenQuaternionManifold, EuclideanManifold<3>>. This is
//   what COLMAP uses since poses became Rigid3d parameter blocks (3.10 and
//   later; up to 3.8 it used separate (w, x, y, z) quaternion and translation
//   blocks);
// - one intrinsics block per camera, shared by the images that use it; the
//   groups not refined (focal length, principal point, extra parameters) held
//   on a SubsetManifold, the whole block constant when nothing is refined;
// - the loss (trivial, soft L1, Cauchy, Huber) with its scale on every
//   residual;
// - the gauge fixed as COLMAP's bundle_adjuster command does
//   (TWO_CAMS_FROM_WORLD): the first image (smallest id) held constant, and of
//   the next image, in id order, whose centre differs from the first's, the
//   translation coordinate with the largest baseline held fixed; without such
//   an image three linearly independent points are held constant instead;
// - observations of points whose track has fewer than 2 elements are left
//   out (COLMAP refuses such points in its bundle adjuster; here they are
//   skipped and the point is left as it is).
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

// COLMAP's BundleAdjustmentOptions, with its defaults.
struct ColmapBundleOptions {
  bool refine_focal_length = true;
  bool refine_principal_point = false;
  bool refine_extra_params = true;
  bool refine_extrinsics = true;
  ColmapLoss loss = ColmapLoss::kTrivial;
  double loss_scale = 1.0;
};

class ColmapProblem {
 public:
  // Builds *problem (empty, with Ceres' default ownership: it takes the cost
  // and loss functions) from *model, whose values are copied into this
  // object's parameter blocks. False with a message when there is nothing to
  // adjust.
  bool Build(const ColmapBundleOptions& options, const ColmapModel& model,
             ceres::Problem* problem, std::string* error);

  // The refined values into *model (the one Build was given): poses, camera
  // parameters, points, and each adjusted point's error (the mean
  // reprojection error of its track, as COLMAP updates it after a bundle
  // adjustment).
  void WriteBack(ColmapModel* model) const;

  // Points eliminated first (group 0), poses and cameras after (group 1).
  std::shared_ptr<ceres::ParameterBlockOrdering> PointsFirstOrdering() const;

  // The mean reprojection error (pixels) at the current values as COLMAP
  // reports it (Reconstruction::ComputeMeanReprojectionError): each point's
  // error is the mean over its observations of the distance between
  // projection and observed pixel, and this is the mean of the points'
  // errors, over the points in the problem. Observations whose point does not
  // project are counted in *not_projected (if given) and left out.
  double MeanReprojectionError(int64_t* not_projected = nullptr) const;

  int num_images() const { return num_images_; }
  int num_cameras() const { return num_cameras_; }
  int num_points() const { return num_points_; }
  int num_observations() const { return static_cast<int>(observations_.size()); }
  int skipped_observations() const { return skipped_observations_; }
  // Image ids whose pose is held fixed (wholly or in one coordinate) for the
  // gauge; empty when points were fixed instead (see fixed_points).
  const std::vector<uint32_t>& gauge_images() const { return gauge_images_; }
  int gauge_fixed_points() const { return gauge_fixed_points_; }

 private:
  struct Observation {
    int image;
    int camera;
    int point;
    double x;
    double y;
  };
  void FixGauge(const ColmapModel& model, ceres::Problem* problem);
  // Per point of the model: the sum and number of its observations'
  // reprojection errors.
  void PointErrors(std::vector<double>* sum, std::vector<int>* count,
                   int64_t* not_projected) const;

  std::vector<std::array<double, 7>> poses_;  // per image of the model
  std::vector<std::vector<double>> cameras_;  // per camera of the model
  std::vector<int> camera_models_;
  std::vector<std::array<double, 3>> points_;  // per 3D point of the model
  std::vector<char> image_used_, camera_used_, point_used_;
  std::vector<Observation> observations_;
  int num_images_ = 0;
  int num_cameras_ = 0;
  int num_points_ = 0;
  int skipped_observations_ = 0;
  std::vector<uint32_t> gauge_images_;
  int gauge_fixed_points_ = 0;
};

// A residual block's cost function for a camera model (null for an unknown
// one): the autodiff reprojection error of one observation on (point xyz,
// pose 7-vector, camera parameters).
ceres::CostFunction* CreateColmapReprojectionError(int model_id, double x, double y);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COLMAP_PROBLEM_H_
