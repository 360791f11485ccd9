// Tests of the BAL reader/writer, normalization, perturbation and the
// paper's preprocessing.
#include "bal_problem.h"

#include <bzlib.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bal_random.h"
#include "build_problem.h"
#include "ceres/ceres.h"
#include "ceres_sqrtba/solver.h"
#include "example_test_util.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using testing_util::TempDir;
using testing_util::WriteFile;

// Two cameras and three points seen by both: a complete, valid problem.
BalProblem SmallProblem(bool use_quaternions = false) {
  std::vector<double> cameras = {
      0.01, -0.02, 0.03, 0.1, -0.2, -10.0, 500.0, 0.0,   0.0,
      0.0,  0.3,   0.0,  1.0, 0.0,  -12.0, 520.0, -0.01, 0.001};
  std::vector<double> points = {0.5, 0.2, 1.0, -1.0, 0.5, -0.5, 0.3, -0.7, 0.2};
  std::vector<int> camera_index = {0, 1, 0, 1, 0, 1};
  std::vector<int> point_index = {0, 0, 1, 1, 2, 2};
  std::vector<double> observations = {25.5, 11.25, 60.0,  9.5,  -50.0, 24.0,
                                      -19.0, 26.0, 15.0, -35.0, 48.0, -31.0};
  return BalProblem::FromArrays(2, 3, camera_index, point_index, observations,
                                cameras, points, use_quaternions);
}

// The text of SmallProblem(): header on line 1, observations on lines 2-7,
// then 27 parameter values, one per line (lines 8-34).
std::string SmallProblemText() {
  return "2 3 6\n"
         "0 0 25.5 11.25\n"
         "1 0 60 9.5\n"
         "0 1 -50 24\n"
         "1 1 -19 26\n"
         "0 2 15 -35\n"
         "1 2 48 -31\n"
         "0.01\n-0.02\n0.03\n0.1\n-0.2\n-10\n500\n0\n0\n"
         "0\n0.3\n0\n1\n0\n-12\n520\n-0.01\n0.001\n"
         "0.5\n0.2\n1\n-1\n0.5\n-0.5\n0.3\n-0.7\n0.2\n";
}

void ExpectSameProblem(const BalProblem& a, const BalProblem& b) {
  EXPECT_EQ(a.num_cameras(), b.num_cameras());
  EXPECT_EQ(a.num_points(), b.num_points());
  EXPECT_EQ(a.use_quaternions(), b.use_quaternions());
  EXPECT_EQ(a.camera_index(), b.camera_index());
  EXPECT_EQ(a.point_index(), b.point_index());
  EXPECT_EQ(a.observations(), b.observations());
  EXPECT_EQ(a.parameters(), b.parameters());
}

double Cost(BalProblem bal, bool robustify = false) {
  ceres::Problem problem;
  std::string error;
  BuildOptions options;
  options.robustify = robustify;
  EXPECT_TRUE(BuildProblem(options, &bal, &problem, &error)) << error;
  double cost = 0.0;
  problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost, nullptr, nullptr,
                   nullptr);
  return cost;
}

std::string Bzip2(const std::string& data) {
  unsigned int size = static_cast<unsigned int>(data.size() * 1.02 + 1024);
  std::string compressed(size, '\0');
  const int status = BZ2_bzBuffToBuffCompress(
      &compressed[0], &size, const_cast<char*>(data.data()),
      static_cast<unsigned int>(data.size()), 9, 0, 0);
  EXPECT_EQ(status, BZ_OK);
  compressed.resize(size);
  return compressed;
}

bool ReadText(const TempDir& dir, const std::string& text, BalProblem* problem,
              std::string* error, std::string* path_out = nullptr,
              const BalReadOptions& options = BalReadOptions()) {
  const std::string path = dir.Path("problem.txt");
  WriteFile(path, text);
  if (path_out != nullptr) *path_out = path;
  return BalProblem::Read(path, options, problem, error);
}

TEST(ExampleBalRandom, MatchesTheCLibraryRand) {
#ifdef __GLIBC__
  for (int seed : {38401, 0, 1, 7, -5, 2147483647}) {
    std::srand(static_cast<unsigned>(seed));
    BalRandom random(static_cast<uint32_t>(seed));
    for (int i = 0; i < 5000; ++i) {
      ASSERT_EQ(random.Next(), std::rand()) << "seed " << seed << " draw " << i;
    }
  }
#else
  GTEST_SKIP() << "the C library is not glibc";
#endif
}

TEST(ExampleBalRandom, NormalIsStandard) {
  BalRandom random(38401);
  double sum = 0.0;
  double sum2 = 0.0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double x = random.Normal();
    sum += x;
    sum2 += x * x;
  }
  EXPECT_NEAR(sum / n, 0.0, 0.03);
  EXPECT_NEAR(sum2 / n, 1.0, 0.05);
}

TEST(ExampleBalReader, ReadsTheDocumentedLayout) {
  TempDir dir;
  BalProblem problem;
  std::string error;
  ASSERT_TRUE(ReadText(dir, SmallProblemText(), &problem, &error)) << error;
  ExpectSameProblem(problem, SmallProblem());
}

