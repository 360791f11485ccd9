// The trust-region loop: Levenberg-Marquardt exactly as Ceres'
// TrustRegionMinimizer runs it, over our Evaluator and the linear solver the
// PrecisionPolicy provides.
//
// Iteration 0 evaluates cost, gradient and Jacobian (and, with jacobi_scaling,
// the column scale 1 / (1 + |J_i|) from that first Jacobian, kept for the whole
// solve). Each further iteration computes a step, rejects it as invalid when
// the linear solver failed or the model cost change is not positive, evaluates
// the candidate x (+) delta, stops on the parameter tolerance or the function
// tolerance (checked before the step is judged), and accepts the step when the
// ratio of actual to model cost change exceeds min_relative_decrease.
// Callbacks, time and iteration limits, the gradient tolerance (max-norm of
// x - Plus(x, -g)) and the minimum radius are checked after every iteration,
// and the messages and termination types are Ceres' own (termination.h).
//
// Single precision adds what Ceres does not have: where float cannot carry
// the solve (values beyond its range, a numerical failure, steps that do not
// decrease the model, repeated rejections, a step short enough to meet a
// tolerance), the loop asks the PrecisionPolicy to continue in double and
// computes the iteration's step again there; convergence by the function or
// parameter tolerance is declared on a double precision step only.
//
// Jacobians at candidates (MinimizerContext::jacobians_at_candidates): an
// accepted step is otherwise evaluated twice, its cost at the candidate and
// then cost, gradient and Jacobian at the same point. Once the previous step
// was accepted, the candidate is evaluated with its Jacobian in one pass; the
// cost is the same sum in the same order, so acceptance and the iteration
// trace do not change. The Jacobian goes into the linear solver's storage,
// which holds the only copy of the current one: a rejected candidate leaves
// it stale, and the current point's Jacobian is evaluated again before the
// next step (a second Jacobian pass, 6-7 times a cost pass). Each such
// rejection doubles the run of accepted steps required before the next try,
// so that a problem that rejects often soon evaluates as Ceres does.
//
// Inner iterations (MinimizerContext::inner_iterations), as Ceres: after the
// candidate's cost (and, in single precision, after the checks above that
// may compute the step again in double), a round of block coordinate descent
// starts from the candidate; the whole cost is evaluated at its result (a
// failure leaves the candidate as it was), the candidate moves there, the
// model cost change grows by the round's decrease, and a round that ends
// below the current cost makes the step successful whatever its ratio. Once
// a round's relative decrease of the candidate's cost is at most
// inner_iteration_tolerance they are off for the rest of the solve. The
// tolerance tests then apply to the moved candidate (step_norm included).
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_MINIMIZER_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_MINIMIZER_H_

#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/wall_time.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/minimizer/coordinate_descent_minimizer.h"
#include "ceres_sqrtba/internal/minimizer/minimizer_statistics.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/solvers/precision_policy.h"

namespace ceres_sqrtba {
namespace internal {

struct MinimizerContext {
  const ceres::Solver::Options* options = nullptr;
  std::vector<ceres::IterationCallback*> callbacks;
  double fixed_cost = 0.0;
  double start_time = 0.0;  // wall time when Solve started (cumulative times)
  bool is_silent = false;
  bool jacobians_at_candidates = false;  // see above; not on bounded problems
  // Inner iterations (coordinate_descent_minimizer.h); null: none. While
  // they run, candidates are evaluated without their Jacobian (the round
  // moves the candidate).
  CoordinateDescentMinimizer* inner_iterations = nullptr;
};

// parameters: the ambient state vector; on return it holds the best state
// found (the state of minimum cost, which is what Ceres returns).
void Minimize(const MinimizerContext& context, const ProblemStructure& structure,
              Evaluator* evaluator, PrecisionPolicy* precision, double* parameters,
              ceres::Solver::Summary* summary, MinimizerStatistics* statistics);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_MINIMIZER_H_
