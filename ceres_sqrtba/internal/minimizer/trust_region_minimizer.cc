#include "ceres_sqrtba/internal/minimizer/trust_region_minimizer.h"

#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/internal/minimizer/levenberg_marquardt_strategy.h"
#include "ceres_sqrtba/internal/minimizer/line_search.h"
#include "ceres_sqrtba/internal/minimizer/termination.h"
#include "ceres_sqrtba/internal/minimizer/trust_region_step_evaluator.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

namespace {
// A single precision solve with float Jacobians continues in double once
// the gradient's largest entry is within this many times the rounding that
// the float Jacobians bring into it (Evaluator::float_gradient_level).
constexpr double kFloatGradientLevels = 1.0;
}  // namespace

TrustRegionMinimizer::TrustRegionMinimizer(const MinimizerContext& context,
                                           const ProblemStructure& s, Evaluator* evaluator,
                                           PrecisionPolicy* precision, double* parameters,
                                           ceres::Solver::Summary* summary,
                                           MinimizerStatistics* stats)
    : ctx_(context),
      o_(context.options),
      reductions_(context.reductions != nullptr ? *context.reductions : local_reductions_),
      s_(s),
      evaluator_(evaluator),
      precision_(precision),
      parameters_(parameters),
      summary_(summary),
      stats_(stats) {
  const int n = s.num_parameters, m = s.num_effective_parameters;
  x_ = Eigen::Map<const Vector>(parameters, n);
  candidate_x_.resize(n);
  projected_.resize(n);
  difference_.resize(n);
  scaled_gradient_.resize(m);
  gradient_.resize(m);
  jacobians_at_candidates_ = ctx_.jacobians_at_candidates && !s.is_constrained;
  if (jacobians_at_candidates_) candidate_gradient_.resize(m);
  negative_gradient_.resize(m);
  y_.resize(m);
  delta_.resize(m);
  if (s.is_constrained) {
    line_search_ = std::make_unique<ProjectedLineSearch>(evaluator, &reductions_, n, m);
  }
  scale_ = Vector::Ones(m);
  strategy_ = std::make_unique<LevenbergMarquardtStrategy>(m, o_.levenberg_marquardt);
  inner_iterations_enabled_ = ctx_.inner_iterations != nullptr;
  if (inner_iterations_enabled_) inner_x_.resize(n);
}

TrustRegionMinimizer::~TrustRegionMinimizer() = default;

