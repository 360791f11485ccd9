// ceres_sqrtba::Solve: validation, the pass-through to ceres::Solve, and the
// square-root solve: structure -> evaluator -> landmark blocks -> linear
// solver -> trust-region loop -> ceres::Solver::Summary.
#include "ceres_sqrtba/solver.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <sstream>
#include <vector>

#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/problem/options_validation.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/projected/projected_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/minimizer/progress_logging.h"
#include "ceres_sqrtba/internal/explicit/explicit_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/direct/sqrt_sparse_schur_solver.h"
#include "ceres_sqrtba/internal/direct/stacked_reduced_matrix.h"
#include "ceres_sqrtba/internal/minimizer/trust_region_minimizer.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace {

using internal::ProblemStructure;

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// Keeps the user's parameter blocks at the best state after every iteration
// (Solver::Options::update_state_every_iteration).
class StateUpdatingCallback : public ceres::IterationCallback {
 public:
  StateUpdatingCallback(const ProblemStructure& s, const double* state) : s_(s), state_(state) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary&) override {
    internal::StateToUser(s_, state_);
    return ceres::SOLVER_CONTINUE;
  }

 private:
  const ProblemStructure& s_;
  const double* state_;
};

void FillProblemCounts(const ceres::Problem& problem, ceres::Solver::Summary* summary) {
  std::vector<double*> blocks;
  problem.GetParameterBlocks(&blocks);
  summary->num_parameter_blocks = problem.NumParameterBlocks();
  summary->num_parameters = problem.NumParameters();
  int effective = 0;
  for (double* b : blocks) effective += problem.ParameterBlockTangentSize(b);
  summary->num_effective_parameters = effective;
  summary->num_residual_blocks = problem.NumResidualBlocks();
  summary->num_residuals = problem.NumResiduals();
}

void FillOptions(const Solver::Options& options, ceres::Solver::Summary* summary) {
  summary->minimizer_type = ceres::TRUST_REGION;
  summary->trust_region_strategy_type = options.trust_region_strategy_type;
  summary->dogleg_type = options.dogleg_type;
  // Ceres' summary has no value for a solver it does not know: the Ceres
  // solver that solves the same reduced camera system stands in.
  const bool sparse = options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR;
  summary->linear_solver_type_given = sparse ? ceres::SPARSE_SCHUR : ceres::ITERATIVE_SCHUR;
  summary->linear_solver_type_used = sparse ? ceres::SPARSE_SCHUR : ceres::ITERATIVE_SCHUR;
  summary->preconditioner_type_given = options.preconditioner_type;
  summary->preconditioner_type_used = options.preconditioner_type;
  summary->visibility_clustering_type = options.visibility_clustering_type;
  summary->dense_linear_algebra_library_type = options.dense_linear_algebra_library_type;
  summary->sparse_linear_algebra_library_type =
      sparse ? ceres::SUITE_SPARSE : options.sparse_linear_algebra_library_type;
  summary->num_threads_given = options.num_threads;
  summary->num_threads_used = options.num_threads;
  summary->inner_iterations_given = options.use_inner_iterations;
  summary->inner_iterations_used = false;
  summary->is_constrained = false;
  if (options.linear_solver_ordering != nullptr) {
    for (const auto& g : options.linear_solver_ordering->group_to_elements()) {
      summary->linear_solver_ordering_given.push_back(static_cast<int>(g.second.size()));
    }
  }
}

// Nothing to eliminate: every variable block is a camera (elimination group
// 0 empty or constant), or no block is variable at all. Ceres' Schur solvers
// take such problems too — they switch to CGNR or SPARSE_NORMAL_CHOLESKY, or
// report CONVERGENCE at once when nothing is variable — so a pipeline that
// meets one (a frame without points, a fully fixed problem) keeps working:
// the problem goes to ceres::Solve with the corresponding Schur solver, in
// double precision, and the message says so.
void SolveWithoutLandmarks(const Solver::Options& options, ceres::Problem* problem,
                           ceres::Solver::Summary* summary) {
  ceres::Solver::Options ceres_options = options;
  const bool sparse = options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR;
  ceres_options.linear_solver_type = sparse ? ceres::SPARSE_SCHUR : ceres::ITERATIVE_SCHUR;
  if (sparse) ceres_options.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  ceres_options.use_mixed_precision_solves = false;
  ceres::Solve(ceres_options, problem, summary);
  summary->message += std::string(" [ceres_sqrtba: no landmark to eliminate; solved by ceres::Solve with ") +
                      ceres::LinearSolverTypeToString(summary->linear_solver_type_used) + "]";
}

