// Writes the COLMAP reader fuzzer's seed corpus (tests/fuzz/colmap_corpus):
// small models in text and binary form packed as the fuzzer reads them
// (PackColmapInput), one camera of every supported model, an image without
// 2D points, CR LF line ends, a rig model (rigs and frames: a rig of two
// cameras and an IMU, a sensor without sensor_from_rig, a rig of no sensors,
// data of an image that is not in images.* and of the IMU), and a few broken
// models. The committed files were made with
//
//   build/tests/fuzz/make_colmap_fuzz_seed_corpus tests/fuzz/colmap_corpus
#include <cstdio>
#include <string>

#include "colmap_model.h"
#include "fuzz_entry_points.h"

namespace {

using ceres_sqrtba::examples::ColmapFiles;
using ceres_sqrtba::examples::ColmapFormat;
using ceres_sqrtba::examples::ColmapModel;

const char kCameras[] =
    "# cameras\n"
    "1 SIMPLE_RADIAL 640 480 500 320 240 0.01\n"
    "2 PINHOLE 640 480 500 510 320 240\n";
const char kImages[] =
    "# images\n"
    "1 1 0 0 0 0 0 0 1 a.jpg\n"
    "100 200 1 110 210 2 5 5 -1\n"
    "2 0.9950041652780258 0 0.09983341664682815 0 -0.5 0 0 1 b.jpg\n"
    "120 220 1 130 230 2\n"
    "3 1 0 0 0 0.3 0.1 0 2 c.jpg\n"
    "140 240 1 150 250 3\n"
    "4 1 0 0 0 1 0 0 2 d.jpg\n"
    "\n";
const char kPoints[] =
    "# points\n"
    "1 0.1 0.2 3 255 0 0 0.5 1 0 2 0 3 0\n"
    "2 -0.1 0.1 4 0 255 0 0.5 1 1 2 1\n"
    "3 0.2 -0.1 5 0 0 255 0.5 3 1\n";

// A rig model over kCameras/kImages/kPoints: rig 1 has camera 1 as its
// reference sensor, camera 2 at a known sensor_from_rig and an IMU without
// one; rig 2 has no sensors. Frames 1 and 2 hold images 1 and 3, 2 and 4
// (images 3 and 4 are camera 2's);
// frame 1 also an IMU sample, frame 3 an image not in images.*, frame 4
// nothing.
const char kRigs[] =
    "# rigs\n"
    "1 3 CAMERA 1 CAMERA 2 1 0.9987502603949663 0 0.04997916927067833 0 -0.2 0 0.01 IMU 1 0\n"
    "2 0\n";
const char kFrames[] =
    "# frames\n"
    "1 1 1 0 0 0 0 0 0 3 CAMERA 1 1 CAMERA 2 3 IMU 1 100\n"
    "2 1 0.9950041652780258 0 0.09983341664682815 0 -0.5 0 0 2 CAMERA 1 2 CAMERA 2 4\n"
    "3 1 1 0 0 0 1 0 0 1 CAMERA 1 99\n"
    "4 2 1 0 0 0 0 0 0 0\n";
// Every supported camera model, each used by one image seeing two points.
std::string AllModelsCameras() {
  return "1 SIMPLE_PINHOLE 100 100 50 50 50\n"
         "2 PINHOLE 100 100 50 51 50 50\n"
         "3 SIMPLE_RADIAL 100 100 50 50 50 0.1\n"
         "4 RADIAL 100 100 50 50 50 0.1 -0.01\n"
         "5 OPENCV 100 100 50 51 50 50 0.1 -0.01 0.001 0.002\n"
         "6 OPENCV_FISHEYE 100 100 50 51 50 50 0.1 -0.01 0.001 0.002\n"
         "7 FULL_OPENCV 100 100 50 51 50 50 0.1 -0.01 0.001 0.002 0.01 0.02 0.03 0.04\n"
         "8 SIMPLE_RADIAL_FISHEYE 100 100 50 50 50 0.1\n"
         "9 RADIAL_FISHEYE 100 100 50 50 50 0.1 -0.01\n";
}
std::string AllModelsImages() {
  std::string images;
  for (int i = 1; i <= 9; ++i) {
    const std::string id = std::to_string(i);
    images += id + " 1 0 0 0 0." + id + " 0 0 " + id + " im" + id + ".png\n";
    images += "40 41 1 60 61 2\n";
  }
  return images;
}
std::string AllModelsPoints() {
  std::string p1 = "1 0 0 5 1 2 3 0.1";
  std::string p2 = "2 1 1 6 1 2 3 0.1";
  for (int i = 1; i <= 9; ++i) {
    p1 += " " + std::to_string(i) + " 0";
    p2 += " " + std::to_string(i) + " 1";
  }
  return p1 + "\n" + p2 + "\n";
}

std::string Crlf(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

bool Write(const std::string& folder, const std::string& name, const std::string& data) {
  const std::string path = folder + "/" + name;
  FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  const bool ok = std::fwrite(data.data(), 1, data.size(), file) == data.size();
  return std::fclose(file) == 0 && ok;
}

// A text model and its binary form.
bool WriteBoth(const std::string& folder, const std::string& name, const ColmapFiles& text) {
  using ceres_sqrtba::fuzz::PackColmapInput;
  ColmapModel model;
  std::string error;
  if (!ceres_sqrtba::examples::ReadColmapModelFromMemory(ColmapFormat::kText, "seed", text, {},
                                                         &model, &error)) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), error.c_str());
    return false;
  }
  ColmapFiles binary;
  ceres_sqrtba::examples::SerializeColmapModel(model, ColmapFormat::kBinary, &binary);
  return Write(folder, name + "_text", PackColmapInput(false, text)) &&
         Write(folder, name + "_binary", PackColmapInput(true, binary));
}