void TrustRegionMinimizer::Run() {
  iteration_start_time_ = WallTimeInSeconds();
  summary_->termination_type = ceres::NO_CONVERGENCE;
  summary_->num_successful_steps = 0;
  summary_->num_unsuccessful_steps = 0;
  if (!IterationZero()) return Fail();
  step_evaluator_ =
      std::make_unique<TrustRegionStepEvaluator>(x_cost_, o_.max_consecutive_nonmonotonic_steps);
  while (FinalizeIterationAndCheckIfMinimizerCanContinue()) {
    iteration_start_time_ = WallTimeInSeconds();
    const double previous_gradient_norm = it_.gradient_norm;
    const double previous_gradient_max_norm = it_.gradient_max_norm;
    it_ = ceres::IterationSummary();
    it_.iteration = summary_->iterations.back().iteration + 1;

    if (!ComputeTrustRegionStep()) return Fail();
    if (!it_.step_is_valid) {
      if (!HandleInvalidStep()) return Fail();
      continue;
    }
    SearchLineAndEvaluateCandidate();
    if (precision_->CanSwitchToDouble()) {
      // A float step can be short because PCG stopped at float's rounding
      // level, and then passes the tolerance tests as well as a step at a
      // minimum does (seen 1% above the minimum on generic problems): the
      // tests are applied to this iteration's step computed again in
      // double, and the solve continues in double. When double does not
      // fit, the float step stands.
      std::string unused;
      const char* met = ToleranceMet(StepNorm(), x_cost_ - candidate_cost_, &unused);
      if (met != nullptr) {
        const std::string reason = std::string("the ") + met +
                                   " tolerance was met by a float step (convergence is only "
                                   "declared on a double precision step)";
        if (!RecomputeStepInDouble(reason, /*required=*/false)) return Fail();
        if (precision_->current() == DOUBLE_PRECISION && it_.step_is_valid) {
          SearchLineAndEvaluateCandidate();
        }
        if (!it_.step_is_valid) {
          if (!HandleInvalidStep()) return Fail();
          continue;
        }
      }
    }
    // A step that would make the run of rejected float steps long enough
    // for a trial (precision_policy.h): computed again in double at the
    // same radius, and judged as any step. Rejected there too, precision
    // was not the cause and the solve returns to single precision.
    bool trial = false;
    if (precision_->NextRejectionIsTrial() &&
        !IsAccepted(step_evaluator_->StepQuality(candidate_cost_, model_cost_change_))) {
      char reason[128];
      std::snprintf(reason, sizeof(reason), "%d consecutive steps were rejected",
                    precision_->rejections_before_trial());
      if (!RecomputeStepInDouble(reason, /*required=*/false)) return Fail();
      if (precision_->current() == DOUBLE_PRECISION) {
        trial = true;
        if (it_.step_is_valid) SearchLineAndEvaluateCandidate();
      }
      if (!it_.step_is_valid) {
        if (trial) ReturnToSingleAfterTrial();
        if (!HandleInvalidStep()) return Fail();
        continue;
      }
    }
    DoInnerIterationsIfNeeded();
    // The parameter tolerance applies once a step has been accepted (Ceres:
    // 2.2 skips it before, 2.1 compares against an x norm of -1 until
    // then); 2.2 also leaves step_norm at 0 until then.
    if (had_successful_step_ || !kStepNormOnlyAfterFirstSuccess) it_.step_norm = StepNorm();
    it_.cost_change = x_cost_ - candidate_cost_;
    if (ToleranceMet(it_.step_norm, it_.cost_change, &summary_->message) != nullptr) {
      summary_->termination_type = ceres::CONVERGENCE;
      return;
    }
    it_.relative_decrease = step_evaluator_->StepQuality(candidate_cost_, model_cost_change_);
    if (inner_iterations_were_useful_ || IsAccepted(it_.relative_decrease)) {
      if (!HandleSuccessfulStep()) return Fail();
    } else {
      it_.step_is_successful = false;
      it_.cost = candidate_cost_ + ctx_.fixed_cost;
      it_.gradient_norm = previous_gradient_norm;
      it_.gradient_max_norm = previous_gradient_max_norm;
      strategy_->StepRejected();
      StepNotAccepted();
      if (trial) {
        ReturnToSingleAfterTrial();
      } else {
        precision_->StepRejected();
      }
    }
  }
}

void TrustRegionMinimizer::Fail() {
  if (!ctx_.is_silent) LOG(ERROR) << "Terminating: " << summary_->message;
}

bool TrustRegionMinimizer::Failure(const std::string& message) {
  summary_->message = message;
  summary_->termination_type = ceres::FAILURE;
  return false;
}

bool TrustRegionMinimizer::EvaluationFailure(const std::string& why) {
  evaluation_failed_ = true;
  return Failure(why.empty() ? std::string(kEvaluationFailed) : kEvaluationFailed + (" " + why));
}

double TrustRegionMinimizer::StepNorm() {
  difference_ = x_ - candidate_x_;
  return reductions_.Norm(Reductions::Space::kAmbient, difference_);
}