void SolveSqrt(const Solver::Options& options, ceres::Problem* problem,
               ceres::Solver::Summary* summary) {
  const double start_time = internal::WallTimeInSeconds();
  *summary = ceres::Solver::Summary();
  summary->termination_type = ceres::FAILURE;
  FillOptions(options, summary);
  if (problem != nullptr) FillProblemCounts(*problem, summary);
  auto fail = [&](const std::string& message) {
    summary->termination_type = ceres::FAILURE;
    summary->message = message;
    summary->total_time_in_seconds = internal::WallTimeInSeconds() - start_time;
    if (options.logging_type != ceres::SILENT) LOG(ERROR) << "Terminating: " << message;
  };
  std::string error;
  if (problem == nullptr) return fail("ceres_sqrtba::Solve was called with a null problem.");
  if (!internal::ValidateSqrtOptions(options, &error)) return fail(error);

  ProblemStructure s;
  if (!internal::BuildProblemStructure(*problem, options.linear_solver_ordering.get(), &s, &error)) {
    if (s.no_landmarks) return SolveWithoutLandmarks(options, problem, summary);
    return fail(error);
  }
  summary->num_parameter_blocks_reduced = static_cast<int>(s.variable_blocks.size());
  summary->num_parameters_reduced = s.num_parameters;
  summary->num_effective_parameters_reduced = s.num_effective_parameters;
  summary->num_residual_blocks_reduced = static_cast<int>(s.residual_blocks.size());
  summary->num_residuals_reduced = s.num_residuals;
  summary->linear_solver_ordering_used = s.ordering_group_sizes;
  summary->schur_structure_given = s.schur_structure;
  summary->schur_structure_used = s.schur_structure;

  // Memory: the landmark blocks dominate (with SQRT_SPARSE_SCHUR, together
  // with the stacked reduced camera system, which is about as large); check
  // them before allocating.
  const bool single = options.precision == SINGLE_PRECISION;
  const bool sparse = options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR;
  const bool projected = !sparse && !options.use_explicit_reduced_rows;
  // Only the layout of the chosen storage is built.
  std::unique_ptr<internal::ExplicitBlockLayout> explicit_layout;
  std::unique_ptr<internal::ProjectedBlockLayout> projected_layout;
  if (projected) {
    projected_layout = std::make_unique<internal::ProjectedBlockLayout>(s);
  } else {
    explicit_layout = std::make_unique<internal::ExplicitBlockLayout>(s, single ? 4 : 8);
  }
  auto required_bytes = [&](bool single_precision) -> int64_t {
    if (projected) return projected_layout->RequiredBytes(single_precision ? 4 : 8);
    return single_precision ? internal::ExplicitLandmarkBlocks<float>::RequiredBytes(*explicit_layout)
                            : internal::ExplicitLandmarkBlocks<double>::RequiredBytes(*explicit_layout);
  };
  const int64_t block_bytes = required_bytes(single);
  const int64_t matrix_bytes =
      sparse ? internal::StackedReducedMatrix::RequiredBytes(s, *explicit_layout) : 0;
  const int64_t limit = options.memory_limit_in_bytes > 0 ? options.memory_limit_in_bytes
                                                          : internal::AvailableMemoryBytes();
  if (limit > 0 && block_bytes + matrix_bytes > limit) {
    std::ostringstream msg;
    msg << (sparse ? "The landmark blocks and the stacked reduced camera system need "
                   : "The landmark blocks need ")
        << internal::FormatBytes(block_bytes + matrix_bytes) << " (" << block_bytes + matrix_bytes
        << " bytes) but only " << internal::FormatBytes(limit) << " (" << limit
        << " bytes) may be used (Solver::Options::memory_limit_in_bytes = "
        << options.memory_limit_in_bytes << ", 0 meaning the memory available).";
    return fail(msg.str());
  }
  if (options.logging_type != ceres::SILENT) {
    LOG(INFO) << "ceres_sqrtba: " << s.landmarks.size() << " landmarks, " << s.cameras.size()
              << " cameras, " << s.groups.size()
              << (projected ? " projected" : "") << " landmark blocks taking "
              << internal::FormatBytes(block_bytes) << " in " << (single ? "single" : "double")
              << " precision"
              << (sparse ? ", stacked reduced camera system " + internal::FormatBytes(matrix_bytes)
                         : std::string())
              << " (limit " << internal::FormatBytes(limit) << ").";
  }

  // Fixed cost: residual blocks whose parameter blocks are all constant.
  double fixed_cost = 0.0;
  for (ceres::ResidualBlockId id : s.fixed_residual_blocks) {
    double cost = 0.0;
    if (!problem->EvaluateResidualBlock(id, true, &cost, nullptr, nullptr) || !std::isfinite(cost)) {
      return fail("A residual block whose parameter blocks are all constant failed to evaluate.");
    }
    fixed_cost += cost;
  }
  summary->fixed_cost = fixed_cost;

  // The work partition fixes the order of all reductions: it depends on the
  // problem only, never on num_threads (deterministic results).
  const int64_t nc = std::max(1, s.num_camera_parameters);
  const int64_t block_scalars =
      projected ? projected_layout->hot_scalars : explicit_layout->total_scalars;
  const int max_chunks = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(64, block_scalars / (4 * nc))));
  internal::WorkPartition partition(static_cast<int>(s.groups.size()),
                                    projected ? projected_layout->work : explicit_layout->work,
                                    max_chunks, projected ? 1024 : 4096);
  internal::ParallelContext context(options.num_threads);
  internal::Evaluator evaluator(s, partition, &context);
  internal::IterativeSchurOptions ls_options;
  ls_options.preconditioner = options.preconditioner_type;
  ls_options.min_num_iterations = options.min_linear_solver_iterations;
  ls_options.max_num_iterations = options.max_linear_solver_iterations;
  auto make_linear_solver = [&](bool single_precision) -> std::unique_ptr<internal::LinearSolver> {
    if (sparse) {
      if (single_precision) {
        return std::make_unique<internal::SqrtSparseSchurSolver<float>>(s, *explicit_layout,
                                                                        partition, &context);
      }
      return std::make_unique<internal::SqrtSparseSchurSolver<double>>(s, *explicit_layout,
                                                                       partition, &context);
    }
    if (projected) {
      if (single_precision) {
        return std::make_unique<internal::ProjectedIterativeSchurSolver<float>>(
            s, *projected_layout, partition, &context, ls_options);
      }
      return std::make_unique<internal::ProjectedIterativeSchurSolver<double>>(
          s, *projected_layout, partition, &context, ls_options);
    }
    if (single_precision) {
      return std::make_unique<internal::ExplicitIterativeSchurSolver<float>>(s, *explicit_layout,
                                                                         partition, &context, ls_options);
    }
    return std::make_unique<internal::ExplicitIterativeSchurSolver<double>>(s, *explicit_layout,
                                                                        partition, &context, ls_options);
  };
  std::unique_ptr<internal::LinearSolver> linear_solver = make_linear_solver(single);

  std::vector<double> state = internal::StateFromUser(s);

  internal::MinimizerContext mctx;
  mctx.options = &options;
  mctx.fixed_cost = fixed_cost;
  mctx.start_time = start_time;
  mctx.is_silent = options.logging_type == ceres::SILENT;
  if (single) {
    // Values a float cannot hold, or a numerical failure in float, switch the
    // solve to double precision (if that fits in memory).
    mctx.make_fallback_solver = [&](std::string* why) -> std::unique_ptr<internal::LinearSolver> {
      const int64_t need = required_bytes(false) + matrix_bytes;
      const int64_t allowed = options.memory_limit_in_bytes > 0 ? options.memory_limit_in_bytes
                                                                : internal::AvailableMemoryBytes();
      if (allowed > 0 && need > allowed) {
        *why = "Double precision would need " + internal::FormatBytes(need) + " for the landmark blocks" +
               (sparse ? " and the stacked reduced camera system" : "") + " but only " +
               internal::FormatBytes(allowed) + " may be used.";
        return nullptr;
      }
      // The single precision blocks are not used again: free them first, so
      // that the peak is the double precision solve's, as the check assumes.
      linear_solver.reset();
      return make_linear_solver(false);
    };
  }
  internal::ProgressLogger logger(options.minimizer_progress_to_stdout);
  StateUpdatingCallback state_updater(s, state.data());
  if (!mctx.is_silent) mctx.callbacks.push_back(&logger);
  if (options.update_state_every_iteration) mctx.callbacks.push_back(&state_updater);
  mctx.callbacks.insert(mctx.callbacks.end(), options.callbacks.begin(), options.callbacks.end());

  const double minimizer_start = internal::WallTimeInSeconds();
  summary->preprocessor_time_in_seconds = minimizer_start - start_time;
  internal::MinimizerStatistics stats;
  internal::Minimize(mctx, s, &evaluator, linear_solver.get(), state.data(), summary, &stats);
  const double minimizer_end = internal::WallTimeInSeconds();
  summary->minimizer_time_in_seconds = minimizer_end - minimizer_start;

  // As Ceres: the user's blocks get the best state unless the solve failed.
  if (summary->termination_type != ceres::FAILURE &&
      summary->termination_type != ceres::USER_FAILURE) {
    internal::StateToUser(s, state.data());
  }
  if (!stats.precision_note.empty() && summary->termination_type != ceres::FAILURE) {
    summary->message += " [" + stats.precision_note + "]";
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
  const double end = internal::WallTimeInSeconds();
  summary->postprocessor_time_in_seconds = end - minimizer_end;
  summary->total_time_in_seconds = end - start_time;
}

}  // namespace

