#include "ceres_sqrtba/internal/solve/square_root_solve.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/common/wall_time.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/minimizer/progress_logging.h"
#include "ceres_sqrtba/internal/minimizer/trust_region_minimizer.h"
#include "ceres_sqrtba/internal/problem/options_validation.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/solve/ceres_pass_through.h"
#include "ceres_sqrtba/internal/solve/summary_report.h"
#include "ceres_sqrtba/internal/solvers/linear_solver_factory.h"
#include "ceres_sqrtba/internal/solvers/precision_policy.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Keeps the user's parameter blocks at the best state after every iteration
// (Solver::Options::update_state_every_iteration).
class StateUpdatingCallback : public ceres::IterationCallback {
 public:
  StateUpdatingCallback(const ProblemStructure& s, const double* state) : s_(s), state_(state) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary&) override {
    StateToUser(s_, state_);
    return ceres::SOLVER_CONTINUE;
  }

 private:
  const ProblemStructure& s_;
  const double* state_;
};

// Residual blocks whose parameter blocks are all constant: their cost is
// reported, as Ceres reports it, but they take no part in the solve.
bool EvaluateFixedCost(ceres::Problem* problem, const ProblemStructure& s, double* fixed_cost,
                       std::string* error) {
  *fixed_cost = 0.0;
  for (ceres::ResidualBlockId id : s.fixed_residual_blocks) {
    double cost = 0.0;
    if (!problem->EvaluateResidualBlock(id, true, &cost, nullptr, nullptr) || !std::isfinite(cost)) {
      *error = "The " + NameOf(id) +
               ", whose parameter blocks are all constant, failed to evaluate (its cost function "
               "returned false or a value that is not finite).";
      return false;
    }
    *fixed_cost += cost;
  }
  return true;
}

std::string Capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

void FinishSummary(const MinimizerStatistics& stats, const PrecisionPolicy& precision, double start_time,
                   double minimizer_start, double minimizer_end, Solver::Summary* summary) {
  summary->precision_used = precision.current();
  summary->precision_switch_iteration = precision.switch_iteration();
  summary->precision_switch_reason = precision.switch_reason();
  if (precision.switch_iteration() >= 0 && summary->termination_type != ceres::FAILURE) {
    summary->message += " [Single precision: " + precision.switch_reason() + " at iteration " +
                        std::to_string(precision.switch_iteration()) + "; continued in double precision.]";
  }
  summary->final_cost = summary->initial_cost;
  for (const ceres::IterationSummary& it : summary->iterations) {
    if (it.step_is_successful) summary->final_cost = std::min(summary->final_cost, it.cost);
  }
  summary->residual_evaluation_time_in_seconds = stats.residual_evaluation_time;
  summary->num_residual_evaluations = stats.num_residual_evaluations;
  summary->jacobian_evaluation_time_in_seconds = stats.jacobian_evaluation_time;
  summary->num_jacobian_evaluations = stats.num_jacobian_evaluations;
  summary->linear_solver_time_in_seconds = stats.linear_solver_time;
  summary->num_linear_solves = stats.num_linear_solves;
  summary->minimizer_time_in_seconds = minimizer_end - minimizer_start;
  const double end = WallTimeInSeconds();
  summary->postprocessor_time_in_seconds = end - minimizer_end;
  summary->total_time_in_seconds = end - start_time;
}

}  // namespace

void SolveSquareRoot(const Solver::Options& options, ceres::Problem* problem, Solver::Summary* summary) {
  const double start_time = WallTimeInSeconds();
  StartSummary(options, problem, summary);
  auto fail = [&](const std::string& message) { RecordFailure(options, message, start_time, summary); };
  std::string error;
  if (problem == nullptr) return fail("ceres_sqrtba::Solve was called with a null problem.");
  if (!ValidateSqrtOptions(options, &error)) return fail(error);

  ProblemStructure s;
  switch (BuildProblemStructure(*problem, options.linear_solver_ordering.get(), &s, &error)) {
    case StructureStatus::kOk:
      break;
    case StructureStatus::kNoLandmarks:
      return SolveWithoutLandmarks(options, problem, summary);
    case StructureStatus::kUnsupported:
    case StructureStatus::kInvalid:
      return fail(error);
  }
  RecordStructure(s, options.linear_solver_ordering.get(), summary);

  // Memory: checked before the landmark storage is allocated.
  LinearSolverFactory factory(s, options);
  if (factory.sparse()) RecordReducedCameraFactorization(factory.dense_factorization(), summary);
  const MemoryBudget budget(options.memory_limit_in_bytes);
  if (!budget.Fits(factory.RequiredBytes(options.precision), Capitalized(factory.WhatRequiredBytesCounts()),
                   &error)) {
    return fail(error);
  }
  VLOG(1) << "ceres_sqrtba: " << s.landmarks.size() << " landmarks, " << s.cameras.size() << " cameras, "
          << s.groups.size() << (factory.projected() ? " projected" : "") << " landmark blocks; "
          << factory.WhatRequiredBytesCounts() << " take "
          << FormatBytes(factory.RequiredBytes(options.precision)) << " in "
          << (options.precision == SINGLE_PRECISION ? "single" : "double") << " precision (limit "
          << FormatBytes(budget.limit()) << ").";

  double fixed_cost = 0.0;
  if (!EvaluateFixedCost(problem, s, &fixed_cost, &error)) return fail(error);
  summary->fixed_cost = fixed_cost;

  ParallelContext context(options.num_threads);
  Evaluator evaluator(s, factory.partition(), &context);
  PrecisionPolicy precision(
      options.precision, [&](Precision p) { return factory.Create(p, &context); },
      [&](Precision p, std::string* why) {
        const int64_t need = factory.RequiredBytes(p);
        if (budget.limit() <= 0 || need <= budget.limit()) return true;
        *why = "Double precision would need " + FormatBytes(need) + " for " + factory.WhatRequiredBytesCounts() +
               " but only " + FormatBytes(budget.limit()) + " may be used.";
        return false;
      });

  std::vector<double> state = StateFromUser(s);
  MinimizerContext mctx;
  mctx.options = &options;
  mctx.fixed_cost = fixed_cost;
  mctx.start_time = start_time;
  mctx.is_silent = options.logging_type == ceres::SILENT;
  ProgressLogger logger(options.minimizer_progress_to_stdout);
  StateUpdatingCallback state_updater(s, state.data());
  if (!mctx.is_silent) mctx.callbacks.push_back(&logger);
  if (options.update_state_every_iteration) mctx.callbacks.push_back(&state_updater);
  mctx.callbacks.insert(mctx.callbacks.end(), options.callbacks.begin(), options.callbacks.end());

  const double minimizer_start = WallTimeInSeconds();
  summary->preprocessor_time_in_seconds = minimizer_start - start_time;
  MinimizerStatistics stats;
  Minimize(mctx, s, &evaluator, &precision, state.data(), summary, &stats);
  const double minimizer_end = WallTimeInSeconds();

  // As Ceres: the user's blocks get the best state unless the solve failed.
  if (summary->termination_type != ceres::FAILURE && summary->termination_type != ceres::USER_FAILURE) {
    StateToUser(s, state.data());
  }
  FinishSummary(stats, precision, start_time, minimizer_start, minimizer_end, summary);
}

}  // namespace internal
}  // namespace ceres_sqrtba
