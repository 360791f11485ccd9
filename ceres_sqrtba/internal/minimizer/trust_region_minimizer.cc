#include "ceres_sqrtba/internal/minimizer/trust_region_minimizer.h"

#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "ceres_sqrtba/internal/minimizer/levenberg_marquardt_strategy.h"
#include "ceres_sqrtba/internal/minimizer/trust_region_step_evaluator.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

namespace {

using Vector = Eigen::VectorXd;

std::string Printf(const char* fmt, double a, double b = 0.0) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), fmt, a, b);
  return buf;
}

class Minimizer {
 public:
  Minimizer(const MinimizerContext& context, const ProblemStructure& s,
            Evaluator* evaluator, LinearSolver* solver, double* parameters,
            ceres::Solver::Summary* summary, MinimizerStatistics* stats)
      : ctx_(context),
        o_(*context.options),
        s_(s),
        evaluator_(evaluator),
        solver_(solver),
        parameters_(parameters),
        summary_(summary),
        stats_(stats) {
    const int n = s.num_parameters, m = s.num_effective_parameters;
    x_ = Eigen::Map<const Vector>(parameters, n);
    candidate_x_.resize(n);
    projected_.resize(n);
    gradient_.resize(m);
    negative_gradient_.resize(m);
    y_.resize(m);
    delta_.resize(m);
    scale_ = Vector::Ones(m);
    LevenbergMarquardtOptions lm;
    lm.initial_radius = o_.initial_trust_region_radius;
    lm.max_radius = o_.max_trust_region_radius;
    lm.min_diagonal = o_.min_lm_diagonal;
    lm.max_diagonal = o_.max_lm_diagonal;
    strategy_ = std::make_unique<LevenbergMarquardtStrategy>(m, lm);
  }

  void Run() {
    start_time_ = ctx_.start_time;
    iteration_start_time_ = WallTimeInSeconds();
    summary_->termination_type = ceres::NO_CONVERGENCE;
    summary_->num_successful_steps = 0;
    summary_->num_unsuccessful_steps = 0;
    if (!IterationZero()) {
      Fail();
      return;
    }
    step_evaluator_ = std::make_unique<TrustRegionStepEvaluator>(
        x_cost_, o_.use_nonmonotonic_steps ? o_.max_consecutive_nonmonotonic_steps : 0);
    while (FinalizeIterationAndCheckIfMinimizerCanContinue()) {
      iteration_start_time_ = WallTimeInSeconds();
      const double previous_gradient_norm = it_.gradient_norm;
      const double previous_gradient_max_norm = it_.gradient_max_norm;
      it_ = ceres::IterationSummary();
      it_.iteration = summary_->iterations.back().iteration + 1;

      if (!ComputeTrustRegionStep()) {
        Fail();
        return;
      }
      if (!it_.step_is_valid) {
        if (!ContinueAfterInvalidStep()) return;
        continue;
      }
      ComputeCandidatePointAndEvaluateCost();
      const char* tolerance_met = !InSinglePrecision()            ? nullptr
                                  : ParameterToleranceReached() ? "parameter"
                                  : FunctionToleranceReached()  ? "function"
                                                                : nullptr;
      if (tolerance_met != nullptr) {
        if (!RedoConvergedFloatStepInDouble(tolerance_met)) {
          Fail();
          return;
        }
        if (!it_.step_is_valid) {
          if (!ContinueAfterInvalidStep()) return;
          continue;
        }
      }
      if (ParameterToleranceReached()) return;
      if (FunctionToleranceReached()) return;
      if (IsStepSuccessful()) {
        if (!HandleSuccessfulStep()) {
          Fail();
          return;
        }
      } else {
        it_.step_is_successful = false;
        it_.cost = candidate_cost_ + ctx_.fixed_cost;
        it_.gradient_norm = previous_gradient_norm;
        it_.gradient_max_norm = previous_gradient_max_norm;
        strategy_->StepRejected();
        if (!MaybeSwitchAfterRejections()) {
          Fail();
          return;
        }
      }
    }
  }

