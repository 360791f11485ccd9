// The synthetic COLMAP scene generator (examples/colmap_synthetic_scene.h)
// and its program make_colmap_scene: the cameras and track lengths asked
// for, observations inside their images and near the true projections, the
// same model from the same seed, text and binary round trips, the
// square-root solvers ending at the cost of the Ceres solver COLMAP picks,
// and bad options refused with a message.
#include <sys/stat.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "ceres/rotation.h"
#include "ceres_sqrtba/solver.h"
#include "colmap_camera_models.h"
#include "colmap_model.h"
#include "colmap_synthetic_scene.h"
#include "colmap_test_util.h"
#include "example_test_util.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using testing_util::OptionsFor;
using testing_util::SolveModel;
using testing_util::SolveResult;

// About 2 000 observations on 12 images of 3 cameras (COLMAP would pick
// DENSE_SCHUR), tracks of 2 to 10 (heavy-tailed).
ColmapSceneOptions SmallScene() {
  ColmapSceneOptions options;
  options.num_observations = 2000;
  options.num_images = 12;
  options.num_cameras = 3;
  options.min_track_length = 2;
  options.max_track_length = 10;
  options.seed = 7;
  return options;
}

std::vector<int> TrackLengths(const ColmapModel& model) {
  std::vector<int> lengths;
  for (const ColmapPoint3D& point : model.points3D) {
    lengths.push_back(static_cast<int>(point.track.size()));
  }
  return lengths;
}

TEST(ExampleColmapSyntheticScene, HasTheRequestedCamerasImagesAndTracks) {
  const ColmapSceneOptions options = SmallScene();
  ColmapModel model;
  std::string error;
  ASSERT_TRUE(MakeColmapScene(options, &model, &error)) << error;
  ASSERT_EQ(model.cameras.size(), 3u);
  EXPECT_EQ(model.cameras[0].model_id, colmap_models::kOpenCV);
  EXPECT_EQ(model.cameras[1].model_id, colmap_models::kSimpleRadial);
  EXPECT_EQ(model.cameras[2].model_id, colmap_models::kPinhole);
  for (int k = 4; k < 8; ++k) EXPECT_NE(model.cameras[0].params[k], 0.0) << k;  // distortion
  EXPECT_NE(model.cameras[1].params[3], 0.0);
  EXPECT_EQ(model.images.size(), 12u);
  std::set<uint32_t> cameras_used;
  for (const ColmapImage& image : model.images) cameras_used.insert(image.camera_id);
  EXPECT_EQ(cameras_used.size(), 3u);

  const int64_t observations = model.NumTrackElements();
  EXPECT_GE(observations, options.num_observations);
  EXPECT_LT(observations, options.num_observations + options.max_track_length);
  const std::vector<int> lengths = TrackLengths(model);
  int longest = 0, twos = 0;
  for (int length : lengths) {
    EXPECT_GE(length, options.min_track_length);
    EXPECT_LE(length, options.max_track_length);
    longest = std::max(longest, length);
    twos += length == 2;
  }
  // Heavy-tailed: the shortest tracks are the most common, and the longest
  // ones occur.
  EXPECT_GT(twos, static_cast<int>(lengths.size()) / 4);
  EXPECT_EQ(longest, options.max_track_length);

  // Every track element points at a 2D point that points back, and the
  // images hold 2D points without a 3D point too.
  int64_t unmatched = 0;
  for (const ColmapImage& image : model.images) {
    for (const ColmapPoint2D& point2D : image.points2D) {
      unmatched += point2D.point3D_id == kInvalidPoint3DId;
    }
  }
  EXPECT_GT(unmatched, 0);
  for (const ColmapPoint3D& point : model.points3D) {
    std::set<uint32_t> images;
    for (const ColmapTrackElement& element : point.track) {
      const int index = model.ImageIndex(element.image_id);
      ASSERT_GE(index, 0);
      ASSERT_LT(element.point2D_idx, model.images[index].points2D.size());
      EXPECT_EQ(model.images[index].points2D[element.point2D_idx].point3D_id, point.id);
      EXPECT_TRUE(images.insert(element.image_id).second) << "image twice in a track";
    }
  }
}

