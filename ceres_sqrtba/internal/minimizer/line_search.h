// Ceres' projected line search for bounded problems: the trust-region loop
// computes the Levenberg-Marquardt step without the bounds, and when a
// variable block has bounds (Summary::is_constrained) it searches along the
// projected path x(a) = Plus(x, a delta) (Plus clamps to the box) for a step
// a that satisfies Armijo's sufficient decrease
//
//   f(x(a)) <= f(x) + sufficient_decrease * a * g^T delta,
//
// starting at a = 1 and contracting by polynomial interpolation
// (interpolating_polynomial.h; CUBIC, the default, also evaluates the
// directional derivative at every trial, i.e. a gradient evaluation). On
// success delta is scaled by a; on failure it stays. The model cost change of
// the step stays that of the full, unprojected step, as in Ceres.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_LINE_SEARCH_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_LINE_SEARCH_H_

#include <functional>

#include <Eigen/Core>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/minimizer/minimizer_statistics.h"
#include "ceres_sqrtba/internal/minimizer/interpolating_polynomial.h"
#include "ceres_sqrtba/internal/minimizer/reductions.h"

namespace ceres_sqrtba {
namespace internal {

struct ArmijoOptions {
  ceres::LineSearchInterpolationType interpolation_type = ceres::CUBIC;
  double sufficient_decrease = 1e-4;
  double max_step_contraction = 1e-3;
  double min_step_contraction = 0.6;
  double min_step_size = 1e-9;
  int max_num_iterations = 20;
};

struct LineSearchOutcome {
  bool success = false;
  double step = 1.0;
  int num_iterations = 0;
  int num_function_evaluations = 0;
  int num_gradient_evaluations = 0;
  double polynomial_minimization_time = 0.0;
  double total_time = 0.0;
};

// Evaluates the trial at step a: its value (and, when asked, the directional
// derivative along the search direction), with validity flags.
using LineFunction = std::function<void(double a, bool evaluate_gradient, LineSample* sample)>;

// initial_cost, initial_gradient: f(x) and g^T delta at a = 0;
// direction_max_norm: |delta|_inf, for the minimum step size test.
LineSearchOutcome ArmijoSearch(const ArmijoOptions& options, double initial_cost, double initial_gradient,
                               double direction_max_norm, const LineFunction& function);

// The search of the trust-region loop of a bounded problem: along delta from
// x (cost and tangent gradient there), trial points Plus(x, a delta)
// projected onto the box by the evaluator; scales *delta by the step found.
// The trial evaluations count as the summary's residual or Jacobian
// evaluations, and the line search fields of the summary are filled, as in
// Ceres.
class ProjectedLineSearch {
 public:
  // reductions: the dot products and norms over the whole state (reductions.h).
  ProjectedLineSearch(Evaluator* evaluator, const Reductions* reductions, int num_parameters,
                      int num_effective_parameters);
  void Search(const ArmijoOptions& options, const Eigen::VectorXd& x, double cost,
              const Eigen::VectorXd& gradient, Eigen::VectorXd* delta, MinimizerStatistics* stats,
              ceres::Solver::Summary* summary);

 private:
  Evaluator* evaluator_;
  const Reductions* reductions_;
  Eigen::VectorXd trial_x_, trial_delta_, trial_gradient_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_LINE_SEARCH_H_
