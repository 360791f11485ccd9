// A COLMAP sparse model (the `sparse/0` folder COLMAP writes): cameras,
// images with their 2D points, and 3D points with their tracks, read from and
// written to COLMAP's text (cameras.txt, images.txt, points3D.txt) and binary
// (cameras.bin, images.bin, points3D.bin) files; and, in models written by
// COLMAP 3.12 and later (4.x, its global_mapper), rigs and frames
// (rigs.*, frames.*).
//
// The layouts follow COLMAP's reconstruction I/O (src/colmap/scene/
// reconstruction_io_{text,binary}.cc; little-endian binary; text with '#'
// comment lines and two lines per image). Rigs and frames have COLMAP's
// semantics: a rig is a reference sensor and further sensors, each with its
// sensor_from_rig; a frame is one capture of a rig, with its rig_from_world
// and the data (images) it holds; an image's pose is
//
//   cam_from_world = sensor_from_rig(its camera in the frame's rig)
//                    * rig_from_world(its frame)
//
// (sensor_from_rig = identity for the reference sensor), and the pose stored
// in images.* is not used, as COLMAP does not use it when frames are present:
// the reader replaces every image's pose by this one. A model without rig and
// frame files (legacy, up to 3.11) keeps the poses of images.*; COLMAP reads
// it as one rig per camera and one frame per image.
//
// Reading checks everything before the model is used: a bad file gives one
// error line naming the file and the line (text) or the byte offset (binary)
// of what is wrong, and an empty model.
#ifndef CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_H_
#define CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
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

// COLMAP's SensorType (its values are the files' integers).
enum class ColmapSensorType : int32_t { kInvalid = -1, kCamera = 0, kImu = 1 };

struct ColmapSensorId {
  ColmapSensorType type = ColmapSensorType::kCamera;
  uint32_t id = 0;  // a camera id for kCamera
};

// A rigid transform as COLMAP's files hold it: rotation quaternion
// (w, x, y, z), then translation; target_from_source, x_target = R x + t.
struct ColmapRigid3 {
  double qvec[4] = {1.0, 0.0, 0.0, 0.0};
  double tvec[3] = {0.0, 0.0, 0.0};
};

// a * b: the transform that applies b, then a (as COLMAP's Rigid3d): the
// rotation a.q * b.q normalized, the translation a.t + R(a.q) b.t, with b.t
// rotated by the formula for a unit quaternion (as Eigen, whose quaternions
// COLMAP uses, rotates vectors).
ColmapRigid3 operator*(const ColmapRigid3& a, const ColmapRigid3& b);
// The inverse transform: conjugate quaternion over its squared norm,
// translation -R(q^-1) t (as COLMAP's Inverse(Rigid3d)).
ColmapRigid3 Inverse(const ColmapRigid3& a);

// "CAMERA", "IMU" (as COLMAP's text files spell them), "INVALID" otherwise.
const char* ColmapSensorTypeName(ColmapSensorType type);

struct ColmapRigSensor {
  ColmapSensorId sensor;
  // COLMAP allows a sensor whose calibration is not known yet (no pose);
  // its images cannot have a pose then (the reader refuses such images).
  bool has_sensor_from_rig = false;
  ColmapRigid3 sensor_from_rig;
};

struct ColmapRig {
  uint32_t id = 0;
  // A rig of no sensors has no reference sensor (COLMAP writes 0 sensors).
  bool has_ref_sensor = false;
  ColmapSensorId ref_sensor;
  std::vector<ColmapRigSensor> sensors;  // the non-reference ones, in file order
};

struct ColmapDataId {
  ColmapSensorId sensor;
  uint64_t id = 0;  // an image id for a camera
};

struct ColmapFrame {
  uint32_t id = 0;
  uint32_t rig_id = 0;
  ColmapRigid3 rig_from_world;
  std::vector<ColmapDataId> data_ids;  // in file order
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

// The model in file order (the writer keeps it, so that an unchanged legacy
// model is written back byte for byte in binary form; a rig model too, but
// for the images' poses, which are the ones derived from the frames).
struct ColmapModel {
  std::vector<ColmapCamera> cameras;
  std::vector<ColmapImage> images;
  std::vector<ColmapPoint3D> points3D;
  // Whether the model has rig and frame files (read from them, written with
  // them): the layout is kept from reading to writing.
  bool has_rigs_and_frames = false;
  std::vector<ColmapRig> rigs;      // empty without rigs_and_frames
  std::vector<ColmapFrame> frames;  // empty without rigs_and_frames

