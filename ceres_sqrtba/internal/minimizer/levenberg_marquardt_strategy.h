// Levenberg-Marquardt as a trust-region strategy, with exactly the updates of
// Ceres' LevenbergMarquardtStrategy:
//
// - the damping diagonal is diag = clamp(squared column norms of the (scaled)
//   Jacobian, min_lm_diagonal, max_lm_diagonal), recomputed only for a new
//   Jacobian, and D = sqrt(diag / radius), i.e. lambda = 1 / radius;
// - accepted step with quality rho: radius /= max(1/3, 1 - (2 rho - 1)^3),
//   capped at max_trust_region_radius, and the decrease factor resets to 2;
// - rejected (or invalid) step: radius /= decrease_factor, which doubles.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_LEVENBERG_MARQUARDT_STRATEGY_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_LEVENBERG_MARQUARDT_STRATEGY_H_

#include <vector>

#include "ceres_sqrtba/internal/linear/linear_solver.h"

namespace ceres_sqrtba {
namespace internal {

struct LevenbergMarquardtOptions {
  double initial_radius = 1e4;
  double max_radius = 1e16;
  double min_diagonal = 1e-6;
  double max_diagonal = 1e32;
};

class LevenbergMarquardtStrategy {
 public:
  LevenbergMarquardtStrategy(int num_parameters, const LevenbergMarquardtOptions& options);

  // A fresh start (initial radius, decrease factor 2, the diagonal computed
  // on the next step) for num_parameters parameters, at most the
  // constructor's: no allocation (inner iterations reuse one strategy for
  // every block's sub-solve).
  void Reset(int num_parameters);

  // Computes y (step = -y) for the solver's current Jacobian.
  LinearSolverSummary ComputeStep(LinearSolver* solver, double eta, double* y,
                                  double* jy_squared_norm);

  void StepAccepted(double step_quality);
  void StepRejected();
  void StepIsInvalid() { StepRejected(); }
  double Radius() const { return radius_; }
  // The next step recomputes the diagonal (the Jacobian moved to another solver).
  void InvalidateDiagonal() { reuse_diagonal_ = false; }

 private:
  LevenbergMarquardtOptions options_;
  double radius_;
  double decrease_factor_ = 2.0;
  bool reuse_diagonal_ = false;
  std::vector<double> diagonal_;
  std::vector<double> lm_diagonal_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_LEVENBERG_MARQUARDT_STRATEGY_H_
