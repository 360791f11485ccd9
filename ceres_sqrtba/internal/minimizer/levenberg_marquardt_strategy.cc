#include "ceres_sqrtba/internal/minimizer/levenberg_marquardt_strategy.h"

#include <algorithm>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {

LevenbergMarquardtStrategy::LevenbergMarquardtStrategy(int num_parameters,
                                                       const LevenbergMarquardtOptions& options)
    : options_(options),
      radius_(options.initial_radius),
      diagonal_(num_parameters),
      lm_diagonal_(num_parameters) {}

void LevenbergMarquardtStrategy::Reset(int num_parameters) {
  radius_ = options_.initial_radius;
  decrease_factor_ = 2.0;
  reuse_diagonal_ = false;
  diagonal_.resize(num_parameters);
  lm_diagonal_.resize(num_parameters);
}

LinearSolverSummary LevenbergMarquardtStrategy::ComputeStep(LinearSolver* solver, double eta,
                                                            double* y,
                                                            double* jy_squared_norm) {
  const size_t n = diagonal_.size();
  if (!reuse_diagonal_) {
    solver->SquaredColumnNorms(diagonal_.data());
    for (double& v : diagonal_) v = std::min(std::max(v, options_.min_diagonal), options_.max_diagonal);
  }
  for (size_t i = 0; i < n; ++i) lm_diagonal_[i] = std::sqrt(diagonal_[i] / radius_);
  // Poison the output so that a solver which leaves garbage is caught below.
  std::fill(y, y + n, std::nan(""));
  LinearSolverSummary summary = solver->Solve(lm_diagonal_.data(), eta, y, jy_squared_norm);
  if (summary.termination != LinearSolverTermination::kFailure &&
      summary.termination != LinearSolverTermination::kFatalError) {
    bool finite = std::isfinite(*jy_squared_norm);
    for (size_t i = 0; i < n && finite; ++i) finite = std::isfinite(y[i]);
    if (!finite) {
      summary.termination = LinearSolverTermination::kFailure;
      summary.message = "Linear solver failure. Failed to compute a finite step.";
    }
  }
  reuse_diagonal_ = true;
  return summary;
}

void LevenbergMarquardtStrategy::StepAccepted(double step_quality) {
  radius_ = radius_ / std::max(1.0 / 3.0, 1.0 - std::pow(2.0 * step_quality - 1.0, 3));
  radius_ = std::min(options_.max_radius, radius_);
  decrease_factor_ = 2.0;
  reuse_diagonal_ = false;
}

void LevenbergMarquardtStrategy::StepRejected() {
  radius_ = radius_ / decrease_factor_;
  decrease_factor_ *= 2.0;
  reuse_diagonal_ = true;
}

}  // namespace internal
}  // namespace ceres_sqrtba
