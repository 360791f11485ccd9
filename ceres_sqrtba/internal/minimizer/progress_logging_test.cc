// The progress table (progress_logging.h): rows of constructed
// IterationSummary values against hand-formatted strings (the header before
// iteration 0 only, signs, widths), the rows of a real ceres::Solve against
// what Ceres' own logging callback printed for the same summaries, and
// ProgressLogger printing to stdout or not at all.
//
// Every value here prints without a rounding tie (exactly representable
// values with few digits, or values far from a tie), so the strings do not
// depend on how the C library rounds.
#include "ceres_sqrtba/internal/minimizer/progress_logging.h"

#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

const char kHeader[] =
    "iter      cost      cost_change  |gradient|   |step|    tr_ratio  "
    "tr_radius  ls_iter  iter_time  total_time\n";

ceres::IterationSummary FirstIteration() {
  ceres::IterationSummary s;
  s.iteration = 0;
  s.cost = 1.5;
  s.cost_change = 0.0;
  s.gradient_max_norm = 2500.0;
  s.step_norm = 0.0;
  s.relative_decrease = 0.0;
  s.trust_region_radius = 1e4;
  s.linear_solver_iterations = 0;
  s.iteration_time_in_seconds = 0.25;
  s.cumulative_time_in_seconds = 1.5;
  return s;
}

TEST(FormatProgressRow, IterationZeroHasTheHeader) {
  EXPECT_EQ(FormatProgressRow(FirstIteration()),
            std::string(kHeader) +
                "   0  1.500000e+00    0.00e+00    2.50e+03   0.00e+00   0.00e+00  1.00e+04        0"
                "    2.50e-01    1.50e+00");
}

TEST(FormatProgressRow, LaterIterationsAreOneRowWithSigns) {
  ceres::IterationSummary s;
  s.iteration = 12;
  s.cost = 0.0625;
  s.cost_change = -0.5;  // the sign takes the place of the space
  s.gradient_max_norm = 1e-12;
  s.step_norm = 0.75;
  s.relative_decrease = 1.0;
  s.trust_region_radius = 3e4;
  s.linear_solver_iterations = 7;
  s.iteration_time_in_seconds = 0.5;
  s.cumulative_time_in_seconds = 2.0;
  EXPECT_EQ(FormatProgressRow(s),
            "  12  6.250000e-02   -5.00e-01    1.00e-12   7.50e-01   1.00e+00  3.00e+04        7"
            "    5.00e-01    2.00e+00");
  // Wider numbers push the columns right rather than being cut.
  s.iteration = 12345;
  s.linear_solver_iterations = 123456;
  const std::string row = FormatProgressRow(s);
  EXPECT_EQ(row.substr(0, 20), " 12345  6.250000e-02");
  EXPECT_NE(row.find("3.00e+04      123456    5.00e-01"), std::string::npos) << row;
}

// min (x - 2)^4 + (10 (y - x^2))^2: a few iterations of Ceres' trust-region
// loop, each summary recorded.
struct Quartic {
  template <typename T>
  bool operator()(const T* x, T* r) const {
    r[0] = (x[0] - 2.0) * (x[0] - 2.0);
    r[1] = 10.0 * (x[1] - x[0] * x[0]);
    return true;
  }
};

class Recorder : public ceres::IterationCallback {
 public:
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& summary) override {
    seen.push_back(summary);
    return ceres::SOLVER_CONTINUE;
  }
  std::vector<ceres::IterationSummary> seen;
};

// Ceres' logging callback runs before the user's callbacks on the same
// summary: the table it prints is, line for line, FormatProgressRow of what
// the recorder saw.
TEST(FormatProgressRow, RowsAreThoseCeresPrints) {
  double x[2] = {-1.2, 1.0};
  ceres::Problem problem;
  problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Quartic, 2, 2>(new Quartic), nullptr, x);
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_QR;
  options.max_num_iterations = 6;
  options.logging_type = ceres::PER_MINIMIZER_ITERATION;
  options.minimizer_progress_to_stdout = true;
  Recorder recorder;
  options.callbacks.push_back(&recorder);
  ceres::Solver::Summary summary;
  ::testing::internal::CaptureStdout();
  ceres::Solve(options, &problem, &summary);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  ASSERT_GE(recorder.seen.size(), 3u) << summary.FullReport();
  std::string expected;
  for (const ceres::IterationSummary& s : recorder.seen) expected += FormatProgressRow(s) + "\n";
  EXPECT_EQ(printed, expected);
}

TEST(ProgressLogger, PrintsTheRowToStdoutOrNothing) {
  ceres::IterationSummary s = FirstIteration();
  s.iteration = 3;
  {
    ProgressLogger logger(true);
    ::testing::internal::CaptureStdout();
    const ceres::CallbackReturnType result = logger(s);
    EXPECT_EQ(::testing::internal::GetCapturedStdout(), FormatProgressRow(s) + "\n");
    EXPECT_EQ(result, ceres::SOLVER_CONTINUE);
  }
  {
    // Not to stdout: VLOG(1), off unless asked for.
    ProgressLogger logger(false);
    ::testing::internal::CaptureStdout();
    const ceres::CallbackReturnType result = logger(s);
    EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
    EXPECT_EQ(result, ceres::SOLVER_CONTINUE);
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
