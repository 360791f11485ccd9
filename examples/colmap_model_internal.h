// What the files of the COLMAP model reader and writer share (not part of
// colmap_model.h's API):
//
//   colmap_model.cc          the model's methods, indexes and poses, format
//                            detection, reading the files, writing the folder
//   colmap_text_reader.cc    cameras/images/points3D/rigs/frames.txt
//   colmap_binary_reader.cc  the same .bin files
//   colmap_model_checks.cc   the checks across files (ids that refer to other
//                            records), the images' poses from their frames
//   colmap_model_writer.cc   the files' bytes (SerializeColmapModel)
//
// A reader parses one file at a time into the model, noting where each
// record was (ReadContext::positions), so that a check across files can
// name the line or byte offset of what is wrong; the first problem ends the
// read with one message (ReadContext::Fail).
#ifndef CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_INTERNAL_H_
#define CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_INTERNAL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "colmap_model.h"

namespace ceres_sqrtba {
namespace examples {
namespace colmap_internal {

// File stems (ColmapFileName adds .txt or .bin).
constexpr char kCameras[] = "cameras";
constexpr char kImages[] = "images";
constexpr char kPoints3D[] = "points3D";
constexpr char kRigs[] = "rigs";
constexpr char kFrames[] = "frames";

// Bytes a record takes at least in the binary files (without its variable
// parts), used to check declared counts against the bytes that remain.
constexpr int64_t kMinCameraBytes = 4 + 4 + 8 + 8;
constexpr int64_t kMinImageBytes = 4 + 7 * 8 + 4 + 1 + 8;
constexpr int64_t kPoint2DBytes = 8 + 8 + 8;
constexpr int64_t kMinPoint3DBytes = 8 + 3 * 8 + 3 + 8 + 8;
constexpr int64_t kTrackElementBytes = 4 + 4;
constexpr int64_t kMinRigBytes = 4 + 4;                   // id, number of sensors
constexpr int64_t kMinRigSensorBytes = 4 + 4 + 1;         // type, id, has_pose
constexpr int64_t kMinFrameBytes = 4 + 4 + 7 * 8 + 4;     // id, rig, pose, count
constexpr int64_t kDataIdBytes = 4 + 4 + 8;               // type, sensor id, id

std::string Join(const std::string& folder, const std::string& name);
int64_t MemoryLimit(const ColmapReadOptions& options);
std::string MiB(double bytes);
// Text shown in a message: quoted, at most 40 characters, control bytes
// escaped.
std::string Quote(const std::string& text);
// An unsigned integer of at most `max`, without sign but an optional '+'.
bool ParseUnsigned(const std::string& text, uint64_t max, uint64_t* value);
// A finite double; false with a reason otherwise.
bool ParseFinite(const std::string& text, double* value, std::string* why);
// "CAMERA 2": a sensor as messages name it.
std::string SensorText(const ColmapSensorId& sensor);
// Of `sensor` in `rig`: -1 for the reference sensor, the index in
// rig.sensors, or kNotInRig.
constexpr int kNotInRig = -2;
int FindRigSensor(const ColmapRig& rig, const ColmapSensorId& sensor);
// Whether the 4 doubles make a quaternion that can be normalized.
bool UsableQuaternion(const double* q);

// The lines of a text file, with their numbers, split into fields.
class TextLines {
 public:
  explicit TextLines(const std::string& data) : data_(data) {}

  // The next line (raw, its number in *line_number); false at the end.
  bool NextRaw(std::vector<std::string>* fields, int64_t* line_number);
  // The next line that is neither blank nor a comment.
  bool NextData(std::vector<std::string>* fields, int64_t* line_number) {
    while (NextRaw(fields, line_number)) {
      if (!fields->empty() && (*fields)[0][0] != '#') return true;
    }
    return false;
  }

 private:
  const std::string& data_;
  size_t pos_ = 0;
  int64_t line_ = 0;
};

// Little-endian fields of a binary file, read from its start; knows its
// byte offset.
class Cursor {
 public:
  explicit Cursor(const std::string& data) : data_(data) {}
  int64_t offset() const { return static_cast<int64_t>(pos_); }
  int64_t remaining() const { return static_cast<int64_t>(data_.size() - pos_); }

