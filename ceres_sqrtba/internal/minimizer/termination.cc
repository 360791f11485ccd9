#include "ceres_sqrtba/internal/minimizer/termination.h"

#include <cmath>
#include <cstdio>

namespace ceres_sqrtba {
namespace internal {
namespace {

std::string Format(const char* format, double a, double b) {
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), format, a, b);
  return buffer;
}

// Ceres' message into *message, unless the caller wants none.
void Say(std::string* message, const char* format, double a, double b) {
  if (message != nullptr) *message = Format(format, a, b);
}

}  // namespace

bool ParameterToleranceMet(double step_norm, double x_norm, double parameter_tolerance,
                           std::string* message) {
  if (step_norm > parameter_tolerance * (x_norm + parameter_tolerance)) return false;
  Say(message, "Parameter tolerance reached. Relative step_norm: %e <= %e.",
                    step_norm / (x_norm + parameter_tolerance), parameter_tolerance);
  return true;
}

bool FunctionToleranceMet(double cost_change, double cost, double function_tolerance,
                          std::string* message) {
  if (std::fabs(cost_change) > function_tolerance * cost) return false;
  Say(message, "Function tolerance reached. |cost_change|/cost: %e <= %e",
                    std::fabs(cost_change) / cost, function_tolerance);
  return true;
}

bool GradientToleranceMet(double gradient_max_norm, double gradient_tolerance, std::string* message) {
  if (gradient_max_norm > gradient_tolerance) return false;
  Say(message, "Gradient tolerance reached. Gradient max norm: %e <= %e", gradient_max_norm,
                    gradient_tolerance);
  return true;
}

bool MinTrustRegionRadiusMet(double radius, double min_radius, std::string* message) {
  if (radius > min_radius) return false;
  Say(message, "Minimum trust region radius reached. Trust region radius: %e <= %e", radius,
                    min_radius);
  return true;
}

bool MaxIterationsMet(int iteration, int max_num_iterations, std::string* message) {
  if (iteration < max_num_iterations) return false;
  Say(message, "Maximum number of iterations reached. Number of iterations: %.0f.", iteration, 0);
  return true;
}

bool MaxSolverTimeMet(double total_time, double max_solver_time, std::string* message) {
  if (total_time < max_solver_time) return false;
  Say(message, "Maximum solver time reached. Total solver time: %e >= %e.", total_time,
                    max_solver_time);
  return true;
}

std::string TooManyInvalidStepsMessage(int max_num_consecutive_invalid_steps) {
  return Format(
      "Number of consecutive invalid steps more than "
      "Solver::Options::max_num_consecutive_invalid_steps: %.0f",
      max_num_consecutive_invalid_steps, 0);
}

}  // namespace internal
}  // namespace ceres_sqrtba