 private:
  void Fail() {
    if (!ctx_.is_silent) LOG(ERROR) << "Terminating: " << summary_->message;
  }

  bool IterationZero() {
    it_ = ceres::IterationSummary();
    it_.iteration = 0;
    it_.eta = o_.eta;
    if (!EvaluateGradientAndJacobian()) {
      // Ceres' message when the evaluation itself failed; a more precise one
      // (e.g. single precision that cannot fall back to double) is kept.
      if (summary_->message == "Residual and Jacobian evaluation failed.") {
        summary_->message = "Initial residual and Jacobian evaluation failed.";
      }
      return false;
    }
    summary_->initial_cost = x_cost_ + ctx_.fixed_cost;
    it_.step_is_valid = true;
    it_.step_is_successful = true;
    return true;
  }

  bool EvaluateGradientAndJacobian() {
    const double t0 = WallTimeInSeconds();
    const bool ok = evaluator_->EvaluateJacobian(x_.data(), &x_cost_, gradient_.data(),
                                                 solver_->writer());
    stats_->jacobian_evaluation_time += WallTimeInSeconds() - t0;
    ++stats_->num_jacobian_evaluations;
    if (!ok) {
      summary_->message = "Residual and Jacobian evaluation failed.";
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    it_.cost = x_cost_ + ctx_.fixed_cost;
    if (o_.jacobi_scaling) {
      if (!scale_computed_) {
        // Column scale from the first Jacobian: 1 / (1 + |J_i|), the one
        // added to avoid dividing by zero for empty columns.
        solver_->SquaredColumnNorms(scale_.data());
        for (int i = 0; i < scale_.size(); ++i) scale_[i] = 1.0 / (1.0 + std::sqrt(scale_[i]));
        scale_computed_ = true;
      }
      // The solver applies the scale to this Jacobian and, as it writes
      // them, to every later one.
      if (!solver_scaled_) solver_->ScaleColumns(scale_.data());
      solver_scaled_ = true;
    }
    if (solver_->JacobianOutOfRange()) {
      if (!SwitchToFallback("the Jacobian or the residuals exceed its range")) return false;
      if (it_.iteration == 0) scale_computed_ = false;  // the scale saw overflowed values
      return EvaluateGradientAndJacobian();
    }
    negative_gradient_ = -gradient_;
    if (!evaluator_->Plus(x_.data(), negative_gradient_.data(), projected_.data())) {
      summary_->message = "projected_gradient_step = Plus(x, -gradient) failed.";
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    it_.gradient_max_norm = (x_ - projected_).lpNorm<Eigen::Infinity>();
    it_.gradient_norm = (x_ - projected_).norm();
    return true;
  }

  bool FinalizeIterationAndCheckIfMinimizerCanContinue() {
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
    it_.cumulative_time_in_seconds = now - start_time_;
    summary_->iterations.push_back(it_);

    if (!RunCallbacks()) return false;
    const double total = WallTimeInSeconds() - start_time_;
    if (total >= o_.max_solver_time_in_seconds) {
      summary_->message = Printf("Maximum solver time reached. Total solver time: %e >= %e.",
                                 total, o_.max_solver_time_in_seconds);
      summary_->termination_type = ceres::NO_CONVERGENCE;
      return false;
    }
    if (it_.iteration >= o_.max_num_iterations) {
      summary_->message = Printf("Maximum number of iterations reached. Number of iterations: %.0f.",
                                 it_.iteration);
      summary_->termination_type = ceres::NO_CONVERGENCE;
      return false;
    }
    if (it_.step_is_successful && it_.gradient_max_norm <= o_.gradient_tolerance) {
      summary_->message = Printf("Gradient tolerance reached. Gradient max norm: %e <= %e",
                                 it_.gradient_max_norm, o_.gradient_tolerance);
      summary_->termination_type = ceres::CONVERGENCE;
      return false;
    }
    if (it_.trust_region_radius <= o_.min_trust_region_radius) {
      summary_->message = Printf("Minimum trust region radius reached. Trust region radius: %e <= %e",
                                 it_.trust_region_radius, o_.min_trust_region_radius);
      summary_->termination_type = ceres::CONVERGENCE;
      return false;
    }
    return true;
  }

  bool RunCallbacks() {
    ceres::CallbackReturnType status = ceres::SOLVER_CONTINUE;
    for (size_t i = 0; i < ctx_.callbacks.size() && status == ceres::SOLVER_CONTINUE; ++i) {
      status = (*ctx_.callbacks[i])(it_);
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
    summary_->termination_type = ceres::FAILURE;
    summary_->message = "Unknown type of user callback status.";
    return false;
  }

  // Returns false only for unrecoverable errors.
  bool ComputeTrustRegionStep() {
    const double t0 = WallTimeInSeconds();
    it_.step_is_valid = false;
    double jy = 0.0;
    const LinearSolverSummary ls = strategy_->ComputeStep(solver_, o_.eta, y_.data(), &jy);
    const double t1 = WallTimeInSeconds();
    stats_->linear_solver_time += t1 - t0;
    ++stats_->num_linear_solves;
    it_.step_solver_time_in_seconds = t1 - t0;
    it_.linear_solver_iterations = ls.num_iterations;
    if (ls.termination == LinearSolverTermination::kFatalError) {
      // Ceres' message, followed by the linear solver's reason (e.g. a
      // SuiteSparseQR error) so that the summary alone explains the failure.
      summary_->message =
          "Linear solver failed due to unrecoverable non-numeric causes. "
          "Please see the error log for clues. " + ls.message;
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    if (ls.termination == LinearSolverTermination::kFailure) {
      if (!ctx_.is_silent) LOG(WARNING) << "Linear solver failure. Failed to compute a step: " << ls.message;
      if (fallback_ == nullptr && ctx_.make_fallback_solver) {
        // A numerical failure in single precision: redo this step in double.
        return RecomputeStepInDouble("the linear solver failed (" + ls.message + ")");
      }
      return true;
    }
    // step = -y. The model cost change of the step in the scaled space,
    //   -(J step)^T (r + J step / 2) = y^T J^T r - |J y|^2 / 2,
    // with J^T r = scale .* gradient (the gradient is unscaled).
    model_cost_change_ = y_.dot(scale_.cwiseProduct(gradient_)) - 0.5 * jy;
    it_.step_is_valid = model_cost_change_ > 0.0;
    if (!it_.step_is_valid && InSinglePrecision() &&
        num_consecutive_invalid_steps_ + 1 >= o_.max_num_consecutive_invalid_steps) {
      // The exact minimizer of the damped model always decreases it
      // (y^T (J^T J + D^2) y > |J y|^2 / 2), so a step that does not is
      // rounding: near a minimum the gradient J^T r falls to the level of
      // float's error in the products and PCG returns noise. Ceres counts
      // such steps as invalid and fails at max_num_consecutive_invalid_steps
      // of them in a row, discarding a solve that had converged; the last
      // one is computed again in double precision instead, and the solve
      // continues in double.
      char reason[200];
      std::snprintf(reason, sizeof(reason),
                    "%d consecutive steps did not decrease the model (model cost change %.3e)",
                    num_consecutive_invalid_steps_ + 1, model_cost_change_);
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

  // Continues the solve with the double precision fallback solver.
  // Not required: when it cannot be built, only logs why and returns false.
  bool SwitchToFallback(const std::string& reason, bool required = true) {
    std::string error;
    std::unique_ptr<LinearSolver> fallback;
    if (ctx_.make_fallback_solver) fallback = ctx_.make_fallback_solver(&error);
    if (fallback == nullptr && !required) {
      fallback_unavailable_ = true;
      if (!ctx_.is_silent) LOG(WARNING) << "Single precision: " << reason << "; double precision unavailable: " << error;
      return false;
    }
    if (fallback == nullptr) {
      summary_->message = "Single precision cannot solve this problem: " + reason + ". " + error;
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    fallback_ = std::move(fallback);
    solver_ = fallback_.get();
    solver_scaled_ = false;
    strategy_->InvalidateDiagonal();
    char note[512];
    std::snprintf(note, sizeof(note), "Single precision: %s at iteration %d; continued in double precision.",
                  reason.c_str(), it_.iteration);
    stats_->precision_note = note;
    if (!ctx_.is_silent) LOG(WARNING) << stats_->precision_note;
    return true;
  }

  // Ceres' handling of an invalid step; false (after Fail) ends the solve.
  bool ContinueAfterInvalidStep() {
    if (HandleInvalidStep() && MaybeSwitchAfterRejections()) return true;
    Fail();
    return false;
  }

  // A float step met `tolerance` ("parameter" or "function"). A step
  // that is short because PCG in float stopped at its rounding level passes
  // these tests as well as a step at a minimum does (seen 1% above the
  // minimum on generic problems), so the tests are applied to this
  // iteration's step computed again in double, and the solve continues in
  // double. When double does not fit, the float step stands. False only for
  // unrecoverable errors.
  bool RedoConvergedFloatStepInDouble(const char* tolerance) {
    summary_->termination_type = ceres::NO_CONVERGENCE;
    summary_->message.clear();
    if (!RecomputeStepInDouble(std::string("the ") + tolerance +
                                   " tolerance was met by a float step (convergence is only declared on a "
                                   "double precision step)",
                               /*required=*/false)) {
      return false;
    }
    if (fallback_ != nullptr && it_.step_is_valid) ComputeCandidatePointAndEvaluateCost();
    return true;
  }

  // Single precision steps, with double precision still possible.
  bool InSinglePrecision() const {
    return fallback_ == nullptr && ctx_.make_fallback_solver && !fallback_unavailable_;
  }

  // Switches to the double precision fallback and computes this iteration's
  // step again with it, from a Jacobian evaluated into its blocks.
  // Not required: when double precision does not fit, the step stays as it
  // was (an invalid step counts as Ceres counts it) and returns true.
  bool RecomputeStepInDouble(const std::string& reason, bool required = true) {
    if (!SwitchToFallback(reason, required)) return !required;
    const ceres::IterationSummary saved = it_;
    if (!EvaluateGradientAndJacobian()) return false;
    it_ = saved;
    return ComputeTrustRegionStep();
  }

  // Single precision that keeps producing steps the true cost rejects has
  // probably lost the precision the problem needs (e.g. a badly scaled
  // problem without Jacobi scaling): after kMaxRejectionsInFallbackMode
  // unsuccessful steps in a row, continue in double precision.
  bool MaybeSwitchAfterRejections() {
    constexpr int kMaxRejectionsInFallbackMode = 5;
    if (++consecutive_unsuccessful_ < kMaxRejectionsInFallbackMode || fallback_ != nullptr ||
        !ctx_.make_fallback_solver) {
      return true;
    }
    char reason[128];
    std::snprintf(reason, sizeof(reason), "%d consecutive steps were rejected",
                  consecutive_unsuccessful_);
    if (!SwitchToFallback(reason)) return false;
    const ceres::IterationSummary saved = it_;
    if (!EvaluateGradientAndJacobian()) return false;
    it_ = saved;
    return true;
  }

  bool HandleInvalidStep() {
    if (++num_consecutive_invalid_steps_ >= o_.max_num_consecutive_invalid_steps) {
      summary_->message = Printf(
          "Number of consecutive invalid steps more than "
          "Solver::Options::max_num_consecutive_invalid_steps: %.0f",
          o_.max_num_consecutive_invalid_steps);
      summary_->termination_type = ceres::FAILURE;
      return false;
    }
    strategy_->StepIsInvalid();
    it_.cost = x_cost_ + ctx_.fixed_cost;
    it_.cost_change = 0.0;
    it_.gradient_max_norm = summary_->iterations.back().gradient_max_norm;
    it_.gradient_norm = summary_->iterations.back().gradient_norm;
    it_.step_norm = 0.0;
    it_.relative_decrease = 0.0;
    it_.eta = o_.eta;
    return true;
  }

  void ComputeCandidatePointAndEvaluateCost() {
    if (!evaluator_->Plus(x_.data(), delta_.data(), candidate_x_.data())) {
      if (!ctx_.is_silent) {
        LOG(WARNING) << "x_plus_delta = Plus(x, delta) failed. Treating it as a step with infinite cost";
      }
      candidate_cost_ = std::numeric_limits<double>::max();
      return;
    }
    const double t0 = WallTimeInSeconds();
    const bool ok = evaluator_->EvaluateCost(candidate_x_.data(), &candidate_cost_);
    stats_->residual_evaluation_time += WallTimeInSeconds() - t0;
    ++stats_->num_residual_evaluations;
    if (!ok) {
      if (!ctx_.is_silent) {
        LOG(WARNING) << "Step failed to evaluate. Treating it as a step with infinite cost";
      }
      candidate_cost_ = std::numeric_limits<double>::max();
    }
  }

  bool ParameterToleranceReached() {
    const double x_norm = x_.norm();
    it_.step_norm = (x_ - candidate_x_).norm();
    const double tolerance = o_.parameter_tolerance * (x_norm + o_.parameter_tolerance);
    if (it_.step_norm > tolerance) return false;
    summary_->message = Printf("Parameter tolerance reached. Relative step_norm: %e <= %e.",
                               it_.step_norm / (x_norm + o_.parameter_tolerance),
                               o_.parameter_tolerance);
    summary_->termination_type = ceres::CONVERGENCE;
    return true;
  }

  bool FunctionToleranceReached() {
    it_.cost_change = x_cost_ - candidate_cost_;
    const double tolerance = o_.function_tolerance * x_cost_;
    if (std::fabs(it_.cost_change) > tolerance) return false;
    summary_->message = Printf("Function tolerance reached. |cost_change|/cost: %e <= %e",
                               std::fabs(it_.cost_change) / x_cost_, o_.function_tolerance);
    summary_->termination_type = ceres::CONVERGENCE;
    return true;
  }

  bool IsStepSuccessful() {
    it_.relative_decrease = step_evaluator_->StepQuality(candidate_cost_, model_cost_change_);
    return it_.relative_decrease > o_.min_relative_decrease;
  }

  bool HandleSuccessfulStep() {
    consecutive_unsuccessful_ = 0;
    x_ = candidate_x_;
    if (!EvaluateGradientAndJacobian()) return false;
    it_.step_is_successful = true;
    strategy_->StepAccepted(it_.relative_decrease);
    step_evaluator_->StepAccepted(candidate_cost_, model_cost_change_);
    return true;
  }

  const MinimizerContext& ctx_;
  const ceres::Solver::Options& o_;
  const ProblemStructure& s_;
  Evaluator* evaluator_;
  LinearSolver* solver_;
  double* parameters_;
  ceres::Solver::Summary* summary_;
  MinimizerStatistics* stats_;
  std::unique_ptr<LevenbergMarquardtStrategy> strategy_;
  std::unique_ptr<TrustRegionStepEvaluator> step_evaluator_;
  ceres::IterationSummary it_;
  Vector x_, candidate_x_, projected_, gradient_, negative_gradient_, y_, delta_, scale_;
  double x_cost_ = std::numeric_limits<double>::max();
  double minimum_cost_ = std::numeric_limits<double>::max();
  double candidate_cost_ = 0.0;
  double model_cost_change_ = 0.0;
  int num_consecutive_invalid_steps_ = 0;
  int consecutive_unsuccessful_ = 0;
  bool scale_computed_ = false;
  bool solver_scaled_ = false;
  std::unique_ptr<LinearSolver> fallback_;
  bool fallback_unavailable_ = false;  // an optional switch found it does not fit
  double start_time_ = 0.0;
  double iteration_start_time_ = 0.0;
};

}  // namespace

void Minimize(const MinimizerContext& context, const ProblemStructure& structure,
              Evaluator* evaluator, LinearSolver* linear_solver, double* parameters,
              ceres::Solver::Summary* summary, MinimizerStatistics* statistics) {
  Minimizer(context, structure, evaluator, linear_solver, parameters, summary, statistics).Run();
}

}  // namespace internal
}  // namespace ceres_sqrtba