TEST(ExampleBalReader, WriteThenReadGivesTheSameProblem) {
  TempDir dir;
  BalProblem original = SmallProblem();
  // Values that need all 17 digits.
  original.mutable_point(1)[0] = 0.1 + 0.2;
  original.mutable_camera(0)[6] = 1.0 / 3.0;
  std::string error;
  const std::string path = dir.Path("written.txt");
  ASSERT_TRUE(original.Write(path, &error)) << error;
  BalProblem read_back;
  ASSERT_TRUE(BalProblem::Read(path, BalReadOptions(), &read_back, &error))
      << error;
  ExpectSameProblem(original, read_back);
}

TEST(ExampleBalReader, QuaternionProblemsWriteAngleAxis) {
  TempDir dir;
  BalProblem quaternion = SmallProblem(/*use_quaternions=*/true);
  EXPECT_EQ(quaternion.camera_block_size(), 10);
  std::string error;
  const std::string path = dir.Path("quaternion.txt");
  ASSERT_TRUE(quaternion.Write(path, &error)) << error;
  BalProblem read_back;
  ASSERT_TRUE(BalProblem::Read(path, BalReadOptions(), &read_back, &error));
  const BalProblem expected = SmallProblem();
  ASSERT_EQ(read_back.parameters().size(), expected.parameters().size());
  for (size_t i = 0; i < expected.parameters().size(); ++i) {
    EXPECT_NEAR(read_back.parameters()[i], expected.parameters()[i], 1e-14);
  }
  // Reading with quaternions gives the same cost as angle-axis.
  BalReadOptions options;
  options.use_quaternions = true;
  BalProblem as_quaternions;
  ASSERT_TRUE(BalProblem::Read(path, options, &as_quaternions, &error));
  EXPECT_EQ(as_quaternions.camera_block_size(), 10);
  EXPECT_NEAR(Cost(as_quaternions), Cost(expected), 1e-9 * Cost(expected));
}

TEST(ExampleBalReader, Bzip2AndPlainTextGiveTheSameProblem) {
  TempDir dir;
  const std::string text = SmallProblemText();
  WriteFile(dir.Path("p.txt"), text);
  WriteFile(dir.Path("p.txt.bz2"), Bzip2(text));
  // The format is recognised by content, not by name.
  WriteFile(dir.Path("compressed_without_suffix"), Bzip2(text));
  // Two concatenated streams, as parallel bzip2 tools write.
  const size_t half = text.size() / 2;
  WriteFile(dir.Path("two_streams.bz2"),
            Bzip2(text.substr(0, half)) + Bzip2(text.substr(half)));
  std::string error;
  BalProblem plain;
  ASSERT_TRUE(BalProblem::Read(dir.Path("p.txt"), BalReadOptions(), &plain,
                               &error))
      << error;
  for (const char* name :
       {"p.txt.bz2", "compressed_without_suffix", "two_streams.bz2"}) {
    BalProblem compressed;
    ASSERT_TRUE(BalProblem::Read(dir.Path(name), BalReadOptions(), &compressed,
                                 &error))
        << name << ": " << error;
    ExpectSameProblem(plain, compressed);
  }
}

TEST(ExampleBalReader, LargeBzip2ProblemReadsAcrossBufferBoundaries) {
  // About 2 MB of text: many reads from the decompressor.
  TempDir dir;
  const int num_cameras = 50;
  const int num_points = 20000;
  std::vector<int> camera_index;
  std::vector<int> point_index;
  std::vector<double> observations;
  for (int j = 0; j < num_points; ++j) {
    for (int k = 0; k < 2; ++k) {
      camera_index.push_back((j + 7 * k) % num_cameras);
      point_index.push_back(j);
      observations.push_back(0.001 * j + k);
      observations.push_back(-0.5 * j / 3.0);
    }
  }
  std::vector<double> cameras(9 * num_cameras);
  for (size_t i = 0; i < cameras.size(); ++i) cameras[i] = 1.0 / (i + 1);
  std::vector<double> points(3 * num_points);
  for (size_t i = 0; i < points.size(); ++i) points[i] = std::sqrt(i + 0.5);
  const BalProblem original = BalProblem::FromArrays(
      num_cameras, num_points, camera_index, point_index, observations,
      cameras, points, false);
  std::string error;
  ASSERT_TRUE(original.Write(dir.Path("big.txt"), &error)) << error;
  WriteFile(dir.Path("big.txt.bz2"),
            Bzip2(testing_util::ReadFile(dir.Path("big.txt"))));
  BalProblem read_back;
  ASSERT_TRUE(BalProblem::Read(dir.Path("big.txt.bz2"), BalReadOptions(),
                               &read_back, &error))
      << error;
  ExpectSameProblem(original, read_back);
}

