// --covariance=poses|points|all of the examples: the covariances of the
// adjusted poses and points by ceres_sqrtba::Covariance after the solve,
// written beside the result in a documented text or binary format, and a
// summary line of the uncertainty of camera centres and points.
//
// Files (docs/covariance.md has the formats):
//   pose_covariances.txt / .bin    per pose: its id and the upper triangle,
//                                  row by row, of its covariance (k x k in
//                                  the convention the example states);
//   point_covariances.txt / .bin   per point: its id and the upper triangle
//                                  of its 3 x 3 covariance (xx xy xz yy yz zz).
// Binary: a uint64 record count, then per record the id (uint32 for poses,
// uint64 for points, as COLMAP's binary model files store them) and the
// doubles, little-endian.
//
// Summary: the standard deviation of each camera centre and point along its
// least certain direction (the square root of the largest eigenvalue of its
// 3 x 3 position covariance), median and worst, in scene units.
#ifndef CERES_SQRTBA_EXAMPLES_COVARIANCE_OUTPUT_H_
#define CERES_SQRTBA_EXAMPLES_COVARIANCE_OUTPUT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "ceres/ceres.h"
#include "ceres_sqrtba/covariance.h"

namespace ceres_sqrtba {
namespace examples {

enum class CovarianceSelection { kNone, kPoses, kPoints, kAll };

// "" or "none", "poses", "points", "all"; false with a message naming the flag.
bool ParseCovarianceSelection(const std::string& value, CovarianceSelection* selection, std::string* error);

struct CovarianceBlocks {
  std::vector<uint64_t> pose_ids;
  std::vector<const double*> poses;
  int pose_written_size = 0;
  // The written k x k pose covariance from the block's ambient covariance
  // (its values' size).
  std::function<Eigen::MatrixXd(const double* block, const Eigen::MatrixXd& ambient)> pose_written;
  // The camera centre of a pose block's values (its covariance comes from
  // this function's Jacobian by central differences).
  std::function<Eigen::Vector3d(const double* values)> centre;
  std::string pose_convention;  // one line for the text file's header
  std::vector<uint64_t> point_ids;
  std::vector<const double*> points;
};

// The pose conventions of the examples' blocks (pose_written, centre,
// pose_convention; the ids and blocks are the caller's):
//   COLMAP: a 7-vector cam_from_world [qx qy qz qw tx ty tz] (Eigen's
//     quaternion layout, as COLMAP stores it) -> 6 x 6 in the tangent space of
//     COLMAP's own manifold, [w, t] with q <- Exp(w) q (EigenQuaternionManifold,
//     a left perturbation) and t <- t + dt; a held coordinate gives zero rows;
//   BAL: a camera block [angle-axis r, t, f, k1, k2] (or with a quaternion
//     [qw qx qy qz] first, --use_quaternions) -> its covariance in the block's
//     tangent space (9 x 9).
void SetColmapPoseConvention(CovarianceBlocks* blocks);
void SetBalCameraConvention(bool quaternions, CovarianceBlocks* blocks);

// Computes the selected covariances on *problem at its current values,
// writes the files into `folder` and prints the summary. False with the
// reason (Covariance's own message when it fails).
bool WriteCovariances(ceres::Problem* problem, const Covariance::Options& options, CovarianceSelection selection,
                      const CovarianceBlocks& blocks, const std::string& folder, bool binary,
                      const std::string& program, std::string* error);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COVARIANCE_OUTPUT_H_