void TrustRegionMinimizer::DoInnerIterationsIfNeeded() {
  inner_iterations_were_useful_ = false;
  if (!inner_iterations_enabled_ || candidate_cost_ >= std::numeric_limits<double>::max()) return;
  const double t0 = WallTimeInSeconds();
  ++summary_->num_inner_iteration_steps;
  inner_x_ = candidate_x_;
  ctx_.inner_iterations->Minimize(inner_x_.data());
  double inner_cost = 0.0;
  const double t1 = WallTimeInSeconds();
  const bool ok = evaluator_->EvaluateCost(inner_x_.data(), &inner_cost);
  stats_->residual_evaluation_time += WallTimeInSeconds() - t1;
  ++stats_->num_residual_evaluations;
  if (!ok) {
    if (!ctx_.is_silent) VLOG(2) << "Inner iteration failed.";
    return;  // Ceres counts the step but not its time
  }
  if (!ctx_.is_silent) {
    VLOG(2) << "Inner iteration succeeded; Current cost: " << x_cost_
            << " Trust region step cost: " << candidate_cost_
            << " Inner iteration cost: " << inner_cost;
  }
  candidate_x_.swap(inner_x_);
  // The step's ratio credits the trust-region model only with its own
  // share: the model cost change grows by what the round gained.
  model_cost_change_ += candidate_cost_ - inner_cost;
  inner_iterations_were_useful_ = inner_cost < x_cost_;
  const double relative_progress = 1.0 - inner_cost / candidate_cost_;
  inner_iterations_enabled_ = relative_progress > o_.inner_iteration_tolerance;
  if (!ctx_.is_silent && !inner_iterations_enabled_) {
    VLOG(2) << "Disabling inner iterations. Progress : " << relative_progress;
  }
  candidate_cost_ = inner_cost;
  summary_->inner_iteration_time_in_seconds += WallTimeInSeconds() - t0;
}

bool TrustRegionMinimizer::IsAccepted(double relative_decrease) const {
  return relative_decrease > o_.min_relative_decrease;
}

bool TrustRegionMinimizer::IterationZero() {
  it_ = ceres::IterationSummary();
  it_.iteration = 0;
  it_.eta = o_.eta;
  if (s_.is_constrained) {
    // A variable block that starts outside its box is moved onto it.
    delta_.setZero();
    if (!evaluator_->Plus(x_.data(), delta_.data(), candidate_x_.data())) {
      return Failure("Unable to project initial point onto the feasible set.");
    }
    x_ = candidate_x_;
  }
  if (!EvaluateGradientAndJacobian(/*new_evaluation_point=*/true)) {
    // The linked Ceres' message when the evaluation itself failed; a more
    // precise one (e.g. single precision that cannot fall back to double)
    // is kept.
    if (evaluation_failed_) {
      summary_->message = kInitialEvaluationFailed +
                          summary_->message.substr(std::string(kEvaluationFailed).size());
    }
    return false;
  }
  summary_->initial_cost = x_cost_ + ctx_.fixed_cost;
  it_.step_is_valid = true;
  it_.step_is_successful = true;
  return true;
}

bool TrustRegionMinimizer::EvaluateGradientAndJacobian(bool new_evaluation_point) {
  LinearSolver* solver = precision_->solver();
  const double t0 = WallTimeInSeconds();
  const bool ok = evaluator_->EvaluateJacobian(x_.data(), new_evaluation_point, &x_cost_,
                                               gradient_.data(), solver->writer());
  stats_->jacobian_evaluation_time += WallTimeInSeconds() - t0;
  ++stats_->num_jacobian_evaluations;
  jacobian_is_stale_ = false;
  if (!ok) return EvaluationFailure(evaluator_->error());
  return FinishJacobian();
}

