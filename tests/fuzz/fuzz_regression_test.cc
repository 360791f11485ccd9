// Replays the fuzzers' seed corpus and every input a fuzzer once failed on
// (tests/fuzz/regressions) through the fuzzers' own entry points, with any
// compiler. An entry point aborts when an invariant is violated; the tests
// below also assert the clear outcome each regression input must have.
#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "fuzz_entry_points.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace fuzz {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  EXPECT_TRUE(in.good() || in.eof()) << path;
  return contents.str();
}

// Regular files of a folder, sorted, without README files.
std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return files;
  while (dirent* entry = readdir(d)) {
    const std::string name = entry->d_name;
    if (name == "." || name == ".." || name.rfind("README", 0) == 0) continue;
    files.push_back(dir + "/" + name);
  }
  closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> SeedFiles() {
  std::vector<std::string> files;
  std::stringstream dirs(FUZZ_SEED_DIRS);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::vector<std::string> in_dir = FilesIn(dir);
    EXPECT_FALSE(in_dir.empty()) << "no seed files in " << dir;
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  return files;
}

const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

ReadOutcome ReadInput(const std::string& contents) {
  return FuzzBalReader(Bytes(contents), contents.size());
}

SolveOutcome SolveInput(const std::string& contents) {
  return FuzzSolve(Bytes(contents), contents.size());
}

std::string Regression(const std::string& name) {
  return ReadFile(std::string(FUZZ_REGRESSIONS_DIR) + "/" + name);
}

std::string Describe(const SolveOutcome& outcome) {
  std::ostringstream out;
  if (outcome.read.ok) {
    out << "read: " << outcome.read.num_cameras << " cameras, " << outcome.read.num_points
        << " points, " << outcome.read.num_observations << " observations\n";
  } else {
    out << "read: " << outcome.read.error << "\n";
  }
  if (outcome.too_large) out << "not solved: beyond the solve fuzzer's bounds\n";
  for (const SolveRun& run : outcome.runs) {
    out << run.variant << ": " << run.stage;
    if (!run.error.empty()) out << " failed: " << run.error;
    if (run.stage == "solve") {
      out << " " << ceres::TerminationTypeToString(static_cast<ceres::TerminationType>(run.termination))
          << " after " << run.num_iterations << " iterations, cost " << run.initial_cost << " -> "
          << run.final_cost << ": " << run.message;
    }
    out << "\n";
  }
  return out.str();
}

// FUZZ_REPLAY=<file> fuzz_regression_test --gtest_filter=FuzzRegression.Replay
// runs one input (e.g. a fuzzer's crash-* artifact) through both entry points
// and prints what happened.
TEST(FuzzRegression, Replay) {
  const char* file = std::getenv("FUZZ_REPLAY");
  if (file == nullptr || file[0] == '\0') GTEST_SKIP() << "FUZZ_REPLAY is not set";
  const std::string contents = ReadFile(file);
  const ReadOutcome read = ReadInput(contents);
  std::cout << "reader entry point: " << (read.ok ? "ok" : read.error) << "\n"
            << "solve entry point:\n"
            << Describe(SolveInput(contents));
}

TEST(FuzzRegression, SeedCorpusThroughTheReaderEntryPoint) {
  int valid = 0;
  for (const std::string& file : SeedFiles()) {
    SCOPED_TRACE(file);
    const ReadOutcome outcome = ReadInput(ReadFile(file));
    valid += outcome.ok;
  }
  EXPECT_GT(valid, 5);  // the corpus has valid problems, not only broken ones
}

TEST(FuzzRegression, SeedCorpusThroughTheSolveEntryPoint) {
  int solved = 0;
  for (const std::string& file : SeedFiles()) {
    SCOPED_TRACE(file);
    const SolveOutcome outcome = SolveInput(ReadFile(file));
    for (const SolveRun& run : outcome.runs) {
      solved += run.stage == "solve" && run.termination != ceres::FAILURE;
    }
  }
  EXPECT_GT(solved, 10);
}

// bal_reader_fuzzer: a camera rotation of 2e306 is a finite double, but its
// squared norm overflows; with use_quaternions the reader produced a NaN
// quaternion (and every use of the rotation gives NaN). The reader now
// rejects it, naming the camera and the line.
TEST(FuzzRegression, RotationWhoseSquaredNormOverflowsIsRejected) {
  const ReadOutcome read = ReadInput(Regression("reader_rotation_squared_norm_overflows.txt"));
  EXPECT_FALSE(read.ok);
  EXPECT_EQ(read.error,
            "fuzz-input:34: camera 2: the angle-axis rotation (0.1, -0.1, 2e+306) is too large "
            "(its squared norm overflows a double)");
}

