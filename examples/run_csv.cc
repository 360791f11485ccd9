#include "run_csv.h"

#include <cerrno>
#include <cstring>
#include <utility>

namespace ceres_sqrtba {
namespace examples {

const char kIterationCsvHeader[] =
    "iteration,cumulative_seconds,cost,cost_change,gradient_max_norm,"
    "trust_region_radius,linear_solver_iterations,step_accepted,step_solver_seconds";

const char kSummaryCsvHeader[] =
    "solver,precision,problem,num_cameras,num_points,num_observations,"
    "initial_cost,final_cost,iterations,linear_solver_iterations_total,"
    "total_seconds,termination,precision_switch_iteration,"
    "preprocessor_seconds,residual_evaluation_seconds,"
    "jacobian_evaluation_seconds,linear_solver_seconds,minimizer_seconds,"
    "postprocessor_seconds";

std::unique_ptr<IterationCsvWriter> IterationCsvWriter::Create(
    const std::string& path, std::string* error) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    *error = path + ": cannot open for writing: " + std::strerror(errno);
    return nullptr;
  }
  std::fprintf(file, "%s\n", kIterationCsvHeader);
  return std::unique_ptr<IterationCsvWriter>(new IterationCsvWriter(path, file));
}

IterationCsvWriter::~IterationCsvWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

ceres::CallbackReturnType IterationCsvWriter::operator()(
    const ceres::IterationSummary& summary) {
  if (file_ != nullptr) {
    std::fprintf(file_, "%d,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%d,%.17g\n",
                 summary.iteration, summary.cumulative_time_in_seconds,
                 summary.cost, summary.cost_change, summary.gradient_max_norm,
                 summary.trust_region_radius, summary.linear_solver_iterations,
                 summary.step_is_successful ? 1 : 0,
                 summary.step_solver_time_in_seconds);
  }
  return ceres::SOLVER_CONTINUE;
}

bool IterationCsvWriter::Close(std::string* error) {
  if (file_ == nullptr) return true;
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed || close_failed) {
    *error = path_ + ": cannot write: " + std::strerror(errno);
    return false;
  }
  return true;
}

long long TotalLinearSolverIterations(const ceres::Solver::Summary& summary) {
  long long total = 0;
  for (const ceres::IterationSummary& it : summary.iterations) {
    total += it.linear_solver_iterations;
  }
  return total;
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

std::string SummaryCsvRow(const RunDescription& run,
                          const ceres::Solver::Summary& summary) {
  char numbers[512];
  std::snprintf(numbers, sizeof(numbers), "%d,%d,%d,%.17g,%.17g,%d,%lld,%.17g",
                run.num_cameras, run.num_points, run.num_observations,
                summary.initial_cost, summary.final_cost,
                summary.iterations.empty() ? 0
                                           : summary.iterations.back().iteration,
                TotalLinearSolverIterations(summary),
                summary.total_time_in_seconds);
  char times[512];
  std::snprintf(times, sizeof(times), "%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g",
                run.precision_switch_iteration,
                summary.preprocessor_time_in_seconds,
                summary.residual_evaluation_time_in_seconds,
                summary.jacobian_evaluation_time_in_seconds,
                summary.linear_solver_time_in_seconds,
                summary.minimizer_time_in_seconds,
                summary.postprocessor_time_in_seconds);
  return CsvField(run.solver) + "," + CsvField(run.precision) + "," +
         CsvField(run.problem) + "," + numbers + "," +
         ceres::TerminationTypeToString(summary.termination_type) + "," +
         times;
}

bool WriteSummaryCsv(const std::string& path, const RunDescription& run,
                     const ceres::Solver::Summary& summary,
                     std::string* error) {
  FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    *error = path + ": cannot open for writing: " + std::strerror(errno);
    return false;
  }
  std::fprintf(file, "%s\n%s\n", kSummaryCsvHeader,
               SummaryCsvRow(run, summary).c_str());
  const bool failed = std::ferror(file) != 0;
  const bool close_failed = std::fclose(file) != 0;
  if (failed || close_failed) {
    *error = path + ": cannot write: " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
