#include "ceres_sqrtba/internal/direct/dense_cholesky.h"

#include <cstdio>

#include <Eigen/Cholesky>

namespace ceres_sqrtba {
namespace internal {

DenseCameraCholesky::DenseCameraCholesky(const ReducedCameraPattern& pattern, const int64_t* col_begin,
                                         const int64_t* rows)
    : pattern_(pattern),
      col_begin_(col_begin),
      rows_(rows),
      factor_(pattern.num_parameters(), pattern.num_parameters()) {}

int64_t DenseCameraCholesky::RequiredBytes(const ReducedCameraPattern& pattern) {
  const int64_t n = pattern.num_parameters();
  return n * n * static_cast<int64_t>(sizeof(double));
}

LinearSolverSummary DenseCameraCholesky::Factorize(const double* values) {
  const int n = pattern_.num_parameters();
  // S's upper triangle, column j = rows i <= j, goes to the lower triangle
  // (row j), which the in-place LLT overwrites with L (S = L L^T).
  for (int j = 0; j < n; ++j) {
    factor_.col(j).tail(n - j).setZero();
  }
  for (int j = 0; j < n; ++j) {
    for (int64_t k = col_begin_[j]; k < col_begin_[j + 1]; ++k) factor_(j, rows_[k]) = values[k];
  }
  LinearSolverSummary summary;
  summary.num_iterations = 1;
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>, Eigen::Lower> llt(factor_);
  factorized_ = llt.info() == Eigen::Success;
  if (!factorized_) {
    summary.termination = LinearSolverTermination::kFailure;
    summary.message = "The reduced camera matrix is not positive definite (Eigen's LLT).";
    return summary;
  }
  summary.termination = LinearSolverTermination::kSuccess;
  return summary;
}

LinearSolverSummary DenseCameraCholesky::Solve(const double* b, double* x) {
  LinearSolverSummary summary;
  summary.num_iterations = 1;
  if (!factorized_) {
    summary.termination = LinearSolverTermination::kFatalError;
    summary.message = "DenseCameraCholesky::Solve without a factorization.";
    return summary;
  }
  const int n = pattern_.num_parameters();
  Eigen::Map<Eigen::VectorXd> y(x, n);
  if (x != b) y = Eigen::Map<const Eigen::VectorXd>(b, n);
  factor_.triangularView<Eigen::Lower>().solveInPlace(y);
  factor_.triangularView<Eigen::Lower>().transpose().solveInPlace(y);
  summary.termination = LinearSolverTermination::kSuccess;
  return summary;
}

std::string DenseCameraCholesky::Statistics() const {
  char buffer[160];
  std::snprintf(buffer, sizeof(buffer), "dense LLT (Eigen) of the %d x %d reduced camera matrix (%lld nonzeros in its upper triangle)",
                pattern_.num_parameters(), pattern_.num_parameters(),
                static_cast<long long>(pattern_.num_nonzeros()));
  return buffer;
}

}  // namespace internal
}  // namespace ceres_sqrtba