bool TrustRegionMinimizer::FinishJacobian() {
  LinearSolver* solver = precision_->solver();
  it_.cost = x_cost_ + ctx_.fixed_cost;
  if (o_.jacobi_scaling) {
    if (!scale_computed_) {
      // Column scale from the first Jacobian: 1 / (1 + |J_i|), the one
      // added to avoid dividing by zero for empty columns.
      solver->SquaredColumnNorms(scale_.data());
      for (int i = 0; i < scale_.size(); ++i) scale_[i] = 1.0 / (1.0 + std::sqrt(scale_[i]));
      scale_computed_ = true;
    }
    // The solver applies the scale to this Jacobian and, as it writes
    // them, to every later one.
    if (!solver_scaled_) solver->ScaleColumns(scale_.data());
    solver_scaled_ = true;
  }
  bool out_of_range = solver->JacobianOutOfRange();
  if (ctx_.processes != nullptr) out_of_range = ctx_.processes->Any(out_of_range);
  if (out_of_range) {
    if (precision_->current() == DOUBLE_PRECISION) {
      return EvaluationFailure(
          "The corrected residuals or the scaled Jacobian have values that are not finite.");
    }
    if (!ContinueInDouble("the Jacobian or the residuals exceed its range", /*required=*/true)) {
      return false;
    }
    if (it_.iteration == 0) scale_computed_ = false;  // the scale saw overflowed values
    return EvaluateGradientAndJacobian(/*new_evaluation_point=*/false);
  }
  if (precision_->CanSwitchToDouble()) {
    // Float Jacobians that cannot serve this problem any more: one that was
    // not finite (the double one stood in for it, so this Jacobian is
    // right), or a gradient within their rounding (steps from them no
    // longer follow the cost down: near a minimum they wander at the cost's
    // rounding level until the radius collapses, and a gradient tolerance
    // below that level is never met). Double precision from here on, where
    // it fits (else the float solve goes on).
    std::string reason = evaluator_->float_jacobian_fallback();
    const double float_level = evaluator_->float_gradient_level();
    const double gradient_max = reductions_.MaxNorm(Reductions::Space::kTangent, gradient_);
    if (reason.empty() && float_level > 0.0 && gradient_max <= kFloatGradientLevels * float_level) {
      char text[200];
      std::snprintf(text, sizeof(text),
                    "the gradient (max norm %.3e) is within the rounding of the float Jacobians (%.3e)",
                    gradient_max, float_level);
      reason = text;
    }
    if (!reason.empty() && ContinueInDouble(reason, /*required=*/false)) {
      return EvaluateGradientAndJacobian(/*new_evaluation_point=*/false);
    }
  }
  negative_gradient_ = -gradient_;
  if (!evaluator_->Plus(x_.data(), negative_gradient_.data(), projected_.data())) {
    return Failure("projected_gradient_step = Plus(x, -gradient) failed.");
  }
  difference_ = x_ - projected_;
  it_.gradient_max_norm = reductions_.MaxNorm(Reductions::Space::kAmbient, difference_);
  it_.gradient_norm = reductions_.Norm(Reductions::Space::kAmbient, difference_);
  return true;
}

bool TrustRegionMinimizer::FinalizeIterationAndCheckIfMinimizerCanContinue() {
  if (it_.step_is_successful) {
    ++summary_->num_successful_steps;
    if (x_cost_ < minimum_cost_) {
      minimum_cost_ = x_cost_;
      Eigen::Map<Vector>(parameters_, s_.num_parameters) = x_;
      it_.step_is_nonmonotonic = false;
    } else {
      it_.step_is_nonmonotonic = true;
    }
  } else {
    ++summary_->num_unsuccessful_steps;
  }
  it_.trust_region_radius = strategy_->Radius();
  const double now = WallTimeInSeconds();
  it_.iteration_time_in_seconds = now - iteration_start_time_;
  it_.cumulative_time_in_seconds = now - ctx_.start_time;
  summary_->iterations.push_back(it_);

  if (!RunCallbacks()) return false;
  std::string* message = &summary_->message;
  double elapsed = WallTimeInSeconds() - ctx_.start_time;
  // The slowest process's clock decides for all of them.
  if (ctx_.processes != nullptr) elapsed = ctx_.processes->Max(elapsed);
  if (MaxSolverTimeMet(elapsed, o_.max_solver_time_in_seconds,
                       message) ||
      MaxIterationsMet(it_.iteration, o_.max_num_iterations, message)) {
    summary_->termination_type = ceres::NO_CONVERGENCE;
    return false;
  }
  if ((it_.step_is_successful &&
       GradientToleranceMet(it_.gradient_max_norm, o_.gradient_tolerance, message)) ||
      MinTrustRegionRadiusMet(it_.trust_region_radius, o_.min_trust_region_radius, message)) {
    summary_->termination_type = ceres::CONVERGENCE;
    return false;
  }
  return true;
}

