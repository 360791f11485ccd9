// The COLMAP model reader and writer: the shared real model read from text
// and binary, write-then-read round trips, and hostile files (one error line
// naming the file and the line or byte offset, an empty model); rig models
// (rigs.* and frames.*: the poses derived from frames and rigs, round trips,
// COLMAP's layouts made by hand, hostile files); the output folder (stale
// files refused, a failed write leaving the old files).
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "colmap_camera_models.h"
#include "colmap_model.h"
#include "colmap_test_util.h"
#include "example_test_util.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using testing_util::FileExists;
using testing_util::ReadFile;
using testing_util::TempDir;
using testing_util::WriteFile;

bool ReadText(const std::string& cameras, const std::string& images, const std::string& points,
              ColmapModel* model, std::string* error, ColmapReadOptions options = {}) {
  return ReadColmapModelFromMemory(ColmapFormat::kText, "model", cameras, images, points, options,
                                   model, error);
}

bool ReadBinary(const std::string& cameras, const std::string& images, const std::string& points,
                ColmapModel* model, std::string* error, ColmapReadOptions options = {}) {
  return ReadColmapModelFromMemory(ColmapFormat::kBinary, "model", cameras, images, points,
                                   options, model, error);
}

ColmapModel SmallModel() {
  ColmapModel model;
  std::string error;
  EXPECT_TRUE(ReadText(testing_util::SmallCamerasText(), testing_util::SmallImagesText(),
                       testing_util::SmallPointsText(), &model, &error))
      << error;
  return model;
}

TEST(ExampleColmapModel, ReadsTheSmallTextModel) {
  const ColmapModel model = SmallModel();
  ASSERT_EQ(model.cameras.size(), 2u);
  ASSERT_EQ(model.images.size(), 3u);
  ASSERT_EQ(model.points3D.size(), 3u);
  EXPECT_EQ(model.cameras[0].model_id, colmap_models::kSimpleRadial);
  EXPECT_EQ(model.cameras[1].params, (std::vector<double>{500, 510, 320, 240}));
  EXPECT_EQ(model.images[1].name, "b.jpg");
  EXPECT_DOUBLE_EQ(model.images[1].qvec[2], 0.09983341664682815);
  ASSERT_EQ(model.images[0].points2D.size(), 3u);
  EXPECT_EQ(model.images[0].points2D[2].point3D_id, kInvalidPoint3DId);
  EXPECT_EQ(model.points3D[0].track.size(), 3u);
  EXPECT_EQ(model.points3D[1].color[1], 255);
  EXPECT_EQ(model.NumTrackElements(), 6);
  EXPECT_EQ(model.ImageIndex(3), 2);
  EXPECT_EQ(model.CameraIndex(7), -1);
}

TEST(ExampleColmapModel, WriteThenReadIsBitIdenticalInBothFormats) {
  ColmapModel model = SmallModel();
  // Values whose shortest decimal form is long, and a subnormal.
  model.points3D[0].xyz[0] = 0.1 + 0.2;
  model.points3D[1].xyz[2] = 1.0 / 3.0;
  model.cameras[0].params[3] = 4.9e-324;
  model.images[2].tvec[1] = -1e300;
  for (const ColmapFormat format : {ColmapFormat::kText, ColmapFormat::kBinary}) {
    std::string cameras, images, points;
    SerializeColmapModel(model, format, &cameras, &images, &points);
    ColmapModel read;
    std::string error;
    ASSERT_TRUE(ReadColmapModelFromMemory(format, "round", cameras, images, points, {}, &read,
                                          &error))
        << error;
    EXPECT_TRUE(read == model) << (format == ColmapFormat::kText ? "text" : "binary");
    // And written again: the same bytes.
    std::string cameras2, images2, points2;
    SerializeColmapModel(read, format, &cameras2, &images2, &points2);
    EXPECT_EQ(cameras, cameras2);
    EXPECT_EQ(images, images2);
    EXPECT_EQ(points, points2);
  }
}

TEST(ExampleColmapModel, EqualityNoticesOneBit) {
  const ColmapModel model = SmallModel();
  ColmapModel other = model;
  EXPECT_TRUE(other == model);
  other.points3D[2].xyz[1] = std::nextafter(other.points3D[2].xyz[1], 1.0);
  EXPECT_FALSE(other == model);
}

TEST(ExampleColmapModel, FilesOnDiskAndFormatDetection) {
  TempDir dir;
  ColmapFormat format;
  std::string error;
  EXPECT_FALSE(DetectColmapFormat(dir.path(), &format, &error));
  EXPECT_NE(error.find("no COLMAP model"), std::string::npos) << error;
  EXPECT_FALSE(DetectColmapFormat(dir.Path("missing"), &format, &error));
  EXPECT_NE(error.find("not a folder"), std::string::npos) << error;

  const ColmapModel model = SmallModel();
  ASSERT_TRUE(WriteColmapModel(model, dir.path(), ColmapFormat::kText, &error)) << error;
  ColmapModel read;
  ASSERT_TRUE(ReadColmapModel(dir.path(), {}, &read, &format, &error)) << error;
  EXPECT_EQ(format, ColmapFormat::kText);
  EXPECT_TRUE(read == model);
  // A binary model is not written beside the text one (two models that
  // disagree)...
  EXPECT_FALSE(WriteColmapModel(model, dir.path(), ColmapFormat::kBinary, &error));
  EXPECT_NE(error.find("holds cameras.txt, images.txt and points3D.txt, a text model"),
            std::string::npos)
      << error;
  EXPECT_FALSE(FileExists(dir.Path("cameras.bin")));
  // ... but binary files beside text ones win, as in COLMAP.
  std::string cameras, images, points;
  SerializeColmapModel(model, ColmapFormat::kBinary, &cameras, &images, &points);
  WriteFile(dir.Path("cameras.bin"), cameras);
  WriteFile(dir.Path("images.bin"), images);
  WriteFile(dir.Path("points3D.bin"), points);
  ASSERT_TRUE(ReadColmapModel(dir.path(), {}, &read, &format, &error)) << error;
  EXPECT_EQ(format, ColmapFormat::kBinary);
  EXPECT_TRUE(read == model);
}

TEST(ExampleColmapModel, TextCannotHoldNamesWithSpaces) {
  ColmapModel model = SmallModel();
  model.images[0].name = "my photo.jpg";
  TempDir dir;
  std::string error;
  EXPECT_FALSE(WriteColmapModel(model, dir.path(), ColmapFormat::kText, &error));
  EXPECT_NE(error.find("cannot be written in text form"), std::string::npos) << error;
  EXPECT_TRUE(WriteColmapModel(model, dir.path(), ColmapFormat::kBinary, &error)) << error;
  ColmapModel read;
  ColmapFormat format;
  ASSERT_TRUE(ReadColmapModel(dir.path(), {}, &read, &format, &error)) << error;
  EXPECT_EQ(read.images[0].name, "my photo.jpg");
}