const char* SqrtLinearSolverTypeToString(SqrtLinearSolverType type) {
  switch (type) {
    case CERES_LINEAR_SOLVER:
      return "CERES_LINEAR_SOLVER";
    case SQRT_ITERATIVE_SCHUR:
      return "SQRT_ITERATIVE_SCHUR";
    case SQRT_SPARSE_SCHUR:
      return "SQRT_SPARSE_SCHUR";
  }
  return "UNKNOWN";
}

bool StringToSqrtLinearSolverType(std::string value, SqrtLinearSolverType* type) {
  value = Upper(value);
  if (value == "CERES_LINEAR_SOLVER") {
    *type = CERES_LINEAR_SOLVER;
    return true;
  }
  if (value == "SQRT_ITERATIVE_SCHUR") {
    *type = SQRT_ITERATIVE_SCHUR;
    return true;
  }
  if (value == "SQRT_SPARSE_SCHUR") {
    *type = SQRT_SPARSE_SCHUR;
    return true;
  }
  return false;
}

const char* PrecisionToString(Precision precision) {
  switch (precision) {
    case DOUBLE_PRECISION:
      return "DOUBLE_PRECISION";
    case SINGLE_PRECISION:
      return "SINGLE_PRECISION";
  }
  return "UNKNOWN";
}