bool TrustRegionMinimizer::RunCallbacks() {
  ceres::CallbackReturnType status = ceres::SOLVER_CONTINUE;
  for (size_t i = 0; i < ctx_.callbacks.size() && status == ceres::SOLVER_CONTINUE; ++i) {
    status = (*ctx_.callbacks[i])(it_);
  }
  if (ctx_.processes != nullptr) {
    // Every process ends where one's callbacks end it: abort before
    // terminate before continue.
    const double code = status == ceres::SOLVER_ABORT ? 2.0 : status == ceres::SOLVER_TERMINATE_SUCCESSFULLY ? 1.0 : 0.0;
    const double agreed = ctx_.processes->Max(code);
    status = agreed >= 2.0 ? ceres::SOLVER_ABORT
             : agreed >= 1.0 ? ceres::SOLVER_TERMINATE_SUCCESSFULLY
                             : ceres::SOLVER_CONTINUE;
  }
  switch (status) {
    case ceres::SOLVER_CONTINUE:
      return true;
    case ceres::SOLVER_TERMINATE_SUCCESSFULLY:
      summary_->termination_type = ceres::USER_SUCCESS;
      summary_->message = "User callback returned SOLVER_TERMINATE_SUCCESSFULLY.";
      return false;
    case ceres::SOLVER_ABORT:
      summary_->termination_type = ceres::USER_FAILURE;
      summary_->message = "User callback returned SOLVER_ABORT.";
      return false;
  }
  return Failure("Unknown type of user callback status.");
}

bool TrustRegionMinimizer::ComputeTrustRegionStep() {
  if (jacobian_is_stale_) {
    // A rejected candidate's Jacobian is in the solver: the current
    // point's again, with the iteration's summary left as it is.
    const ceres::IterationSummary saved = it_;
    if (!EvaluateGradientAndJacobian(/*new_evaluation_point=*/true)) return false;
    it_ = saved;
  }
  LinearSolver* solver = precision_->solver();
  const double t0 = WallTimeInSeconds();
  it_.step_is_valid = false;
  double jy = 0.0;
  const LinearSolverSummary ls = strategy_->ComputeStep(solver, o_.eta, y_.data(), &jy);
  const double t1 = WallTimeInSeconds();
  stats_->linear_solver_time += t1 - t0;
  ++stats_->num_linear_solves;
  it_.step_solver_time_in_seconds = t1 - t0;
  it_.linear_solver_iterations = ls.num_iterations;
  if (ls.termination == LinearSolverTermination::kFatalError) {
    // Ceres' message, followed by the linear solver's reason (e.g. a
    // CHOLMOD error) so that the summary alone explains the failure.
    return Failure(
        "Linear solver failed due to unrecoverable non-numeric causes. "
        "Please see the error log for clues. " + ls.message);
  }
  if (ls.termination == LinearSolverTermination::kFailure) {
    if (!ctx_.is_silent) {
      LOG(WARNING) << "Linear solver failure. Failed to compute a step: " << ls.message;
    }
    if (precision_->CanSwitchToDouble()) {
      // A numerical failure in single precision: redo this step in double.
      return RecomputeStepInDouble("the linear solver failed (" + ls.message + ")",
                                   /*required=*/true);
    }
    return true;
  }
  // step = -y. The model cost change of the step in the scaled space,
  //   -(J step)^T (r + J step / 2) = y^T J^T r - |J y|^2 / 2,
  // with J^T r = scale .* gradient (the gradient is unscaled).
  scaled_gradient_ = scale_.cwiseProduct(gradient_);
  model_cost_change_ = reductions_.Dot(Reductions::Space::kTangent, y_, scaled_gradient_) - 0.5 * jy;
  it_.step_is_valid = model_cost_change_ > 0.0;
  if (!it_.step_is_valid && precision_->CanSwitchToDouble()) {
    // The exact minimizer of the damped model always decreases it
    // (y^T (J^T J + D^2) y > |J y|^2 / 2), so a float step that does not is
    // rounding: near a minimum the gradient J^T r falls to the level of
    // float's error in the products and PCG returns noise. Ceres would
    // shrink the radius and count the step, failing at
    // max_num_consecutive_invalid_steps of them in a row; float steps would
    // only go on alternating between such noise and steps rejected at the
    // cost's own rounding level (twice the iterations of double on a
    // converging planar scene). The first is computed again in double
    // instead, and Ceres' counting applies from there.
    char reason[200];
    std::snprintf(reason, sizeof(reason),
                  "a step did not decrease the model (model cost change %.3e)", model_cost_change_);
    return RecomputeStepInDouble(reason, /*required=*/false);
  }
  if (it_.step_is_valid) {
    delta_ = -(y_.cwiseProduct(scale_));
    num_consecutive_invalid_steps_ = 0;
  } else if (!ctx_.is_silent) {
    VLOG(1) << "Invalid step: current_cost: " << x_cost_
            << " absolute model cost change: " << model_cost_change_
            << " relative model cost change: " << (model_cost_change_ / x_cost_);
  }
  return true;
}