// The shared real model: text and binary hold the same model (the text form
// rounds the poses to 6 significant digits), and rewriting the binary files
// reproduces them byte for byte.
TEST(ExampleColmapModel, SharedModelTextAndBinaryAgree) {
  const std::string folder = testing_util::SharedModel();
  if (!FileExists(folder + "/cameras.bin") || !FileExists(folder + "/cameras.txt")) {
    GTEST_SKIP() << "shared COLMAP model not found: " << folder
                 << " (set CERES_SQRTBA_COLMAP_DIR)";
  }
  std::string error;
  ColmapModel binary;
  ColmapModel text;
  ASSERT_TRUE(ReadBinary(ReadFile(folder + "/cameras.bin"), ReadFile(folder + "/images.bin"),
                         ReadFile(folder + "/points3D.bin"), &binary, &error))
      << error;
  ASSERT_TRUE(ReadText(ReadFile(folder + "/cameras.txt"), ReadFile(folder + "/images.txt"),
                       ReadFile(folder + "/points3D.txt"), &text, &error))
      << error;
  ASSERT_EQ(binary.cameras.size(), 1u);
  ASSERT_EQ(binary.images.size(), 40u);
  ASSERT_EQ(binary.points3D.size(), 1816u);
  EXPECT_EQ(binary.NumTrackElements(), 7760);
  ASSERT_EQ(text.cameras.size(), binary.cameras.size());
  ASSERT_EQ(text.images.size(), binary.images.size());
  ASSERT_EQ(text.points3D.size(), binary.points3D.size());
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b)); };
  for (size_t c = 0; c < binary.cameras.size(); ++c) {
    EXPECT_EQ(text.cameras[c].model_id, binary.cameras[c].model_id);
    EXPECT_EQ(text.cameras[c].width, binary.cameras[c].width);
    for (size_t k = 0; k < binary.cameras[c].params.size(); ++k) {
      EXPECT_TRUE(near(text.cameras[c].params[k], binary.cameras[c].params[k]));
    }
  }
  // Images and points may come in another order in the two forms: by id.
  for (const ColmapImage& b : binary.images) {
    const int t = text.ImageIndex(b.id);
    ASSERT_GE(t, 0) << b.id;
    const ColmapImage& x = text.images[t];
    EXPECT_EQ(x.name, b.name);
    EXPECT_EQ(x.camera_id, b.camera_id);
    for (int k = 0; k < 4; ++k) EXPECT_TRUE(near(x.qvec[k], b.qvec[k])) << b.id;
    for (int k = 0; k < 3; ++k) EXPECT_TRUE(near(x.tvec[k], b.tvec[k])) << b.id;
    ASSERT_EQ(x.points2D.size(), b.points2D.size());
    for (size_t k = 0; k < b.points2D.size(); ++k) {
      EXPECT_EQ(x.points2D[k].point3D_id, b.points2D[k].point3D_id);
      EXPECT_TRUE(near(x.points2D[k].x, b.points2D[k].x));
    }
  }
  std::unordered_map<uint64_t, const ColmapPoint3D*> text_points;
  for (const ColmapPoint3D& p : text.points3D) text_points[p.id] = &p;
  for (const ColmapPoint3D& b : binary.points3D) {
    ASSERT_EQ(text_points.count(b.id), 1u);
    const ColmapPoint3D& x = *text_points[b.id];
    for (int k = 0; k < 3; ++k) EXPECT_TRUE(near(x.xyz[k], b.xyz[k]));
    ASSERT_EQ(x.track.size(), b.track.size());
  }

  std::string cameras, images, points;
  SerializeColmapModel(binary, ColmapFormat::kBinary, &cameras, &images, &points);
  EXPECT_TRUE(cameras == ReadFile(folder + "/cameras.bin"));
  EXPECT_TRUE(images == ReadFile(folder + "/images.bin"));
  EXPECT_TRUE(points == ReadFile(folder + "/points3D.bin"));
  // The text model written and read back: bit-identical.
  SerializeColmapModel(text, ColmapFormat::kText, &cameras, &images, &points);
  ColmapModel again;
  ASSERT_TRUE(ReadText(cameras, images, points, &again, &error)) << error;
  EXPECT_TRUE(again == text);
}

// ------------------------------------------------------------- hostile ----

struct TextCase {
  const char* name;
  std::string cameras;
  std::string images;
  std::string points;
  const char* expected;  // in the message
};

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(ExampleColmapModel, HostileTextFilesGiveOneLineNamingFileAndLine) {
  const std::string c = testing_util::SmallCamerasText();
  const std::string i = testing_util::SmallImagesText();
  const std::string p = testing_util::SmallPointsText();
  const std::vector<TextCase> cases = {
      {"unknown model", Replace(c, "PINHOLE", "FOV"), i, p,
       "model/cameras.txt:3: unknown or unsupported camera model 'FOV'"},
      {"too few params", Replace(c, " 0.01", ""), i, p,
       "model/cameras.txt:2: camera model SIMPLE_RADIAL has 4 parameters (f, cx, cy, k), found 3"},
      {"too many params", Replace(c, "320 240\n", "320 240 7\n"), i, p,
       "model/cameras.txt:3: camera model PINHOLE has 4 parameters"},
      {"nan param", Replace(c, "0.01", "nan"), i, p,
       "model/cameras.txt:2: camera 1 parameter 3: non-finite number 'nan'"},
      {"inf coordinate", c, i, Replace(p, "0.2 -0.1 5", "0.2 -inf 5"),
       "model/points3D.txt:4: 3D point 3: non-finite number '-inf'"},
      {"overflowing number", c, Replace(i, "-0.5 0 0 1 b.jpg", "-0.5 1e999 0 1 b.jpg"), p,
       "model/images.txt:5: image 2 pose: non-finite number '1e999'"},
      {"not a number", Replace(c, "640 480 500 510", "640 480 five 510"), i, p,
       "model/cameras.txt:3: camera 2 parameter 0: 'five' is not a number"},
      {"duplicate camera", Replace(c, "2 PINHOLE", "1 PINHOLE"), i, p,
       "model/cameras.txt:3: camera id 1 appears twice"},
      {"negative size", Replace(c, "640 480 500 320", "-640 480 500 320"), i, p,
       "model/cameras.txt:2: image size"},
      {"missing camera", c, Replace(i, "0.3 0.1 0 2 c.jpg", "0.3 0.1 0 9 c.jpg"), p,
       "model/images.txt:7: image 3 refers to camera 9, which is not in cameras.txt"},
      {"name with space", c, Replace(i, "a.jpg", "a b.jpg"), p,
       "model/images.txt:3: expected 'IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME'"},
      {"zero quaternion", c, Replace(i, "1 1 0 0 0 0 0 0 1 a.jpg", "1 0 0 0 0 0 0 0 1 a.jpg"), p,
       "model/images.txt:3: image 1: the rotation quaternion has no usable norm"},
      {"truncated images", c, Replace(i, "140 240 1 150 250 3\n", ""), p,
       "model/images.txt:8: file ends before the 2D point line of image 3"},
      {"points not triples", c, Replace(i, "120 220 1 130 230 2", "120 220 1 130 230"), p,
       "model/images.txt:6: image 2: expected (X Y POINT3D_ID) triples, found 5 fields"},
      {"missing 3D point", c, Replace(i, "110 210 2", "110 210 99"), p,
       "model/images.txt:4: image 1 2D point 1 refers to 3D point 99, which is not in "
       "points3D.txt"},
      {"bad point id", c, Replace(i, "110 210 2", "110 210 -2"), p,
       "model/images.txt:4: image 1 2D point 1: 3D point id '-2' is neither -1 nor an id"},
      {"track to missing image", c, i, Replace(p, "1 1 2 1\n", "1 1 7 1\n"),
       "model/points3D.txt:3: 3D point 2: track element (7, 1) refers to image 7, which is not "
       "in images.txt"},
      {"track index too large", c, i, Replace(p, "1 1 2 1\n", "1 1 2 5\n"),
       "model/points3D.txt:3: 3D point 2: track element (2, 5): image 2 has only 2 2D points"},
      {"track disagrees", c, i, Replace(p, "1 1 2 1\n", "1 1 2 0\n"),
       "model/points3D.txt:3: 3D point 2: track element (2, 0): that 2D point refers to 3D "
       "point 1"},
      {"track element twice", c, Replace(i, "130 230 2", "130 230 1"),
       Replace(Replace(p, "3 0\n", "3 0 2 1 2 1\n"), "1 1 2 1\n", "1 1\n"),
       "model/points3D.txt:2: 3D point 1: track element (2, 1) is listed twice"},
      {"track misses a 2D point", c, i, Replace(p, "1 1 2 1\n", "1 1\n"),
       "model/images.txt:6: image 2 2D point 1 refers to 3D point 2, whose track does not "
       "list it"},
      {"odd track", c, i, Replace(p, "1 1 2 1\n", "1 1 2\n"),
       "model/points3D.txt:3: expected 'POINT3D_ID X Y Z R G B ERROR' and (IMAGE_ID "
       "POINT2D_IDX) pairs, found 11 fields"},
      {"color out of range", c, i, Replace(p, "255 0 0", "256 0 0"),
       "model/points3D.txt:2: 3D point 1: color '256' is not an integer in [0, 255]"},
      {"duplicate point", c, i, Replace(p, "3 0.2 -0.1", "2 0.2 -0.1"),
       "model/points3D.txt:4: 3D point id 2 appears twice"},
      {"huge id", Replace(c, "2 PINHOLE", "4294967296 PINHOLE"), i, p,
       "model/cameras.txt:3: camera id '4294967296' is not an integer in [0, 2^32)"},
  };
  for (const TextCase& test : cases) {
    ColmapModel model;
    std::string error;
    EXPECT_FALSE(ReadText(test.cameras, test.images, test.points, &model, &error)) << test.name;
    EXPECT_NE(error.find(test.expected), std::string::npos)
        << test.name << ":\n  expected '" << test.expected << "'\n  in       '" << error << "'";
    EXPECT_EQ(error.find('\n'), std::string::npos) << test.name;
    EXPECT_TRUE(model.cameras.empty() && model.images.empty() && model.points3D.empty())
        << test.name;
  }
}

