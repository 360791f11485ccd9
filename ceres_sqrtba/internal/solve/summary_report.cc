#include "ceres_sqrtba/internal/solve/summary_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/internal/common/wall_time.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Ceres' stand-in for each square-root solver (see the header).
ceres::LinearSolverType StandIn(SqrtLinearSolverType type) {
  return type == SQRT_SPARSE_SCHUR ? ceres::SPARSE_SCHUR : ceres::ITERATIVE_SCHUR;
}

// A row of Ceres' Given/Used table: a 20-character label, two right-aligned
// 25-character columns, with a space before a value that fills its column
// ("DOUBLE from iteration 127").
std::string TableRow(const char* label, const std::string& given, const std::string& used) {
  char row[160];
  std::snprintf(row, sizeof(row), "%-20s%25s%25s", label, (given.size() >= 25 ? " " + given : given).c_str(),
                (used.size() >= 25 ? " " + used : used).c_str());
  return row;
}

std::string PrecisionName(Precision p) { return p == SINGLE_PRECISION ? "SINGLE" : "DOUBLE"; }

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

void StartSummary(const Solver::Options& options, Solver::Summary* summary) {
  *summary = Solver::Summary();
  summary->termination_type = ceres::FAILURE;
  summary->sqrt_linear_solver_type_given = options.sqrt_linear_solver_type;
  summary->sqrt_linear_solver_type_used = options.sqrt_linear_solver_type;
  summary->precision_given = options.precision;
  summary->precision_used = options.precision;
  const bool sparse = options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR;
  summary->explicit_reduced_rows_used = !sparse && options.use_explicit_reduced_rows;
  summary->reduced_camera_factorization_given = options.reduced_camera_factorization;
  summary->reduced_camera_factorization_used = options.reduced_camera_factorization;

  summary->minimizer_type = ceres::TRUST_REGION;
  summary->trust_region_strategy_type = options.trust_region_strategy_type;
  summary->dogleg_type = options.dogleg_type;
  // Copied as Ceres copies them whatever the minimizer (the interpolation
  // type configures a bounded problem's line search).
  summary->line_search_direction_type = options.line_search_direction_type;
  summary->line_search_interpolation_type = options.line_search_interpolation_type;
  summary->line_search_type = options.line_search_type;
  summary->max_lbfgs_rank = options.max_lbfgs_rank;
  summary->nonlinear_conjugate_gradient_type = options.nonlinear_conjugate_gradient_type;
  summary->linear_solver_type_given = StandIn(options.sqrt_linear_solver_type);
  summary->linear_solver_type_used = StandIn(options.sqrt_linear_solver_type);
  summary->preconditioner_type_given = options.preconditioner_type;
  summary->preconditioner_type_used = options.preconditioner_type;
  summary->visibility_clustering_type = options.visibility_clustering_type;
  summary->dense_linear_algebra_library_type = options.dense_linear_algebra_library_type;
  summary->sparse_linear_algebra_library_type =
      sparse ? ceres::SUITE_SPARSE : options.sparse_linear_algebra_library_type;
  summary->num_threads_given = options.num_threads;
  // As Ceres: more threads than the machine has are not used.
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  summary->num_threads_used =
      options.num_threads > 1 && hardware > 0 ? std::min(options.num_threads, hardware) : options.num_threads;
  // Ceres zeroes these before it solves.
  summary->inner_iteration_time_in_seconds = 0.0;
  summary->num_line_search_steps = 0;
  summary->line_search_cost_evaluation_time_in_seconds = 0.0;
  summary->line_search_gradient_evaluation_time_in_seconds = 0.0;
  summary->line_search_polynomial_minimization_time_in_seconds = 0.0;
  summary->line_search_total_time_in_seconds = 0.0;
#if CERES_SQRTBA_CERES_2_2
  summary->linear_solver_ordering_type = options.linear_solver_ordering_type;
#endif
  summary->inner_iterations_given = options.use_inner_iterations;
  summary->inner_iterations_used = false;
  if (options.inner_iteration_ordering != nullptr) {
    for (const auto& group : options.inner_iteration_ordering->group_to_elements()) {
      summary->inner_iteration_ordering_given.push_back(static_cast<int>(group.second.size()));
    }
  }
  summary->is_constrained = false;
  if (options.linear_solver_ordering != nullptr) {
    for (const auto& group : options.linear_solver_ordering->group_to_elements()) {
      summary->linear_solver_ordering_given.push_back(static_cast<int>(group.second.size()));
    }
  }
}

void RecordProblemSizes(const ceres::Problem& problem, Solver::Summary* summary) {
  summary->num_parameter_blocks = problem.NumParameterBlocks();
  summary->num_parameters = problem.NumParameters();
  std::vector<double*> blocks;
  problem.GetParameterBlocks(&blocks);
  int effective = 0;
  for (double* b : blocks) effective += problem.ParameterBlockTangentSize(b);
  summary->num_effective_parameters = effective;
  summary->num_residual_blocks = problem.NumResidualBlocks();
  summary->num_residuals = problem.NumResiduals();
}

