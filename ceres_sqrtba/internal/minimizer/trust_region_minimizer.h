// The trust-region loop of a square-root solve (TrustRegionMinimizer, as
// Ceres' class of that name), and Minimize, which runs it once.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_MINIMIZER_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_MINIMIZER_H_

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/wall_time.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/minimizer/coordinate_descent_minimizer.h"
#include "ceres_sqrtba/internal/minimizer/minimizer_options.h"
#include "ceres_sqrtba/internal/minimizer/minimizer_statistics.h"
#include "ceres_sqrtba/internal/minimizer/reductions.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/solvers/precision_policy.h"

namespace ceres_sqrtba {
namespace internal {

struct MinimizerContext {
  MinimizerOptions options;
  // The sums over the whole state (reductions.h); null: this process holds
  // all of it (LocalReductions).
  const Reductions* reductions = nullptr;
  // The other processes of a solve spread over several (process_group.h):
  // the decisions that each process's own storage informs (a Jacobian out
  // of single precision's range) are agreed with them. Null: one process.
  const ProcessGroup* processes = nullptr;
  std::vector<ceres::IterationCallback*> callbacks;
  double fixed_cost = 0.0;
  double start_time = 0.0;  // wall time when Solve started (cumulative times)
  bool is_silent = false;
  bool jacobians_at_candidates = false;  // see TrustRegionMinimizer; not on bounded problems
  // Inner iterations (coordinate_descent_minimizer.h); null: none. While
  // they run, candidates are evaluated without their Jacobian (the round
  // moves the candidate).
  CoordinateDescentMinimizer* inner_iterations = nullptr;
};

class LevenbergMarquardtStrategy;
class ProjectedLineSearch;
class TrustRegionStepEvaluator;

// Levenberg-Marquardt exactly as Ceres' TrustRegionMinimizer runs it, over our
// Evaluator and the linear solver the PrecisionPolicy provides: one object per
// solve, Run() once. It reads MinimizerContext::options (what Ceres'
// Minimizer::Options carries), and takes its sums over the whole state
// (model cost change, step, state and gradient norms) through
// MinimizerContext::reductions (reductions.h).
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
class TrustRegionMinimizer {
 public:
  // The loop of one solve: parameters is the ambient state vector; on return
  // from Run it holds the best state found (the state of minimum cost, which
  // is what Ceres returns), and summary and stats what Ceres reports.
  TrustRegionMinimizer(const MinimizerContext& context, const ProblemStructure& s,
                       Evaluator* evaluator, PrecisionPolicy* precision, double* parameters,
                       ceres::Solver::Summary* summary, MinimizerStatistics* stats);
  ~TrustRegionMinimizer();
  TrustRegionMinimizer(const TrustRegionMinimizer&) = delete;
  TrustRegionMinimizer& operator=(const TrustRegionMinimizer&) = delete;

  // Runs the loop to its end: the summary's termination type and message say
  // which (FAILURE also when the linear solver or an evaluation cannot go on).
  void Run();

 private:
  // Logs why the solve ended (unless silent); summary_ already says it.
  void Fail();

  // Ends the solve with FAILURE and the message; returns false.
  bool Failure(const std::string& message);

  // Ceres' message, then what failed (the evaluator names the block).
  static constexpr const char* kEvaluationFailed = "Residual and Jacobian evaluation failed.";

  // Ends the solve with FAILURE after a failed evaluation: kEvaluationFailed,
  // then the evaluator's error. Returns false.
  bool EvaluationFailure(const std::string& why);

  // |x - candidate x|, the step as the tolerance tests see it.
  double StepNorm();

  // Ceres' DoInnerIterationsIfNeeded (coordinate_descent_minimizer.h).
  void DoInnerIterationsIfNeeded();

  // Ceres' acceptance test of a step of this quality (relative decrease).
  bool IsAccepted(double relative_decrease) const;

  // Iteration 0: projects the initial point onto its bounds, evaluates cost,
  // gradient and Jacobian there (and the Jacobi scale).
  bool IterationZero();

  // Cost, gradient and Jacobian at x_, the Jacobian written into the current
  // linear solver and scaled there; the projected gradient's norms.
  bool EvaluateGradientAndJacobian(bool new_evaluation_point);

  // What follows a Jacobian at x_ (its cost in x_cost_, its gradient in
  // gradient_) being written into the current solver: the column scale,
  // single precision's range, the projected gradient's norms.
  bool FinishJacobian();

  // Ceres' end of an iteration: counts the step, keeps the best state in the
  // user's parameters, records the iteration summary, then runs the callbacks
  // and the time, iteration, gradient and radius tests. False: the solve ends.
  bool FinalizeIterationAndCheckIfMinimizerCanContinue();

  // The user's iteration callbacks, in order, until one does not continue.
  bool RunCallbacks();