struct BinaryFiles {
  std::string cameras, images, points;
};

BinaryFiles SmallBinary() {
  BinaryFiles files;
  SerializeColmapModel(SmallModel(), ColmapFormat::kBinary, &files.cameras, &files.images,
                       &files.points);
  return files;
}

template <typename T>
void Poke(std::string* data, size_t offset, T value) {
  ASSERT_LE(offset + sizeof(T), data->size());
  std::memcpy(&(*data)[offset], &value, sizeof(T));
}

TEST(ExampleColmapModel, HostileBinaryFilesGiveOneLineNamingFileAndOffset) {
  struct Case {
    const char* name;
    BinaryFiles files;
    const char* expected;
    int64_t memory_limit = 0;
  };
  std::vector<Case> cases;
  // cameras.bin: count (8), camera 1 at 8: id 4, model 4, width 8, height 8,
  // 4 params (32) = 56 bytes; camera 2 at 64.
  {
    BinaryFiles f = SmallBinary();
    Poke<int32_t>(&f.cameras, 8 + 4, 7);  // FOV
    cases.push_back({"unsupported model id", f,
                     "model/cameras.bin: byte 12: camera 1: unknown or unsupported camera "
                     "model id 7"});
  }
  {
    BinaryFiles f = SmallBinary();
    Poke<double>(&f.cameras, 8 + 24 + 3 * 8, std::nan(""));
    cases.push_back({"nan parameter", f, "model/cameras.bin: byte 56: camera 1 parameter 3 is not finite"});
  }
  {
    BinaryFiles f = SmallBinary();
    Poke<uint64_t>(&f.cameras, 0, uint64_t{1} << 40);
    cases.push_back({"huge camera count", f,
                     "model/cameras.bin: byte 0: declares 1099511627776 cameras, which need at "
                     "least"});
  }
  {
    BinaryFiles f = SmallBinary();
    Poke<uint64_t>(&f.cameras, 0, 1);
    cases.push_back({"count below the data", f,
                     "model/cameras.bin: byte 64: 56 bytes after the last record"});
  }
  {
    BinaryFiles f = SmallBinary();
    f.cameras.resize(f.cameras.size() - 3);
    cases.push_back({"truncated cameras", f,
                     "model/cameras.bin: byte 112: file ends inside the parameters of camera 2"});
  }
  {
    BinaryFiles f = SmallBinary();
    f.images.resize(f.images.size() - 1);
    cases.push_back({"truncated images", f, "model/images.bin: byte "});
  }
  {
    BinaryFiles f = SmallBinary();
    f.images.resize(5);
    cases.push_back({"truncated count", f,
                     "model/images.bin: byte 0: file ends inside the number of images"});
  }
  {
    // images.bin: count (8), image 1 at 8: id 4, pose 56, camera id 4 (at 68),
    // "a.jpg\0" (6), points count (8) at 78, points at 86.
    BinaryFiles f = SmallBinary();
    Poke<uint32_t>(&f.images, 68, 9);
    cases.push_back({"missing camera", f,
                     "model/images.bin: byte 8: image 1 refers to camera 9, which is not in "
                     "cameras.bin"});
  }
  {
    BinaryFiles f = SmallBinary();
    Poke<uint64_t>(&f.images, 78, uint64_t{1} << 61);
    cases.push_back({"huge point count", f,
                     "model/images.bin: byte 78: declares 2305843009213693952 2D points in "
                     "image 1"});
  }
  {
    BinaryFiles f = SmallBinary();
    Poke<uint64_t>(&f.images, 86 + 24 + 16, 99);  // image 1, 2D point 1's 3D point
    cases.push_back({"missing 3D point", f,
                     "model/images.bin: byte 110: image 1 2D point 1 refers to 3D point 99"});
  }
  {
    BinaryFiles f = SmallBinary();
    Poke<double>(&f.images, 8 + 4 + 8, std::numeric_limits<double>::infinity());
    cases.push_back({"infinite pose", f, "model/images.bin: byte 20: image 1: pose value 1 is not finite"});
  }
  {
    BinaryFiles f = SmallBinary();
    // A name without its terminating zero: non-zero bytes up to the end.
    f.images.erase(f.images.find("a.jpg") + 5);
    f.images.append(100, 'x');
    Poke<uint64_t>(&f.images, 0, 1);
    cases.push_back({"unterminated name", f,
                     "model/images.bin: byte 72: file ends inside the name of image 1 (no "
                     "terminating zero byte)"});
  }
  {
    // points3D.bin: count (8), point 1 at 8: id 8, xyz 24, color 3, error 8,
    // track length 8 (at 51), track at 59: (1,0) (2,0) (3,0).
    BinaryFiles f = SmallBinary();
    Poke<uint32_t>(&f.points, 59 + 8, 7);
    cases.push_back({"track to missing image", f,
                     "model/points3D.bin: byte 8: 3D point 1: track element (7, 0) refers to "
                     "image 7"});
  }
  {
    BinaryFiles f = SmallBinary();
    Poke<uint64_t>(&f.points, 51, 1000);
    cases.push_back({"track longer than the data", f,
                     "model/points3D.bin: byte 51: declares 1000 track elements of 3D point 1"});
  }
  {
    BinaryFiles f = SmallBinary();
    Poke<uint64_t>(&f.points, 8, kInvalidPoint3DId);
    cases.push_back({"invalid point id", f, "model/points3D.bin: byte 8: 3D point id 2^64-1"});
  }
  {
    BinaryFiles f = SmallBinary();
    f.points += "xyz";
    cases.push_back({"trailing bytes", f, "3 bytes after the last record"});
  }
  {
    BinaryFiles f = SmallBinary();
    cases.push_back({"files larger than memory", f, "of memory available to be read", 100});
  }
  for (const Case& test : cases) {
    ColmapModel model;
    std::string error;
    ColmapReadOptions options;
    options.memory_limit_in_bytes = test.memory_limit;
    EXPECT_FALSE(ReadBinary(test.files.cameras, test.files.images, test.files.points, &model,
                            &error, options))
        << test.name;
    EXPECT_NE(error.find(test.expected), std::string::npos)
        << test.name << ":\n  expected '" << test.expected << "'\n  in       '" << error << "'";
    EXPECT_EQ(error.find('\n'), std::string::npos) << test.name;
    EXPECT_TRUE(model.cameras.empty() && model.images.empty() && model.points3D.empty())
        << test.name;
  }
}