// bal_reader_fuzzer: gzip's signature (1f 8b) was recognised only at the
// start of the file, so the same bytes inside a bzip2 stream gave another
// message ("expected 3 counts ... binary data"). It is now recognised at the
// start of the decoded data, plain or bzip2 (FuzzBalReader checks both).
TEST(FuzzRegression, GzipSignatureGivesOneMessageInEveryContainer) {
  const ReadOutcome read = ReadInput(Regression("reader_gzip_signature.bin"));
  EXPECT_FALSE(read.ok);
  EXPECT_EQ(read.error,
            "fuzz-input:1: gzip-compressed data: only plain text and bzip2 (.bz2) files are read "
            "(decompress it first)");
}

// solve_fuzzer: a point coordinate of 7e307 among points near the origin
// passed Normalize's checks, and centring and scaling by 73 turned it into
// inf (the solve then failed at the initial evaluation). Normalize now
// refuses, names the point, and changes nothing.
TEST(FuzzRegression, NormalizeRefusesToLeaveTheRangeOfADouble) {
  const SolveOutcome outcome = SolveInput(Regression("solve_normalize_overflows.txt"));
  ASSERT_TRUE(outcome.read.ok) << outcome.read.error;
  ASSERT_EQ(outcome.runs.size(), 4u);
  for (const SolveRun& run : outcome.runs) {
    SCOPED_TRACE(run.variant);
    EXPECT_EQ(run.stage, "normalize");
    EXPECT_EQ(run.error,
              "cannot normalize: point 3 leaves the range of a double when the scene is centred "
              "and scaled by 73.2813");
  }
}

// solve_fuzzer: a focal length of 2e117 makes a Jacobian entry overflow at
// the first evaluation. 1 and 2 threads fail alike, on the same block, but
// the message names it by address and each run builds its own problem: the
// fuzzer's comparison of the two messages now ignores the addresses.
TEST(FuzzRegression, FailureMessagesOfTwoRunsDifferOnlyInAddresses) {
  const SolveOutcome outcome = SolveInput(Regression("solve_failure_message_names_blocks_by_address.txt"));
  ASSERT_TRUE(outcome.read.ok) << outcome.read.error;
  ASSERT_EQ(outcome.runs.size(), 4u);
  const SolveRun& one = outcome.runs[0];
  const SolveRun& two = outcome.runs[3];
  EXPECT_EQ(one.termination, ceres::FAILURE);
  EXPECT_EQ(two.termination, ceres::FAILURE);
  EXPECT_NE(one.message.find("has a value that is not finite or was not written (row 0, column 8)"),
            std::string::npos)
      << one.message;
  EXPECT_NE(one.message, two.message);  // the addresses
}

// The COLMAP reader's seeds through its entry point: the valid models read
// (and pass the entry point's round trips and problem checks), the broken
// ones ("broken_*") fail with one line.
TEST(FuzzRegression, ColmapSeedCorpusThroughTheReaderEntryPoint) {
  const std::vector<std::string> files = FilesIn(COLMAP_FUZZ_SEED_DIR);
  int valid = 0;
  int broken = 0;
  int with_observations = 0;
  int rig_models = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    const ColmapReadOutcome outcome = FuzzColmapReader(Bytes(ReadFile(file)), ReadFile(file).size());
    // regression_*: inputs the fuzzer once failed on (asserted below).
    if (file.find("/regression_") == std::string::npos) {
      const bool expect_broken = file.find("/broken_") != std::string::npos;
      EXPECT_EQ(outcome.ok, !expect_broken) << outcome.error;
    }
    valid += outcome.ok;
    broken += !outcome.ok;
    with_observations += outcome.num_observations > 0;
    rig_models += outcome.rigs_and_frames;
  }
  EXPECT_GE(valid, 7);
  EXPECT_GE(broken, 6);
  EXPECT_GE(with_observations, 6);
  EXPECT_GE(rig_models, 2);  // rigs_text, rigs_binary
}

// A count whose size in bytes exceeds every integer type: the message prints
// it (it was converted to long long, undefined behaviour UBSan reported).
TEST(FuzzRegression, ColmapCountTimesRecordSizeOverflows) {
  const std::string input =
      ReadFile(std::string(COLMAP_FUZZ_SEED_DIR) + "/regression_count_times_record_size_overflows");
  const ColmapReadOutcome outcome = FuzzColmapReader(Bytes(input), input.size());
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error.rfind("fuzz-input/cameras.bin: byte 0: declares 17651002172490708212 "
                                "cameras, which need at least 423624052139776999424 more bytes",
                                0),
            0u)
      << outcome.error;
}