TEST(ExampleColmapSyntheticScene, LongTracksAreUniformInTheirRange) {
  ColmapSceneOptions options;
  options.num_observations = 2000;
  options.num_images = 30;
  options.track_lengths = ColmapSceneOptions::TrackLengths::kUniform;
  options.min_track_length = 10;
  options.max_track_length = 25;
  ColmapModel model;
  std::string error;
  ASSERT_TRUE(MakeColmapScene(options, &model, &error)) << error;
  int shortest = 1000, longest = 0;
  for (int length : TrackLengths(model)) {
    shortest = std::min(shortest, length);
    longest = std::max(longest, length);
  }
  // Points that fewer images see get shorter tracks, but not many.
  EXPECT_GE(shortest, 2);
  EXPECT_LE(longest, 25);
  EXPECT_GE(longest, 20);
  int in_range = 0;
  for (int length : TrackLengths(model)) in_range += length >= 10;
  EXPECT_GE(in_range, static_cast<int>(model.points3D.size() * 9 / 10));

  // SetLongTracks: 100 to 300, 400 images by default.
  ColmapSceneOptions long_tracks;
  long_tracks.num_observations = 1000000;
  SetLongTracks(&long_tracks);
  EXPECT_EQ(long_tracks.min_track_length, 100);
  EXPECT_EQ(long_tracks.max_track_length, 300);
  EXPECT_EQ(DefaultNumImages(long_tracks), 400);
}

// Observations lie inside their image, in front of the true camera, and
// within 6 sigma of the true projection; the model holds perturbed values.
TEST(ExampleColmapSyntheticScene, ObservationsAreNoisyProjectionsInsideTheImages) {
  const ColmapSceneOptions options = SmallScene();
  ColmapModel model, truth;
  std::string error;
  ASSERT_TRUE(MakeColmapScene(options, &model, &error, &truth)) << error;
  ASSERT_EQ(truth.points3D.size(), model.points3D.size());
  double largest = 0.0;
  for (const ColmapPoint3D& point : truth.points3D) {
    for (const ColmapTrackElement& element : point.track) {
      const ColmapImage& image = truth.images[truth.ImageIndex(element.image_id)];
      const ColmapCamera& camera = truth.cameras[truth.CameraIndex(image.camera_id)];
      const ColmapPoint2D& observed = image.points2D[element.point2D_idx];
      EXPECT_GE(observed.x, 0.0);
      EXPECT_GE(observed.y, 0.0);
      EXPECT_LT(observed.x, static_cast<double>(camera.width));
      EXPECT_LT(observed.y, static_cast<double>(camera.height));
      double xyz[3];
      ceres::QuaternionRotatePoint(image.qvec, point.xyz, xyz);
      for (int k = 0; k < 3; ++k) xyz[k] += image.tvec[k];
      double pixel[2];
      ASSERT_TRUE(colmap_models::ProjectWithModel(camera.model_id, camera.params.data(), xyz,
                                                  pixel));
      largest = std::max({largest, std::abs(pixel[0] - observed.x),
                          std::abs(pixel[1] - observed.y)});
    }
  }
  EXPECT_LT(largest, 6.0 * options.pixel_noise);
  EXPECT_GT(largest, 0.5 * options.pixel_noise);  // the noise is there
  // The initial values are not the truth: BA has work to do.
  EXPECT_NE(model.points3D[0].xyz[0], truth.points3D[0].xyz[0]);
  EXPECT_NE(model.images[0].tvec[0], truth.images[0].tvec[0]);
  EXPECT_NE(model.cameras[0].params[0], truth.cameras[0].params[0]);
  EXPECT_EQ(model.cameras[0].params[2], truth.cameras[0].params[2]);  // principal point
}