  int64_t NumTrackElements() const;
  // Index in cameras / images / rigs / frames of the one with this id; -1
  // when none. Built by the reader (BuildIndex after changing ids, adding
  // records or changing frames' data by hand).
  int CameraIndex(uint32_t id) const;
  int ImageIndex(uint32_t id) const;
  int RigIndex(uint32_t id) const;
  int FrameIndex(uint32_t id) const;
  // Of image i (index in images): the index of its frame in frames, and the
  // index of its camera's sensor in that frame's rig's sensors (-1: the
  // reference sensor). -1 and -1 in a legacy model, and for an index out of
  // range. Built by BuildIndex, which needs a model whose references hold
  // (the reader checks them; an image no frame lists gets -1 and -1).
  int ImageFrameIndex(int image) const;
  int ImageSensorIndex(int image) const;
  void BuildIndex();

 private:
  std::vector<std::pair<uint32_t, int>> camera_index_;  // sorted by id
  std::vector<std::pair<uint32_t, int>> image_index_;
  std::vector<std::pair<uint32_t, int>> rig_index_;
  std::vector<std::pair<uint32_t, int>> frame_index_;
  std::vector<int> image_frame_;   // per image
  std::vector<int> image_sensor_;  // per image
};

// cam_from_world of image i as COLMAP computes it (above): from its frame
// and rig in a rig model (rig_from_world itself, bit for bit, for the
// reference sensor), the images.* pose in a legacy one. Uses the model's
// index (BuildIndex).
ColmapRigid3 ColmapCamFromWorld(const ColmapModel& model, int image);

// Every field, bit for bit (rigs and frames too; not the index).
bool operator==(const ColmapModel& a, const ColmapModel& b);

// A model's files as bytes: the three of every model, and rigs.* and
// frames.* (absent in a legacy model; the reader refuses one without the
// other).
struct ColmapFiles {
  std::string cameras;
  std::string images;
  std::string points3D;
  std::optional<std::string> rigs;
  std::optional<std::string> frames;
};

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
// three .txt files are; otherwise false with a message. rigs.* and frames.*
// of that format are read when present (both or neither: one without the
// other is refused, with a message naming both).
bool DetectColmapFormat(const std::string& folder, ColmapFormat* format,
                        std::string* error);

// Reads the model in `folder` (format detected); on failure false, one line
// in *error, and an empty *model. With rigs.* and frames.* the model is a
// rig model (has_rigs_and_frames), checked as COLMAP reads it: unique ids,
// each frame's rig there, each image in exactly one frame (as data of its
// camera, which is a sensor of the frame's rig, with a sensor_from_rig
// unless it is the reference sensor), usable quaternions, finite values;
// then every image's pose is the one derived from its frame and rig
// (ColmapCamFromWorld), as COLMAP does not use the pose images.* holds.
bool ReadColmapModel(const std::string& folder, const ColmapReadOptions& options,
                     ColmapModel* model, ColmapFormat* format, std::string* error);

// The same from the files' bytes; messages name `folder`/<file>.
bool ReadColmapModelFromMemory(ColmapFormat format, const std::string& folder,
                               const ColmapFiles& files, const ColmapReadOptions& options,
                               ColmapModel* model, std::string* error);
// A legacy model from its three files.
bool ReadColmapModelFromMemory(ColmapFormat format, const std::string& folder,
                               const std::string& cameras, const std::string& images,
                               const std::string& points3D,
                               const ColmapReadOptions& options, ColmapModel* model,
                               std::string* error);

// The files of `format` as bytes: five for a rig model (the images' poses
// the ones derived from frames and rigs, ColmapCamFromWorld), three for a
// legacy one (rigs and frames left absent). Records in the model's order.
void SerializeColmapModel(const ColmapModel& model, ColmapFormat format, ColmapFiles* files);
// The three files cameras.*, images.*, points3D.* only.
void SerializeColmapModel(const ColmapModel& model, ColmapFormat format,
                          std::string* cameras, std::string* images, std::string* points3D);

// Whether `folder` (an existing folder) can take the model in `format`
// without holding files that disagree with it afterwards: false, with a
// message naming the files, when it holds model files of the other format
// (cameras.*, images.*, points3D.*, rigs.*, frames.*: COLMAP reads binary
// whenever cameras.bin, images.bin and points3D.bin are all there, and a
// stale model of the other format would be read, or left beside, instead),
// or, for a legacy model, rigs.* or frames.* of its format, which it would
// not replace (COLMAP would take the images' poses from the old frames).
bool CheckColmapOutputFolder(const ColmapModel& model, const std::string& folder,
                             ColmapFormat format, std::string* error);

// Writes the model's files (five for a rig model, three for a legacy one)
// into the existing folder `folder`, replacing them: first checked
// (CheckColmapOutputFolder; text needs image names without white space),
// then each file written under a temporary name in the folder and renamed
// into place once all are written, so that a failed write leaves the old
// files as they were. False with a message otherwise.
bool WriteColmapModel(const ColmapModel& model, const std::string& folder,
                      ColmapFormat format, std::string* error);

// "cameras.txt" etc. (stems: cameras, images, points3D, rigs, frames).
std::string ColmapFileName(const char* stem, ColmapFormat format);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_H_