// A rig model whose frame and sensor rotations are each usable but whose
// product, an image's rotation, has no usable norm: the model was read, and
// what was written of it was refused. The reader refuses it.
TEST(FuzzRegression, ColmapDerivedRotationNotUsable) {
  const std::string input =
      ReadFile(std::string(COLMAP_FUZZ_SEED_DIR) + "/regression_derived_rotation_not_usable");
  const ColmapReadOutcome outcome = FuzzColmapReader(Bytes(input), input.size());
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error,
            "fuzz-input/frames.bin: byte 8: image 3: the pose derived from frame 539164673 and rig 1 has a "
            "rotation quaternion with no usable norm");
}

TEST(FuzzRegression, ColmapInputPacking) {
  const std::string cameras = "1 PINHOLE 10 10 5 5 5 5\n";
  const std::string images = "1 1 0 0 0 0 0 0 1 a\n1 1 1\n2 1 0 0 0 1 0 0 1 b\n2 2 1\n";
  const std::string points = "1 0 0 3 0 0 0 0 1 0 2 0\n";
  ColmapReadOutcome outcome =
      FuzzColmapReader(Bytes(PackColmapInput(false, cameras, images, points)),
                       PackColmapInput(false, cameras, images, points).size());
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(outcome.num_images, 2);
  EXPECT_EQ(outcome.num_observations, 2);
  // Lengths beyond the input are clamped: everything lands in cameras.txt.
  std::string packed = PackColmapInput(false, cameras, images, points);
  packed[1] = packed[2] = packed[3] = packed[4] = '\xff';
  outcome = FuzzColmapReader(Bytes(packed), packed.size());
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error.rfind("fuzz-input/cameras.txt:2:", 0), 0u) << outcome.error;
  // Too short: three empty text files, an empty model.
  outcome = FuzzColmapReader(Bytes(std::string("\x01")), 1);
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_EQ(outcome.num_cameras + outcome.num_images + outcome.num_points, 0);
  // Nine bytes: three empty binary files, which lack even their counts.
  outcome = FuzzColmapReader(Bytes(PackColmapInput(true, "", "", "")), 9);
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error.rfind("fuzz-input/cameras.bin: byte 0: file ends inside", 0), 0u)
      << outcome.error;
}

// Rig models: bits 1 and 2 of the first byte say that rigs.* and frames.*
// follow, with one more length each; one without the other is refused.
TEST(FuzzRegression, ColmapRigInputPacking) {
  examples::ColmapFiles files;
  files.cameras = "1 PINHOLE 10 10 5 5 5 5\n2 PINHOLE 10 10 5 5 5 5\n";
  files.images = "1 1 0 0 0 0 0 0 1 a\n1 1 1\n2 1 0 0 0 1 0 0 2 b\n2 2 1\n";
  files.points3D = "1 0 0 3 0 0 0 0 1 0 2 0\n";
  files.rigs = "1 2 CAMERA 1 CAMERA 2 1 1 0 0 0 1 0 0\n";
  files.frames = "5 1 1 0 0 0 0 0 0 2 CAMERA 1 1 CAMERA 2 2\n";
  std::string packed = PackColmapInput(false, files);
  ASSERT_EQ(packed[0], '\x06');
  ColmapReadOutcome outcome = FuzzColmapReader(Bytes(packed), packed.size());
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_TRUE(outcome.rigs_and_frames);
  EXPECT_EQ(outcome.num_rigs, 1);
  EXPECT_EQ(outcome.num_frames, 1);
  EXPECT_EQ(outcome.num_observations, 2);
  // Written in binary and packed again: the same model.
  examples::ColmapModel model;
  std::string error;
  ASSERT_TRUE(examples::ReadColmapModelFromMemory(examples::ColmapFormat::kText, "x", files, {},
                                                  &model, &error))
      << error;
  examples::ColmapFiles binary;
  examples::SerializeColmapModel(model, examples::ColmapFormat::kBinary, &binary);
  packed = PackColmapInput(true, binary);
  outcome = FuzzColmapReader(Bytes(packed), packed.size());
  ASSERT_TRUE(outcome.ok) << outcome.error;
  EXPECT_TRUE(outcome.binary && outcome.rigs_and_frames);
  // frames.* without rigs.*: three lengths, refused naming both files.
  files.rigs.reset();
  packed = PackColmapInput(false, files);
  ASSERT_EQ(packed[0], '\x04');
  outcome = FuzzColmapReader(Bytes(packed), packed.size());
  EXPECT_FALSE(outcome.ok);
  EXPECT_EQ(outcome.error.rfind("fuzz-input/frames.txt: there is no rigs.txt beside it", 0), 0u)
      << outcome.error;
  // Shorter than its 17-byte header: three empty text files.
  outcome = FuzzColmapReader(Bytes(std::string("\x07\x01\x02")), 3);
  EXPECT_TRUE(outcome.ok) << outcome.error;
  EXPECT_FALSE(outcome.rigs_and_frames);
}

}  // namespace
}  // namespace fuzz
}  // namespace ceres_sqrtba