// --rigs: two rigs of the three cameras (cameras 1 and 3, camera 2), frames
// alternating between them, one image per camera of the frame's rig; every
// image's pose sensor_from_rig * rig_from_world, the calibration of the
// truth in the initial values, the observations noisy projections of the
// truth through those poses.
TEST(ExampleColmapSyntheticScene, RigScenesHaveRigsFramesAndDerivedPoses) {
  ColmapSceneOptions options = SmallScene();
  options.num_rigs = 2;
  ColmapModel model, truth;
  std::string error;
  ASSERT_TRUE(MakeColmapScene(options, &model, &error, &truth)) << error;
  ASSERT_TRUE(model.has_rigs_and_frames);
  ASSERT_EQ(model.rigs.size(), 2u);
  EXPECT_EQ(model.rigs[0].ref_sensor.id, 1u);
  ASSERT_EQ(model.rigs[0].sensors.size(), 1u);
  EXPECT_EQ(model.rigs[0].sensors[0].sensor.id, 3u);
  EXPECT_EQ(model.rigs[1].ref_sensor.id, 2u);
  EXPECT_TRUE(model.rigs[1].sensors.empty());
  // Frames 1, 3, 5, ... of rig 1 (two images), 2, 4, ... of rig 2 (one): at
  // least 12 images.
  EXPECT_GE(model.images.size(), 12u);
  EXPECT_LE(model.images.size(), 13u);
  size_t images_in_frames = 0;
  for (const ColmapFrame& frame : model.frames) {
    EXPECT_EQ(frame.rig_id, frame.id % 2 == 1 ? 1u : 2u);
    EXPECT_EQ(frame.data_ids.size(), frame.rig_id == 1 ? 2u : 1u);
    images_in_frames += frame.data_ids.size();
  }
  EXPECT_EQ(images_in_frames, model.images.size());
  for (const ColmapModel* m : {&model, &truth}) {
    for (size_t i = 0; i < m->images.size(); ++i) {
      const ColmapRigid3 pose = ColmapCamFromWorld(*m, static_cast<int>(i));
      for (int k = 0; k < 4; ++k) EXPECT_EQ(m->images[i].qvec[k], pose.qvec[k]);
      for (int k = 0; k < 3; ++k) EXPECT_EQ(m->images[i].tvec[k], pose.tvec[k]);
    }
  }
  // The calibration: known (the truth's), 0.12 from the reference camera and
  // turned by 20 degrees.
  const ColmapRigid3& calibration = model.rigs[0].sensors[0].sensor_from_rig;
  for (int k = 0; k < 4; ++k) EXPECT_EQ(calibration.qvec[k], truth.rigs[0].sensors[0].sensor_from_rig.qvec[k]);
  const ColmapRigid3 rig_from_sensor = Inverse(calibration);
  EXPECT_NEAR(rig_from_sensor.tvec[0], 0.12, 1e-15);
  EXPECT_NEAR(2.0 * std::acos(calibration.qvec[0]), 20.0 * M_PI / 180.0, 1e-14);
  double largest = 0.0;
  for (const ColmapPoint3D& point : truth.points3D) {
    for (const ColmapTrackElement& element : point.track) {
      const ColmapImage& image = truth.images[truth.ImageIndex(element.image_id)];
      const ColmapCamera& camera = truth.cameras[truth.CameraIndex(image.camera_id)];
      double xyz[3];
      ceres::QuaternionRotatePoint(image.qvec, point.xyz, xyz);
      for (int k = 0; k < 3; ++k) xyz[k] += image.tvec[k];
      double pixel[2];
      ASSERT_TRUE(colmap_models::ProjectWithModel(camera.model_id, camera.params.data(), xyz, pixel));
      const ColmapPoint2D& observed = image.points2D[element.point2D_idx];
      largest = std::max({largest, std::abs(pixel[0] - observed.x), std::abs(pixel[1] - observed.y)});
    }
  }
  EXPECT_LT(largest, 6.0 * options.pixel_noise);
  EXPECT_GT(largest, 0.5 * options.pixel_noise);
  // The initial frames are perturbed, the images follow them.
  EXPECT_NE(model.frames[0].rig_from_world.tvec[0], truth.frames[0].rig_from_world.tvec[0]);
}

TEST(ExampleColmapSyntheticScene, SameSeedSameModel) {
  ColmapModel a, b, c;
  std::string error;
  ColmapSceneOptions options = SmallScene();
  ASSERT_TRUE(MakeColmapScene(options, &a, &error)) << error;
  ASSERT_TRUE(MakeColmapScene(options, &b, &error)) << error;
  EXPECT_TRUE(a == b);
  options.seed += 1;
  ASSERT_TRUE(MakeColmapScene(options, &c, &error)) << error;
  EXPECT_FALSE(a == c);
}

TEST(ExampleColmapSyntheticScene, TextAndBinaryReadBackIdentical) {
  ColmapModel model;
  std::string error;
  ASSERT_TRUE(MakeColmapScene(SmallScene(), &model, &error)) << error;
  for (ColmapFormat format : {ColmapFormat::kText, ColmapFormat::kBinary}) {
    std::string cameras, images, points3D;
    SerializeColmapModel(model, format, &cameras, &images, &points3D);
    ColmapModel read;
    ASSERT_TRUE(ReadColmapModelFromMemory(format, "scene", cameras, images, points3D, {}, &read,
                                          &error))
        << error;
    EXPECT_TRUE(read == model) << (format == ColmapFormat::kText ? "text" : "binary");
  }
}

