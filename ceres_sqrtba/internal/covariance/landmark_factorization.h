// The Jacobian of a bundle-adjustment problem at its current values, and
// each landmark's square-root factors: what every covariance of
// ceres_sqrtba::Covariance is computed from.
//
// The evaluator (evaluation/evaluator.h: cost functions in double, the loss
// correction when the loss is applied, manifolds' PlusJacobians) writes each
// residual block's rows compactly, [J_l | J_c1 | J_c2 ...] over the
// landmark's e tangent columns and those of the residual block's own
// variable cameras: a few dozen doubles per observation, whatever the track
// length. Per landmark l (the paper's nullspace marginalization, section
// 4.2), Householder reflections on its rows' J_l, stacked on sqrt(delta) I
// when a landmark damping delta > 0 is given (a prior of weight delta on
// every landmark coordinate: H_ll = J_l^T J_l + delta I, as COLMAP's
// covariance estimator damps its points; the paper's landmark damping with
// a fixed lambda), give
//
//   [J_l; sqrt(delta) I] = Q1 R,   R upper triangular (e x e),
//   W = Q1^T J_p = R^-T (J_l^T J_p)   (e x the group's camera columns),
//
// so that, with H = J^T J the Gauss-Newton matrix of the whole problem,
//
//   H_ll = R^T R,   H_lp = R^T W,   K_l = H_ll^-1 H_lp = R^-1 W,
//   S = sum_g (J_p^T J_p - W^T W)_g = sum_g (Q2^T J_p)^T (Q2^T J_p)
//
// (paper eqs. red_H and reduced), J_p^T J_p summed residual block by
// residual block (a residual block couples only its own cameras), as
// SQRT_SPARSE_SCHUR forms S from the projected storage
// (direct/reduced_camera_matrix.h). The dense reduced rows Q2^T J_p
// (rows x all the group's camera columns: quadratic in the track length)
// are never stored; products with the whole Jacobian (the null-space
// search's Rayleigh quotients) use the compact rows directly.
//
// Storage: one allocation for the compact rows, one for the R's and W's.
// Every group is factored by the thread of its chunk, independently, so the
// result does not depend on the number of threads.
#ifndef CERES_SQRTBA_INTERNAL_COVARIANCE_LANDMARK_FACTORIZATION_H_
#define CERES_SQRTBA_INTERNAL_COVARIANCE_LANDMARK_FACTORIZATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class LandmarkFactorization {
 public:
  // s: the structure whose residual blocks carry the loss functions to apply
  // (the caller removes them for apply_loss_function = false).
  // landmark_damping: delta >= 0 above (0: none). The products with J
  // (Times, TransposeTimes) are the undamped Jacobian's.
  LandmarkFactorization(const ProblemStructure& s, ParallelContext* context, double landmark_damping = 0.0);
  ~LandmarkFactorization();
  LandmarkFactorization(const LandmarkFactorization&) = delete;
  LandmarkFactorization& operator=(const LandmarkFactorization&) = delete;

  // Bytes Compute allocates: the blocks and the per-group offsets.
  static int64_t RequiredBytes(const ProblemStructure& s);

  // Evaluates the Jacobian at the user's current values and factors every
  // landmark. False, with the evaluator's message naming the block, when a
  // cost function or manifold fails. problem (optional): its evaluation
  // callback is told, as ceres::Problem::Evaluate tells it.
  bool Compute(const ceres::Problem* problem, std::string* error);

  const ProblemStructure& structure() const { return s_; }
  const WorkPartition& partition() const { return partition_; }

  int rows(int g) const { return s_.groups[g].num_rows; }
  int landmark_size(int g) const { return s_.groups[g].landmark_size; }
  int camera_columns(int g) const { return s_.groups[g].camera_columns; }
  // Column of group-camera entry `entry` (index into group_cameras) among
  // its group's camera columns.
  int column(int entry) const { return entry_column_[entry]; }
  // Group g's R (e x e, upper triangular) and W (e x camera_columns),
  // row-major.
  const double* r(int g) const { return factors_.get() + factor_offset_[g]; }
  const double* w(int g) const {
    return factors_.get() + factor_offset_[g] + static_cast<int64_t>(landmark_size(g)) * landmark_size(g);
  }

  // J_g x for the rows of group g: xl (e x p, the landmark's rows) and xc
  // (camera_columns x p, the group's camera rows) -> rows x p.
  Eigen::MatrixXd Times(int g, const Eigen::MatrixXd& xl, const Eigen::MatrixXd& xc) const;
  // J_g^T t: yl (e x p) and yc (camera_columns x p), overwritten.
  void TransposeTimes(int g, const Eigen::MatrixXd& t, Eigen::MatrixXd* yl, Eigen::MatrixXd* yc) const;

  // The landmark of group g has a numerically singular R: fewer rows than
  // its size, or a diagonal entry of R at or below the rank tolerance
  // (tolerance_scale x its largest column norm), as SuiteSparseQR's default
  // tolerance 20 (m + n) eps max ||J_j|| counts a column dead.
  bool LandmarkIsRankDeficient(int g) const { return deficient_[g] != 0; }
  // Leaves group g out of everything below (S, products): as if its
  // residual blocks were not in the problem. For undetermined landmarks.
  void Exclude(int g) { excluded_[g] = 1; }
  bool excluded(int g) const { return excluded_[g] != 0; }
  // The smallest |R_kk| of group g's landmark (infinity without one).
  double SmallestPivot(int g) const { return smallest_[g]; }
  // The largest Euclidean norm of a column of J (SuiteSparseQR's default
  // rank tolerance is a multiple of it).
  double max_column_norm() const { return max_column_norm_; }

  // S's values on `pattern` (reduced_camera_pattern.h; S built on this
  // structure), block column by block column in parallel, each block a sum
  // over the groups in group order; `values` holds pattern.num_nonzeros()
  // doubles.
  void AssembleReducedCameraMatrix(const ReducedCameraPattern& pattern, const std::vector<int64_t>& col_begin,
                                   double* values) const;

  // K_l = R^-1 W of group g into k (e x camera_columns, row-major).
  void Marginalization(int g, double* k) const;
  // R^-1 R^-T of group g into c (e x e, row-major): H_ll^-1.
  void LandmarkInverse(int g, double* c) const;

 private:
  class Writer;
  // Group g's residual blocks' rows: landmark(row, rows, J_l block) and, per
  // camera of the block, camera(row, rows, J_c block, its column among the
  // group's camera columns, its size).
  template <typename LandmarkFn, typename CameraFn>
  void VisitRows(int g, const LandmarkFn& landmark, const CameraFn& camera) const;
  const ProblemStructure& s_;
  ParallelContext* context_;
  double landmark_damping_ = 0.0;
  WorkPartition partition_;
  std::vector<int64_t> row_offset_;     // per residual block + 1, into values_
  std::vector<int> row_width_;          // per residual block: e + its cameras' columns
  std::vector<int64_t> factor_offset_;  // per group + 1, into factors_
  std::vector<int> entry_column_;       // per group_cameras entry, among the group's camera columns
  // Per residual_parameters entry: its column in the residual block's
  // compact rows (-1: constant), and its group_cameras entry (-1: the
  // landmark or constant).
  std::vector<int> parameter_column_, parameter_entry_;
  // Per group_cameras entry: the residual blocks of its group that touch it
  // (CSR: residual block index, and the slot of the camera among its
  // parameter blocks).
  std::vector<int64_t> entry_residual_begin_;
  std::vector<int> entry_residual_, entry_residual_slot_;
  std::vector<char> deficient_;      // per group
  std::vector<double> smallest_;     // per group
  std::vector<char> excluded_;       // per group
  double max_column_norm_ = 0.0;
  std::unique_ptr<double[]> values_;
  std::unique_ptr<double[]> factors_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COVARIANCE_LANDMARK_FACTORIZATION_H_
