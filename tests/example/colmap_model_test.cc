// The COLMAP model reader and writer: the shared real model read from text
// and binary, write-then-read round trips, and hostile files (one error line
// naming the file and the line or byte offset, an empty model).
#include <cstring>
#include <string>
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
  // Binary files beside the text ones win, as in COLMAP.
  ASSERT_TRUE(WriteColmapModel(model, dir.path(), ColmapFormat::kBinary, &error)) << error;
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

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