ColmapFiles Files(const std::string& cameras, const std::string& images,
                  const std::string& points) {
  ColmapFiles files;
  files.cameras = cameras;
  files.images = images;
  files.points3D = points;
  return files;
}

ColmapFiles RigFiles(const std::string& rigs, const std::string& frames) {
  ColmapFiles files = Files(kCameras, kImages, kPoints);
  files.rigs = rigs;
  files.frames = frames;
  return files;
}

// The rig model's binary files, without frames.bin.
ColmapFiles BinaryRigsWithoutFrames() {
  ColmapModel model;
  std::string error;
  ceres_sqrtba::examples::ReadColmapModelFromMemory(ColmapFormat::kText, "seed",
                                                    RigFiles(kRigs, kFrames), {}, &model, &error);
  ColmapFiles files;
  ceres_sqrtba::examples::SerializeColmapModel(model, ColmapFormat::kBinary, &files);
  files.frames.reset();
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <folder>\n", argv[0]);
    return 2;
  }
  using ceres_sqrtba::fuzz::PackColmapInput;
  const std::string folder = argv[1];
  std::string images_bad_camera = kImages;
  images_bad_camera.replace(images_bad_camera.find("0.3 0.1 0 2 c.jpg"), 17, "0.3 0.1 0 9 c.jpg");
  std::string frames_image_twice = kFrames;
  frames_image_twice.replace(frames_image_twice.find("CAMERA 1 99"), 11, "CAMERA 1 1");
  // Camera 2 without its sensor_from_rig, though it took images 3 and 4.
  const std::string rigs_no_pose = "1 3 CAMERA 1 CAMERA 2 0 IMU 1 0\n2 0\n";
  const bool ok =
      WriteBoth(folder, "small", Files(kCameras, kImages, kPoints)) &&
      WriteBoth(folder, "all_models",
                Files(AllModelsCameras(), AllModelsImages(), AllModelsPoints())) &&
      WriteBoth(folder, "rigs", RigFiles(kRigs, kFrames)) &&
      Write(folder, "broken_image_in_two_frames_text",
            PackColmapInput(false, RigFiles(kRigs, frames_image_twice))) &&
      Write(folder, "broken_sensor_without_pose_text",
            PackColmapInput(false, RigFiles(rigs_no_pose, kFrames))) &&
      Write(folder, "broken_rigs_without_frames_binary",
            PackColmapInput(true, BinaryRigsWithoutFrames())) &&
      Write(folder, "small_crlf_text", PackColmapInput(false, Crlf(kCameras), Crlf(kImages),
                                                       Crlf(kPoints))) &&
      Write(folder, "broken_missing_camera_text",
            PackColmapInput(false, kCameras, images_bad_camera, kPoints)) &&
      Write(folder, "broken_unknown_model_text",
            PackColmapInput(false, "1 FOV 640 480 500 500 320 240 0.5\n", kImages, kPoints)) &&
      Write(folder, "broken_empty_binary", PackColmapInput(true, "", "", ""));
  return ok ? 0 : 1;
}