TEST(ExampleBalReader, AcceptsCrLfBlankLinesAndSigns) {
  TempDir dir;
  std::string text = SmallProblemText();
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += "\r\n";
    else crlf.push_back(c);
  }
  BalProblem problem;
  std::string error;
  ASSERT_TRUE(ReadText(dir, crlf, &problem, &error)) << error;
  ExpectSameProblem(problem, SmallProblem());
  // Blank lines, tabs, '+' signs and an exponent that underflows to zero.
  std::string spaced = "\n  2\t3 6  \n\n" + text.substr(text.find('\n') + 1);
  spaced.replace(spaced.find("0 0 25.5"), 8, "+0 0 +25.5");
  spaced.replace(spaced.find("\n500\n"), 5, "\n5e2\n1e-400\n");
  spaced.replace(spaced.find("\n0\n0\n0\n0.3"), 3, "\n");
  ASSERT_TRUE(ReadText(dir, spaced, &problem, &error)) << error;
  ExpectSameProblem(problem, SmallProblem());
}

// A malformed input and what the reader must say about it.
struct BadInput {
  const char* name;
  std::string text;
  int line;                // expected line in "<file>:<line>:"
  std::string message;     // expected substring of the message
};

std::string ReplaceLine(const std::string& text, int line,
                        const std::string& replacement) {
  std::vector<std::string> lines = testing_util::SplitLines(text);
  lines[line - 1] = replacement;
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

std::vector<BadInput> BadInputs() {
  const std::string good = SmallProblemText();
  std::vector<BadInput> cases;
  cases.push_back({"empty file", "", 1, "empty file"});
  cases.push_back({"only spaces", "  \n \n", 1, "empty file"});
  cases.push_back({"two counts", ReplaceLine(good, 1, "2 3"), 1,
                   "expected 3 counts in the header (cameras, points, "
                   "observations), found 2"});
  cases.push_back({"four counts", ReplaceLine(good, 1, "2 3 6 1"), 1,
                   "expected 3 counts in the header"});
  cases.push_back({"count not an integer", ReplaceLine(good, 1, "2 x 6"), 1,
                   "number of points 'x' is not an integer"});
  cases.push_back({"fractional count", ReplaceLine(good, 1, "2.5 3 6"), 1,
                   "number of cameras '2.5' is not an integer"});
  cases.push_back({"negative count", ReplaceLine(good, 1, "-2 3 6"), 1,
                   "negative number of cameras (-2)"});
  cases.push_back({"zero count", ReplaceLine(good, 1, "2 3 0"), 1,
                   "number of observations is 0"});
  cases.push_back({"huge count", ReplaceLine(good, 1, "2 3 99999999999"), 1,
                   "number of observations 99999999999 is larger than the "
                   "limit 2147483647"});
  cases.push_back({"count beyond int64",
                   ReplaceLine(good, 1, "2 99999999999999999999999 6"), 1,
                   "is larger than the limit"});
  cases.push_back({"one number missing", ReplaceLine(good, 3, "1 0 60"), 3,
                   "expected 2 numbers for observation 1, found 1"});
  cases.push_back({"one number too many", ReplaceLine(good, 3, "1 0 60 9 9"),
                   3, "expected 2 numbers for observation 1, found 3"});
  cases.push_back({"lone field", ReplaceLine(good, 4, "0"), 4,
                   "expected 'camera_index point_index x y' for observation "
                   "2, found 1 field"});
  cases.push_back({"camera out of range", ReplaceLine(good, 2, "2 0 25 11"),
                   2, "observation 0: camera index 2 is out of range [0, 2)"});
  cases.push_back({"negative point", ReplaceLine(good, 5, "1 -1 25 11"), 5,
                   "observation 3: point index -1 is out of range [0, 3)"});
  cases.push_back({"point out of range", ReplaceLine(good, 5, "1 3 25 11"), 5,
                   "observation 3: point index 3 is out of range [0, 3)"});
  cases.push_back({"index not an integer", ReplaceLine(good, 2, "a 0 25 11"),
                   2, "observation 0: camera index 'a' is not an integer"});
  cases.push_back({"fractional index", ReplaceLine(good, 2, "0 1.5 25 11"), 2,
                   "observation 0: point index '1.5' is not an integer"});
  cases.push_back({"nan observation", ReplaceLine(good, 6, "0 2 nan 1"), 6,
                   "observation 4: non-finite number 'nan'"});
  cases.push_back({"infinite observation", ReplaceLine(good, 6, "0 2 1 -inf"),
                   6, "observation 4: non-finite number '-inf'"});
  cases.push_back({"overflowing observation",
                   ReplaceLine(good, 6, "0 2 1 1e999"), 6,
                   "observation 4: number '1e999' is out of the range of a "
                   "double"});
  cases.push_back({"word as observation", ReplaceLine(good, 7, "1 2 48 abc"),
                   7, "observation 5: 'abc' is not a number"});
  cases.push_back({"nan parameter", ReplaceLine(good, 11, "nan"), 11,
                   "non-finite number 'nan' (camera 0, value 4 of 9)"});
  cases.push_back({"bad point coordinate", ReplaceLine(good, 33, "1.2.3"), 33,
                   "'1.2.3' is not a number (point 2, coordinate 2 of 3)"});
  cases.push_back({"binary bytes", ReplaceLine(good, 20, std::string("\x01\x02", 2)),
                   20, "'\\x01\\x02' is not a number (camera 1, value 4 of 9)"});
  cases.push_back({"file ends in observations",
                   "2 3 6\n0 0 25.5 11.25\n1 0 60 9.5\n", 3,
                   "file ends after 2 of 6 observations"});
  cases.push_back({"file ends in parameters",
                   good.substr(0, good.find("\n-0.7\n")) + "\n", 32,
                   "file ends after 25 of 27 parameter values (9 per camera, "
                   "3 per point); the counts in the header do not match the "
                   "data"});
  cases.push_back({"more observations than the header says",
                   ReplaceLine(good, 1, "2 3 5"), 7,
                   "found a line like another observation; the header says 5 "
                   "observations"});
  // Three observations the header does not count, read as parameter values,
  // and counts for which the values come out even: nothing runs out or
  // over, so only the shape of the first parameter line can tell.
  cases.push_back({"uncounted observations that come out even",
                   ReplaceLine(good, 1, "2 7 3"), 5,
                   "found a line like another observation; the header says 3 "
                   "observations"});
  cases.push_back({"a megabyte of white space",
                   ReplaceLine(good, 2, std::string((1 << 20) + 1, ' ') + "0 0 25.5 11.25"), 2,
                   "more than 1 MiB of white space in a row: not a BAL file"});
  cases.push_back({"fewer observations than the header says",
                   ReplaceLine(good, 1, "2 3 7"), 8,
                   "expected 'camera_index point_index x y' for observation "
                   "6, found 1 field; the header says 7 observations"});
  cases.push_back({"header counts too few points",
                   ReplaceLine(good, 1, "2 2 6"), 6,
                   "observation 4: point index 2 is out of range [0, 2)"});
  cases.push_back({"trailing garbage", good + "garbage\n", 35,
                   "trailing data after the last of the 27 parameter values: "
                   "'garbage'"});
  cases.push_back({"one value too many", good + "0.5\n", 35,
                   "trailing data after the last of the 27 parameter values"});
  cases.push_back({"rotation whose squared norm overflows",
                   ReplaceLine(good, 10, "1e200"), 10,
                   "camera 0: the angle-axis rotation (0.01, -0.02, 1e+200) is "
                   "too large (its squared norm overflows a double)"});
  cases.push_back({"overlong field",
                   ReplaceLine(good, 9, std::string(300, '1')), 9,
                   "a field longer than 128 characters"});
  return cases;
}

TEST(ExampleBalReader, EveryMalformedInputGivesOneLineNamingFileAndLine) {
  for (const BadInput& bad : BadInputs()) {
    SCOPED_TRACE(bad.name);
    TempDir dir;
    BalProblem problem = SmallProblem();
    std::string error;
    std::string path;
    EXPECT_FALSE(ReadText(dir, bad.text, &problem, &error, &path));
    const std::string prefix = path + ":" + std::to_string(bad.line) + ": ";
    EXPECT_EQ(error.compare(0, prefix.size(), prefix), 0)
        << "expected prefix '" << prefix << "' in '" << error << "'";
    EXPECT_NE(error.find(bad.message), std::string::npos)
        << "expected '" << bad.message << "' in '" << error << "'";
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    // Nothing of a half-read problem is left behind.
    EXPECT_EQ(problem.num_observations(), 0);
    EXPECT_TRUE(problem.parameters().empty());
  }
}

TEST(ExampleBalReader, ReadFromMemoryReadsAsReadDoes) {
  TempDir dir;
  const std::string text = SmallProblemText();
  BalProblem problem;
  std::string error;
  ASSERT_TRUE(BalProblem::ReadFromMemory("mem", text.data(), text.size(),
                                         BalReadOptions(), &problem, &error))
      << error;
  ExpectSameProblem(problem, SmallProblem());
  const std::string compressed = Bzip2(text);
  BalReadOptions quaternions;
  quaternions.use_quaternions = true;
  ASSERT_TRUE(BalProblem::ReadFromMemory("mem", compressed.data(),
                                         compressed.size(), quaternions,
                                         &problem, &error))
      << error;
  ExpectSameProblem(problem, SmallProblem(true));
  // Every malformed input gives the message Read gives, with the name given.
  for (const BadInput& bad : BadInputs()) {
    SCOPED_TRACE(bad.name);
    std::string file_error, path;
    ReadText(dir, bad.text, &problem, &file_error, &path);
    problem = SmallProblem();
    EXPECT_FALSE(BalProblem::ReadFromMemory("mem", bad.text.data(),
                                            bad.text.size(), BalReadOptions(),
                                            &problem, &error));
    EXPECT_EQ("mem" + file_error.substr(path.size()), error);
    EXPECT_EQ(problem.num_observations(), 0);
    EXPECT_TRUE(problem.parameters().empty());
  }
  EXPECT_FALSE(BalProblem::ReadFromMemory("nothing", nullptr, 0,
                                          BalReadOptions(), &problem, &error));
  EXPECT_EQ(error,
            "nothing:1: empty file; expected the header 'num_cameras "
            "num_points num_observations'");
}

TEST(ExampleBalReader, MalformedBzip2InputsToo) {
  TempDir dir;
  const std::string text = SmallProblemText();
  const std::string compressed = Bzip2(text);
  std::string error;
  BalProblem problem;

  WriteFile(dir.Path("bad_obs.bz2"), Bzip2(ReplaceLine(text, 3, "1 0 60")));
  EXPECT_FALSE(BalProblem::Read(dir.Path("bad_obs.bz2"), BalReadOptions(),
                                &problem, &error));
  EXPECT_EQ(error, dir.Path("bad_obs.bz2") +
                       ":3: expected 2 numbers for observation 1, found 1");

  WriteFile(dir.Path("truncated.bz2"),
            compressed.substr(0, compressed.size() / 2));
  EXPECT_FALSE(BalProblem::Read(dir.Path("truncated.bz2"), BalReadOptions(),
                                &problem, &error));
  EXPECT_NE(error.find(dir.Path("truncated.bz2") + ":"), std::string::npos);
  EXPECT_NE(error.find("truncated .bz2 file"), std::string::npos) << error;

  std::string corrupt = compressed;
  corrupt[corrupt.size() / 2] ^= 0x55;
  WriteFile(dir.Path("corrupt.bz2"), corrupt);
  EXPECT_FALSE(BalProblem::Read(dir.Path("corrupt.bz2"), BalReadOptions(),
                                &problem, &error));
  EXPECT_NE(error.find("bzip2 data is corrupt"), std::string::npos) << error;

  // "BZh" then something that is not a bzip2 stream header.
  WriteFile(dir.Path("not_bzip2.bz2"), "BZhello\n");
  EXPECT_FALSE(BalProblem::Read(dir.Path("not_bzip2.bz2"), BalReadOptions(),
                                &problem, &error));
  EXPECT_EQ(error, dir.Path("not_bzip2.bz2") +
                       ":1: bzip2 stream does not start with the bzip2 "
                       "signature");

  WriteFile(dir.Path("garbage_after.bz2"), compressed + "garbage");
  EXPECT_FALSE(BalProblem::Read(dir.Path("garbage_after.bz2"),
                                BalReadOptions(), &problem, &error));
  EXPECT_NE(error.find("data after the end of the bzip2 stream is not bzip2 "
                       "data"),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

// After the parser stops, the reader decompresses on only as far as the
// block it stopped in can reach (to name a corrupt block rather than its
// symptom): a few kilobytes of bzip2 can decompress to gigabytes. Here a bad
// line, then 80 MiB of valid streams, then a corrupt one: the parse error is
// reported, not the far corruption (read to the end, the message named it).
TEST(ExampleBalReader, Bzip2IsNotDecompressedToItsEndAfterAParseError) {
  TempDir dir;
  std::string file = Bzip2("2 3 6\n0 0 25.5\n1 1 2 3\n");
  const std::string filler = Bzip2(std::string(8 << 20, 'x'));
  for (int k = 0; k < 10; ++k) file += filler;
  std::string corrupt = Bzip2(std::string(4096, 'y') + "\n" + std::string(4096, 'z'));
  corrupt[corrupt.size() / 2] ^= 0x55;
  file += corrupt;
  WriteFile(dir.Path("far.bz2"), file);
  BalProblem problem;
  std::string error;
  EXPECT_FALSE(BalProblem::Read(dir.Path("far.bz2"), BalReadOptions(), &problem, &error));
  EXPECT_EQ(error, dir.Path("far.bz2") + ":2: expected 2 numbers for observation 0, found 1");
  // The same corruption right behind the bad line is still named.
  WriteFile(dir.Path("near.bz2"), Bzip2("2 3 6\n0 0 25.5\n1 1 2 3\n") + corrupt);
  EXPECT_FALSE(BalProblem::Read(dir.Path("near.bz2"), BalReadOptions(), &problem, &error));
  EXPECT_NE(error.find("bzip2 data is corrupt"), std::string::npos) << error;
}

// A multi-block .bz2 file with a damaged block: libbz2 checks a block only
// once it has decompressed it whole, so the parser sees the damaged block's
// bytes first and often stops on them. The message must still name the
// corruption, not its symptom.
TEST(ExampleBalReader, CorruptBzip2BlockIsNamedEvenWhenTheParserStopsFirst) {
  TempDir dir;
  std::string text;
  {
    // ~1.5 MB of text, compressed with 100 kB blocks.
    const int num_cameras = 20, num_points = 12000;
    std::vector<int> camera_index, point_index;
    std::vector<double> observations;
    for (int j = 0; j < num_points; ++j) {
      for (int k = 0; k < 2; ++k) {
        camera_index.push_back((j + 3 * k) % num_cameras);
        point_index.push_back(j);
        observations.push_back(0.37 * j + k);
        observations.push_back(-0.11 * j);
      }
    }
    std::vector<double> cameras(9 * num_cameras, 0.5), points(3 * num_points, 1.5);
    const BalProblem p = BalProblem::FromArrays(num_cameras, num_points, camera_index, point_index,
                                                observations, cameras, points, false);
    std::string error;
    ASSERT_TRUE(p.Write(dir.Path("p.txt"), &error)) << error;
    text = testing_util::ReadFile(dir.Path("p.txt"));
  }
  unsigned int size = static_cast<unsigned int>(text.size() * 1.02 + 1024);
  std::string compressed(size, '\0');
  ASSERT_EQ(BZ2_bzBuffToBuffCompress(&compressed[0], &size, const_cast<char*>(text.data()),
                                     static_cast<unsigned int>(text.size()), 1, 0, 0),
            BZ_OK);
  compressed.resize(size);
  int parser_first = 0;
  for (int k = 1; k <= 16; ++k) {
    std::string corrupt = compressed;
    corrupt[corrupt.size() * k / 40] ^= 0x10;
    const std::string path = dir.Path("corrupt" + std::to_string(k) + ".bz2");
    WriteFile(path, corrupt);
    BalProblem problem;
    std::string error;
    EXPECT_FALSE(BalProblem::Read(path, BalReadOptions(), &problem, &error));
    EXPECT_EQ(error.rfind(path + ":", 0), 0u) << error;
    EXPECT_NE(error.find("bzip2 data is corrupt"), std::string::npos) << error;
    if (error.find("the parser had already stopped at line ") != std::string::npos) ++parser_first;
  }
  // Otherwise the case this test is about was not reached.
  EXPECT_GT(parser_first, 0);
}

TEST(ExampleBalReader, OldMacLineEndingsAndOtherFormats) {
  TempDir dir;
  const std::string text = SmallProblemText();
  std::string cr = text;
  for (char& c : cr) {
    if (c == '\n') c = '\r';
  }
  BalProblem problem;
  std::string error;
  ASSERT_TRUE(ReadText(dir, cr, &problem, &error)) << error;
  ExpectSameProblem(problem, SmallProblem());
  // Line numbers count a lone CR as a line break.
  std::string path;
  EXPECT_FALSE(ReadText(dir, ReplaceLine(text, 3, "1 0 60"), &problem, &error, &path));
  std::string bad = ReplaceLine(text, 3, "1 0 60");
  for (char& c : bad) {
    if (c == '\n') c = '\r';
  }
  EXPECT_FALSE(ReadText(dir, bad, &problem, &error, &path));
  EXPECT_EQ(error.rfind(path + ":3: ", 0), 0u) << error;

  WriteFile(dir.Path("p.gz"), std::string("\x1f\x8b\x08\x00rest", 8));
  EXPECT_FALSE(BalProblem::Read(dir.Path("p.gz"), BalReadOptions(), &problem, &error));
  EXPECT_EQ(error, dir.Path("p.gz") +
                       ":1: gzip-compressed data: only plain text and bzip2 (.bz2) files are read "
                       "(decompress it first)");
  WriteFile(dir.Path("zeros"), std::string(4096, '\0'));
  EXPECT_FALSE(BalProblem::Read(dir.Path("zeros"), BalReadOptions(), &problem, &error));
  EXPECT_NE(error.find("of binary data: not a BAL text file"), std::string::npos) << error;
}

TEST(ExampleBalReader, MissingOrUnreadableFile) {
  TempDir dir;
  BalProblem problem;
  std::string error;
  const std::string missing = dir.Path("no_such_file.txt");
  EXPECT_FALSE(BalProblem::Read(missing, BalReadOptions(), &problem, &error));
  EXPECT_EQ(error,
            missing + ": cannot open for reading: No such file or directory");
  EXPECT_FALSE(
      BalProblem::Read(dir.path(), BalReadOptions(), &problem, &error));
  EXPECT_EQ(error, dir.path() + ": cannot read: Is a directory");
}

TEST(ExampleBalReader, RefusesHeadersThatNeedMoreMemoryThanAvailable) {
  TempDir dir;
  BalProblem problem;
  std::string error;
  std::string path;
  BalReadOptions options;
  options.memory_limit_in_bytes = 1 << 20;
  EXPECT_FALSE(ReadText(dir, "1000 100000 100000\n0 0 1 1\n", &problem, &error,
                        &path, options));
  EXPECT_EQ(error.rfind(path + ":1: the header's counts (1000 cameras, 100000 "
                               "points, 100000 observations) need ",
                        0),
            0u)
      << error;
  EXPECT_NE(error.find("more than the 1 MiB of memory available"),
            std::string::npos)
      << error;
  // What the caller needs per observation to solve counts too: 100 000
  // observations read in 2.3 MiB, but not solved at 1 000 bytes each in 64.
  options.memory_limit_in_bytes = 64 << 20;
  EXPECT_FALSE(ReadText(dir, "1000 100000 100000\n0 0 1 1\n", &problem, &error, &path, options));
  EXPECT_EQ(error.rfind(path + ":2: file ends", 0), 0u) << error;
  options.solve_bytes_per_observation = 1000;
  EXPECT_FALSE(ReadText(dir, "1000 100000 100000\n0 0 1 1\n", &problem, &error, &path, options));
  EXPECT_EQ(error, path + ":1: the header's counts (1000 cameras, 100000 points, 100000 observations) need 100 "
                          "MiB to read and solve, more than the 64 MiB of memory available");

  // With the machine's own figure: counts near the int limit need far more
  // than any machine this runs on has.
  const int64_t available = ceres_sqrtba::AvailableMemoryInBytes();
  if (available <= 0) GTEST_SKIP() << "the memory available is unknown";
  const double needed = 2147483647.0 * (24.0 + 9.0 * 8 + 3.0 * 8);
  if (needed <= static_cast<double>(available)) {
    GTEST_SKIP() << "this machine has more than " << needed << " bytes free";
  }
  EXPECT_FALSE(ReadText(dir, "2147483647 2147483647 2147483647\n0 0 1 1\n",
                        &problem, &error, &path));
  EXPECT_NE(error.find("of memory available"), std::string::npos) << error;
}

TEST(ExampleBalProblem, NormalizeCentresScalesAndKeepsTheCost) {
  BalProblem problem = SmallProblem();
  const double cost_before = Cost(problem);
  std::string error;
  ASSERT_TRUE(problem.Normalize(&error)) << error;
  EXPECT_NEAR(Cost(problem), cost_before, 1e-9 * cost_before);
  // Per-axis (upper) median at the origin, median L1 distance 100.
  std::vector<double> distances;
  for (int axis = 0; axis < 3; ++axis) {
    std::vector<double> values;
    for (int i = 0; i < problem.num_points(); ++i) {
      values.push_back(problem.point(i)[axis]);
    }
    std::sort(values.begin(), values.end());
    EXPECT_NEAR(values[values.size() / 2], 0.0, 1e-12);
  }
  for (int i = 0; i < problem.num_points(); ++i) {
    const double* x = problem.point(i);
    distances.push_back(std::abs(x[0]) + std::abs(x[1]) + std::abs(x[2]));
  }
  std::sort(distances.begin(), distances.end());
  EXPECT_NEAR(distances[distances.size() / 2], 100.0, 1e-9);
}

TEST(ExampleBalProblem, NormalizeRefusesADegenerateScene) {
  std::vector<double> cameras = {0, 0, 0, 0, 0, -10, 500, 0, 0};
  BalProblem problem = BalProblem::FromArrays(
      1, 2, {0, 0}, {0, 1}, {0, 0, 0, 0}, cameras, {1, 1, 1, 1, 1, 1}, false);
  std::string error;
  EXPECT_FALSE(problem.Normalize(&error));
  EXPECT_NE(error.find("median distance"), std::string::npos) << error;
  EXPECT_EQ(problem.point(0)[0], 1.0);
}

TEST(ExampleBalProblem, NormalizeRefusesToLeaveTheRangeOfADouble) {
  // Points near the origin and one far away: centring and scaling the far
  // one overflows. Nothing changes, and the message names the point.
  BalProblem problem = SmallProblem();
  problem.mutable_point(1)[2] = 1.7e308;
  const std::vector<double> before = problem.parameters();
  std::string error;
  EXPECT_FALSE(problem.Normalize(&error));
  EXPECT_EQ(error.rfind("cannot normalize: point 1 leaves the range of a "
                        "double when the scene is centred and scaled by ",
                        0),
            0u)
      << error;
  EXPECT_EQ(problem.parameters(), before);
  // The same for a camera far from the points.
  problem = SmallProblem();
  problem.mutable_camera(1)[5] = -1.7e308;
  EXPECT_FALSE(problem.Normalize(&error));
  EXPECT_EQ(error.rfind("cannot normalize: camera 1 leaves the range of a "
                        "double",
                        0),
            0u)
      << error;
}

TEST(ExampleBalProblem, PerturbationIsDeterministic) {
  for (bool quaternions : {false, true}) {
    BalProblem a = SmallProblem(quaternions);
    BalProblem b = SmallProblem(quaternions);
    BalProblem c = SmallProblem(quaternions);
    BalRandom random_a(38401), random_b(38401), random_c(38402);
    a.Perturb(0.01, 0.1, 0.5, &random_a);
    b.Perturb(0.01, 0.1, 0.5, &random_b);
    c.Perturb(0.01, 0.1, 0.5, &random_c);
    EXPECT_EQ(a.parameters(), b.parameters());
    EXPECT_NE(a.parameters(), c.parameters());
    EXPECT_NE(a.parameters(), SmallProblem(quaternions).parameters());
  }
}

TEST(ExampleBalProblem, RotationNoiseKeepsTheCameraCentre) {
  BalProblem problem = SmallProblem();
  const BalProblem original = SmallProblem();
  BalRandom random(1);
  problem.Perturb(0.1, 0.0, 0.0, &random);
  for (int i = 0; i < problem.num_cameras(); ++i) {
    double before[3], after[3];
    original.CameraCenter(i, before);
    problem.CameraCenter(i, after);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(after[k], before[k], 1e-9);
    // The rotation itself moved, the intrinsics did not.
    EXPECT_NE(problem.camera(i)[0], original.camera(i)[0]);
    for (int k = 6; k < 9; ++k) {
      EXPECT_EQ(problem.camera(i)[k], original.camera(i)[k]);
    }
  }
  // Points are untouched without point noise.
  for (int j = 0; j < problem.num_points(); ++j) {
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(problem.point(j)[k], original.point(j)[k]);
    }
  }
}

TEST(ExampleBalProblem, NormalizationAndPerturbationAreDeterministicOnFiles) {
  TempDir dir;
  std::string error;
  BalProblem a, b;
  ASSERT_TRUE(ReadText(dir, SmallProblemText(), &a, &error));
  ASSERT_TRUE(ReadText(dir, SmallProblemText(), &b, &error));
  for (BalProblem* p : {&a, &b}) {
    ASSERT_TRUE(p->Normalize(&error));
    BalRandom random(38401);
    p->Perturb(0.02, 0.3, 1.0, &random);
  }
  EXPECT_EQ(a.parameters(), b.parameters());
}

TEST(ExampleBalProblem, DepthFilterDropsPointsBehindOrTooClose) {
  BalProblem problem = SmallProblem();
  // Camera 0 looks down -z from z = 10: depth of a point is about 10 - z.
  EXPECT_NEAR(problem.ObservationDepth(0), 10.0 - 1.0, 0.1);
  // Put point 2 behind camera 0 (and camera 1).
  problem.mutable_point(2)[2] = 50.0;
  PreprocessStats stats = problem.DropObservationsBelowDepth(0.5);
  EXPECT_EQ(stats.dropped_observations, 2);
  EXPECT_EQ(problem.num_observations(), 4);
  EXPECT_EQ(problem.num_points(), 3);  // renumbering comes with the next step
  stats = problem.DropPointsWithFewObservations(2);
  EXPECT_EQ(stats.dropped_points, 1);
  EXPECT_EQ(stats.dropped_cameras, 0);
  EXPECT_EQ(problem.num_points(), 2);
  EXPECT_EQ(problem.parameters().size(), 2 * 9 + 2 * 3u);
  for (int p : problem.point_index()) EXPECT_LT(p, 2);
}

TEST(ExampleBalProblem, DropPointsWithOneObservationRenumbersEverything) {
  // Point 1 is seen once (by camera 1, which sees nothing else).
  std::vector<double> cameras(27, 0.0);
  for (int i = 0; i < 3; ++i) {
    cameras[9 * i + 5] = -10.0 - i;
    cameras[9 * i + 6] = 500.0;
  }
  BalProblem problem = BalProblem::FromArrays(
      3, 3, {0, 2, 1, 0, 2}, {0, 0, 1, 2, 2},
      {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, cameras,
      {0.1, 0.2, 0.3, 1.1, 1.2, 1.3, 2.1, 2.2, 2.3}, false);
  const PreprocessStats stats = problem.DropPointsWithFewObservations(2);
  EXPECT_EQ(stats.dropped_points, 1);
  EXPECT_EQ(stats.dropped_observations, 1);
  EXPECT_EQ(stats.dropped_cameras, 1);
  EXPECT_EQ(problem.num_cameras(), 2);
  EXPECT_EQ(problem.num_points(), 2);
  EXPECT_EQ(problem.camera_index(), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(problem.point_index(), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(problem.observations(),
            (std::vector<double>{1, 2, 3, 4, 7, 8, 9, 10}));
  EXPECT_EQ(problem.camera(1)[5], -12.0);  // old camera 2
  EXPECT_EQ(problem.point(1)[0], 2.1);     // old point 2
}

TEST(ExampleBalProblem, WritesPly) {
  TempDir dir;
  std::string error;
  const BalProblem problem = SmallProblem();
  ASSERT_TRUE(problem.WritePly(dir.Path("p.ply"), &error)) << error;
  const std::vector<std::string> lines =
      testing_util::SplitLines(testing_util::ReadFile(dir.Path("p.ply")));
  ASSERT_EQ(lines.size(), 10u + 5u);
  EXPECT_EQ(lines[0], "ply");
  EXPECT_EQ(lines[2], "element vertex 5");
  EXPECT_EQ(lines[9], "end_header");
  EXPECT_NE(lines[10].find(" 0 255 0"), std::string::npos);
  EXPECT_EQ(lines[14], "0.3 -0.7 0.2 255 255 255");
  EXPECT_FALSE(problem.WritePly(dir.Path("missing_dir/p.ply"), &error));
  EXPECT_NE(error.find("cannot open for writing"), std::string::npos);
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