TEST(ExampleColmapModel, SolveMemoryIsCheckedAfterReading) {
  ColmapReadOptions options;
  options.memory_limit_in_bytes = 1 << 20;
  options.solve_bytes_per_observation = 1 << 20;  // 6 observations need 6 MiB
  ColmapModel model;
  std::string error;
  EXPECT_FALSE(ReadText(testing_util::SmallCamerasText(), testing_util::SmallImagesText(),
                        testing_util::SmallPointsText(), &model, &error, options));
  EXPECT_NE(error.find("model/points3D.txt: the model's 6 observations need 6 MiB to solve"),
            std::string::npos)
      << error;
}

// ---------------------------------------------------------- rig models ----

ColmapFiles SmallRigFiles() {
  ColmapFiles files;
  files.cameras = testing_util::SmallCamerasText();
  files.images = testing_util::SmallImagesText();
  files.points3D = testing_util::SmallPointsText();
  files.rigs = testing_util::SmallRigsText();
  files.frames = testing_util::SmallFramesText();
  return files;
}

ColmapModel SmallRigModel() {
  ColmapModel model;
  std::string error;
  EXPECT_TRUE(ReadColmapModelFromMemory(ColmapFormat::kText, "model", SmallRigFiles(), {}, &model,
                                        &error))
      << error;
  return model;
}

bool SamePose(const ColmapRigid3& pose, const ColmapImage& image) {
  return std::memcmp(pose.qvec, image.qvec, sizeof(image.qvec)) == 0 &&
         std::memcmp(pose.tvec, image.tvec, sizeof(image.tvec)) == 0;
}

bool SameBits(const ColmapRigid3& a, const ColmapRigid3& b) {
  return std::memcmp(a.qvec, b.qvec, sizeof(a.qvec)) == 0 &&
         std::memcmp(a.tvec, b.tvec, sizeof(a.tvec)) == 0;
}

TEST(ExampleColmapModel, ReadsTheRigModel) {
  const ColmapModel model = SmallRigModel();
  ASSERT_TRUE(model.has_rigs_and_frames);
  ASSERT_EQ(model.rigs.size(), 1u);
  ASSERT_EQ(model.frames.size(), 3u);
  const ColmapRig& rig = model.rigs[0];
  EXPECT_EQ(rig.id, 1u);
  EXPECT_TRUE(rig.has_ref_sensor);
  EXPECT_EQ(rig.ref_sensor.type, ColmapSensorType::kCamera);
  EXPECT_EQ(rig.ref_sensor.id, 1u);
  ASSERT_EQ(rig.sensors.size(), 2u);
  EXPECT_EQ(rig.sensors[0].sensor.id, 2u);
  EXPECT_TRUE(rig.sensors[0].has_sensor_from_rig);
  EXPECT_EQ(rig.sensors[0].sensor_from_rig.tvec[2], 0.01);
  EXPECT_EQ(rig.sensors[1].sensor.type, ColmapSensorType::kImu);
  EXPECT_FALSE(rig.sensors[1].has_sensor_from_rig);
  // Data ids are kept as they are: the IMU sample, and image 99 (not in
  // images.txt).
  ASSERT_EQ(model.frames[0].data_ids.size(), 3u);
  EXPECT_EQ(model.frames[0].data_ids[2].sensor.type, ColmapSensorType::kImu);
  EXPECT_EQ(model.frames[0].data_ids[2].id, 7u);
  EXPECT_EQ(model.frames[2].data_ids[0].id, 99u);
  // The index: images 1, 2, 3 in frames 1, 2, 1; image 3 by the rig's
  // sensor 0 (camera 2), the others by the reference sensor.
  EXPECT_EQ(model.RigIndex(1), 0);
  EXPECT_EQ(model.RigIndex(2), -1);
  EXPECT_EQ(model.FrameIndex(3), 2);
  EXPECT_EQ(model.ImageFrameIndex(0), 0);
  EXPECT_EQ(model.ImageFrameIndex(1), 1);
  EXPECT_EQ(model.ImageFrameIndex(2), 0);
  EXPECT_EQ(model.ImageSensorIndex(0), -1);
  EXPECT_EQ(model.ImageSensorIndex(2), 0);
  EXPECT_EQ(model.ImageFrameIndex(3), -1);  // out of range
  // A legacy model has no frames to look up.
  const ColmapModel legacy = SmallModel();
  EXPECT_FALSE(legacy.has_rigs_and_frames);
  EXPECT_EQ(legacy.ImageFrameIndex(0), -1);
  EXPECT_EQ(legacy.ImageSensorIndex(0), -1);
  EXPECT_TRUE(SamePose(ColmapCamFromWorld(legacy, 1), legacy.images[1]));
}

// The poses COLMAP derives: the reference sensor's images take the frame's
// rig_from_world bit for bit; image 3 (camera 2) takes sensor_from_rig *
// rig_from_world, here R_y(0.1) R_z(0.2) and t_s + R_y(0.1) t_r, computed by
// hand.
TEST(ExampleColmapModel, ImagePosesAreDerivedFromFramesAndRigs) {
  const ColmapModel model = SmallRigModel();
  // images.txt says image 1 is at the origin and image 2 rotated: not used.
  EXPECT_TRUE(SameBits(model.frames[0].rig_from_world, ColmapCamFromWorld(model, 0)));
  EXPECT_TRUE(SamePose(model.frames[0].rig_from_world, model.images[0]));
  EXPECT_TRUE(SamePose(model.frames[1].rig_from_world, model.images[1]));
  EXPECT_EQ(model.images[1].qvec[2], 0.0);
  EXPECT_EQ(model.images[1].tvec[0], -0.5);
  const double ca = std::cos(0.05), sa = std::sin(0.05);  // half angles
  const double cb = std::cos(0.1), sb = std::sin(0.1);
  const double expected_q[4] = {ca * cb, sa * sb, sa * cb, ca * sb};
  const double c = std::cos(0.1), s = std::sin(0.1);  // R_y(0.1)
  const double tr[3] = {0.3, -0.1, 2.0};
  const double expected_t[3] = {-0.2 + c * tr[0] + s * tr[2], 0.0 + tr[1],
                                0.01 - s * tr[0] + c * tr[2]};
  const ColmapImage& image = model.images[2];
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(image.qvec[k], expected_q[k], 1e-15) << k;
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(image.tvec[k], expected_t[k], 1e-15) << k;
  EXPECT_TRUE(SamePose(ColmapCamFromWorld(model, 2), image));
  EXPECT_TRUE(SameBits(model.rigs[0].sensors[0].sensor_from_rig * model.frames[0].rig_from_world,
                       ColmapCamFromWorld(model, 2)));
  // The inverse undoes the transform.
  const ColmapRigid3 pose = ColmapCamFromWorld(model, 2);
  const ColmapRigid3 identity = Inverse(pose) * pose;
  EXPECT_NEAR(std::abs(identity.qvec[0]), 1.0, 1e-15);
  for (int k = 1; k < 4; ++k) EXPECT_NEAR(identity.qvec[k], 0.0, 1e-15);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(identity.tvec[k], 0.0, 1e-15);
}

