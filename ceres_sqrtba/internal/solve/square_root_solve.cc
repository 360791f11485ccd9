#include "ceres_sqrtba/internal/solve/square_root_solve.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/common/wall_time.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/minimizer/coordinate_descent_minimizer.h"
#include "ceres_sqrtba/internal/minimizer/progress_logging.h"
#include "ceres_sqrtba/internal/minimizer/trust_region_minimizer.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/solve/ceres_pass_through.h"
#include "ceres_sqrtba/internal/solve/distributed_structure.h"
#include "ceres_sqrtba/internal/solve/options_validation.h"
#include "ceres_sqrtba/internal/solve/summary_report.h"
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

std::string Capitalized(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

// Everything a solve allocates, by part, for the memory check: counted
// before the linear solver's storage (the largest part) is allocated. The
// structure and the plan are already there; the rest follows from the sizes.
// Measured against the peak resident memory of whole solves in
// docs/solver.md ("Memory").
struct MemoryPlan {
  int64_t storage = 0;    // the landmark blocks (and the direct solver's matrix)
  int64_t structure = 0;  // the problem structure and the storage's layout
  int64_t vectors = 0;    // the solver's camera-side vectors, the evaluator's, the loop's
  // What the count misses (the allocator's own overhead, TBB's and
  // glog's): 5 %, measured (docs/solver.md).
  int64_t Total() const { return (storage + structure + vectors) * 21 / 20; }
};

MemoryPlan PlanMemory(const ProblemStructure& s, const LinearSolverFactory& factory, Precision precision) {
  MemoryPlan plan;
  plan.storage = factory.RequiredBytes(precision);
  plan.structure = s.AllocatedBytes() + factory.PlanBytes();
  const int64_t n = s.num_parameters, m = s.num_effective_parameters;
  int64_t plus_jacobians = 0;
  for (int p : s.variable_blocks) {
    const ParameterBlockInfo& pb = s.parameter_blocks[p];
    if (pb.manifold != nullptr) plus_jacobians += int64_t{pb.size} * pb.tangent_size * 8;
  }
  // The evaluator's per-chunk camera gradients and gradient magnitudes (and
  // their sum), and PlusJacobians; the loop's
  // state copies and vectors (x, candidate, projected gradient step, state,
  // initial state; gradient, its negation, step, scaled step, column scale,
  // two LM diagonals) and those of the line search.
  plan.vectors = factory.SolverVectorBytes(precision) +
                 (2 * int64_t{factory.partition().num_chunks()} + 1) * s.num_camera_parameters * 8 + plus_jacobians +
                 (5 * n + 7 * m) * 8 + (s.is_constrained ? (n + 2 * m) * 8 : 0);
  return plan;
}

// "The landmark blocks (X), ..." or, for a switch, "In double precision, the
// landmark blocks (X), ...": what MemoryBudget::Fits names.
std::string Describe(const MemoryPlan& plan, const LinearSolverFactory& factory, bool for_switch = false) {
  const std::string counts = factory.WhatRequiredBytesCounts();
  return (for_switch ? "In double precision, " + counts : Capitalized(counts)) + " (" + FormatBytes(plan.storage) +
         "), the problem structure and its layout (" + FormatBytes(plan.structure) + ") and the vectors (" +
         FormatBytes(plan.vectors) + ")";
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
  // As Ceres: the lowest cost of any iteration, a rejected one included.
  summary->final_cost = summary->initial_cost;
  for (const ceres::IterationSummary& it : summary->iterations) {
    summary->final_cost = std::min(summary->final_cost, it.cost);
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

// Puts the user's initial values back unless told the solve's result is
// written: on a failure, and on any exception that leaves the solve after
// the evaluation callback's points were written into the user's blocks.
class UserStateRestorer {
 public:
  UserStateRestorer(const ProblemStructure& s, std::vector<double> initial) : s_(s), initial_(std::move(initial)) {}
  ~UserStateRestorer() {
    if (armed_) StateToUser(s_, initial_.data());
  }
  void Disarm() { armed_ = false; }

 private:
  const ProblemStructure& s_;
  std::vector<double> initial_;
  bool armed_ = true;
};

void Run(const Solver::Options& options, ceres::Problem* problem, double start_time, Solver::Summary* summary,
         const ProcessGroup* processes, const std::vector<double*>* camera_blocks) {
  auto fail = [&](const std::string& message) { RecordFailure(options, message, start_time, summary); };
  std::string error;
  // One process: whether `error` is empty. Spread over processes: the same
  // answer on every process, with the first failing rank's error (every
  // process calls this at the same points).
  auto agree = [&]() {
    if (processes != nullptr) error = processes->FirstError(error);
    return error.empty();
  };

  ParallelContext context(summary->num_threads_used);
  context.set_processes(processes);
  ProblemStructure s;
  StructureOptions structure_options;
  structure_options.camera_blocks = camera_blocks;
  StructureStatus status =
      BuildProblemStructure(*problem, options.linear_solver_ordering.get(), &s, &error, &context, structure_options);
  // Spread over processes: the same status and message on every process.
  if (processes != nullptr) status = DistributedStructure(status, options, *processes, s, &error);
  switch (status) {
    case StructureStatus::kOk:
      break;
    case StructureStatus::kNoLandmarks:
      return SolveWithoutLandmarks(options, problem, summary);
    case StructureStatus::kUnsupported:
    case StructureStatus::kInvalid:
      RecordProblemSizes(*problem, summary);
      return fail(error);
  }
  // A bounded landmark on one process makes the loop search on all.
  if (processes != nullptr) s.is_constrained = processes->Any(s.is_constrained);
  RecordProblemSizes(s, summary);
  RecordStructure(s, options.linear_solver_ordering.get(), summary);
  if (processes != nullptr && camera_blocks != nullptr) {
    RecordDistributedSizes(s, *camera_blocks, *processes, summary);
  }
  // What only the square-root solvers cannot do is asked once a problem
  // without landmarks has gone to ceres::Solve, which can.
  const std::string unsupported =
      processes != nullptr ? UnsupportedDistributedOption(options) : UnsupportedSqrtOption(options);
  error = unsupported.empty() ? std::string() : "Invalid configuration. " + unsupported;
  if (!agree()) return fail(error);

  // Memory: checked before the landmark storage is allocated.
  LinearSolverOptions linear_solver_options = LinearSolverOptionsOf(options);
  linear_solver_options.processes = processes;
  LinearSolverFactory factory(s, linear_solver_options);
  if (factory.sparse()) RecordReducedCameraFactorization(factory.dense_factorization(), summary);
  error = factory.PlanError();
  if (!agree()) return fail(error);
  const MemoryBudget budget(options.memory_limit_in_bytes);
  // Spread over processes, with memory_limit_in_bytes = 0 (the memory
  // available): the processes that share a machine share its available
  // memory, so their plans together must fit the least any of them reads.
  // Every process calls this at the same points (it is collective).
  auto fits_on_machine = [&](int64_t bytes, const char* what, std::string* why) {
    if (processes == nullptr) return true;
    const int64_t together = processes->SumOnMachine(bytes);
    const int64_t limit = processes->MinOnMachine(budget.limit() > 0 ? budget.limit()
                                                                     : std::numeric_limits<int64_t>::max());
    if (options.memory_limit_in_bytes > 0 || limit == std::numeric_limits<int64_t>::max() || together <= limit) {
      return true;
    }
    *why = std::string("The processes on this machine need ") + FormatBytes(together) + " (" +
           std::to_string(together) + " bytes) together for " + what + " but only " + FormatBytes(limit) + " (" +
           std::to_string(limit) + " bytes) is available on it (Solver::Options::memory_limit_in_bytes = 0: the "
           "machine's available memory, shared by its processes); use more machines or fewer processes per "
           "machine, or give each process its part in Solver::Options::memory_limit_in_bytes.";
    return false;
  };
  MemoryPlan plan = PlanMemory(s, factory, options.precision);
  // Inner iterations: a state copy, the per-thread scratch of the
  // sub-solves, their index arrays.
  int64_t inner_iteration_bytes = 0;
  if (options.use_inner_iterations) {
    inner_iteration_bytes = int64_t{8} * s.num_parameters +
                            int64_t{summary->num_threads_used} * CoordinateDescentMinimizer::ScratchBytesPerThread(s) +
                            CoordinateDescentMinimizer::IndexBytes(s);
    plan.vectors += inner_iteration_bytes;
  }
  if (budget.Fits(plan.Total(), Describe(plan, factory), &error)) error.clear();
  {
    std::string why;
    if (!fits_on_machine(plan.Total(), "the solve", &why) && error.empty()) error = why;
  }
  if (!agree()) return fail(error);
  VLOG(1) << "ceres_sqrtba: " << s.landmarks.size() << " landmarks, " << s.cameras.size() << " cameras, "
          << s.groups.size() << (factory.projected() ? " projected" : "") << " landmark blocks; "
          << factory.WhatRequiredBytesCounts() << " take "
          << FormatBytes(factory.RequiredBytes(options.precision)) << " in "
          << (options.precision == SINGLE_PRECISION ? "single" : "double") << " precision (limit "
          << FormatBytes(budget.limit()) << ").";

  Evaluator evaluator(s, factory.partition(), &context);
  EvaluationNotifier notifier(problem, s);
  evaluator.SetNotifier(&notifier);
  double fixed_cost = 0.0;
  if (!evaluator.EvaluateFixedCost(&fixed_cost)) return fail(evaluator.error());
  summary->fixed_cost = fixed_cost;
  // Inner iterations, set up where Ceres' preprocessor does (after the
  // fixed cost), with its messages.
  std::unique_ptr<CoordinateDescentMinimizer> inner_iterations;
  if (options.use_inner_iterations) {
    InnerIterationSetup inner;
    const bool ok = SetUpInnerIterations(s, options.inner_iteration_ordering.get(), notifier.KnownToHaveCallback(),
                                         &inner, &error);
    summary->inner_iteration_ordering_used = inner.ordering_used;
    if (!ok) return fail(error);
    summary->inner_iterations_used = inner.used;
    if (inner.used) {
      inner_iterations = std::make_unique<CoordinateDescentMinimizer>(s, std::move(inner.sets), &context);
    }
  }
  PrecisionPolicy precision(
      options.precision, [&](Precision p) { return factory.Create(p, &context); },
      [&](Precision p, std::string* why) {
        MemoryPlan switched = PlanMemory(s, factory, p);
        switched.vectors += inner_iteration_bytes;
        bool fits = budget.Fits(switched.Total(), Describe(switched, factory, /*for_switch=*/true), why);
        std::string machine;
        if (!fits_on_machine(switched.Total(), "the switch to double precision", &machine) && fits) {
          *why = machine;
          fits = false;
        }
        if (processes != nullptr) {
          // Every process switches, or none.
          *why = processes->FirstError(fits ? std::string() : *why);
          fits = why->empty();
        }
        return fits;
      });

  std::vector<double> state = StateFromUser(s);
  UserStateRestorer restorer(s, state);
  MinimizerContext mctx;
  mctx.options = MinimizerOptionsOf(options);
  mctx.fixed_cost = fixed_cost;
  mctx.start_time = start_time;
  mctx.is_silent = options.logging_type == ceres::SILENT;
  mctx.jacobians_at_candidates = options.jacobians_at_candidates && !notifier.KnownToHaveCallback();
  if (processes != nullptr) {
    // An evaluation callback on one process turns them off on all.
    mctx.jacobians_at_candidates = !processes->Any(!mctx.jacobians_at_candidates);
  }
  mctx.inner_iterations = inner_iterations.get();
  mctx.processes = processes;
  std::unique_ptr<ProcessReductions> reductions;
  if (processes != nullptr) {
    reductions = std::make_unique<ProcessReductions>(processes, s);
    mctx.reductions = reductions.get();
  }
  ProgressLogger logger(options.minimizer_progress_to_stdout);
  StateUpdatingCallback state_updater(s, state.data());
  // Ceres' order: the state first, then the progress table, then the user's.
  if (options.update_state_every_iteration) mctx.callbacks.push_back(&state_updater);
  if (!mctx.is_silent) mctx.callbacks.push_back(&logger);
  mctx.callbacks.insert(mctx.callbacks.end(), options.callbacks.begin(), options.callbacks.end());

  const double minimizer_start = WallTimeInSeconds();
  summary->preprocessor_time_in_seconds = minimizer_start - start_time;
  MinimizerStatistics stats;
  Minimize(mctx, s, &evaluator, &precision, state.data(), summary, &stats);
  const double minimizer_end = WallTimeInSeconds();

  // As Ceres: the user's blocks get the best state when the solution is
  // usable, and their initial values otherwise (the state updating callback
  // and the evaluation callback's points may have changed them).
  if (summary->IsSolutionUsable()) {
    StateToUser(s, state.data());
    restorer.Disarm();
  }
  FinishSummary(stats, precision, start_time, minimizer_start, minimizer_end, summary);
}

}  // namespace

LinearSolverOptions LinearSolverOptionsOf(const Solver::Options& options) {
  LinearSolverOptions o;
  o.sqrt_linear_solver_type = options.sqrt_linear_solver_type;
  o.use_explicit_reduced_rows = options.use_explicit_reduced_rows;
  o.reduced_camera_factorization = options.reduced_camera_factorization;
  o.preconditioner_type = options.preconditioner_type;
  o.visibility_clustering_type = options.visibility_clustering_type;
  o.min_linear_solver_iterations = options.min_linear_solver_iterations;
  o.max_linear_solver_iterations = options.max_linear_solver_iterations;
  return o;
}

MinimizerOptions MinimizerOptionsOf(const Solver::Options& options) {
  MinimizerOptions o;
  o.max_num_iterations = options.max_num_iterations;
  o.max_solver_time_in_seconds = options.max_solver_time_in_seconds;
  o.function_tolerance = options.function_tolerance;
  o.gradient_tolerance = options.gradient_tolerance;
  o.parameter_tolerance = options.parameter_tolerance;
  o.min_trust_region_radius = options.min_trust_region_radius;
  o.max_num_consecutive_invalid_steps = options.max_num_consecutive_invalid_steps;
  o.min_relative_decrease = options.min_relative_decrease;
  o.max_consecutive_nonmonotonic_steps =
      options.use_nonmonotonic_steps ? options.max_consecutive_nonmonotonic_steps : 0;
  o.eta = options.eta;
  o.jacobi_scaling = options.jacobi_scaling;
  o.levenberg_marquardt.initial_radius = options.initial_trust_region_radius;
  o.levenberg_marquardt.max_radius = options.max_trust_region_radius;
  o.levenberg_marquardt.min_diagonal = options.min_lm_diagonal;
  o.levenberg_marquardt.max_diagonal = options.max_lm_diagonal;
  o.line_search.interpolation_type = options.line_search_interpolation_type;
  o.line_search.sufficient_decrease = options.line_search_sufficient_function_decrease;
  o.line_search.max_step_contraction = options.max_line_search_step_contraction;
  o.line_search.min_step_contraction = options.min_line_search_step_contraction;
  o.line_search.min_step_size = options.min_line_search_step_size;
  o.line_search.max_num_iterations = options.max_num_line_search_step_size_iterations;
  o.inner_iteration_tolerance = options.inner_iteration_tolerance;
  return o;
}

void SolveSquareRoot(const Solver::Options& options, ceres::Problem* problem, Solver::Summary* summary,
                     const ProcessGroup* processes, const std::vector<double*>* camera_blocks) {
  const double start_time = WallTimeInSeconds();
  StartSummary(options, summary);
  std::string error;
  if (problem == nullptr) {
    return RecordFailure(options, "ceres_sqrtba::Solve was called with a null problem.", start_time, summary);
  }
  if (!ValidateSqrtOptionValues(options, &error)) return RecordFailure(options, error, start_time, summary);
  // Nothing escapes: memory that is not there ends the solve with FAILURE,
  // the user's blocks as they were.
  try {
    Run(options, problem, start_time, summary, processes, camera_blocks);
  } catch (const AllocationFailure& e) {
    if (processes != nullptr) throw;  // SolveDistributed ends every process
    RecordFailure(options,
                  std::string("Out of memory: ") + e.what() +
                      " for the linear solver's storage. Reduce Solver::Options::memory_limit_in_bytes to what the "
                      "machine can give, or use single precision.",
                  start_time, summary);
  } catch (const std::bad_alloc&) {
    if (processes != nullptr) throw;
    RecordFailure(options, "Out of memory (std::bad_alloc) during the solve.", start_time, summary);
  }
}

}  // namespace internal
}  // namespace ceres_sqrtba