bool TrustRegionMinimizer::ContinueInDouble(const std::string& reason, bool required) {
  std::string why;
  if (!precision_->SwitchToDouble(reason, static_cast<int>(it_.iteration), &why)) {
    VLOG(1) << "Single precision: " << reason << "; double precision unavailable: " << why;
    if (required) Failure("Single precision cannot solve this problem: " + reason + ". " + why);
    return false;
  }
  solver_scaled_ = false;
  strategy_->InvalidateDiagonal();
  VLOG(1) << "Single precision: " << reason << " at iteration " << it_.iteration
          << "; continued in double precision.";
  return true;
}

bool TrustRegionMinimizer::RecomputeStepInDouble(const std::string& reason, bool required) {
  if (!ContinueInDouble(reason, required)) return !required;
  const ceres::IterationSummary saved = it_;
  if (!EvaluateGradientAndJacobian(/*new_evaluation_point=*/false)) return false;
  it_ = saved;
  return ComputeTrustRegionStep();
}

void TrustRegionMinimizer::ReturnToSingleAfterTrial() {
  precision_->ReturnToSingle();
  solver_scaled_ = false;
  strategy_->InvalidateDiagonal();
  jacobian_is_stale_ = true;
  VLOG(1) << "Single precision: the step of iteration " << it_.iteration
          << " was not taken in double precision either; continued in single precision.";
}

bool TrustRegionMinimizer::HandleInvalidStep() {
  if (++num_consecutive_invalid_steps_ >= o_.max_num_consecutive_invalid_steps) {
    return Failure(TooManyInvalidStepsMessage(o_.max_num_consecutive_invalid_steps));
  }
  strategy_->StepIsInvalid();
  StepNotAccepted();
  it_.cost = x_cost_ + ctx_.fixed_cost;
  it_.cost_change = 0.0;
  it_.gradient_max_norm = summary_->iterations.back().gradient_max_norm;
  it_.gradient_norm = summary_->iterations.back().gradient_norm;
  it_.step_norm = 0.0;
  it_.relative_decrease = 0.0;
  it_.eta = o_.eta;
  precision_->StepRejected();
  return true;
}

const char* TrustRegionMinimizer::ToleranceMet(double step_norm, double cost_change,
                                               std::string* message) const {
  if (had_successful_step_ &&
      ParameterToleranceMet(step_norm, reductions_.Norm(Reductions::Space::kAmbient, x_),
                            o_.parameter_tolerance, message)) {
    return "parameter";
  }
  if (FunctionToleranceMet(cost_change, x_cost_, o_.function_tolerance, message)) return "function";
  return nullptr;
}

