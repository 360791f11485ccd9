#include "ceres_sqrtba/internal/minimizer/line_search.h"

#include <algorithm>
#include <cmath>
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

ProjectedLineSearch::ProjectedLineSearch(Evaluator* evaluator, const Reductions* reductions,
                                         int num_parameters, int num_effective_parameters)
    : evaluator_(evaluator),
      reductions_(reductions),
      trial_x_(num_parameters),
      trial_delta_(num_effective_parameters),
      trial_gradient_(num_effective_parameters) {}

void ProjectedLineSearch::Search(const ArmijoOptions& options, const Eigen::VectorXd& x, double cost,
                                 const Eigen::VectorXd& gradient, Eigen::VectorXd* delta,
                                 MinimizerStatistics* stats, ceres::Solver::Summary* summary) {
  auto trial = [&](double a, bool evaluate_gradient, LineSample* sample) {
    sample->x = a;
    trial_delta_ = a * *delta;
    if (!evaluator_->Plus(x.data(), trial_delta_.data(), trial_x_.data())) return;
    const double t0 = WallTimeInSeconds();
    const bool ok = evaluate_gradient ? evaluator_->EvaluateJacobian(trial_x_.data(), true, &sample->value,
                                                                     trial_gradient_.data(), nullptr)
                                      : evaluator_->EvaluateCost(trial_x_.data(), &sample->value);
    const double seconds = WallTimeInSeconds() - t0;
    if (evaluate_gradient) {
      stats->jacobian_evaluation_time += seconds;
      ++stats->num_jacobian_evaluations;
      summary->line_search_gradient_evaluation_time_in_seconds += seconds;
    } else {
      stats->residual_evaluation_time += seconds;
      ++stats->num_residual_evaluations;
      summary->line_search_cost_evaluation_time_in_seconds += seconds;
    }
    if (!ok || !std::isfinite(sample->value)) return;
    sample->value_is_valid = true;
    if (!evaluate_gradient) return;
    sample->gradient = reductions_->Dot(Reductions::Space::kTangent, *delta, trial_gradient_);
    sample->gradient_is_valid = std::isfinite(sample->gradient);
  };
  constexpr Reductions::Space kTangent = Reductions::Space::kTangent;
  // Two sums over processes: in this order on every process.
  const double directional_derivative = reductions_->Dot(kTangent, gradient, *delta);
  const double direction_max_norm = reductions_->MaxNorm(kTangent, *delta);
  const LineSearchOutcome out = ArmijoSearch(options, cost, directional_derivative, direction_max_norm, trial);
  summary->num_line_search_steps += out.num_iterations;
  summary->line_search_polynomial_minimization_time_in_seconds += out.polynomial_minimization_time;
  summary->line_search_total_time_in_seconds += out.total_time;
  if (out.success) *delta *= out.step;
}

}  // namespace internal
}  // namespace ceres_sqrtba
