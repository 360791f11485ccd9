#include "ceres_sqrtba/internal/solvers/sqrt_sparse_schur_solver.h"

#include <algorithm>
#include <cmath>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

LinearSolverSummary NotFinite(const char* what) {
  LinearSolverSummary summary;
  summary.termination = LinearSolverTermination::kFailure;
  summary.message = std::string("The reduced camera ") + what + " has an entry that is not finite.";
  return summary;
}

}  // namespace

template <typename Scalar>
SqrtSparseSchurSolver<Scalar>::SqrtSparseSchurSolver(const ProblemStructure& s, const ProjectedBlockLayout& layout,
                                                     const WorkPartition& partition, ParallelContext* context,
                                                     const CameraFactorizationPlan& plan)
    : s_(s),
      context_(context),
      blocks_(s, layout, partition, context, LandmarkQr::kBatchedInDouble),
      matrix_(s, layout, plan.pattern(), partition),
      cholesky_(plan.MakeCholesky(matrix_.col_begin(), matrix_.rows())),
      rhs_(s.num_camera_parameters) {}

template <typename Scalar>
JacobianWriter* SqrtSparseSchurSolver<Scalar>::writer() {
  blocks_.BeginJacobian();
  return &blocks_;
}

template <typename Scalar>
LinearSolverSummary SqrtSparseSchurSolver<Scalar>::Solve(const double* d, double /*eta*/, double* y,
                                                         double* jy_squared_norm) {
  typename ReducedCameraMatrix<Scalar>::RowsVisitor visitor(blocks_, &matrix_);
  blocks_.Damp(d, rhs_.data(), &visitor);
  if (!std::all_of(rhs_.begin(), rhs_.end(), [](double v) { return std::isfinite(v); })) {
    return NotFinite("right-hand side");
  }
  if (!matrix_.Accumulate(blocks_, d + s_.camera_tangent_begin, context_)) return NotFinite("matrix");
  LinearSolverSummary summary = cholesky_->Factorize(matrix_.values());
  if (summary.termination == LinearSolverTermination::kSuccess) {
    summary = cholesky_->Solve(rhs_.data(), y + s_.camera_tangent_begin);
  }
  summary = AgreeOnTermination(context_->processes(), summary);
  if (summary.termination != LinearSolverTermination::kSuccess) return summary;
  VLOG(logged_statistics_ ? 2 : 1) << "SQRT_SPARSE_SCHUR: " << cholesky_->Statistics();
  logged_statistics_ = true;
  *jy_squared_norm = blocks_.BackSubstitute(y);
  if (context_->processes() != nullptr) context_->processes()->Sum(jy_squared_norm, 1);
  return summary;
}

template class SqrtSparseSchurSolver<float>;
template class SqrtSparseSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