bool StringToPrecision(std::string value, Precision* precision) {
  value = Upper(value);
  if (value == "DOUBLE" || value == "DOUBLE_PRECISION") {
    *precision = DOUBLE_PRECISION;
    return true;
  }
  if (value == "SINGLE" || value == "FLOAT" || value == "SINGLE_PRECISION") {
    *precision = SINGLE_PRECISION;
    return true;
  }
  return false;
}

bool Solver::Options::IsValid(std::string* error) const {
  if (sqrt_linear_solver_type == CERES_LINEAR_SOLVER) {
    return internal::ValidateCeresOptions(*this, error);
  }
  return internal::ValidateSqrtOptions(*this, error);
}

void Solve(const Solver::Options& options, ceres::Problem* problem,
           ceres::Solver::Summary* summary) {
  if (summary == nullptr) {
    LOG(ERROR) << "ceres_sqrtba::Solve was called with a null summary.";
    return;
  }
  if (options.sqrt_linear_solver_type == CERES_LINEAR_SOLVER) {
    if (problem == nullptr) {
      *summary = ceres::Solver::Summary();
      summary->message = "ceres_sqrtba::Solve was called with a null problem.";
      return;
    }
    // ceres::Solve validates too, but lets through what Ceres 2.1 aborts on.
    std::string error;
    if (!internal::ValidateCeresOptions(options, &error)) {
      *summary = ceres::Solver::Summary();
      summary->message = error;
      if (options.logging_type != ceres::SILENT) LOG(ERROR) << "Terminating: " << error;
      return;
    }
    ceres::Solve(options, problem, summary);
    return;
  }
  SolveSqrt(options, problem, summary);
}

}  // namespace ceres_sqrtba