TEST(ExampleColmapModel, RigModelRoundTripsInBothFormats) {
  const ColmapModel model = SmallRigModel();
  for (const ColmapFormat format : {ColmapFormat::kText, ColmapFormat::kBinary}) {
    SCOPED_TRACE(format == ColmapFormat::kText ? "text" : "binary");
    ColmapFiles files;
    SerializeColmapModel(model, format, &files);
    ASSERT_TRUE(files.rigs.has_value() && files.frames.has_value());
    ColmapModel read;
    std::string error;
    ASSERT_TRUE(ReadColmapModelFromMemory(format, "round", files, {}, &read, &error)) << error;
    EXPECT_TRUE(read == model);
    ColmapFiles again;
    SerializeColmapModel(read, format, &again);
    EXPECT_EQ(again.cameras, files.cameras);
    EXPECT_EQ(again.images, files.images);
    EXPECT_EQ(again.points3D, files.points3D);
    EXPECT_EQ(*again.rigs, *files.rigs);
    EXPECT_EQ(*again.frames, *files.frames);
    for (size_t i = 0; i < read.images.size(); ++i) {
      EXPECT_TRUE(SamePose(ColmapCamFromWorld(read, static_cast<int>(i)), read.images[i])) << i;
    }
  }
  // The images' poses written are the derived ones, whatever the images
  // hold; a refined frame moves its images.
  ColmapModel changed = model;
  changed.images[2].tvec[0] = 1e6;
  changed.frames[0].rig_from_world.tvec[2] = 3.0;
  ColmapFiles files;
  SerializeColmapModel(changed, ColmapFormat::kBinary, &files);
  ColmapModel read;
  std::string error;
  ASSERT_TRUE(ReadColmapModelFromMemory(ColmapFormat::kBinary, "round", files, {}, &read, &error))
      << error;
  EXPECT_EQ(read.images[0].tvec[2], 3.0);
  EXPECT_TRUE(SamePose(ColmapCamFromWorld(changed, 2), read.images[2]));
  EXPECT_NE(read.images[2].tvec[0], 1e6);
  // The three-file form of a rig model is the five files' first three.
  std::string cameras, images, points;
  SerializeColmapModel(model, ColmapFormat::kText, &cameras, &images, &points);
  SerializeColmapModel(model, ColmapFormat::kText, &files);
  EXPECT_EQ(images, files.images);
  // Equality sees rigs and frames.
  ColmapModel other = model;
  other.rigs[0].sensors[0].sensor_from_rig.qvec[1] = 1e-300;
  EXPECT_FALSE(other == model);
  other = model;
  other.frames[2].data_ids[0].id = 98;
  EXPECT_FALSE(other == model);
  other = model;
  other.has_rigs_and_frames = false;
  EXPECT_FALSE(other == model);
}

// A model as COLMAP 4 writes it, the bytes made here as its writer lays them
// out (WriteRigsBinary, WriteFramesBinary: counts u64, ids u32, sensor types
// i32, has_pose u8, poses 7 doubles, data ids u64), with images.bin holding
// stale poses, which are not used.
TEST(ExampleColmapModel, ReadsAModelInColmapsBinaryLayout) {
  std::string rigs, frames;
  auto u8 = [](std::string* out, uint8_t v) { out->push_back(static_cast<char>(v)); };
  auto u32 = [](std::string* out, uint32_t v) { out->append(reinterpret_cast<char*>(&v), 4); };
  auto i32 = [](std::string* out, int32_t v) { out->append(reinterpret_cast<char*>(&v), 4); };
  auto u64 = [](std::string* out, uint64_t v) { out->append(reinterpret_cast<char*>(&v), 8); };
  auto f64 = [](std::string* out, double v) { out->append(reinterpret_cast<char*>(&v), 8); };
  const double sensor_from_rig[7] = {0.8, 0.6, 0, 0, 0.1, 0.2, 0.3};  // unit quaternion
  const double rig_from_world[2][7] = {{1, 0, 0, 0, 0, 0, 4}, {0.6, 0, 0, 0.8, 1, 0, 5}};
  u64(&rigs, 1);
  u32(&rigs, 7);     // rig id
  u32(&rigs, 2);     // sensors
  i32(&rigs, 0);     // CAMERA
  u32(&rigs, 1);     // camera 1: reference
  i32(&rigs, 0);
  u32(&rigs, 2);     // camera 2
  u8(&rigs, 1);      // has a pose
  for (double v : sensor_from_rig) f64(&rigs, v);
  u64(&frames, 2);
  for (uint32_t f = 0; f < 2; ++f) {
    u32(&frames, 10 + f);  // frame id
    u32(&frames, 7);       // rig id
    for (double v : rig_from_world[f]) f64(&frames, v);
    if (f == 0) {
      u32(&frames, 2);
      i32(&frames, 0), u32(&frames, 1), u64(&frames, 1);  // image 1 by camera 1
      i32(&frames, 0), u32(&frames, 2), u64(&frames, 3);  // image 3 by camera 2
    } else {
      u32(&frames, 1);
      i32(&frames, 0), u32(&frames, 1), u64(&frames, 2);
    }
  }
  ColmapFiles files;
  SerializeColmapModel(SmallModel(), ColmapFormat::kBinary, &files);
  files.rigs = rigs;
  files.frames = frames;
  ColmapModel model;
  std::string error;
  ASSERT_TRUE(ReadColmapModelFromMemory(ColmapFormat::kBinary, "colmap", files, {}, &model,
                                        &error))
      << error;
  ASSERT_EQ(model.rigs.size(), 1u);
  EXPECT_EQ(model.rigs[0].id, 7u);
  ASSERT_EQ(model.frames.size(), 2u);
  EXPECT_EQ(model.frames[1].id, 11u);
  EXPECT_EQ(model.images[0].tvec[2], 4.0);   // frame 10's, not images.bin's 0
  EXPECT_EQ(model.images[1].qvec[3], 0.8);   // frame 11's
  // Image 3: R_x(2 atan(0.75)) then t = (0.1, 0.2, 0.3) + R (0, 0, 4), with
  // R's y row (0, 0.28, -0.96) and z row (0, 0.96, 0.28).
  EXPECT_NEAR(model.images[2].qvec[0], 0.8, 1e-15);
  EXPECT_NEAR(model.images[2].qvec[1], 0.6, 1e-15);
  EXPECT_NEAR(model.images[2].tvec[0], 0.1, 1e-15);
  EXPECT_NEAR(model.images[2].tvec[1], 0.2 - 0.96 * 4, 1e-15);
  EXPECT_NEAR(model.images[2].tvec[2], 0.3 + 0.28 * 4, 1e-15);
  // Written back: rigs.bin, frames.bin, cameras.bin and points3D.bin byte
  // for byte; images.bin with the derived poses.
  ColmapFiles written;
  SerializeColmapModel(model, ColmapFormat::kBinary, &written);
  EXPECT_TRUE(*written.rigs == rigs);
  EXPECT_TRUE(*written.frames == frames);
  EXPECT_TRUE(written.cameras == files.cameras);
  EXPECT_TRUE(written.points3D == files.points3D);
  EXPECT_EQ(written.images.size(), files.images.size());
  EXPECT_FALSE(written.images == files.images);
  // And COLMAP's text layout (its comment headers, 17 digits).
  ColmapFiles text;
  SerializeColmapModel(SmallModel(), ColmapFormat::kText, &text);
  text.rigs = "# Rig calib list with one line of data per calib:\n"
              "#   RIG_ID, NUM_SENSORS, REF_SENSOR_TYPE, REF_SENSOR_ID, SENSORS[] as "
              "(SENSOR_TYPE, SENSOR_ID, HAS_POSE, [QW, QX, QY, QZ, TX, TY, TZ])\n"
              "# Number of rigs: 1\n"
              "7 2 CAMERA 1 CAMERA 2 1 0.80000000000000004 0.59999999999999998 0 0 "
              "0.10000000000000001 0.20000000000000001 0.29999999999999999\n";
  text.frames = "# Frame list with one line of data per frame:\n"
                "#   FRAME_ID, RIG_ID, RIG_FROM_WORLD[QW, QX, QY, QZ, TX, TY, TZ], NUM_DATA_IDS, "
                "DATA_IDS[] as (SENSOR_TYPE, SENSOR_ID, DATA_ID)\n"
                "# Number of frames: 2\n"
                "10 7 1 0 0 0 0 0 4 2 CAMERA 1 1 CAMERA 2 3\n"
                "11 7 0.59999999999999998 0 0 0.80000000000000004 1 0 5 1 CAMERA 1 2\n";
  ColmapModel from_text;
  ASSERT_TRUE(ReadColmapModelFromMemory(ColmapFormat::kText, "colmap", text, {}, &from_text,
                                        &error))
      << error;
  EXPECT_TRUE(from_text == model);
  for (size_t i = 0; i < model.images.size(); ++i) {
    EXPECT_TRUE(SamePose(ColmapCamFromWorld(model, static_cast<int>(i)), from_text.images[i]));
  }
}

