// The Jacobian of a bundle-adjustment problem at its current values in
// square-root form, landmark by landmark: what every covariance of
// ceres_sqrtba::Covariance is computed from.
//
// The evaluator (evaluation/evaluator.h: cost functions in double, the loss
// correction when the loss is applied, manifolds' PlusJacobians) writes the
// rows of each group (a landmark's residual blocks, or one landmark-free
// residual block) as one dense row-major block [Jl | Jc] over the landmark's
// e tangent columns and the tangent columns of the group's variable cameras
// (in ProblemStructure::group_cameras order). Householder reflections on the
// landmark columns, applied to the whole block in place (Q never formed; the
// paper's nullspace marginalization, section 4.2, without damping), turn it
// into
//
//   [ R  | W ]     e rows:   R upper triangular (e x e), W = Q1^T Jc
//   [ 0  | B ]     the rest: B = Q2^T Jc, the landmark's reduced rows,
//
// so that, with H = J^T J the Gauss-Newton matrix of the whole problem,
//
//   H_ll = R^T R,   H_lc = R^T W,   and the reduced camera matrix
//   S = H_cc - sum_l H_cl H_ll^-1 H_lc = sum_g B_g^T B_g
//
// (paper eqs. red_H and reduced; a landmark-free group contributes Jc^T Jc,
// its B being its whole Jc). S is accumulated from the B's, never as a
// difference of normal-equation terms. Per landmark, K_l = R^-1 W is the map
// from its cameras' values to its own in the marginalization: H_ll^-1 H_lc.
//
// Storage: one allocation for all blocks (rows x (e + camera columns) doubles
// per group, the Jacobian's values and no more); every group is factored by
// the thread of its chunk, independently, so the result does not depend on
// the number of threads.
#ifndef CERES_SQRTBA_INTERNAL_COVARIANCE_LANDMARK_FACTORIZATION_H_
#define CERES_SQRTBA_INTERNAL_COVARIANCE_LANDMARK_FACTORIZATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class LandmarkFactorization {
 public:
  // s: the structure whose residual blocks carry the loss functions to apply
  // (the caller removes them for apply_loss_function = false).
  LandmarkFactorization(const ProblemStructure& s, ParallelContext* context);
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

  // Group g's block after the QR: rows(g) x (e + camera_columns) row-major.
  const double* block(int g) const { return values_.get() + offset_[g]; }
  int rows(int g) const { return s_.groups[g].num_rows; }
  int landmark_size(int g) const { return s_.groups[g].landmark_size; }
  int stride(int g) const { return s_.groups[g].landmark_size + s_.groups[g].camera_columns; }
  // Column of group-camera entry `entry` (index into group_cameras) in its
  // group's block, the e landmark columns included.
  int column(int entry) const { return entry_column_[entry]; }

  // The landmark of group g has a numerically singular R: fewer rows than
  // its size, or a diagonal entry of R at or below the rank tolerance
  // (tolerance_scale x its largest column norm), as SuiteSparseQR's default
  // tolerance 20 (m + n) eps max ||J_j|| counts a column dead.
  bool LandmarkIsRankDeficient(int g) const { return deficient_[g] != 0; }
  // The largest Euclidean norm of a column of J (SuiteSparseQR's default
  // rank tolerance is a multiple of it).
  double max_column_norm() const { return max_column_norm_; }

  // S's values on `pattern` (reduced_camera_pattern.h; S built on this
  // structure) from the reduced rows, block column by block column in
  // parallel, each block a sum over the groups in group order; `values`
  // holds pattern.num_nonzeros() doubles.
  void AssembleReducedCameraMatrix(const ReducedCameraPattern& pattern, const std::vector<int64_t>& col_begin,
                                   double* values) const;

  // K_l = R^-1 W of group g into k (e x camera_columns, row-major).
  void Marginalization(int g, double* k) const;
  // R^-1 R^-T of group g into c (e x e, row-major): H_ll^-1.
  void LandmarkInverse(int g, double* c) const;

 private:
  class Writer;
  const ProblemStructure& s_;
  ParallelContext* context_;
  WorkPartition partition_;
  std::vector<int64_t> offset_;      // per group + 1, into values_
  std::vector<int> entry_column_;    // per group_cameras entry
  std::vector<int> parameter_column_;  // per residual_parameters entry, -1 if constant
  std::vector<char> deficient_;      // per group
  double max_column_norm_ = 0.0;
  std::unique_ptr<double[]> values_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COVARIANCE_LANDMARK_FACTORIZATION_H_
