// make_colmap_scene: writes a synthetic COLMAP model (cameras, images,
// points3D, binary or text) of a chosen size into an existing folder, for
// colmap_bundle_adjuster (or COLMAP itself) to refine; or, with --input_path,
// a perturbed copy of an existing model. The scene is described
// in colmap_synthetic_scene.h; docs/colmap.md lists the flags.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "cli_common.h"
#include "colmap_camera_models.h"
#include "colmap_model.h"
#include "colmap_synthetic_scene.h"
#include "gflags/gflags.h"

DEFINE_string(output_path, "", "Existing folder the model is written to (cameras, images, "
                               "points3D; files of the same names are replaced).");
DEFINE_string(output_type, "BIN",
              "BIN or TXT (as COLMAP's model_converter); with --input_path the default is the "
              "input's format.");
DEFINE_string(input_path, "",
              "Instead of generating a scene: read this COLMAP model (text or binary), perturb "
              "it (--perturbation, --seed) and write it to --output_path.");
DEFINE_string(observations, "100k",
              "Observations (track elements) to reach: a count, optionally with a k or M "
              "suffix (2000, 100k, 1M).");
DEFINE_bool(long_tracks, false,
            "Every point seen by 100 to 300 images (uniformly drawn); otherwise track "
            "lengths follow a heavy-tailed distribution from --min_track_length to "
            "--max_track_length.");
DEFINE_int32(num_images, 0,
             "Images; 0: one per 700 observations (long tracks: one per 2500, at least 400).");
DEFINE_int32(num_cameras, 3,
             "Physical cameras, models in turn OPENCV, SIMPLE_RADIAL, PINHOLE.");
DEFINE_int32(rigs, 0,
             "0: a model without rig and frame files (COLMAP up to 3.11); N > 0: the cameras "
             "form N rigs (camera c in rig c mod N) and every frame captures one rig, written "
             "with rigs.* and frames.* as COLMAP 3.12+ writes them.");
DEFINE_bool(add_trivial_rigs, false,
            "With --input_path and a model without rigs: write it with rigs.* and frames.* "
            "as COLMAP 4 does for such a model (one rig per camera, one frame per image).");
DEFINE_int32(min_track_length, 0, "Shortest track; 0: 2 (100 with --long_tracks).");
DEFINE_int32(max_track_length, 0, "Longest track; 0: 300 (capped at the number of images).");
DEFINE_double(pixel_noise, 1.0, "Standard deviation of the observations' noise, pixels.");
DEFINE_double(perturbation, 1.0,
              "Scale of the initial values' errors (1: points and camera centres moved by "
              "0.03 in a scene of radius 1, rotations by 0.005 rad, focal lengths by 2 %).");
DEFINE_uint64(seed, 1, "Seed: the same flags give the same model.");

