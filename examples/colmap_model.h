// A COLMAP sparse model (the `sparse/0` folder COLMAP writes): cameras,
// images with their 2D points, and 3D points with their tracks, read from and
// written to COLMAP's text (cameras.txt, images.txt, points3D.txt) and binary
// (cameras.bin, images.bin, points3D.bin) files.
//
// The layouts follow COLMAP's reconstruction I/O (little-endian binary; text
// with '#' comment lines and two lines per image). Rig and frame files
// (rigs.*, frames.*, COLMAP 3.12 and later) are not read: every image has its
// own camera-from-world pose, which images.* holds in every version.
//
// Reading checks everything before the model is used: a bad file gives one
// error line naming the file and the line (text) or the byte offset (binary)
// of what is wrong, and an empty model.
#ifndef CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_H_
#define CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ceres_sqrtba {
namespace examples {

enum class ColmapFormat { kText, kBinary };

// images.* marks a 2D point without a 3D point by this id (-1 in text).
constexpr uint64_t kInvalidPoint3DId = std::numeric_limits<uint64_t>::max();

struct ColmapCamera {
  uint32_t id = 0;
  int model_id = 0;  // colmap_models::ModelId
  uint64_t width = 0;
  uint64_t height = 0;
  std::vector<double> params;  // in the model's order (colmap_camera_models.h)
};

struct ColmapPoint2D {
  double x = 0.0;
  double y = 0.0;
  uint64_t point3D_id = kInvalidPoint3DId;
};

struct ColmapImage {
  uint32_t id = 0;
  // Camera from world: x_cam = R(q) x_world + t, q as stored (w, x, y, z).
  double qvec[4] = {1.0, 0.0, 0.0, 0.0};
  double tvec[3] = {0.0, 0.0, 0.0};
  uint32_t camera_id = 0;
  std::string name;
  std::vector<ColmapPoint2D> points2D;
};

struct ColmapTrackElement {
  uint32_t image_id = 0;
  uint32_t point2D_idx = 0;
};

struct ColmapPoint3D {
  uint64_t id = 0;
  double xyz[3] = {0.0, 0.0, 0.0};
  uint8_t color[3] = {0, 0, 0};
  double error = 0.0;  // mean reprojection error of the track, pixels
  std::vector<ColmapTrackElement> track;
};

// The model in file order (the writer keeps it, so that an unchanged model is
// written back byte for byte in binary form).
struct ColmapModel {
  std::vector<ColmapCamera> cameras;
  std::vector<ColmapImage> images;
  std::vector<ColmapPoint3D> points3D;

  int64_t NumTrackElements() const;
  // Index in cameras / images of the one with this id; -1 when none. Built
  // by the reader (BuildIndex after changing ids by hand).
  int CameraIndex(uint32_t id) const;
  int ImageIndex(uint32_t id) const;
  void BuildIndex();

 private:
  std::vector<std::pair<uint32_t, int>> camera_index_;  // sorted by id
  std::vector<std::pair<uint32_t, int>> image_index_;
};

bool operator==(const ColmapModel& a, const ColmapModel& b);  // every field, bit for bit

struct ColmapReadOptions {
  // Refuse files, and declared counts, that need more than this many bytes.
  // 0: ceres_sqrtba::AvailableMemoryInBytes().
  int64_t memory_limit_in_bytes = 0;
  // Bytes the caller needs per observation (track element) once the model is
  // read (colmap_bundle_adjuster: kSolveBytesPerObservation), counted in the
  // same check.
  int64_t solve_bytes_per_observation = 0;
};

// The format of the model in `folder`, found as COLMAP does: binary when
// cameras.bin, images.bin and points3D.bin are all there, else text when the
// three .txt files are; otherwise false with a message.
bool DetectColmapFormat(const std::string& folder, ColmapFormat* format,
                        std::string* error);

// Reads the model in `folder` (format detected); on failure false, one line
// in *error, and an empty *model.
bool ReadColmapModel(const std::string& folder, const ColmapReadOptions& options,
                     ColmapModel* model, ColmapFormat* format, std::string* error);

// The same from the three files' bytes; messages name `folder`/<file>.
bool ReadColmapModelFromMemory(ColmapFormat format, const std::string& folder,
                               const std::string& cameras, const std::string& images,
                               const std::string& points3D,
                               const ColmapReadOptions& options, ColmapModel* model,
                               std::string* error);

// The three files of `format` as bytes.
void SerializeColmapModel(const ColmapModel& model, ColmapFormat format,
                          std::string* cameras, std::string* images, std::string* points3D);

// Writes the three files into the existing folder `folder` (replacing them).
bool WriteColmapModel(const ColmapModel& model, const std::string& folder,
                      ColmapFormat format, std::string* error);

// "cameras.txt" etc.
std::string ColmapFileName(const char* stem, ColmapFormat format);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_H_