void TrustRegionMinimizer::SearchLineAndEvaluateCandidate() {
  if (s_.is_constrained && o_.line_search.max_num_iterations > 0) {
    line_search_->Search(o_.line_search, x_, x_cost_, gradient_, &delta_, stats_, summary_);
  }
  ComputeCandidatePointAndEvaluateCost();
}

void TrustRegionMinimizer::ComputeCandidatePointAndEvaluateCost() {
  candidate_has_jacobian_ = false;
  jacobian_tried_at_candidate_ = false;
  if (!evaluator_->Plus(x_.data(), delta_.data(), candidate_x_.data())) {
    if (!ctx_.is_silent) {
      LOG(WARNING)
          << "x_plus_delta = Plus(x, delta) failed. Treating it as a step with infinite cost";
    }
    candidate_cost_ = std::numeric_limits<double>::max();
    return;
  }
  const double t0 = WallTimeInSeconds();
  bool ok;
  if (jacobians_at_candidates_ && !inner_iterations_enabled_ &&
      consecutive_accepted_steps_ >= accepted_steps_before_jacobians_) {
    // The solver's Jacobian is overwritten from here on, whatever happens.
    jacobian_is_stale_ = true;
    ok = evaluator_->EvaluateJacobian(candidate_x_.data(), true, &candidate_cost_,
                                      candidate_gradient_.data(), precision_->solver()->writer());
    stats_->jacobian_evaluation_time += WallTimeInSeconds() - t0;
    ++stats_->num_jacobian_evaluations;
    candidate_has_jacobian_ = ok;
    jacobian_tried_at_candidate_ = true;
  } else {
    ok = evaluator_->EvaluateCost(candidate_x_.data(), &candidate_cost_);
    stats_->residual_evaluation_time += WallTimeInSeconds() - t0;
    ++stats_->num_residual_evaluations;
    jacobian_tried_at_candidate_ = false;
  }
  if (!ok) {
    if (!ctx_.is_silent) {
      LOG(WARNING) << "Step failed to evaluate. Treating it as a step with infinite cost";
      VLOG(1) << evaluator_->error();
    }
    candidate_cost_ = std::numeric_limits<double>::max();
  }
}

void TrustRegionMinimizer::StepNotAccepted() {
  consecutive_accepted_steps_ = 0;
  if (jacobian_tried_at_candidate_) {
    accepted_steps_before_jacobians_ = std::min(2 * accepted_steps_before_jacobians_, 1 << 20);
    jacobian_tried_at_candidate_ = false;
  }
}

bool TrustRegionMinimizer::HandleSuccessfulStep() {
  had_successful_step_ = true;
  ++consecutive_accepted_steps_;
  jacobian_tried_at_candidate_ = false;
  precision_->StepAccepted();
  x_ = candidate_x_;
  if (candidate_has_jacobian_) {
    x_cost_ = candidate_cost_;
    gradient_.swap(candidate_gradient_);
    jacobian_is_stale_ = false;
    if (!FinishJacobian()) return false;
  } else if (!EvaluateGradientAndJacobian(/*new_evaluation_point=*/false)) {
    return false;
  }
  it_.step_is_successful = true;
  strategy_->StepAccepted(it_.relative_decrease);
  step_evaluator_->StepAccepted(candidate_cost_, model_cost_change_);
  return true;
}

void Minimize(const MinimizerContext& context, const ProblemStructure& structure,
              Evaluator* evaluator, PrecisionPolicy* precision, double* parameters,
              ceres::Solver::Summary* summary, MinimizerStatistics* statistics) {
  TrustRegionMinimizer(context, structure, evaluator, precision, parameters, summary, statistics)
      .Run();
}

}  // namespace internal
}  // namespace ceres_sqrtba
