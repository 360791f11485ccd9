#include "ceres_sqrtba/internal/direct/sqrt_sparse_schur_solver.h"

#include <algorithm>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
SqrtSparseSchurSolver<Scalar>::SqrtSparseSchurSolver(const ProblemStructure& s,
                                                     const ExplicitBlockLayout& layout,
                                                     const WorkPartition& partition,
                                                     ParallelContext* context,
                                                     const SqrtSparseSchurOptions& options)
    : s_(s),
      partition_(partition),
      context_(context),
      landmarks_(s, layout, partition, context),
      matrix_(s, layout),
      qr_(options.ordering),
      back_substitution_(s, layout, partition) {}

template <typename Scalar>
LinearSolverSummary SqrtSparseSchurSolver<Scalar>::Solve(const double* d, double /*eta*/,
                                                         double* y, double* jy_squared_norm) {
  // Landmark damping in the blocks; the pose damping goes straight into A's
  // last rows.
  landmarks_.MarginalizeAndDamp(d);
  if (!matrix_.Fill(landmarks_.blocks(), d + s_.camera_tangent_begin, partition_, context_)) {
    LinearSolverSummary summary;
    summary.termination = LinearSolverTermination::kFailure;
    summary.message = "The reduced camera system has an entry that is not finite.";
    return summary;
  }
  // y_p = argmin |A y_p - b|, straight into the camera part of y.
  LinearSolverSummary summary =
      qr_.Solve(matrix_.matrix(), matrix_.rhs(), y + s_.camera_tangent_begin);
  if (summary.termination == LinearSolverTermination::kSuccess) {
    VLOG(logged_statistics_ ? 2 : 1) << "SQRT_SPARSE_SCHUR: A is " << matrix_.num_rows() << " x "
                                     << matrix_.num_cols() << " with " << matrix_.num_nonzeros()
                                     << " nonzeros; " << qr_.Statistics();
    logged_statistics_ = true;
  }
  if (summary.termination != LinearSolverTermination::kSuccess) return summary;
  *jy_squared_norm = back_substitution_.Run(landmarks_.blocks(), d, y, context_);
  return summary;
}

template class SqrtSparseSchurSolver<float>;
template class SqrtSparseSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