// The problem colmap_bundle_adjuster builds from the scene: the square-root
// solvers end at the cost of ceres::Solve with the solver COLMAP picks for 12
// images (DENSE_SCHUR).
TEST(ExampleColmapSyntheticScene, SquareRootSolversEndAtTheCostOfColmapsChoice) {
  ColmapModel model;
  std::string error;
  ASSERT_TRUE(MakeColmapScene(SmallScene(), &model, &error)) << error;
  // 10 iterations: with DENSE_SCHUR the cost settles to 1e-15 relative by
  // iteration 5 (measured), and the test stays short under the sanitizers.
  const SolveResult reference =
      SolveModel(model, testing_util::Converging(OptionsFor("dense_schur", 10)), /*plain_ceres=*/true);
  ASSERT_NE(reference.termination, ceres::FAILURE);
  // The perturbation is undone: the cost falls to the noise's level.
  EXPECT_LT(reference.final_cost, 0.05 * reference.initial_cost);
  EXPECT_LT(reference.final_error, 1.5);
  testing_util::ExpectSquareRootRunsEndAt(model, reference, "dense_schur", {
      {"sqrt_sparse_schur", DOUBLE_PRECISION, 1e-6},
      {"sqrt_iterative_schur", DOUBLE_PRECISION, 1e-6},
      {"sqrt_sparse_schur", SINGLE_PRECISION, 1e-4},
      {"sqrt_iterative_schur", SINGLE_PRECISION, 1e-4},
  }, 10);
}

TEST(ExampleColmapSyntheticScene, BadOptionsAreRefusedWithAMessage) {
  struct Case {
    void (*change)(ColmapSceneOptions*);
    const char* expected;
  };
  const Case cases[] = {
      {[](ColmapSceneOptions* o) { o->num_observations = 1; }, "number of observations"},
      {[](ColmapSceneOptions* o) { o->num_images = 1; }, "number of images"},
      {[](ColmapSceneOptions* o) { o->num_cameras = 0; }, "number of cameras"},
      {[](ColmapSceneOptions* o) { o->num_cameras = 13; }, "number of cameras"},
      {[](ColmapSceneOptions* o) { o->min_track_length = 1; }, "track lengths"},
      {[](ColmapSceneOptions* o) { o->max_track_length = 1; }, "track lengths"},
      {[](ColmapSceneOptions* o) { o->min_track_length = 13; o->max_track_length = 20; },
       "exceeds the number of images"},
      {[](ColmapSceneOptions* o) { o->pixel_noise = std::nan(""); }, "pixel noise"},
      {[](ColmapSceneOptions* o) { o->pixel_noise = -1; }, "pixel noise"},
      {[](ColmapSceneOptions* o) { o->memory_limit_in_bytes = 1000; }, "memory available"},
      {[](ColmapSceneOptions* o) { o->num_rigs = 4; }, "number of rigs"},
      {[](ColmapSceneOptions* o) { o->num_rigs = -1; }, "number of rigs"},
  };
  for (const Case& c : cases) {
    ColmapSceneOptions options = SmallScene();
    c.change(&options);
    ColmapModel model;
    std::string error;
    EXPECT_FALSE(MakeColmapScene(options, &model, &error)) << c.expected;
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << "expected '" << c.expected << "' in '" << error << "'";
    EXPECT_TRUE(model.points3D.empty());
  }
}

// PerturbColmapModel moves poses, points and intrinsics (not the principal
// point, ids or observations) in proportion to `perturbation`, and updates the
// points' errors; 0 changes no value.
TEST(ExampleColmapSyntheticScene, PerturbMovesValuesOnly) {
  ColmapModel truth, model;
  std::string error;
  ASSERT_TRUE(MakeColmapScene(SmallScene(), &model, &error, &truth)) << error;
  ColmapModel same = truth;
  PerturbColmapModel(0.0, 3, &same);
  EXPECT_TRUE(same == truth);
  ColmapModel moved = truth;
  PerturbColmapModel(1.0, 3, &moved);
  ASSERT_EQ(moved.points3D.size(), truth.points3D.size());
  double point_move = 0.0, error_before = 0.0, error_after = 0.0;
  for (size_t j = 0; j < truth.points3D.size(); ++j) {
    for (int k = 0; k < 3; ++k) {
      point_move += std::abs(moved.points3D[j].xyz[k] - truth.points3D[j].xyz[k]);
    }
    EXPECT_EQ(moved.points3D[j].track.size(), truth.points3D[j].track.size());
    error_before += truth.points3D[j].error;
    error_after += moved.points3D[j].error;
  }
  point_move /= 3.0 * truth.points3D.size();
  const double scale = ColmapSceneScale(truth);
  EXPECT_GT(scale, 0.5);
  EXPECT_LT(scale, 3.0);
  // Mean absolute move of a Gaussian of sigma 0.03 * scale: 0.8 sigma.
  EXPECT_NEAR(point_move, 0.8 * 0.03 * scale, 0.2 * 0.03 * scale);
  EXPECT_GT(error_after, 3.0 * error_before);
  EXPECT_NE(moved.images[0].qvec[0], truth.images[0].qvec[0]);
  EXPECT_NE(moved.cameras[0].params[0], truth.cameras[0].params[0]);
  EXPECT_EQ(moved.cameras[0].params[2], truth.cameras[0].params[2]);
  EXPECT_EQ(moved.images[0].points2D.size(), truth.images[0].points2D.size());
}

