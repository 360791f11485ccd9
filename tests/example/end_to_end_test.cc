// End to end: the bundle_adjuster binary on ladybug-49 with the square-root
// solver (double and single precision) reaches the final cost of Ceres'
// ITERATIVE_SCHUR + SCHUR_JACOBI within 1e-3 (relative), with the paper's
// settings: Huber loss, eta 0.1, 50 iterations, 2 threads.
#include <cmath>
#include <string>
#include <vector>

#include "example_test_util.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using testing_util::CommandResult;
using testing_util::SplitFields;
using testing_util::SplitLines;
using testing_util::TempDir;

struct RunResult {
  bool ok = false;
  double initial_cost = 0.0;
  double final_cost = 0.0;
  std::string termination;
};

RunResult Solve(const std::string& input, const std::string& solver_flags,
                const TempDir& dir) {
  const std::string summary = dir.Path("summary.csv");
  const std::string command =
      std::string("'") + BUNDLE_ADJUSTER_PATH + "' --input='" + input +
      "' --num_iterations=50 --robustify --num_threads=2 --eta=0.1 "
      "--summary_csv='" +
      summary + "' " + solver_flags;
  const CommandResult result = testing_util::RunCommand(command, dir);
  RunResult run;
  EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.err;
  const std::vector<std::string> lines =
      SplitLines(testing_util::ReadFile(summary));
  if (result.exit_code != 0 || lines.size() != 2) return run;
  const std::vector<std::string> fields = SplitFields(lines[1]);
  if (fields.size() < 12) return run;  // 19 since the time breakdown
  run.ok = true;
  run.initial_cost = std::stod(fields[6]);
  run.final_cost = std::stod(fields[7]);
  run.termination = fields[11];
  std::printf("%-60s initial %.10g final %.10g %s\n", solver_flags.c_str(),
              run.initial_cost, run.final_cost, run.termination.c_str());
  return run;
}

TEST(ExampleEndToEnd, SqrtSolverMatchesIterativeSchurOnLadybug49) {
  const std::string input =
      testing_util::BalDir() + "/problem-49-7776-pre.txt.bz2";
  if (!testing_util::FileExists(input)) {
    GTEST_SKIP() << "BAL problem not found: " << input
                 << " (set CERES_SQRTBA_BAL_DIR to the folder holding it)";
  }
  TempDir dir;
  const RunResult reference = Solve(
      input, "--linear_solver=iterative_schur --preconditioner=schur_jacobi",
      dir);
  ASSERT_TRUE(reference.ok);
  ASSERT_LT(reference.final_cost, reference.initial_cost);
  for (const char* precision : {"double", "single"}) {
    SCOPED_TRACE(precision);
    const RunResult sqrt_run = Solve(
        input,
        std::string("--linear_solver=sqrt_iterative_schur --precision=") +
            precision,
        dir);
    ASSERT_TRUE(sqrt_run.ok);
    // Same problem; the square-root solver may sum the cost in another order.
    EXPECT_NEAR(sqrt_run.initial_cost, reference.initial_cost,
                1e-9 * reference.initial_cost);
    EXPECT_NE(sqrt_run.termination, "FAILURE");
    EXPECT_NEAR(sqrt_run.final_cost, reference.final_cost,
                1e-3 * reference.final_cost);
  }
}

// A first trust region far too large for the problem (many cameras, three
// observations per point): Ceres and double precision reject the first
// steps; single precision rejects the same ones, puts the run to the trial
// at the fifth, and stays in single precision once double precision has
// rejected that step too (it does not switch to double for good).
TEST(ExampleEndToEnd, SinglePrecisionKeepsFloatWhenDoubleRejectsTheSameSteps) {
  TempDir dir;
  auto run = [&](const std::string& precision, std::vector<std::string>* accepted) {
    const std::string trace = dir.Path("trace-" + precision + ".csv");
    const std::string summary = dir.Path("summary-" + precision + ".csv");
    const std::string command =
        std::string("'") + BUNDLE_ADJUSTER_PATH +
        "' --synthetic_num_cameras=500 --synthetic_num_points=1000 "
        "--synthetic_observations_per_point=3 --num_iterations=10 --eta=0.1 --num_threads=2 "
        "--linear_solver=sqrt_iterative_schur --precision=" + precision + " --csv='" + trace +
        "' --summary_csv='" + summary + "'";
    const CommandResult result = testing_util::RunCommand(command, dir);
    EXPECT_EQ(result.exit_code, 0) << command << "\n" << result.err;
    for (const std::string& line : SplitLines(testing_util::ReadFile(trace))) {
      const std::vector<std::string> fields = SplitFields(line);
      if (fields.size() >= 8 && fields[0] != "iteration") accepted->push_back(fields[7]);
    }
    const std::vector<std::string> lines = SplitLines(testing_util::ReadFile(summary));
    return lines.size() == 2 ? SplitFields(lines[1]) : std::vector<std::string>();
  };
  std::vector<std::string> single_accepted, double_accepted;
  const std::vector<std::string> single_summary = run("single", &single_accepted);
  const std::vector<std::string> double_summary = run("double", &double_accepted);
  ASSERT_GE(single_summary.size(), 13u);
  ASSERT_GE(double_accepted.size(), 8u);
  // The first steps are rejected in double precision: the case under test.
  for (int i = 1; i <= 5; ++i) ASSERT_EQ(double_accepted[i], "0") << "iteration " << i;
  ASSERT_GE(single_accepted.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(single_accepted[i], double_accepted[i]) << "iteration " << i;
  EXPECT_EQ(single_summary[12], "-1") << "precision_switch_iteration";
  EXPECT_EQ(single_summary[1], "single");
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