  // The step for the current radius: y from the linear solver through the LM
  // strategy (computed again in double where single precision fails it), its
  // model cost change, and whether it is valid. Returns false only for
  // unrecoverable errors.
  bool ComputeTrustRegionStep();

  // Asks the precision policy to continue in double precision, and starts
  // the new solver on a fresh scale and diagonal. Required: a refusal ends
  // the solve with FAILURE; otherwise it only leaves the single precision
  // solver in place (returns false either way).
  bool ContinueInDouble(const std::string& reason, bool required);

  // Continues in double precision and computes this iteration's step again
  // there, from a Jacobian evaluated into the double precision solver. When
  // double precision is not possible and not required, the step stays as it
  // was. False only for unrecoverable errors.
  bool RecomputeStepInDouble(const std::string& reason, bool required);

  // The trial's double step was not taken either: single precision again,
  // whose solver needs the current point's Jacobian (evaluated by the next
  // step, as after a rejected candidate's), scaled as before.
  void ReturnToSingleAfterTrial();

  // Ceres' handling of an invalid step (the radius shrinks); false when
  // max_num_consecutive_invalid_steps in a row end the solve.
  bool HandleInvalidStep();

  // Which of Ceres' step tolerances (parameter, then function) this step
  // meets, with Ceres' message; nullptr when none. The parameter tolerance
  // applies once a step has been accepted.
  const char* ToleranceMet(double step_norm, double cost_change, std::string* message) const;

  // The candidate x + delta and its cost; on bounded problems Ceres'
  // projected line search first shortens delta to keep the bounds.
  void SearchLineAndEvaluateCandidate();

  // x (+) delta and its cost (with its Jacobian once enough steps in a row
  // were accepted: "Jacobians at candidates" above); a failed Plus or
  // evaluation is a step of infinite cost.
  void ComputeCandidatePointAndEvaluateCost();

  // A rejected candidate that was evaluated with its Jacobian cost a second
  // Jacobian pass: wait for twice as long a run of accepted steps next time.
  void StepNotAccepted();

  // Moves to the candidate: its Jacobian (evaluated now, or already with its
  // cost), the radius, the step evaluator's history and the precision
  // policy's count of accepted steps. False when the Jacobian fails.
  bool HandleSuccessfulStep();

  using Vector = Eigen::VectorXd;

  // The solve's inputs and outputs.
  const MinimizerContext& ctx_;
  const MinimizerOptions& o_;
  LocalReductions local_reductions_;
  const Reductions& reductions_;
  const ProblemStructure& s_;
  Evaluator* evaluator_;
  PrecisionPolicy* precision_;
  double* parameters_;
  ceres::Solver::Summary* summary_;
  MinimizerStatistics* stats_;

  // The loop's state: Ceres' LM strategy and step evaluator, the current
  // iteration, the current and candidate points (ambient: x_, candidate_x_,
  // projected_, inner_x_; tangent: the rest).
  std::unique_ptr<LevenbergMarquardtStrategy> strategy_;
  std::unique_ptr<TrustRegionStepEvaluator> step_evaluator_;
  ceres::IterationSummary it_;
  Vector x_, candidate_x_, projected_, gradient_, negative_gradient_, y_, delta_, scale_;
  Vector difference_;       // ambient: x_ - candidate_x_ or x_ - projected_
  Vector scaled_gradient_;  // scale_ .* gradient_ (J^T r of the scaled Jacobian)
  Vector candidate_gradient_;  // empty unless Jacobians at candidates are on
  bool jacobians_at_candidates_ = false;
  int consecutive_accepted_steps_ = 0;
  int accepted_steps_before_jacobians_ = 1;
  bool jacobian_tried_at_candidate_ = false;  // the last candidate's pass wrote a Jacobian
  bool candidate_has_jacobian_ = false;       // ... and succeeded
  bool jacobian_is_stale_ = false;            // the solver holds another point's Jacobian
  std::unique_ptr<ProjectedLineSearch> line_search_;  // bounded problems only
  double x_cost_ = std::numeric_limits<double>::max();
  double minimum_cost_ = std::numeric_limits<double>::max();
  double candidate_cost_ = 0.0;
  double model_cost_change_ = 0.0;
  int num_consecutive_invalid_steps_ = 0;
  bool scale_computed_ = false;
  bool solver_scaled_ = false;
  bool evaluation_failed_ = false;
  bool had_successful_step_ = false;
  bool inner_iterations_enabled_ = false;
  bool inner_iterations_were_useful_ = false;
  Vector inner_x_;
  double iteration_start_time_ = 0.0;
};

// TrustRegionMinimizer(...).Run(). parameters: the ambient state vector; on
// return it holds the best state found (the state of minimum cost, which is
// what Ceres returns).
void Minimize(const MinimizerContext& context, const ProblemStructure& structure,
              Evaluator* evaluator, PrecisionPolicy* precision, double* parameters,
              ceres::Solver::Summary* summary, MinimizerStatistics* statistics);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_MINIMIZER_H_
