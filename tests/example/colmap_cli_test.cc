// Runs the colmap_bundle_adjuster binary: a refinement of the shared model
// writes the refined model in the input's format, COLMAP's flag spelling
// works, and bad input or flags give one error line, exit status 1 and
// nothing written.
#include <dirent.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "colmap_model.h"
#include "colmap_test_util.h"
#include "example_test_util.h"
#include "gtest/gtest.h"
#include "run_csv.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using testing_util::CommandResult;
using testing_util::FileExists;
using testing_util::SplitFields;
using testing_util::SplitLines;
using testing_util::TempDir;

const std::string kBinary = COLMAP_BUNDLE_ADJUSTER_PATH;

CommandResult RunAdjuster(const std::string& flags, const TempDir& dir) {
  return testing_util::RunCommand("'" + kBinary + "' " + flags, dir);
}

int CountEntries(const std::string& folder) {
  DIR* dir = opendir(folder.c_str());
  if (dir == nullptr) return -1;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") ++count;
  }
  closedir(dir);
  return count;
}

void ExpectOneErrorLine(const CommandResult& result, const std::string& expected) {
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const std::vector<std::string> lines = SplitLines(result.err);
  ASSERT_EQ(lines.size(), 1u) << result.err;
  EXPECT_EQ(lines[0].rfind("colmap_bundle_adjuster: error: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find(expected), std::string::npos)
      << "expected '" << expected << "' in '" << lines[0] << "'";
  EXPECT_EQ(result.out.find("Solver Summary"), std::string::npos);
}

// The small hand-made model in text form in dir/name.
std::string WriteSmallModel(const TempDir& dir, const std::string& name,
                            const std::string& images = testing_util::SmallImagesText()) {
  const std::string folder = dir.Path(name);
  EXPECT_EQ(mkdir(folder.c_str(), 0755), 0);
  testing_util::WriteFile(folder + "/cameras.txt", testing_util::SmallCamerasText());
  testing_util::WriteFile(folder + "/images.txt", images);
  testing_util::WriteFile(folder + "/points3D.txt", testing_util::SmallPointsText());
  return folder;
}

TEST(ExampleColmapCli, RefinesTheSharedModelInItsFormat) {
  const std::string input = testing_util::SharedModel();
  if (!FileExists(input + "/cameras.bin")) {
    GTEST_SKIP() << "shared COLMAP model not found: " << input << " (set CERES_SQRTBA_COLMAP_DIR)";
  }
  TempDir dir;
  const std::string output = dir.Path("out");
  ASSERT_EQ(mkdir(output.c_str(), 0755), 0);
  const CommandResult result =
      RunAdjuster("--input_path='" + input + "' --output_path='" + output +
                      "' --linear_solver=sqrt_sparse_schur --summary_csv='" +
                      dir.Path("summary.csv") + "'",
                  dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Read " + input + " (binary): 1 cameras, 40 images, 1816 3D points"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Mean reprojection error before: 1.1459"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Mean reprojection error after: 1.1459"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("Gauge: pose of image 1 fixed"), std::string::npos) << result.out;
  for (const char* file : {"cameras.bin", "images.bin", "points3D.bin"}) {
    EXPECT_TRUE(FileExists(output + "/" + file)) << file;
  }
  EXPECT_EQ(CountEntries(output), 3);
  // The refined model reads back, with the same structure as the input.
  ColmapModel before, after;
  ColmapFormat format;
  std::string error;
  ASSERT_TRUE(ReadColmapModel(input, {}, &before, &format, &error)) << error;
  ASSERT_TRUE(ReadColmapModel(output, {}, &after, &format, &error)) << error;
  EXPECT_EQ(format, ColmapFormat::kBinary);
  ASSERT_EQ(after.images.size(), before.images.size());
  EXPECT_EQ(after.NumTrackElements(), before.NumTrackElements());
  EXPECT_FALSE(after == before);  // refined
  // The summary CSV has bundle_adjuster's columns.
  const std::vector<std::string> lines =
      SplitLines(testing_util::ReadFile(dir.Path("summary.csv")));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], kSummaryCsvHeader);
  const std::vector<std::string> fields = SplitFields(lines[1]);
  ASSERT_EQ(fields.size(), SplitFields(lines[0]).size());
  EXPECT_EQ(fields[0], "sqrt_sparse_schur");
  EXPECT_EQ(fields[2], "statue-of-liberty");
  EXPECT_EQ(fields[3], "40");
  EXPECT_EQ(fields[5], "7760");
}

// --covariance=all: two files beside the model in its format (docs/
// covariance.md), each with as many records as its header says, of the
// documented widths, positive variances; and the summary lines.
TEST(ExampleColmapCli, CovarianceFilesBesideTheModel) {
  const std::string input = testing_util::SharedModel();
  if (!FileExists(input + "/cameras.txt")) {
    GTEST_SKIP() << "shared COLMAP model not found: " << input << " (set CERES_SQRTBA_COLMAP_DIR)";
  }
  TempDir dir;
  // The text files of the shared model: the output is text too.
  const std::string text = dir.Path("in");
  ASSERT_EQ(mkdir(text.c_str(), 0755), 0);
  for (const char* file : {"cameras.txt", "images.txt", "points3D.txt"}) {
    testing_util::WriteFile(text + "/" + file, testing_util::ReadFile(input + "/" + file));
  }
  const std::string output = dir.Path("out");
  ASSERT_EQ(mkdir(output.c_str(), 0755), 0);
  const CommandResult result =
      RunAdjuster("--input_path='" + text + "' --output_path='" + output + "' --covariance=all", dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Covariance (square root, "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("40 poses, 1816 points"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Camera centre standard deviation: median "), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Point standard deviation: median "), std::string::npos) << result.out;
  EXPECT_EQ(CountEntries(output), 5);
  for (const auto& file : {std::make_pair("pose_covariances.txt", 21), std::make_pair("point_covariances.txt", 6)}) {
    const std::vector<std::string> lines = SplitLines(testing_util::ReadFile(output + "/" + file.first));
    int records = 0, declared = -1;
    for (const std::string& line : lines) {
      if (line.rfind("# Number of records: ", 0) == 0) declared = std::stoi(line.substr(21));
      if (line.empty() || line[0] == '#') continue;
      ++records;
      std::stringstream fields(line);
      std::vector<double> values;
      double v = 0.0;
      uint64_t id = 0;
      fields >> id;
      while (fields >> v) values.push_back(v);
      ASSERT_EQ(static_cast<int>(values.size()), file.second) << line;
      // The diagonal of the upper triangle, row by row: non-negative.
      const int n = file.second == 21 ? 6 : 3;
      for (int i = 0, k = 0; i < n; k += n - i, ++i) EXPECT_GE(values[k], 0.0) << line;
    }
    EXPECT_EQ(records, declared) << file.first;
    EXPECT_EQ(records, file.second == 21 ? 40 : 1816) << file.first;
  }
}

TEST(ExampleColmapCli, TextModelAutomaticSolverAndColmapFlagSpelling) {
  TempDir dir;
  const std::string input = WriteSmallModel(dir, "in");
  const std::string output = dir.Path("out");
  ASSERT_EQ(mkdir(output.c_str(), 0755), 0);
  const CommandResult result = RunAdjuster(
      "--input_path='" + input + "' --output_path='" + output +
          "' --BundleAdjustment.refine_principal_point 1 --BundleAdjustment.max_num_iterations=3"
          " --BundleAdjustment.loss_function_type=CAUCHY --sqrt_automatic",
      dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Linear solver: sqrt_automatic+dense_schur (automatic, COLMAP's rule "
                            "for 3 images: dense_schur, its square-root counterpart by "
                            "SQRT_AUTOMATIC)"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("SQRT_AUTOMATIC ran: sqrt_sparse_schur\n"), std::string::npos)
      << result.out;
  // Principal points refined: 2 points (6), 3 poses (6 + 6 + 5, the first
  // one constant in the reduced problem), 2 cameras of 4 (8): 31, and 25
  // once the constant pose is removed (27 and 21 without the principal points).
  bool found = false;
  for (const std::string& line : SplitLines(result.out)) {
    if (line.rfind("Effective parameters", 0) == 0) {
      found = true;
      std::stringstream fields(line.substr(20));
      int original = 0, reduced = 0;
      fields >> original >> reduced;
      EXPECT_EQ(original, 31) << line;
      EXPECT_EQ(reduced, 25) << line;
    }
  }
  EXPECT_TRUE(found) << result.out;
  EXPECT_TRUE(FileExists(output + "/images.txt"));
  EXPECT_EQ(CountEntries(output), 3);
}

TEST(ExampleColmapCli, BadInputGivesOneLineAndWritesNothing) {
  TempDir dir;
  std::string images = testing_util::SmallImagesText();
  images.replace(images.find("0.3 0.1 0 2 c.jpg"), 17, "0.3 0.1 0 9 c.jpg");
  const std::string input = WriteSmallModel(dir, "in", images);
  const std::string output = dir.Path("out");
  ASSERT_EQ(mkdir(output.c_str(), 0755), 0);
  ExpectOneErrorLine(
      RunAdjuster("--input_path='" + input + "' --output_path='" + output + "'", dir),
      input + "/images.txt:7: image 3 refers to camera 9, which is not in cameras.txt");
  EXPECT_EQ(CountEntries(output), 0);
}

TEST(ExampleColmapCli, BadCovarianceFlag) {
  TempDir dir;
  const std::string input = WriteSmallModel(dir, "in");
  const std::string output = dir.Path("out");
  ASSERT_EQ(mkdir(output.c_str(), 0755), 0);
  ExpectOneErrorLine(RunAdjuster("--input_path='" + input + "' --output_path='" + output + "' --covariance=cameras",
                                 dir),
                     "--covariance must be none, poses, points or all, not 'cameras'");
  EXPECT_EQ(CountEntries(output), 0);
}

TEST(ExampleColmapCli, BadFlagsAndPaths) {
  TempDir dir;
  const std::string input = WriteSmallModel(dir, "in");
  const std::string output = dir.Path("out");
  ASSERT_EQ(mkdir(output.c_str(), 0755), 0);
  const std::string paths = "--input_path='" + input + "' --output_path='" + output + "' ";
  ExpectOneErrorLine(RunAdjuster("--output_path='" + output + "'", dir), "--input_path is required");
  ExpectOneErrorLine(RunAdjuster("--input_path='" + input + "'", dir), "--output_path is required");
  ExpectOneErrorLine(RunAdjuster("--input_path='" + input + "' --output_path='" + input + "'", dir),
                     "is the input folder");
  ExpectOneErrorLine(RunAdjuster("--input_path='" + input + "' --output_path='" +
                                     dir.Path("missing") + "'",
                                 dir),
                     "not an existing folder");
  ExpectOneErrorLine(RunAdjuster("--input_path='" + dir.Path("none") + "' --output_path='" +
                                     output + "'",
                                 dir),
                     dir.Path("none") + ": not a folder");
  ExpectOneErrorLine(RunAdjuster(paths + "--linear_solver=magic", dir), "unknown --linear_solver 'magic'");
  ExpectOneErrorLine(RunAdjuster(paths + "--precision=single", dir),
                     "--precision=single needs a square-root solver");
  ExpectOneErrorLine(RunAdjuster(paths + "--linear_solver=dense_schur --sqrt_automatic", dir),
                     "--sqrt_automatic needs --linear_solver=automatic");
  ExpectOneErrorLine(RunAdjuster(paths + "--BundleAdjustment.loss_function_type=L2", dir),
                     "unknown --BundleAdjustment.loss_function_type 'L2'");
  ExpectOneErrorLine(RunAdjuster(paths + "--BundleAdjustment.gradient_tolerance=-1", dir),
                     "--BundleAdjustment.gradient_tolerance must be a finite value >= 0");
  // COLMAP 4's names and COLMAP 3's: the message names the one given; both
  // with different values are refused.
  ExpectOneErrorLine(RunAdjuster(paths + "--BundleAdjustmentCeres.gradient_tolerance=-1", dir),
                     "--BundleAdjustmentCeres.gradient_tolerance must be a finite value >= 0");
  ExpectOneErrorLine(
      RunAdjuster(paths + "--BundleAdjustmentCeres.max_num_iterations=3 "
                          "--BundleAdjustment.max_num_iterations=4", dir),
      "--BundleAdjustmentCeres.max_num_iterations and --BundleAdjustment.max_num_iterations "
      "(COLMAP 3's name of the same option) are both given, with different values");
  ExpectOneErrorLine(
      RunAdjuster(paths + "--BundleAdjustment.refine_rig_from_world=0 "
                          "--BundleAdjustment.refine_extrinsics=1", dir),
      "--BundleAdjustment.refine_rig_from_world and --BundleAdjustment.refine_extrinsics");
  ExpectOneErrorLine(RunAdjuster(paths + "--BundleAdjustment.min_track_length=-1", dir),
                     "--BundleAdjustment.min_track_length must be at least 0");
  ExpectOneErrorLine(
      RunAdjuster(paths + "--BundleAdjustmentCeres.max_num_images_direct_dense_cpu_solver=2000",
                  dir),
      "--BundleAdjustmentCeres.max_num_images_direct_dense_cpu_solver must be less than");
  ExpectOneErrorLine(RunAdjuster(paths + "--num_threads=0", dir), "--num_threads must be at least 1");
  ExpectOneErrorLine(RunAdjuster(paths + "extra", dir), "unexpected argument 'extra'");
  EXPECT_EQ(CountEntries(output), 0);
  // A text model is not written beside binary files, which COLMAP would read.
  testing_util::WriteFile(output + "/images.bin", "stale");
  ExpectOneErrorLine(RunAdjuster(paths, dir),
                     "--output_path=" + output + " holds images.bin, which COLMAP would read "
                     "instead of the text model written here");
  EXPECT_EQ(CountEntries(output), 1);
  std::remove((output + "/images.bin").c_str());
  // An unknown flag: gflags' own message, status 1.
  const CommandResult unknown = RunAdjuster(paths + "--BundleAdjustment.no_such_option=1", dir);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("BundleAdjustment_no_such_option"), std::string::npos) << unknown.err;
}

// A rig model (rigs.txt and frames.txt beside the three files): read as
// one, and written back in its layout, five files.
TEST(ExampleColmapCli, RigModelIsReadAndWrittenWithItsRigsAndFrames) {
  TempDir dir;
  const std::string input = WriteSmallModel(dir, "in");
  testing_util::WriteFile(input + "/rigs.txt", testing_util::SmallRigsText());
  testing_util::WriteFile(input + "/frames.txt", testing_util::SmallFramesText());
  const std::string output = dir.Path("out");
  ASSERT_EQ(mkdir(output.c_str(), 0755), 0);
  const CommandResult result = RunAdjuster(
      "--input_path='" + input + "' --output_path='" + output + "' --num_iterations=3", dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("Read " + input + " (text, with rigs and frames): 2 cameras, 3 "
                            "images, 3 3D points, 6 observations, 1 rigs, 3 frames\n"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(CountEntries(output), 5);
  ColmapModel before, after;
  ColmapFormat format;
  std::string error;
  ASSERT_TRUE(ReadColmapModel(input, {}, &before, &format, &error)) << error;
  ASSERT_TRUE(ReadColmapModel(output, {}, &after, &format, &error)) << error;
  EXPECT_EQ(format, ColmapFormat::kText);
  ASSERT_TRUE(after.has_rigs_and_frames);
  ASSERT_EQ(after.rigs.size(), before.rigs.size());
  ASSERT_EQ(after.frames.size(), before.frames.size());
  for (size_t f = 0; f < after.frames.size(); ++f) {
    EXPECT_EQ(after.frames[f].id, before.frames[f].id);
    EXPECT_EQ(after.frames[f].data_ids.size(), before.frames[f].data_ids.size());
  }
  // The images' poses in images.txt are the ones derived from the frames.
  for (size_t i = 0; i < after.images.size(); ++i) {
    const ColmapRigid3 pose = ColmapCamFromWorld(after, static_cast<int>(i));
    for (int k = 0; k < 3; ++k) EXPECT_EQ(pose.tvec[k], after.images[i].tvec[k]);
  }
}

// An output folder that would hold files disagreeing with the model written
// there is refused before the solve, and nothing is written.
TEST(ExampleColmapCli, StaleRigAndFrameFilesAreRefused) {
  TempDir dir;
  const std::string input = WriteSmallModel(dir, "in");
  const std::string output = dir.Path("out");
  ASSERT_EQ(mkdir(output.c_str(), 0755), 0);
  testing_util::WriteFile(output + "/frames.txt", "# frames of an older model\n");
  ExpectOneErrorLine(
      RunAdjuster("--input_path='" + input + "' --output_path='" + output + "'", dir),
      "--output_path=" + output + " holds frames.txt, which a model without rigs and frames "
      "does not replace: COLMAP would take the images' poses from the old frames");
  EXPECT_EQ(CountEntries(output), 1);
  EXPECT_EQ(testing_util::ReadFile(output + "/frames.txt"), "# frames of an older model\n");
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