// The program: writes a model colmap_model reads back (binary and text),
// the same one for the same seed, and refuses bad flags with one error line.
TEST(ExampleColmapSyntheticScene, ProgramWritesTheModel) {
  testing_util::TempDir dir;
  const std::string binary = MAKE_COLMAP_SCENE_PATH;
  for (const char* type : {"BIN", "TXT"}) {
    const std::string folder = dir.Path(type);
    ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
    const testing_util::CommandResult result = testing_util::RunCommand(
        "'" + binary + "' --output_path='" + folder +
            "' --observations=2k --num_images=12 --max_track_length=10 --seed=7 --output_type=" +
            type,
        dir);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("3 cameras (OPENCV, SIMPLE_RADIAL, PINHOLE), 12 images"),
              std::string::npos)
        << result.out;
    ColmapModel read;
    ColmapFormat format;
    std::string error;
    ASSERT_TRUE(ReadColmapModel(folder, {}, &read, &format, &error)) << error;
    EXPECT_EQ(format, std::string(type) == "BIN" ? ColmapFormat::kBinary : ColmapFormat::kText);
    ColmapModel expected;
    ASSERT_TRUE(MakeColmapScene(SmallScene(), &expected, &error)) << error;
    EXPECT_TRUE(read == expected) << type;
  }
  // --input_path: a perturbed copy, in the input's format.
  {
    const std::string folder = dir.Path("perturbed");
    ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
    const testing_util::CommandResult result = testing_util::RunCommand(
        "'" + binary + "' --input_path='" + dir.Path("TXT") + "' --output_path='" + folder + "'",
        dir);
    ASSERT_EQ(result.exit_code, 0) << result.err;
    ColmapModel input, perturbed;
    ColmapFormat format;
    std::string error;
    ASSERT_TRUE(ReadColmapModel(dir.Path("TXT"), {}, &input, &format, &error)) << error;
    ASSERT_TRUE(ReadColmapModel(folder, {}, &perturbed, &format, &error)) << error;
    EXPECT_EQ(format, ColmapFormat::kText);
    PerturbColmapModel(1.0, 1, &input);  // the program's defaults
    EXPECT_TRUE(perturbed == input);
  }
  const std::string out = "--output_path='" + dir.Path("BIN") + "' ";
  const struct {
    std::string flags;
    const char* expected;
  } bad[] = {
      {"", "--output_path is required"},
      {"--output_path=/nonexistent/folder", "not an existing folder"},
      {out + "--observations=12x", "is not a count"},
      {out + "--output_type=PLY", "unknown --output_type"},
      {out + "--observations=2k --num_images=12 --min_track_length=13",
       "exceeds the number of images"},
      {"--output_path='" + dir.Path("TXT") + "' --output_type=TXT --observations=2k",
       "holds cameras.bin"},
      {out + "--input_path='" + dir.Path("BIN") + "'", "is the input folder"},
      {out + "--input_path='" + dir.Path("nothing") + "'", "nothing"},
      {out + "--perturbation=-1", "--perturbation must be in"},
  };
  // The text model's folder gets a binary file beside it: refused.
  testing_util::WriteFile(dir.Path("TXT") + "/cameras.bin", "");
  for (const auto& c : bad) {
    const testing_util::CommandResult result =
        testing_util::RunCommand("'" + binary + "' " + c.flags, dir);
    EXPECT_EQ(result.exit_code, 1) << c.flags;
    const std::vector<std::string> lines = testing_util::SplitLines(result.err);
    ASSERT_EQ(lines.size(), 1u) << result.err;
    EXPECT_EQ(lines[0].rfind("make_colmap_scene: error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(c.expected), std::string::npos) << lines[0];
  }
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
