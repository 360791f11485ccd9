// Runs the bundle_adjuster binary: bad inputs and bad flags give one error
// line and exit status 1; good runs write the CSV files as documented.
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "bal_problem.h"
#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "example_test_util.h"
#include "gtest/gtest.h"
#include "run_csv.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using testing_util::CommandResult;
using testing_util::SplitFields;
using testing_util::SplitLines;
using testing_util::TempDir;

const std::string kBinary = BUNDLE_ADJUSTER_PATH;
const std::string kData = EXAMPLE_DATA_DIR;

CommandResult RunAdjuster(const std::string& flags, const TempDir& dir) {
  return testing_util::RunCommand("'" + kBinary + "' " + flags, dir);
}

// The run failed cleanly: exit status 1, one line on stderr starting with
// "bundle_adjuster: error: " and containing `expected`, and no solve.
void ExpectOneErrorLine(const CommandResult& result,
                        const std::string& expected) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::vector<std::string> lines = SplitLines(result.err);
  ASSERT_EQ(lines.size(), 1u) << result.err;
  EXPECT_EQ(lines[0].rfind("bundle_adjuster: error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(expected), std::string::npos)
      << "expected '" << expected << "' in '" << lines[0] << "'";
  EXPECT_EQ(result.out.find("Solver Summary"), std::string::npos);
}

TEST(ExampleCli, SeedFilesGiveTheDocumentedResults) {
  struct Seed {
    const char* file;
    const char* message;  // null: a valid file
  };
  const Seed seeds[] = {
      {"valid_small.txt", nullptr},
      {"valid_small.txt.bz2", nullptr},
      {"truncated.txt", ":50: file ends after 37 of 42 parameter values"},
      {"bad_camera_index.txt",
       ":6: observation 4: camera index 3 is out of range [0, 3)"},
      {"non_finite.txt",
       ":31: non-finite number 'nan' (camera 1, value 9 of 9)"},
      {"trailing_garbage.txt",
       ":56: trailing data after the last of the 42 parameter values: 'end'"},
      {"header_mismatch.txt",
       ":13: expected camera parameters after the observations, found a "
       "line like another observation; the header says 11 observations"},
      {"huge_header.txt",
       ":1: the header's counts (2000000000 cameras, 2000000000 points, "
       "2000000000 observations) need "},
      {"missing_number.txt",
       ":4: expected 2 numbers for observation 2, found 1"},
  };
  for (const Seed& seed : seeds) {
    SCOPED_TRACE(seed.file);
    TempDir dir;
    const std::string path = kData + "/" + seed.file;
    const CommandResult result = RunAdjuster("--input='" + path + "'", dir);
    if (seed.message == nullptr) {
      EXPECT_EQ(result.exit_code, 0) << result.err;
      EXPECT_NE(result.out.find("Solver Summary"), std::string::npos);
      EXPECT_NE(result.out.find("Problem " + std::string(seed.file) +
                                ": 3 cameras, 5 points, 12 observations"),
                std::string::npos)
          << result.out;
    } else {
      ExpectOneErrorLine(result, path + seed.message);
    }
  }
}

TEST(ExampleCli, MissingFile) {
  TempDir dir;
  const std::string path = dir.Path("absent.txt");
  ExpectOneErrorLine(RunAdjuster("--input='" + path + "'", dir),
                     path + ": cannot open for reading: No such file or "
                            "directory");
}

// A file name with a newline and an escape character still gives one error
// line, the control characters shown as \xNN.
TEST(ExampleCli, FileNameWithControlCharactersStaysOnOneLine) {
  TempDir dir;
  const std::string path = dir.Path("two\nlines\x1b[31m.txt");
  ExpectOneErrorLine(RunAdjuster("--input='" + path + "'", dir),
                     "two\\x0alines\\x1b[31m.txt: cannot open for reading: No such file or directory");
}

TEST(ExampleCli, BadFlagValues) {
  TempDir dir;
  const std::string input = "--input='" + kData + "/valid_small.txt' ";
  struct Case {
    std::string flags;
    std::string message;
  };
  const Case cases[] = {
      {"--linear_solver=fastest", "unknown --linear_solver 'fastest'"},
      {"--num_threads=0", "--num_threads must be at least 1, got 0"},
      {"--linear_solver=sqrt_iterative_schur --precision=half",
       "unknown --precision 'half' (expected double or single)"},
      {"--precision=single",
       "--precision=single needs --linear_solver=sqrt_iterative_schur"},
      {"--preconditioner=magic", "unknown --preconditioner 'magic'"},
      {"--ordering=random", "unknown --ordering 'random'"},
      {"--trust_region_strategy=bisection",
       "unknown --trust_region_strategy 'bisection'"},
      {"--use_manifolds", "--use_manifolds can only be used with "
                          "--use_quaternions"},
      {"--rotation_sigma=-1", "--rotation_sigma must be a finite value >= 0"},
      {"--num_iterations=-3", "--num_iterations must be at least 0"},
      {"--eta=0", "--eta must be a positive number"},
      {"--max_linear_solver_iterations=0",
       "--max_linear_solver_iterations must be at least 1"},
      {"--inner_iterations --blocks_for_inner_iterations=all",
       "unknown --blocks_for_inner_iterations 'all'"},
      {"--csv=/nonexistent_folder/x.csv",
       "/nonexistent_folder/x.csv: cannot open for writing"},
      {"--linear_solver=sqrt_sparse_schur --sqrt_automatic",
       "--sqrt_automatic chooses the square-root counterpart of a Ceres "
       "--linear_solver; --linear_solver=sqrt_sparse_schur already is a "
       "square-root solver"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flags);
    ExpectOneErrorLine(RunAdjuster(input + c.flags, dir), c.message);
  }
  // The synthetic generator's flags are checked too.
  ExpectOneErrorLine(RunAdjuster("--synthetic_num_cameras=1", dir),
                     "--synthetic_num_cameras must be at least 2, got 1");
  ExpectOneErrorLine(RunAdjuster("--synthetic_outlier_ratio=2", dir),
                     "--synthetic_outlier_ratio must be in [0, 1]");
  ExpectOneErrorLine(
      RunAdjuster("--synthetic_observations_per_point=4 "
                  "--synthetic_max_observations_per_point=3", dir),
      "--synthetic_max_observations_per_point must be 0 or between "
      "--synthetic_observations_per_point (4) and the number of cameras "
      "(32), got 3");
  ExpectOneErrorLine(RunAdjuster(input + "--parameter_tolerance=-1", dir),
                     "--parameter_tolerance must be a finite value >= 0");
  ExpectOneErrorLine(RunAdjuster(input + "--write_bal_only", dir),
                     "--write_bal_only needs --write_bal=FILE");
}

TEST(ExampleCli, SyntheticRunWritesBothCsvFiles) {
  TempDir dir;
  const std::string csv = dir.Path("iterations.csv");
  const std::string summary = dir.Path("summary.csv");
  const CommandResult result =
      RunAdjuster("--synthetic_num_cameras=8 --synthetic_num_points=300 "
          "--synthetic_observations_per_point=3 --num_iterations=4 "
          "--linear_solver=iterative_schur --preconditioner=schur_jacobi "
          "--robustify --csv='" + csv + "' --summary_csv='" + summary + "'",
          dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Problem synthetic-c8-p300-k3-seed38401: 8 "
                            "cameras, 300 points, 900 observations"),
            std::string::npos)
      << result.out;

  const std::vector<std::string> rows =
      SplitLines(testing_util::ReadFile(csv));
  ASSERT_GE(rows.size(), 2u);
  EXPECT_EQ(rows[0],
            "iteration,cumulative_seconds,cost,cost_change,gradient_max_norm,"
            "trust_region_radius,linear_solver_iterations,step_accepted,"
            "step_solver_seconds");
  EXPECT_EQ(rows[0], kIterationCsvHeader);
  EXPECT_EQ(rows.size(), 1u + 5u);  // iterations 0..4
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string> fields = SplitFields(rows[r]);
    ASSERT_EQ(fields.size(), 9u) << rows[r];
    EXPECT_EQ(fields[0], std::to_string(r - 1));
    EXPECT_TRUE(fields[7] == "0" || fields[7] == "1") << rows[r];
    EXPECT_GE(std::stod(fields[8]), 0.0) << rows[r];  // linear solve time
    EXPECT_GT(std::stod(fields[2]), 0.0);
  }

  const std::vector<std::string> lines =
      SplitLines(testing_util::ReadFile(summary));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "solver,precision,problem,num_cameras,num_points,num_observations,"
            "initial_cost,final_cost,iterations,"
            "linear_solver_iterations_total,total_seconds,termination,"
            "precision_switch_iteration,preprocessor_seconds,"
            "residual_evaluation_seconds,jacobian_evaluation_seconds,"
            "linear_solver_seconds,minimizer_seconds,postprocessor_seconds");
  EXPECT_EQ(lines[0], kSummaryCsvHeader);
  const std::vector<std::string> fields = SplitFields(lines[1]);
  ASSERT_EQ(fields.size(), 19u) << lines[1];
  EXPECT_EQ(fields[0], "iterative_schur+schur_jacobi");
  EXPECT_EQ(fields[1], "double");
  EXPECT_EQ(fields[2], "synthetic-c8-p300-k3-seed38401");
  EXPECT_EQ(fields[3], "8");
  EXPECT_EQ(fields[4], "300");
  EXPECT_EQ(fields[5], "900");
  EXPECT_LT(std::stod(fields[7]), std::stod(fields[6]));
  EXPECT_EQ(fields[8], "4");
  EXPECT_GT(std::stoll(fields[9]), 0);
  EXPECT_EQ(fields[11], "NO_CONVERGENCE");
  EXPECT_EQ(fields[12], "-1");  // a Ceres solver never switches precision
  // The time breakdown: every part >= 0, the parts of the minimizer within
  // it, and preprocessor + minimizer + postprocessor within the total.
  double times[7];
  for (int k = 0; k < 7; ++k) {
    times[k] = std::stod(fields[k == 0 ? 10 : 12 + k]);
    EXPECT_GE(times[k], 0.0) << k;
  }
  const double total = times[0], preprocessor = times[1],
               minimizer = times[5], postprocessor = times[6];
  EXPECT_GT(times[3], 0.0);  // Jacobian evaluations
  EXPECT_LE(times[2] + times[3] + times[4], minimizer);
  EXPECT_LE(preprocessor + minimizer + postprocessor, total * (1 + 1e-9));
  // The last iteration row has the final cost.
  EXPECT_EQ(SplitFields(rows.back())[2], fields[7]);
}

