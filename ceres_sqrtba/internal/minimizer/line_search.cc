#include "ceres_sqrtba/internal/minimizer/line_search.h"

#include <algorithm>
#include <vector>

#include "ceres_sqrtba/internal/common/wall_time.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// The next trial in [low, high] (both fractions of the current trial's step):
// half the current step when it could not be evaluated or with BISECTION,
// otherwise the minimizer of the interpolating polynomial.
double NextStep(const ArmijoOptions& o, const LineSample& initial, const LineSample& previous,
                const LineSample& current) {
  const double low = o.max_step_contraction * current.x;
  const double high = o.min_step_contraction * current.x;
  if (!current.value_is_valid || o.interpolation_type == ceres::BISECTION) {
    return std::min(std::max(current.x * 0.5, low), high);
  }
  std::vector<LineSample> samples = {initial};
  if (o.interpolation_type == ceres::QUADRATIC) {
    // Values only, besides the derivative at 0.
    LineSample c = current, p = previous;
    c.gradient_is_valid = p.gradient_is_valid = false;
    samples.push_back(c);
    if (previous.value_is_valid) samples.push_back(p);
  } else {
    samples.push_back(current);
    if (previous.value_is_valid) samples.push_back(previous);
  }
  return MinimizeInterpolatingPolynomial(samples, low, high);
}

}  // namespace

ArmijoOptions ArmijoOptions::From(const ceres::Solver::Options& options) {
  ArmijoOptions o;
  o.interpolation_type = options.line_search_interpolation_type;
  o.sufficient_decrease = options.line_search_sufficient_function_decrease;
  o.max_step_contraction = options.max_line_search_step_contraction;
  o.min_step_contraction = options.min_line_search_step_contraction;
  o.min_step_size = options.min_line_search_step_size;
  o.max_num_iterations = options.max_num_line_search_step_size_iterations;
  return o;
}

LineSearchOutcome ArmijoSearch(const ArmijoOptions& o, double initial_cost, double initial_gradient,
                               double direction_max_norm, const LineFunction& function) {
  const double start = WallTimeInSeconds();
  LineSearchOutcome out;
  LineSample initial;
  initial.x = 0.0;
  initial.value = initial_cost;
  initial.gradient = initial_gradient;
  initial.value_is_valid = initial.gradient_is_valid = true;
  // Armijo always has the value and derivative at 0, so up to a quadratic
  // needs no derivative at the trials; CUBIC does.
  const bool evaluate_gradient = o.interpolation_type == ceres::CUBIC;
  LineSample previous, current;
  auto evaluate = [&](double a) {
    ++out.num_function_evaluations;
    if (evaluate_gradient) ++out.num_gradient_evaluations;
    current = LineSample();
    function(a, evaluate_gradient, &current);
  };
  evaluate(1.0);
  // An invalid trial counts as one without sufficient decrease.
  while (!current.value_is_valid ||
         current.value > initial_cost + o.sufficient_decrease * initial_gradient * current.x) {
    if (++out.num_iterations >= o.max_num_iterations) break;
    const double t0 = WallTimeInSeconds();
    const double step = NextStep(o, initial, previous, current);
    out.polynomial_minimization_time += WallTimeInSeconds() - t0;
    if (step * direction_max_norm < o.min_step_size) break;
    previous = current;
    evaluate(step);
  }
  out.success = current.value_is_valid &&
                current.value <= initial_cost + o.sufficient_decrease * initial_gradient * current.x;
  out.step = out.success ? current.x : 1.0;
  out.total_time = WallTimeInSeconds() - start;
  return out;
}

}  // namespace internal
}  // namespace ceres_sqrtba