void ExpectRefused(const ColmapFiles& files, ColmapFormat format, const std::string& name,
                   const std::string& expected) {
  ColmapModel model;
  std::string error;
  EXPECT_FALSE(ReadColmapModelFromMemory(format, "model", files, {}, &model, &error)) << name;
  EXPECT_NE(error.find(expected), std::string::npos)
      << name << ":\n  expected '" << expected << "'\n  in       '" << error << "'";
  EXPECT_EQ(error.rfind("model/", 0), 0u) << name << ": " << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << name;
  EXPECT_TRUE(model.cameras.empty() && model.images.empty() && model.points3D.empty() &&
              model.rigs.empty() && model.frames.empty() && !model.has_rigs_and_frames)
      << name;
}

TEST(ExampleColmapModel, HostileRigAndFrameTextGivesOneLineNamingFileAndLine) {
  const std::string r = testing_util::SmallRigsText();
  const std::string f = testing_util::SmallFramesText();
  struct Case {
    const char* name;
    std::string rigs;
    std::string frames;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"unknown sensor type", Replace(r, "IMU 1 0", "LIDAR 1 0"), f,
       "model/rigs.txt:2: rig 1: unknown sensor type 'LIDAR' (expected CAMERA or IMU)"},
      {"unknown data type", r, Replace(f, "IMU 1 7", "GPS 1 7"),
       "model/frames.txt:2: frame 1 data id 2: unknown sensor type 'GPS'"},
      {"image in two frames", r, Replace(f, "CAMERA 2 99", "CAMERA 1 1"),
       "model/frames.txt:4: frame 3 lists image 1, which frame 1 lists already (an image is data "
       "of one frame)"},
      {"image in no frame", r, Replace(f, "1 CAMERA 1 2\n", "0\n"),
       "model/images.txt:5: image 2 is in no frame of frames.txt"},
      {"image under another camera", r, Replace(f, "CAMERA 2 3", "CAMERA 1 3"),
       "model/frames.txt:2: frame 1 lists image 3 under camera 1, but images.txt gives it "
       "camera 2"},
      {"camera not in the rig", Replace(r, "1 3 CAMERA 1 CAMERA 2 1 0.99875026039496628 0 "
                                           "0.049979169270678331 0 -0.2 0 0.01 IMU 1 0",
                                        "1 2 CAMERA 1 IMU 1 0"),
       f, "model/frames.txt:2: frame 1: data (CAMERA 2, 3) is from camera 2, which is not a "
          "sensor of rig 1"},
      {"sensor without pose", Replace(r, "CAMERA 2 1 0.99875026039496628 0 0.049979169270678331 0 "
                                         "-0.2 0 0.01",
                                      "CAMERA 2 0"),
       f, "model/rigs.txt:2: rig 1: sensor CAMERA 2 has no sensor_from_rig, but took image 3 "
          "(frame 1), whose pose needs it"},
      {"rig camera not in cameras",
       Replace(Replace(r, "1 3 CAMERA", "1 4 CAMERA"), "IMU 1 0", "IMU 1 0 CAMERA 9 0"), f,
       "model/rigs.txt:2: rig 1: sensor CAMERA 9 is not in cameras.txt"},
      {"frame's rig missing", r, Replace(f, "2 1 1 0 0 0 -0.5", "2 7 1 0 0 0 -0.5"),
       "model/frames.txt:3: frame 2 refers to rig 7, which is not in rigs.txt"},
      {"nan rig_from_world", r, Replace(f, "0.3 -0.1 2 3", "0.3 nan 2 3"),
       "model/frames.txt:2: frame 1 rig_from_world: non-finite number 'nan'"},
      {"inf sensor_from_rig", Replace(r, "-0.2 0 0.01", "-0.2 inf 0.01"), f,
       "model/rigs.txt:2: rig 1 sensor CAMERA 2 sensor_from_rig: non-finite number 'inf'"},
      {"zero quaternion", r, Replace(f, "2 1 1 0 0 0 -0.5", "2 1 0 0 0 0 -0.5"),
       "model/frames.txt:3: frame 2 rig_from_world: the rotation quaternion has no usable norm"},
      {"duplicate rig", r + "1 0\n", f, "model/rigs.txt:3: rig id 1 appears twice"},
      {"duplicate frame", r, Replace(f, "3 1 1 0 0 0 0 0 0 1 CAMERA 2 99", "2 1 1 0 0 0 0 0 0 0"),
       "model/frames.txt:4: frame id 2 appears twice"},
      {"duplicate sensor", Replace(r, "IMU 1 0", "CAMERA 2 0"), f,
       "model/rigs.txt:2: rig 1: sensor CAMERA 2 appears twice"},
      {"reference sensor again", Replace(r, "IMU 1 0", "CAMERA 1 0"), f,
       "model/rigs.txt:2: rig 1: sensor CAMERA 1 appears twice"},
      {"duplicate data", r, Replace(f, "1 CAMERA 1 2\n", "2 CAMERA 1 2 CAMERA 1 2\n"),
       "model/frames.txt:3: frame 2 lists data (CAMERA 1, 2) twice"},
      {"sensor count too large", Replace(r, "1 3 CAMERA", "1 9 CAMERA"), f,
       "model/rigs.txt:2: rig 1: declares 9 sensors, which need more than the 15 fields after "
       "the count"},
      {"sensor count too small", Replace(r, "1 3 CAMERA", "1 2 CAMERA"), f,
       "model/rigs.txt:2: rig 1: 3 fields after its 2 sensors"},
      {"data count mismatch", r, Replace(f, "0.3 -0.1 2 3", "0.3 -0.1 2 4"),
       "model/frames.txt:2: frame 1: declares 4 data ids, which take 3 fields each (SENSOR_TYPE "
       "SENSOR_ID DATA_ID), but 9 fields follow"},
      {"has_pose neither 0 nor 1", Replace(r, "IMU 1 0", "IMU 1 2"), f,
       "model/rigs.txt:2: rig 1 sensor IMU 1: HAS_POSE '2' is neither 0 nor 1"},
      {"pose cut short", Replace(r, "-0.2 0 0.01 IMU 1 0", "-0.2 0"), f,
       "model/rigs.txt:2: rig 1 sensor CAMERA 2: the line ends inside its sensor_from_rig"},
      {"frame line too short", r, Replace(f, "2 1 1 0 0 0 -0.5 0 0 1 CAMERA 1 2", "2 1 1 0"),
       "model/frames.txt:3: expected 'FRAME_ID RIG_ID QW QX QY QZ TX TY TZ NUM_DATA_IDS"},
      {"invalid frame id", r, Replace(f, "3 1 1 0 0 0 0 0 0 1", "4294967295 1 1 0 0 0 0 0 0 1"),
       "model/frames.txt:4: frame id 4294967295 is COLMAP's invalid frame id"},
      {"huge rig id", Replace(r, "1 3 CAMERA", "4294967296 3 CAMERA"), f,
       "model/rigs.txt:2: rig id '4294967296' is not an integer in [0, 2^32)"},
  };
  for (const Case& test : cases) {
    ColmapFiles files = SmallRigFiles();
    files.rigs = test.rigs;
    files.frames = test.frames;
    ExpectRefused(files, ColmapFormat::kText, test.name, test.expected);
  }
  // One of the two files without the other: named both.
  ColmapFiles files = SmallRigFiles();
  files.frames.reset();
  ExpectRefused(files, ColmapFormat::kText, "rigs without frames",
                "model/rigs.txt: there is no frames.txt beside it (COLMAP reads rigs and frames "
                "together");
  files = SmallRigFiles();
  files.rigs.reset();
  ExpectRefused(files, ColmapFormat::kText, "frames without rigs",
                "model/frames.txt: there is no rigs.txt beside it");
}

