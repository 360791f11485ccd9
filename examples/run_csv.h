// CSV output of the bundle_adjuster example: one row per minimizer iteration
// (--csv) and one summary row per run (--summary_csv).
#ifndef CERES_SQRTBA_EXAMPLES_RUN_CSV_H_
#define CERES_SQRTBA_EXAMPLES_RUN_CSV_H_

#include <cstdio>
#include <memory>
#include <string>

#include "ceres/ceres.h"

namespace ceres_sqrtba {
namespace examples {

// The --csv header (without newline).
extern const char kIterationCsvHeader[];
// The --summary_csv header (without newline).
extern const char kSummaryCsvHeader[];

// An iteration callback that appends one CSV row per iteration (including
// iteration 0, the initial evaluation). Works with every solver that calls
// options.callbacks. Doubles are written with %.17g, step_accepted as 0/1.
class IterationCsvWriter : public ceres::IterationCallback {
 public:
  // Creates the file and writes the header; null (with a message) on failure.
  static std::unique_ptr<IterationCsvWriter> Create(const std::string& path,
                                                    std::string* error);
  ~IterationCsvWriter() override;

  ceres::CallbackReturnType operator()(
      const ceres::IterationSummary& summary) override;

  // Closes the file; false (with a message) if any write failed.
  bool Close(std::string* error);

 private:
  IterationCsvWriter(std::string path, FILE* file)
      : path_(std::move(path)), file_(file) {}
  std::string path_;
  FILE* file_;
};

// What a run was, for the summary row.
struct RunDescription {
  std::string solver;     // e.g. "sqrt_iterative_schur", "iterative_schur+schur_jacobi"
  std::string precision;  // "double", "single" or "mixed"
  std::string problem;    // file name without folders, or the synthetic name
  int num_cameras = 0;
  int num_points = 0;
  int num_observations = 0;
  // ceres_sqrtba::Solver::Summary::precision_switch_iteration: the iteration
  // at which a single precision solve continued in double; -1 when it did
  // not (and for every other solver).
  int precision_switch_iteration = -1;
};

// Total of linear_solver_iterations over the summary's iterations.
long long TotalLinearSolverIterations(const ceres::Solver::Summary& summary);

// The summary row (without newline) matching kSummaryCsvHeader.
std::string SummaryCsvRow(const RunDescription& run,
                          const ceres::Solver::Summary& summary);

// Writes header and row to path (replacing it).
bool WriteSummaryCsv(const std::string& path, const RunDescription& run,
                     const ceres::Solver::Summary& summary, std::string* error);

// A CSV field: quoted (with doubled quotes) when it holds a comma, a quote or
// a line break.
std::string CsvField(const std::string& text);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_RUN_CSV_H_