TEST(ExampleCli, SqrtSolverRowsNameSolverAndPrecision) {
  TempDir dir;
  const std::string summary = dir.Path("summary.csv");
  const CommandResult result = RunAdjuster(
      "--input='" + kData + "/valid_small.txt.bz2' --num_iterations=2 "
      "--linear_solver=sqrt_iterative_schur --precision=single "
      "--summary_csv='" + summary + "'",
      dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::vector<std::string> lines =
      SplitLines(testing_util::ReadFile(summary));
  ASSERT_EQ(lines.size(), 2u);
  const std::vector<std::string> fields = SplitFields(lines[1]);
  ASSERT_EQ(fields.size(), 19u);
  EXPECT_EQ(fields[0], "sqrt_iterative_schur");
  EXPECT_EQ(fields[1], "single");
  EXPECT_EQ(fields[2], "valid_small.txt.bz2");
  EXPECT_EQ(fields[12], "-1");  // this small problem stays in single precision
  EXPECT_GT(std::stod(fields[16]), 0.0);  // linear solver time
}

// --sqrt_automatic: the square-root counterpart of the Ceres solver, what ran
// in the summary, the pair in the CSV's solver column; single precision is
// accepted with it.
TEST(ExampleCli, SqrtAutomaticRunsTheCounterpart) {
  TempDir dir;
  const std::string summary = dir.Path("summary.csv");
  const CommandResult result = RunAdjuster(
      "--input='" + kData + "/valid_small.txt.bz2' --num_iterations=2 "
      "--linear_solver=dense_schur --sqrt_automatic --precision=single "
      "--summary_csv='" + summary + "'",
      dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("SQRT_AUTOMATIC"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("SQRT_SPARSE_SCHUR"), std::string::npos) << result.out;
  const std::vector<std::string> lines =
      SplitLines(testing_util::ReadFile(summary));
  ASSERT_EQ(lines.size(), 2u);
  const std::vector<std::string> fields = SplitFields(lines[1]);
  ASSERT_EQ(fields.size(), 19u);
  EXPECT_EQ(fields[0], "sqrt_automatic+dense_schur");
  EXPECT_EQ(fields[1], "single");
}

// --write_bal writes the problem before normalization: reading the file gives
// the same problem (and the same solve), and --write_bal_only stops there.
TEST(ExampleCli, WriteBalWritesTheProblemBeforeNormalization) {
  TempDir dir;
  const std::string synthetic =
      "--synthetic_num_cameras=6 --synthetic_num_points=200 "
      "--synthetic_observations_per_point=3 "
      "--synthetic_max_observations_per_point=5 ";
  const std::string bal = dir.Path("synthetic.txt");
  const CommandResult only = RunAdjuster(
      synthetic + "--write_bal='" + bal + "' --write_bal_only", dir);
  ASSERT_EQ(only.exit_code, 0) << only.err;
  EXPECT_EQ(only.out.find("Solver Summary"), std::string::npos) << only.out;
  EXPECT_NE(only.out.find("Wrote " + bal + ": 6 cameras, 200 points, "),
            std::string::npos)
      << only.out;
  BalProblem written;
  std::string error;
  ASSERT_TRUE(BalProblem::Read(bal, BalReadOptions(), &written, &error))
      << error;
  EXPECT_EQ(written.num_cameras(), 6);
  EXPECT_EQ(written.num_points(), 200);

  // The same solve from the generator and from the file: the same trace.
  const std::string flags = "--num_iterations=3 --robustify "
                            "--linear_solver=sqrt_iterative_schur ";
  const CommandResult generated = RunAdjuster(
      synthetic + flags + "--csv='" + dir.Path("generated.csv") +
          "' --write_bal='" + dir.Path("again.txt") + "'",
      dir);
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  EXPECT_NE(generated.out.find("Solver Summary"), std::string::npos);
  EXPECT_EQ(testing_util::ReadFile(dir.Path("again.txt")),
            testing_util::ReadFile(bal));
  const CommandResult from_file = RunAdjuster(
      "--input='" + bal + "' " + flags + "--csv='" + dir.Path("file.csv") + "'",
      dir);
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  const std::vector<std::string> a =
      SplitLines(testing_util::ReadFile(dir.Path("generated.csv")));
  const std::vector<std::string> b =
      SplitLines(testing_util::ReadFile(dir.Path("file.csv")));
  ASSERT_EQ(a.size(), b.size());
  for (size_t r = 1; r < a.size(); ++r) {
    const std::vector<std::string> fa = SplitFields(a[r]), fb = SplitFields(b[r]);
    ASSERT_EQ(fa.size(), fb.size());
    for (size_t c : {2u, 3u, 4u, 5u, 6u}) {  // cost ... linear iterations
      EXPECT_EQ(fa[c], fb[c]) << "row " << r << " column " << c;
    }
  }
}

TEST(ExampleCli, PreprocessingAndPlyOutput) {
  TempDir dir;
  const CommandResult result = RunAdjuster(
      "--input='" + kData + "/valid_small.txt' --num_iterations=1 "
      "--filter_min_depth --min_depth=1e9 --drop_single_observation_points",
      dir);
  // A threshold no point passes: nothing is left to solve.
  ExpectOneErrorLine(result, "preprocessing removed every observation");

  const CommandResult kept = RunAdjuster(
      "--input='" + kData + "/valid_small.txt' --num_iterations=1 "
      "--filter_min_depth --drop_single_observation_points --initial_ply='" +
          dir.Path("initial.ply") + "' --final_ply='" + dir.Path("final.ply") +
          "'",
      dir);
  ASSERT_EQ(kept.exit_code, 0) << kept.err;
  EXPECT_NE(kept.out.find("Preprocessing: dropped 0 observations with depth "
                          "below 0.1"),
            std::string::npos)
      << kept.out;
  EXPECT_NE(testing_util::ReadFile(dir.Path("initial.ply"))
                .find("element vertex 8"),
            std::string::npos);
  EXPECT_NE(testing_util::ReadFile(dir.Path("final.ply")).find("end_header"),
            std::string::npos);
}

// Flags gflags itself cannot take: its own one-line "ERROR: ..." message and
// exit status 1; a positional argument: one error line and exit status 1.
TEST(ExampleCli, FlagsGflagsRejects) {
  TempDir dir;
  struct Case {
    std::string flags;
    std::string message;
  };
  const Case cases[] = {
      {"--num_threads=abc",
       "ERROR: illegal value 'abc' specified for int32 flag 'num_threads'"},
      {"--no_such_flag=1", "ERROR: unknown command line flag 'no_such_flag'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flags);
    const CommandResult result = RunAdjuster(c.flags, dir);
    EXPECT_EQ(result.exit_code, 1) << result.err;
    const std::vector<std::string> lines = SplitLines(result.err);
    ASSERT_EQ(lines.size(), 1u) << result.err;
    EXPECT_EQ(lines[0], c.message);
  }
  ExpectOneErrorLine(RunAdjuster("extra_argument", dir),
                     "unexpected argument 'extra_argument'");
  // Shown as the error line shows file names: control characters as \xNN.
  ExpectOneErrorLine(RunAdjuster("'extra\nargument'", dir), "unexpected argument 'extra\\x0aargument'");
}

// Valid files the program cannot solve: exit status 1 and the reason.
// Under `ulimit -v` the process runs out of address space long before the
// machine runs out of memory: the header's counts are checked against what
// the limit leaves (about 1 GB here, for 4.6 GB of arrays), not against
// MemAvailable, and the run ends with the error line instead of an abort
// (std::bad_alloc) part-way through reading.
TEST(ExampleCli, AnAddressSpaceLimitIsTheMemoryAvailable) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than the limit";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
  GTEST_SKIP() << "a sanitizer's shadow memory needs more address space than the limit";
#endif
#endif
  TempDir dir;
  // 8M observations: 24 bytes each to read, at least 600 more to solve.
  testing_util::WriteFile(dir.Path("big.txt"), "1 2 8000000\n0 1 1.5 2.5\n");
  const CommandResult result =
      testing_util::RunCommand("ulimit -v 1000000 && '" + kBinary + "' --input='" + dir.Path("big.txt") + "'", dir);
  ExpectOneErrorLine(result, "big.txt:1: the header's counts (1 cameras, 2 points, 8000000 observations) need 4761 MiB "
                             "to read and solve, more than the ");
  // The same file without the limit: the counts fit the machine, and it is
  // the data that is missing.
  const CommandResult unlimited = RunAdjuster("--input='" + dir.Path("big.txt") + "'", dir);
  EXPECT_EQ(unlimited.exit_code, 1);
  EXPECT_EQ(unlimited.err.find("need 4761 MiB"), std::string::npos) << unlimited.err;
}

TEST(ExampleCli, ProblemsThatCannotBeSolved) {
  TempDir dir;
  const std::string valid = testing_util::ReadFile(kData + "/valid_small.txt");
  std::vector<std::string> lines = SplitLines(valid);
  auto write = [&](const std::string& name, const std::vector<std::string>& l) {
    std::string text;
    for (const std::string& line : l) text += line + "\n";
    testing_util::WriteFile(dir.Path(name), text);
    return dir.Path(name);
  };
  // valid_small.txt: header, 12 observations (lines 2-13), 27 camera values
  // (lines 14-40), 15 point coordinates (lines 41-55).
  ASSERT_EQ(lines.size(), 55u);

  // Every point at the same place: normalization is impossible.
  std::vector<std::string> same = lines;
  for (int i = 43; i < 55; ++i) same[i] = lines[40 + (i - 40) % 3];
  const std::string same_path = write("same_points.txt", same);
  ExpectOneErrorLine(RunAdjuster("--input='" + same_path + "'", dir),
                     "same_points.txt: cannot normalize: the median distance "
                     "of the points to their median is 0.000000 (at least half "
                     "of the 5 points are at one place)");

  // Points a few 1e-310 apart (subnormal): their spread is not zero, but
  // 100 over it is not a double.
  std::vector<std::string> tiny = lines;
  for (int i = 40; i < 55; ++i) tiny[i] = std::to_string(i - 39) + "e-310";
  const std::string tiny_path = write("tiny_scene.txt", tiny);
  ExpectOneErrorLine(RunAdjuster("--input='" + tiny_path + "'", dir),
                     "tiny_scene.txt: cannot normalize: the median distance of the points to their median is ");
  ExpectOneErrorLine(RunAdjuster("--input='" + tiny_path + "'", dir), ", too small to scale to 100 (100 / ");

  // One point far beyond the others: normalized, it leaves the double range.
  std::vector<std::string> far = lines;
  far[40] = "1.7e308";
  const std::string far_path = write("far_point.txt", far);
  ExpectOneErrorLine(RunAdjuster("--input='" + far_path + "'", dir),
                     "far_point.txt: cannot normalize: point 0 leaves the "
                     "range of a double when the scene is centred and scaled "
                     "by ");

  // A focal length and distortion whose residuals overflow: the solve ends
  // with FAILURE; the report is printed, then the error line, exit status 1.
  std::vector<std::string> overflow = lines;
  overflow[19] = "1e300";  // camera 0: f
  overflow[21] = "1e300";  // camera 0: k2
  const std::string overflow_path = write("overflow.txt", overflow);
  const CommandResult result = RunAdjuster(
      "--input='" + overflow_path + "' --linear_solver=sqrt_iterative_schur",
      dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.out.find("Solver Summary"), std::string::npos);
  const std::string failed = ceres_sqrtba::internal::kInitialEvaluationFailed;
  EXPECT_NE(result.out.find("FAILURE (" + failed + " The residual block "), std::string::npos) << result.out;
  const std::vector<std::string> err = SplitLines(result.err);
  ASSERT_FALSE(err.empty());
  // glog's line from the solver comes first.
  EXPECT_NE(result.err.find("] Terminating: " + failed + " The residual block "), std::string::npos)
      << result.err;
  EXPECT_EQ(err.back().rfind("bundle_adjuster: error: solver failed: " + failed + " The residual block ", 0), 0u)
      << err.back();
  EXPECT_NE(err.back().find(" has a residual that is not finite or was not written (residual "),
            std::string::npos)
      << err.back();

  // Observations whose residuals are finite but whose squares are not:
  // Ceres' SPARSE_SCHUR accepts the infinite cost and reports CONVERGENCE;
  // the example still exits with status 1.
  std::vector<std::string> inf_cost = lines;
  for (int i = 1; i <= 12; ++i) {
    std::istringstream fields(lines[i]);
    std::string camera, point;
    ASSERT_TRUE(static_cast<bool>(fields >> camera >> point)) << lines[i];
    inf_cost[i] = camera + " " + point + " 1e300 -1e300";
  }
  const std::string inf_cost_path = write("inf_cost.txt", inf_cost);
  const CommandResult ceres = RunAdjuster("--input='" + inf_cost_path + "' --linear_solver=sparse_schur", dir);
  EXPECT_EQ(ceres.exit_code, 1) << ceres.err;
  const std::vector<std::string> ceres_err = SplitLines(ceres.err);
  ASSERT_FALSE(ceres_err.empty());
  if (ceres_sqrtba::internal::kCeres22) {
    // Ceres 2.2 fails an evaluation whose summed cost is not finite.
    EXPECT_EQ(ceres_err.back(), "bundle_adjuster: error: solver failed: Initial residual and Jacobian evaluation failed.");
  } else {
    EXPECT_NE(ceres.out.find("CONVERGENCE"), std::string::npos) << ceres.out;
    EXPECT_EQ(ceres_err.back(),
              "bundle_adjuster: error: the final cost is not finite: the residuals' squares overflow double "
              "precision (check the input's scale)");
  }

  // A perturbation that leaves the range of a double names its flags.
  // (A translation noise of 1e308 overflows with this seed of the example's
  // own generator, whatever the Ceres; a huge rotation noise stays finite
  // through Ceres 2.2's rotation functions.)
  ExpectOneErrorLine(RunAdjuster("--input='" + kData + "/valid_small.txt' --translation_sigma=1e308 --random_seed=1", dir),
                     "valid_small.txt: the perturbation (--rotation_sigma, --translation_sigma, "
                     "--point_sigma) made a parameter non-finite");
}

TEST(ExampleCli, OutputPathsAreCheckedBeforeTheSolve) {
  TempDir dir;
  for (const char* flag : {"final_ply", "summary_csv"}) {
    SCOPED_TRACE(flag);
    ExpectOneErrorLine(
        RunAdjuster("--input='" + kData + "/valid_small.txt' --" + flag + "=" + dir.Path("missing/out"), dir),
        std::string("--") + flag + "=" + dir.Path("missing/out") + ": cannot write to this path");
  }
  ExpectOneErrorLine(RunAdjuster("--input='" + kData + "/valid_small.txt' --final_ply=" + dir.path(), dir),
                     "--final_ply=" + dir.path() + ": cannot write to this path (it is a directory)");
}

// File names reach standard output escaped as they reach the error line: a
// newline or a terminal escape in a name cannot split or recolour a line.
TEST(ExampleCli, FileNamesAreEscapedOnStandardOutput) {
  TempDir dir;
  const std::string input = dir.Path("odd\nname\x1b[31m.txt");
  testing_util::WriteFile(input, testing_util::ReadFile(kData + "/valid_small.txt"));
  const std::string written = dir.Path("w\nb.txt");
  const CommandResult result =
      RunAdjuster("--input='" + input + "' --num_iterations=1 --write_bal='" + written + "'", dir);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Problem odd\\x0aname\\x1b[31m.txt: 3 cameras, 5 points, 12 observations\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Wrote " + dir.path() + "/w\\x0ab.txt: 3 cameras"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find('\x1b'), std::string::npos);
}

// The check only looks: it opens, creates and removes nothing (opening the
// path for appending and removing what that created would remove a dangling
// symbolic link and leave its target behind, and block on a named pipe).
// Each run fails at the second path, after the first passed.
TEST(ExampleCli, OutputPathCheckTouchesNothing) {
  TempDir dir;
  const std::string link = dir.Path("link.ply"), target = dir.Path("target.ply");
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  const std::string rest = " --summary_csv=" + dir.Path("missing/out.csv");
  ExpectOneErrorLine(RunAdjuster("--input='" + kData + "/valid_small.txt' --final_ply=" + link + rest, dir),
                     "--summary_csv=" + dir.Path("missing/out.csv") + ": cannot write to this path");
  struct stat info;
  EXPECT_EQ(lstat(link.c_str(), &info), 0) << "the link is gone";
  EXPECT_NE(stat(target.c_str(), &info), 0) << "the link's target was created";
  const std::string fifo = dir.Path("pipe.ply");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // With nobody reading the pipe an open for writing would wait forever:
  // `timeout` turns that into a failure.
  const CommandResult result = testing_util::RunCommand(
      "timeout 60 '" + kBinary + "' --input='" + kData + "/valid_small.txt' --final_ply=" + fifo + rest, dir);
  ExpectOneErrorLine(result, "--summary_csv=" + dir.Path("missing/out.csv") + ": cannot write to this path");
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