ColmapFiles SmallRigBinary() {
  ColmapFiles files;
  SerializeColmapModel(SmallRigModel(), ColmapFormat::kBinary, &files);
  return files;
}

// rigs.bin of the small rig model: count (8); rig 1 at 8: id 4, sensors 4
// (at 12); reference sensor at 16 (type 4, id 4); camera 2 at 24 (type,
// id, has_pose at 32, sensor_from_rig at 33..89); IMU 1 at 89 (type, id,
// has_pose at 97): 98 bytes. frames.bin: count (8); frame 1 at 8: id, rig
// (at 12), rig_from_world (16..72), data count at 72, data ids at 76, 92,
// 108 (16 each); frame 2 at 124.
TEST(ExampleColmapModel, HostileRigAndFrameBinaryGivesOneLineNamingFileAndOffset) {
  const ColmapFiles good = SmallRigBinary();
  ASSERT_EQ(good.rigs->size(), 98u);
  // Truncated rigs.bin, at every length: one line naming rigs.bin and an
  // offset; at these lengths, these messages.
  const std::vector<std::pair<size_t, std::string>> truncated = {
      {5, "model/rigs.bin: byte 0: file ends inside the number of rigs (truncated file?)"},
      {14, "model/rigs.bin: byte 0: declares 1 rigs, which need at least 8 more bytes, but only "
           "6 remain"},
      {17, "model/rigs.bin: byte 16: file ends inside the reference sensor of rig 1"},
      {20, "model/rigs.bin: byte 20: file ends inside the reference sensor of rig 1"},
      {30, "model/rigs.bin: byte 12: declares 2 further sensors in rig 1, which need at least 18 "
           "more bytes, but only 6 remain"},
      {50, "model/rigs.bin: byte 49: file ends inside rig 1 sensor CAMERA 2 sensor_from_rig"},
      {95, "model/rigs.bin: byte 93: file ends inside sensor 2 of rig 1"},
      {97, "model/rigs.bin: byte 97: file ends inside rig 1 sensor IMU 1"},
  };
  for (size_t size = 0; size < good.rigs->size(); ++size) {
    ColmapFiles files = good;
    files.rigs->resize(size);
    std::string expected = "model/rigs.bin: byte ";
    for (const auto& known : truncated) {
      if (known.first == size) expected = known.second;
    }
    ExpectRefused(files, ColmapFormat::kBinary, "rigs.bin cut at " + std::to_string(size),
                  expected);
  }
  for (size_t size = 0; size < good.frames->size(); size += 7) {
    ColmapFiles files = good;
    files.frames->resize(size);
    ExpectRefused(files, ColmapFormat::kBinary, "frames.bin cut at " + std::to_string(size),
                  "model/frames.bin: byte ");
  }
  struct Case {
    const char* name;
    ColmapFiles files;
    const char* expected;
  };
  std::vector<Case> cases;
  // The small rig model's binary files, changed by `change`.
  auto add = [&](const char* name, const char* expected, auto change) {
    ColmapFiles files = good;
    change(&files);
    cases.push_back({name, files, expected});
  };
  add("unknown sensor type",
      "model/rigs.bin: byte 24: sensor 1 of rig 1: unknown sensor type 7 (expected 0 for CAMERA "
      "or 1 for IMU)",
      [](ColmapFiles* f) { Poke<int32_t>(&*f->rigs, 24, 7); });
  add("invalid sensor type",
      "model/rigs.bin: byte 16: the reference sensor of rig 1: unknown sensor type -1",
      [](ColmapFiles* f) { Poke<int32_t>(&*f->rigs, 16, -1); });
  add("has_pose 2",
      "model/rigs.bin: byte 32: rig 1 sensor CAMERA 2: has_pose byte 2 is neither 0 nor 1",
      [](ColmapFiles* f) { Poke<uint8_t>(&*f->rigs, 32, 2); });
  add("nan sensor_from_rig",
      "model/rigs.bin: byte 73: rig 1 sensor CAMERA 2 sensor_from_rig value 5 is not finite",
      [](ColmapFiles* f) { Poke<double>(&*f->rigs, 33 + 8 * 5, std::nan("")); });
  add("zero sensor quaternion",
      "model/rigs.bin: byte 33: rig 1 sensor CAMERA 2 sensor_from_rig: the rotation quaternion "
      "has no usable norm",
      [](ColmapFiles* f) {
        for (int k = 0; k < 4; ++k) Poke<double>(&*f->rigs, 33 + 8 * k, 0.0);
      });
  add("sensor count too large", "model/rigs.bin: byte 12: declares 999 further sensors in rig 1",
      [](ColmapFiles* f) { Poke<uint32_t>(&*f->rigs, 12, 1000); });
  add("rig count too large", "model/rigs.bin: byte 98: file ends inside rig 1 of 2",
      [](ColmapFiles* f) { Poke<uint64_t>(&*f->rigs, 0, 2); });
  add("huge rig count",
      "model/rigs.bin: byte 0: declares 4611686018427387904 rigs, which need at least",
      [](ColmapFiles* f) { Poke<uint64_t>(&*f->rigs, 0, uint64_t{1} << 62); });
  add("rig trailing bytes", "model/rigs.bin: byte 98: 2 bytes after the last record",
      [](ColmapFiles* f) { *f->rigs += "xy"; });
  add("duplicate sensor", "model/rigs.bin: byte 24: rig 1: sensor CAMERA 1 appears twice",
      [](ColmapFiles* f) { Poke<uint32_t>(&*f->rigs, 28, 1); });
  add("duplicate rig id", "model/rigs.bin: byte 98: rig id 1 appears twice", [](ColmapFiles* f) {
    *f->rigs += f->rigs->substr(8);
    Poke<uint64_t>(&*f->rigs, 0, 2);
  });
  add("sensor without pose",
      "model/rigs.bin: byte 24: rig 1: sensor CAMERA 2 has no sensor_from_rig, but took image 3 "
      "(frame 1), whose pose needs it",
      [](ColmapFiles* f) {
        f->rigs->erase(33, 56);
        Poke<uint8_t>(&*f->rigs, 32, 0);
      });
  add("rigs without frames", "model/rigs.bin: there is no frames.bin beside it",
      [](ColmapFiles* f) { f->frames.reset(); });
  add("frame count too small", "model/frames.bin: byte 208: 84 bytes after the last record",
      [](ColmapFiles* f) { Poke<uint64_t>(&*f->frames, 0, 2); });
  add("huge data count",
      "model/frames.bin: byte 72: declares 4294967295 data ids of frame 1, which need at least",
      [](ColmapFiles* f) { Poke<uint32_t>(&*f->frames, 72, UINT32_MAX); });
  add("unknown data type", "model/frames.bin: byte 92: frame 1 data id 1: unknown sensor type 2",
      [](ColmapFiles* f) { Poke<int32_t>(&*f->frames, 92, 2); });
  add("infinite rig_from_world",
      "model/frames.bin: byte 64: frame 1 rig_from_world value 6 is not finite",
      [](ColmapFiles* f) {
        Poke<double>(&*f->frames, 16 + 8 * 6, std::numeric_limits<double>::infinity());
      });
  add("image in two frames",
      "model/frames.bin: byte 192: frame 2 lists image 1, which frame 1 lists already",
      [](ColmapFiles* f) { Poke<uint64_t>(&*f->frames, 192 + 8, 1); });
  add("image under another camera",
      "model/frames.bin: byte 92: frame 1 lists image 3 under camera 1, but images.bin gives it "
      "camera 2",
      [](ColmapFiles* f) { Poke<uint32_t>(&*f->frames, 92 + 4, 1); });
  add("frame's rig missing",
      "model/frames.bin: byte 8: frame 1 refers to rig 5, which is not in rigs.bin",
      [](ColmapFiles* f) { Poke<uint32_t>(&*f->frames, 12, 5); });
  add("duplicate frame id", "model/frames.bin: byte 124: frame id 1 appears twice",
      [](ColmapFiles* f) { Poke<uint32_t>(&*f->frames, 124, 1); });
  for (const Case& test : cases) {
    ExpectRefused(test.files, ColmapFormat::kBinary, test.name, test.expected);
  }
}

