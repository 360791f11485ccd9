// Ceres' termination tests of the trust-region loop, as pure functions of the
// iteration's numbers: each returns true, with Ceres' own message (none when
// message is null: the sub-solves of inner iterations), when its test is
// met, and writes nothing else. The loop decides what a met test means (a
// converged solve, or, for a float step, a reason to check the step in
// double precision first).
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_TERMINATION_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_TERMINATION_H_

#include <string>

namespace ceres_sqrtba {
namespace internal {

// |step| <= parameter_tolerance (|x| + parameter_tolerance).
bool ParameterToleranceMet(double step_norm, double x_norm, double parameter_tolerance,
                           std::string* message);
// |cost - candidate cost| <= function_tolerance cost (checked before the step
// is judged, so a tiny change ends the solve even if it would be rejected).
bool FunctionToleranceMet(double cost_change, double cost, double function_tolerance,
                          std::string* message);
// max-norm of x - Plus(x, -gradient) <= gradient_tolerance.
bool GradientToleranceMet(double gradient_max_norm, double gradient_tolerance, std::string* message);
bool MinTrustRegionRadiusMet(double radius, double min_radius, std::string* message);
bool MaxIterationsMet(int iteration, int max_num_iterations, std::string* message);
bool MaxSolverTimeMet(double total_time, double max_solver_time, std::string* message);
// Solver::Options::max_num_consecutive_invalid_steps reached: FAILURE.
std::string TooManyInvalidStepsMessage(int max_num_consecutive_invalid_steps);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_TERMINATION_H_