  template <typename T>
  bool Read(T* value) {
    if (remaining() < static_cast<int64_t>(sizeof(T))) return false;
    std::memcpy(value, data_.data() + pos_, sizeof(T));  // little-endian hosts
    pos_ += sizeof(T);
    return true;
  }
  // A '\0'-terminated string; false when the data ends first.
  bool ReadString(std::string* value) {
    const size_t end = data_.find('\0', pos_);
    if (end == std::string::npos) return false;
    value->assign(data_, pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }

 private:
  const std::string& data_;
  size_t pos_ = 0;
};

static_assert(sizeof(double) == 8, "COLMAP's binary files hold 8-byte doubles");

// Where each record was read: its line (text) or byte offset (binary).
struct Positions {
  std::vector<int64_t> images;
  // Of each image's 2D points: their line (text), or the first one's offset
  // (binary; the others follow every kPoint2DBytes).
  std::vector<int64_t> points2D;
  std::vector<int64_t> points3D;
  std::vector<int64_t> rigs;
  // Per rig, of each non-reference sensor (in rig.sensors' order).
  std::vector<std::vector<int64_t>> rig_sensors;
  std::vector<int64_t> frames;
  // Per frame, of each data id.
  std::vector<std::vector<int64_t>> data_ids;
};

// One read of a model: the folder and format its messages name, the file
// being read, and the one error line.
class ReadContext {
 public:
  ReadContext(const std::string& folder, ColmapFormat format, std::string* error)
      : folder_(folder), format_(format), error_(error) {}

  ColmapFormat format() const { return format_; }
  // The file later messages name: <folder>/<stem>.txt or .bin.
  void SetFile(const char* stem) { file_ = Join(folder_, Name(stem)); }
  // <stem>.txt or .bin, as messages name another file.
  std::string Name(const char* stem) const { return ColmapFileName(stem, format_); }
  std::string Path(const char* stem) const { return Join(folder_, Name(stem)); }

  // The message "<file>:<line>: what" (text), "<file>: byte <offset>: what"
  // (binary) or, for position -1, "<file>: what"; returns false.
  bool Fail(int64_t position, const std::string& what);
  // The file ends inside `what`, at the cursor.
  bool Truncated(const Cursor& cursor, const std::string& what);
  // A declared count checked against the bytes left: each record takes at
  // least min_bytes, so a count cannot ask for more memory than a small
  // multiple of the file's size (and the files were checked against the
  // memory available). Messages name the count's offset: count_position, or
  // for -1 the u64 just read.
  bool CheckCount(const Cursor& cursor, uint64_t count, int64_t min_bytes,
                  const std::string& what, int64_t count_position = -1);
  // `owner`'s quaternion q (at `position`) can be normalized.
  bool CheckQuaternion(const double* q, int64_t position, const std::string& owner);

  Positions positions;

 private:
  const std::string folder_;
  const ColmapFormat format_;
  std::string* error_;
  std::string file_;
};

// Each parses one file into *model (appending in file order, ids unique
// within the file) and notes the records' positions; false with the message
// at the first problem.
bool ParseCamerasText(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParseImagesText(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParsePoints3DText(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParseRigsText(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParseFramesText(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParseCamerasBinary(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParseImagesBinary(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParsePoints3DBinary(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParseRigsBinary(const std::string& data, ReadContext* context, ColmapModel* model);
bool ParseFramesBinary(const std::string& data, ReadContext* context, ColmapModel* model);

// The checks across cameras, images and points3D (each image's camera, each
// 2D point's 3D point, each track element's image and 2D point, both sides
// agreeing); builds the model's index.
bool CheckPointReferences(ReadContext* context, ColmapModel* model);
// The checks across rigs, frames, cameras and images of a rig model (after
// CheckPointReferences), then every image's pose replaced by the one derived
// from its frame and rig; rebuilds the index.
bool CheckRigsAndFrames(ReadContext* context, ColmapModel* model);

}  // namespace colmap_internal
}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_COLMAP_MODEL_INTERNAL_H_