// ------------------------------------------------------ output folder ----

int CountFiles(const std::string& folder) {
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

TEST(ExampleColmapModel, RigModelOnDisk) {
  TempDir dir;
  const ColmapModel model = SmallRigModel();
  std::string error;
  for (const ColmapFormat format : {ColmapFormat::kText, ColmapFormat::kBinary}) {
    SCOPED_TRACE(format == ColmapFormat::kText ? "text" : "binary");
    const std::string folder = dir.Path(format == ColmapFormat::kText ? "text" : "binary");
    ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
    ASSERT_TRUE(WriteColmapModel(model, folder, format, &error)) << error;
    EXPECT_EQ(CountFiles(folder), 5);  // and no temporary file left
    ColmapModel read;
    ColmapFormat found;
    ASSERT_TRUE(ReadColmapModel(folder, {}, &read, &found, &error)) << error;
    EXPECT_EQ(found, format);
    EXPECT_TRUE(read == model);
    // Again into the same folder: the five files replaced.
    ASSERT_TRUE(WriteColmapModel(read, folder, format, &error)) << error;
    EXPECT_EQ(CountFiles(folder), 5);
    // Without frames.*: both files named.
    const std::string frames = folder + "/" + ColmapFileName("frames", format);
    ASSERT_EQ(std::remove(frames.c_str()), 0);
    EXPECT_FALSE(ReadColmapModel(folder, {}, &read, &found, &error));
    EXPECT_EQ(error, folder + "/" + ColmapFileName("rigs", format) + ": there is no " +
                         ColmapFileName("frames", format) +
                         " beside it (COLMAP reads rigs and frames together: both files, or "
                         "neither in a model without rigs)");
  }
}

// A folder that would hold files disagreeing with the model written there
// is refused before anything is written.
TEST(ExampleColmapModel, StaleFilesInTheOutputFolderAreRefused) {
  TempDir dir;
  const ColmapModel legacy = SmallModel();
  const ColmapModel rigs = SmallRigModel();
  std::string error;
  // A legacy model beside frames.bin (COLMAP would take the old poses).
  const std::string a = dir.Path("a");
  ASSERT_EQ(mkdir(a.c_str(), 0755), 0);
  WriteFile(a + "/frames.bin", "old");
  EXPECT_FALSE(CheckColmapOutputFolder(legacy, a, ColmapFormat::kBinary, &error));
  EXPECT_FALSE(WriteColmapModel(legacy, a, ColmapFormat::kBinary, &error));
  EXPECT_EQ(error, a + " holds frames.bin, which a model without rigs and frames does not "
                       "replace: COLMAP would take the images' poses from the old frames; use a "
                       "folder without rigs and frames");
  EXPECT_EQ(CountFiles(a), 1);
  EXPECT_EQ(ReadFile(a + "/frames.bin"), "old");
  // A rig model replaces it.
  EXPECT_TRUE(CheckColmapOutputFolder(rigs, a, ColmapFormat::kBinary, &error)) << error;
  // A text model beside binary files (COLMAP reads those), and a binary one
  // beside text files.
  const std::string b = dir.Path("b");
  ASSERT_EQ(mkdir(b.c_str(), 0755), 0);
  ASSERT_TRUE(WriteColmapModel(legacy, b, ColmapFormat::kBinary, &error)) << error;
  EXPECT_FALSE(WriteColmapModel(legacy, b, ColmapFormat::kText, &error));
  EXPECT_EQ(error, b + " holds cameras.bin, images.bin and points3D.bin, which COLMAP would "
                       "read instead of the text model written here (binary files win), or "
                       "which would disagree with it; use a folder without a binary model");
  EXPECT_FALSE(WriteColmapModel(rigs, b, ColmapFormat::kText, &error));
  EXPECT_EQ(CountFiles(b), 3);
  const std::string c = dir.Path("c");
  ASSERT_EQ(mkdir(c.c_str(), 0755), 0);
  WriteFile(c + "/rigs.txt", "");
  EXPECT_FALSE(WriteColmapModel(rigs, c, ColmapFormat::kBinary, &error));
  EXPECT_EQ(error, c + " holds rigs.txt, a text model that would disagree with the binary model "
                       "written here; use a folder without a text model");
  EXPECT_EQ(CountFiles(c), 1);
  // A legacy model over a legacy model of its format: fine.
  EXPECT_TRUE(WriteColmapModel(legacy, b, ColmapFormat::kBinary, &error)) << error;
}

// A write that fails (here: the file size limit) leaves the old files as
// they were, and no temporary file.
TEST(ExampleColmapModel, AFailedWriteLeavesTheOldFiles) {
  TempDir dir;
  const ColmapModel old_model = SmallRigModel();
  std::string error;
  ASSERT_TRUE(WriteColmapModel(old_model, dir.path(), ColmapFormat::kText, &error)) << error;
  std::vector<std::string> before;
  for (const char* stem : {"cameras", "images", "points3D", "rigs", "frames"}) {
    before.push_back(ReadFile(dir.Path(ColmapFileName(stem, ColmapFormat::kText))));
  }
  ColmapModel model = old_model;
  model.images[0].name = std::string(4000, 'x');  // images.txt larger than the limit
  model.frames[0].rig_from_world.tvec[0] = 7.0;
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  void (*saved_handler)(int) = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
  struct rlimit limit = saved;
  limit.rlim_cur = 2000;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  const bool wrote = WriteColmapModel(model, dir.path(), ColmapFormat::kText, &error);
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, saved_handler);
  EXPECT_FALSE(wrote);
  EXPECT_EQ(error.rfind(dir.Path("images.txt") + ": cannot write: ", 0), 0u) << error;
  EXPECT_NE(error.find("(nothing replaced)"), std::string::npos) << error;
  EXPECT_EQ(CountFiles(dir.path()), 5);
  int k = 0;
  for (const char* stem : {"cameras", "images", "points3D", "rigs", "frames"}) {
    EXPECT_EQ(ReadFile(dir.Path(ColmapFileName(stem, ColmapFormat::kText))), before[k++]) << stem;
  }
  // A rig model whose index does not place an image is not written.
  ColmapModel unindexed = old_model;
  unindexed.frames[1].data_ids.clear();
  unindexed.BuildIndex();
  EXPECT_FALSE(WriteColmapModel(unindexed, dir.path(), ColmapFormat::kText, &error));
  EXPECT_NE(error.find("images.txt: image 2 is in no frame of the model"), std::string::npos)
      << error;
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
