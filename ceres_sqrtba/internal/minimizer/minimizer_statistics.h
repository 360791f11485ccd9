// What the trust-region loop counts and times for the summary: evaluations
// (also the line search's), linear solves.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_MINIMIZER_STATISTICS_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_MINIMIZER_STATISTICS_H_

namespace ceres_sqrtba {
namespace internal {

struct MinimizerStatistics {
  double residual_evaluation_time = 0.0;
  int num_residual_evaluations = 0;
  double jacobian_evaluation_time = 0.0;
  int num_jacobian_evaluations = 0;
  double linear_solver_time = 0.0;
  int num_linear_solves = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_MINIMIZER_STATISTICS_H_