namespace ceres_sqrtba {
namespace examples {
namespace {

constexpr char kProgram[] = "make_colmap_scene";

int Fail(const std::string& message) { return FailWithMessage(kProgram, message); }

// "2000", "100k", "1M", "1.5M" to a count; false for anything else.
bool ParseCount(const std::string& text, int64_t* count) {
  if (text.empty()) return false;
  double scale = 1.0;
  std::string digits = text;
  const char last = text.back();
  if (last == 'k' || last == 'K') {
    scale = 1e3;
    digits.pop_back();
  } else if (last == 'm' || last == 'M') {
    scale = 1e6;
    digits.pop_back();
  }
  if (digits.empty() || digits.find_first_not_of("0123456789.") != std::string::npos) {
    return false;
  }
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end);
  if (errno != 0 || end != digits.c_str() + digits.size() || !(value * scale < 1e15)) {
    return false;
  }
  *count = static_cast<int64_t>(value * scale + 0.5);
  return true;
}

// A text model written beside binary files would not be what COLMAP reads
// from the folder (binary files win).
bool CheckTextBesideBinary(ColmapFormat format, std::string* error) {
  if (format != ColmapFormat::kText) return true;
  for (const char* stem : {"cameras", "images", "points3D"}) {
    const std::string path = FLAGS_output_path + "/" + ColmapFileName(stem, ColmapFormat::kBinary);
    struct stat info;
    if (stat(path.c_str(), &info) == 0) {
      *error = "--output_path=" + FLAGS_output_path + " holds " +
               ColmapFileName(stem, ColmapFormat::kBinary) +
               ", which COLMAP would read instead of the text model written here; "
               "use a folder without a binary model";
      return false;
    }
  }
  return true;
}

int Run() {
  std::string error;
  if (FLAGS_output_path.empty()) {
    return Fail("--output_path is required (an existing folder for the model)");
  }
  struct stat info;
  if (stat(FLAGS_output_path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Fail("--output_path=" + FLAGS_output_path +
                ": not an existing folder (create it first, as COLMAP requires)");
  }
  if (access(FLAGS_output_path.c_str(), W_OK | X_OK) != 0) {
    return Fail("--output_path=" + FLAGS_output_path + ": cannot write into this folder");
  }
  const std::string type = Lower(FLAGS_output_type);
  if (type != "bin" && type != "txt") {
    return Fail("unknown --output_type '" + FLAGS_output_type + "' (expected BIN or TXT)");
  }
  ColmapFormat format = type == "bin" ? ColmapFormat::kBinary : ColmapFormat::kText;
  if (!(FLAGS_perturbation >= 0.0 && FLAGS_perturbation <= 10.0)) {
    return Fail("--perturbation must be in [0, 10]");
  }
  ColmapModel model;
  if (!FLAGS_input_path.empty()) {
    ColmapReadOptions read_options;
    read_options.solve_bytes_per_observation = kSolveBytesPerObservation;
    ColmapFormat input_format;
    if (!ReadColmapModel(FLAGS_input_path, read_options, &model, &input_format, &error)) {
      return Fail(error);
    }
    if (FlagIsDefault("output_type")) format = input_format;
  }
  if (!CheckTextBesideBinary(format, &error)) return Fail(error);
  if (!FLAGS_input_path.empty()) {
    struct stat in_info;
    if (stat(FLAGS_input_path.c_str(), &in_info) == 0 && in_info.st_dev == info.st_dev &&
        in_info.st_ino == info.st_ino) {
      return Fail("--output_path=" + FLAGS_output_path +
                  " is the input folder; the input is never overwritten");
    }
    if (FLAGS_rigs != 0) return Fail("--rigs is for generated scenes; with --input_path, see --add_trivial_rigs");
    if (FLAGS_add_trivial_rigs) {
      if (model.has_rigs_and_frames) {
        return Fail("--add_trivial_rigs: " + FLAGS_input_path + " already has rigs and frames");
      }
      AddTrivialRigs(&model);
    }
    PerturbColmapModel(FLAGS_perturbation, FLAGS_seed, &model);
    double error_sum = 0.0;
    for (const ColmapPoint3D& point : model.points3D) error_sum += point.error;
    std::printf("Perturbed %s (seed %" PRIu64 ", perturbation %g): %zu cameras, %zu images, "
                "%zu 3D points, %" PRId64 " observations; mean reprojection error %.4f px\n",
                Printable(FLAGS_input_path).c_str(), static_cast<uint64_t>(FLAGS_seed),
                FLAGS_perturbation, model.cameras.size(), model.images.size(),
                model.points3D.size(), model.NumTrackElements(),
                model.points3D.empty() ? 0.0 : error_sum / model.points3D.size());
    if (!WriteColmapModel(model, FLAGS_output_path, format, &error)) return Fail(error);
    std::printf("Wrote %s (%s)\n", Printable(FLAGS_output_path).c_str(),
                format == ColmapFormat::kText ? "text" : "binary");
    return 0;
  }
  ColmapSceneOptions options;
  if (!ParseCount(FLAGS_observations, &options.num_observations)) {
    return Fail("--observations='" + FLAGS_observations +
                "' is not a count (expected e.g. 2000, 100k or 1M)");
  }
  if (FLAGS_long_tracks) SetLongTracks(&options);
  if (FLAGS_min_track_length != 0) options.min_track_length = FLAGS_min_track_length;
  if (FLAGS_max_track_length != 0) options.max_track_length = FLAGS_max_track_length;
  if (FLAGS_num_images < 0) return Fail("--num_images must be at least 0");
  options.num_images = FLAGS_num_images;
  options.num_cameras = FLAGS_num_cameras;
  if (FLAGS_add_trivial_rigs) return Fail("--add_trivial_rigs needs --input_path");
  options.num_rigs = FLAGS_rigs;
  options.pixel_noise = FLAGS_pixel_noise;
  options.perturbation = FLAGS_perturbation;
  options.seed = FLAGS_seed;
  // What colmap_bundle_adjuster needs to solve the model, counted now.
  options.solve_bytes_per_observation = kSolveBytesPerObservation;

  if (!MakeColmapScene(options, &model, &error)) return Fail(error);
  std::vector<int> lengths;
  lengths.reserve(model.points3D.size());
  for (const ColmapPoint3D& point : model.points3D) {
    lengths.push_back(static_cast<int>(point.track.size()));
  }
  std::sort(lengths.begin(), lengths.end());
  std::string models;
  for (const ColmapCamera& camera : model.cameras) {
    if (!models.empty()) models += ", ";
    models += colmap_models::FindModel(camera.model_id)->name;
  }
  double error_sum = 0.0;
  for (const ColmapPoint3D& point : model.points3D) error_sum += point.error;
  std::printf("Scene (seed %" PRIu64 "): %zu cameras (%s), %zu images, %zu 3D points, %" PRId64
              " observations\n",
              options.seed, model.cameras.size(), models.c_str(), model.images.size(),
              model.points3D.size(), model.NumTrackElements());
  if (model.has_rigs_and_frames) {
    std::printf("Rigs: %zu rigs, %zu frames\n", model.rigs.size(), model.frames.size());
  }
  std::printf("Track lengths: min %d, median %d, max %d, mean %.2f\n", lengths.front(),
              lengths[lengths.size() / 2], lengths.back(),
              static_cast<double>(model.NumTrackElements()) / lengths.size());
  std::printf("Mean reprojection error of the perturbed model: %.4f px\n",
              error_sum / model.points3D.size());
  if (!WriteColmapModel(model, FLAGS_output_path, format, &error)) return Fail(error);
  std::printf("Wrote %s (%s)\n", Printable(FLAGS_output_path).c_str(),
              format == ColmapFormat::kText ? "text" : "binary");
  return 0;
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "make_colmap_scene --output_path=DIR [--observations=100k] [--long_tracks] "
      "[--output_type=BIN|TXT] [--seed=N]\n"
      "       make_colmap_scene --input_path=sparse/0 --output_path=DIR [--perturbation=1]\n"
      "Writes a synthetic (or a perturbed) COLMAP model for colmap_bundle_adjuster. See "
      "docs/colmap.md.");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  return ceres_sqrtba::examples::RunAfterFlags(ceres_sqrtba::examples::kProgram, argc, argv,
                                                ceres_sqrtba::examples::Run);
}