void RecordProblemSizes(const ProblemStructure& s, Solver::Summary* summary) {
  summary->num_parameter_blocks = static_cast<int>(s.parameter_blocks.size());
  summary->num_parameters = 0;
  summary->num_effective_parameters = 0;
  for (const ParameterBlockInfo& pb : s.parameter_blocks) {
    summary->num_parameters += pb.size;
    summary->num_effective_parameters += pb.tangent_size;
  }
  summary->num_residual_blocks = static_cast<int>(s.residual_blocks.size() + s.fixed_residual_blocks.size());
  summary->num_residuals = s.num_residuals;
  for (const FixedResidualBlock& fixed : s.fixed_residual_blocks) {
    summary->num_residuals += fixed.cost_function->num_residuals();
  }
}

void RecordStructure(const ProblemStructure& s, const ceres::ParameterBlockOrdering* ordering,
                     Solver::Summary* summary) {
  summary->num_parameter_blocks_reduced = static_cast<int>(s.variable_blocks.size());
  summary->num_parameters_reduced = s.num_parameters;
  summary->num_effective_parameters_reduced = s.num_effective_parameters;
  summary->num_residual_blocks_reduced = static_cast<int>(s.residual_blocks.size());
  summary->num_residuals_reduced = s.num_residuals;
  summary->is_constrained = s.is_constrained;
  summary->schur_structure_given = s.schur_structure;
  summary->schur_structure_used = s.schur_structure;
  summary->linear_solver_ordering_used.clear();
  if (ordering != nullptr && s.ordering_groups > 0) {
    for (const auto& group : ordering->group_to_elements()) {
      int variable = 0;
      for (double* block : group.second) variable += s.IsVariable(block) ? 1 : 0;
      if (variable > 0) summary->linear_solver_ordering_used.push_back(variable);
    }
  } else {
    summary->linear_solver_ordering_used = {static_cast<int>(s.landmarks.size()),
                                            static_cast<int>(s.cameras.size())};
  }
}

void RecordReducedCameraFactorization(bool dense, Solver::Summary* summary) {
  summary->reduced_camera_factorization_used = dense ? DENSE_FACTORIZATION : SPARSE_FACTORIZATION;
  summary->linear_solver_type_used = dense ? ceres::DENSE_SCHUR : ceres::SPARSE_SCHUR;
  if (dense) summary->dense_linear_algebra_library_type = ceres::EIGEN;
}

void RecordFailure(const Solver::Options& options, const std::string& message, double start_time,
                   Solver::Summary* summary) {
  summary->termination_type = ceres::FAILURE;
  summary->message = message;
  summary->total_time_in_seconds = WallTimeInSeconds() - start_time;
  if (options.logging_type != ceres::SILENT) LOG(ERROR) << "Terminating: " << message;
}

}  // namespace internal

std::string Solver::Summary::BriefReport() const {
  std::string report = ceres::Solver::Summary::BriefReport();
  if (sqrt_linear_solver_type_used == CERES_LINEAR_SOLVER) return report;
  return report + ", Linear solver: " + SqrtLinearSolverTypeToString(sqrt_linear_solver_type_used) +
         ", Precision: " + internal::PrecisionName(precision_used);
}

std::string Solver::Summary::FullReport() const {
  const std::string ceres_report = ceres::Solver::Summary::FullReport();
  if (sqrt_linear_solver_type_given == CERES_LINEAR_SOLVER) return ceres_report;
  const bool sqrt_used = sqrt_linear_solver_type_used != CERES_LINEAR_SOLVER;
  std::istringstream in(ceres_report);
  std::string line, report;
  bool added_rows = false;
  auto add_rows = [&]() {
    if (added_rows || !sqrt_used) return;
    added_rows = true;
    std::string used = internal::PrecisionName(precision_used);
    if (precision_switch_iteration >= 0) used += " from iteration " + std::to_string(precision_switch_iteration);
    report += internal::TableRow("Precision", internal::PrecisionName(precision_given), used) + "\n";
    const std::string rows = explicit_reduced_rows_used ? "EXPLICIT" : "PROJECTED";
    report += internal::TableRow("Reduced rows", rows, rows) + "\n";
    if (sqrt_linear_solver_type_used == SQRT_SPARSE_SCHUR) {
      report += internal::TableRow("Factorization",
                                   ReducedCameraFactorizationToString(reduced_camera_factorization_given),
                                   ReducedCameraFactorizationToString(reduced_camera_factorization_used)) +
                "\n";
    }
  };
  while (std::getline(in, line)) {
    if (internal::StartsWith(line, "Linear solver ") && !internal::StartsWith(line, "Linear solver ordering")) {
      const std::string given = SqrtLinearSolverTypeToString(sqrt_linear_solver_type_given);
      const std::string used = sqrt_used ? SqrtLinearSolverTypeToString(sqrt_linear_solver_type_used)
                                         : ceres::LinearSolverTypeToString(linear_solver_type_used);
      line = internal::TableRow("Linear solver", given, used);
    }
    const bool table_end = internal::StartsWith(line, "Schur structure");
    report += line + "\n";
    if (table_end) add_rows();
    // Without a Schur structure row (a failure before the structure was
    // read), the rows go after the ordering.
    if (internal::StartsWith(line, "Linear solver ordering") &&
        ceres_report.find("Schur structure") == std::string::npos) {
      add_rows();
    }
  }
  return report;
}

}  // namespace ceres_sqrtba
