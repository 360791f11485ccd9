// Reading and writing COLMAP models (colmap_model.h).
//
// Each file is read whole into memory (its size checked against the memory
// available first), then parsed: text line by line, binary field by field
// from a cursor that knows its byte offset. Counts declared in binary files
// are checked against the bytes that remain before anything is reserved for
// them, so a few bytes cannot make the reader allocate gigabytes. Once the
// three files are parsed, the ids are cross-checked (each image's camera,
// each 2D point's 3D point, each track element's image and 2D point, and that
// the two sides agree).
#include "colmap_model.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <unordered_map>

#include "ceres_sqrtba/solver.h"
#include "colmap_camera_models.h"

namespace ceres_sqrtba {
namespace examples {

namespace {

constexpr char kCameras[] = "cameras";
constexpr char kImages[] = "images";
constexpr char kPoints3D[] = "points3D";

// Bytes a record takes at least in the binary files (without its variable
// parts), used to check declared counts against the bytes that remain.
constexpr int64_t kMinCameraBytes = 4 + 4 + 8 + 8;
constexpr int64_t kMinImageBytes = 4 + 7 * 8 + 4 + 1 + 8;
constexpr int64_t kPoint2DBytes = 8 + 8 + 8;
constexpr int64_t kMinPoint3DBytes = 8 + 3 * 8 + 3 + 8 + 8;
constexpr int64_t kTrackElementBytes = 4 + 4;

std::string Join(const std::string& folder, const std::string& name) {
  if (folder.empty()) return name;
  if (folder.back() == '/') return folder + name;
  return folder + "/" + name;
}

int64_t MemoryLimit(const ColmapReadOptions& options) {
  if (options.memory_limit_in_bytes > 0) return options.memory_limit_in_bytes;
  return AvailableMemoryInBytes();
}

std::string MiB(double bytes) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.0f MiB", bytes / 1048576.0);
  return text;
}

// Text shown in a message: at most 40 characters, control bytes escaped.
std::string Quote(const std::string& text) {
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < 40; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", c);
      out += escaped;
    } else {
      out.push_back(text[i]);
    }
  }
  if (text.size() > 40) out += "...";
  return out + "'";
}

bool ParseUnsigned(const std::string& text, uint64_t max, uint64_t* value) {
  if (text.empty() || text[0] == '-') return false;
  const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(begin, end, *value);
  return result.ec == std::errc() && result.ptr == end && begin != end && *value <= max;
}

// A finite double; false with a reason otherwise.
bool ParseFinite(const std::string& text, double* value, std::string* why) {
  const char* begin = text.data() + (!text.empty() && text[0] == '+' ? 1 : 0);
  const char* end = text.data() + text.size();
  const auto result = std::from_chars(begin, end, *value);
  if (result.ptr != end || begin == end ||
      (result.ec != std::errc() && result.ec != std::errc::result_out_of_range)) {
    *why = Quote(text) + " is not a number";
    return false;
  }
  if (result.ec == std::errc::result_out_of_range) {
    *value = std::strtod(std::string(begin, end).c_str(), nullptr);
  }
  if (!std::isfinite(*value)) {
    *why = "non-finite number " + Quote(text);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- text ----

// The lines of a text file, with their numbers, split into fields.
class TextLines {
 public:
  explicit TextLines(const std::string& data) : data_(data) {}

  // The next line (raw, its number in *line_number); false at the end.
  bool NextRaw(std::vector<std::string>* fields, int64_t* line_number) {
    if (pos_ >= data_.size()) return false;
    size_t end = data_.find('\n', pos_);
    if (end == std::string::npos) end = data_.size();
    ++line_;
    *line_number = line_;
    fields->clear();
    size_t i = pos_;
    while (i < end) {
      while (i < end && IsSpace(data_[i])) ++i;
      size_t j = i;
      while (j < end && !IsSpace(data_[j])) ++j;
      if (j > i) fields->emplace_back(data_, i, j - i);
      i = j;
    }
    pos_ = end + 1;
    return true;
  }

  // The next line that is neither blank nor a comment.
  bool NextData(std::vector<std::string>* fields, int64_t* line_number) {
    while (NextRaw(fields, line_number)) {
      if (!fields->empty() && (*fields)[0][0] != '#') return true;
    }
    return false;
  }

  int64_t line() const { return line_; }

 private:
  static bool IsSpace(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  }
  const std::string& data_;
  size_t pos_ = 0;
  int64_t line_ = 0;
};

// ---------------------------------------------------------------- binary --

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

// ---------------------------------------------------------------- parser --

class Reader {
 public:
  Reader(const std::string& folder, ColmapFormat format, const ColmapReadOptions& options,
         ColmapModel* model, std::string* error)
      : folder_(folder), format_(format), options_(options), model_(model), error_(error) {}

  bool Parse(const std::string& cameras, const std::string& images,
             const std::string& points3D) {
    const int64_t limit = MemoryLimit(options_);
    const double file_bytes = static_cast<double>(cameras.size()) +
                              static_cast<double>(images.size()) +
                              static_cast<double>(points3D.size());
    if (limit > 0 && 3.0 * file_bytes > static_cast<double>(limit)) {
      // The model takes about as much memory as its files, and the files are
      // held while it is built.
      file_ = Join(folder_, ColmapFileName(kImages, format_));
      return Fail(-1, "the model's files (" + MiB(file_bytes) +
                          ") need more than the " + MiB(static_cast<double>(limit)) +
                          " of memory available to be read");
    }
    if (format_ == ColmapFormat::kText) {
      if (!ParseCamerasText(cameras) || !ParseImagesText(images) ||
          !ParsePoints3DText(points3D)) {
        return false;
      }
    } else {
      if (!ParseCamerasBinary(cameras) || !ParseImagesBinary(images) ||
          !ParsePoints3DBinary(points3D)) {
        return false;
      }
    }
    if (!CrossCheck()) return false;
    const double observations = static_cast<double>(model_->NumTrackElements());
    const double need = observations * static_cast<double>(options_.solve_bytes_per_observation);
    if (limit > 0 && options_.solve_bytes_per_observation > 0 &&
        need > static_cast<double>(limit)) {
      file_ = Join(folder_, ColmapFileName(kPoints3D, format_));
      return Fail(-1, "the model's " + std::to_string(model_->NumTrackElements()) +
                          " observations need " + MiB(need) + " to solve, more than the " +
                          MiB(static_cast<double>(limit)) + " of memory available");
    }
    return true;
  }

 private:
  // position: a line number (text) or byte offset (binary); -1: the file.
  bool Fail(int64_t position, const std::string& what) {
    if (position < 0) {
      *error_ = file_ + ": " + what;
    } else if (format_ == ColmapFormat::kText) {
      *error_ = file_ + ":" + std::to_string(position) + ": " + what;
    } else {
      *error_ = file_ + ": byte " + std::to_string(position) + ": " + what;
    }
    return false;
  }

  bool Truncated(const Cursor& cursor, const std::string& what) {
    return Fail(cursor.offset(), "file ends inside " + what + " (truncated file?)");
  }

  // A declared count checked against the bytes left: each record takes at
  // least min_bytes, so a count cannot ask for more memory than a small
  // multiple of the file's size (and the files were checked against the
  // memory available).
  bool CheckCount(const Cursor& cursor, uint64_t count, int64_t min_bytes,
                  const std::string& what) {
    const double need = static_cast<double>(count) * static_cast<double>(min_bytes);
    if (need > static_cast<double>(cursor.remaining())) {
      // (The product may exceed every integer type: printed from the double.)
      char need_text[64];
      std::snprintf(need_text, sizeof(need_text), "%.0f", need);
      return Fail(cursor.offset() - 8,
                  "declares " + std::to_string(count) + " " + what + ", which need at least " +
                      need_text + " more bytes, but only " + std::to_string(cursor.remaining()) +
                      " remain (a count that does not match the data, or a truncated file)");
    }
    return true;
  }

  bool CheckQuaternion(const double* q, int64_t position, uint32_t image_id) {
    const double norm2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (!(norm2 > 1e-20) || !std::isfinite(norm2)) {
      return Fail(position, "image " + std::to_string(image_id) +
                                ": the rotation quaternion has no usable norm");
    }
    return true;
  }

  bool AddCamera(ColmapCamera camera, int64_t position) {
    if (!seen_cameras_.emplace(camera.id, 0).second) {
      return Fail(position, "camera id " + std::to_string(camera.id) + " appears twice");
    }
    model_->cameras.push_back(std::move(camera));
    return true;
  }

  // ---- text

  bool ParseCamerasText(const std::string& data) {
    file_ = Join(folder_, ColmapFileName(kCameras, format_));
    TextLines lines(data);
    std::vector<std::string> f;
    int64_t line = 0;
    while (lines.NextData(&f, &line)) {
      uint64_t value = 0;
      ColmapCamera camera;
      if (!ParseUnsigned(f[0], UINT32_MAX, &value)) {
        return Fail(line, "camera id " + Quote(f[0]) + " is not an integer in [0, 2^32)");
      }
      camera.id = static_cast<uint32_t>(value);
      if (f.size() < 4) {
        return Fail(line, "expected 'CAMERA_ID MODEL WIDTH HEIGHT PARAMS...', found " +
                              std::to_string(f.size()) + " fields");
      }
      const colmap_models::ModelInfo* info = colmap_models::FindModel(f[1]);
      if (info == nullptr) {
        return Fail(line, "unknown or unsupported camera model " + Quote(f[1]) +
                              " (supported: " + colmap_models::SupportedModelNames() + ")");
      }
      camera.model_id = info->id;
      if (!ParseUnsigned(f[2], UINT64_MAX, &camera.width) ||
          !ParseUnsigned(f[3], UINT64_MAX, &camera.height)) {
        return Fail(line, "image size " + Quote(f[2] + " " + f[3]) +
                              " is not two unsigned integers");
      }
      const int given = static_cast<int>(f.size()) - 4;
      if (given != info->num_params) {
        return Fail(line, std::string("camera model ") + info->name + " has " +
                              std::to_string(info->num_params) + " parameters (" +
                              info->params_info + "), found " + std::to_string(given));
      }
      camera.params.resize(info->num_params);
      for (int k = 0; k < info->num_params; ++k) {
        std::string why;
        if (!ParseFinite(f[4 + k], &camera.params[k], &why)) {
          return Fail(line, "camera " + std::to_string(camera.id) + " parameter " +
                                std::to_string(k) + ": " + why);
        }
      }
      if (!AddCamera(std::move(camera), line)) return false;
    }
    return true;
  }

  bool ParseImagesText(const std::string& data) {
    file_ = Join(folder_, ColmapFileName(kImages, format_));
    TextLines lines(data);
    std::vector<std::string> f;
    int64_t line = 0;
    while (lines.NextData(&f, &line)) {
      ColmapImage image;
      uint64_t value = 0;
      if (!ParseUnsigned(f[0], UINT32_MAX, &value)) {
        return Fail(line, "image id " + Quote(f[0]) + " is not an integer in [0, 2^32)");
      }
      image.id = static_cast<uint32_t>(value);
      if (f.size() != 10) {
        return Fail(line, "expected 'IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME' (10 fields, "
                          "a name without spaces), found " + std::to_string(f.size()));
      }
      for (int k = 0; k < 7; ++k) {
        double* target = k < 4 ? &image.qvec[k] : &image.tvec[k - 4];
        std::string why;
        if (!ParseFinite(f[1 + k], target, &why)) {
          return Fail(line, "image " + std::to_string(image.id) + " pose: " + why);
        }
      }
      if (!CheckQuaternion(image.qvec, line, image.id)) return false;
      if (!ParseUnsigned(f[8], UINT32_MAX, &value)) {
        return Fail(line, "camera id " + Quote(f[8]) + " is not an integer in [0, 2^32)");
      }
      image.camera_id = static_cast<uint32_t>(value);
      image.name = f[9];
      if (image.name.find('\0') != std::string::npos) {
        return Fail(line, "image " + std::to_string(image.id) + ": the name holds a zero byte");
      }
      image_positions_.push_back(line);
      // The 2D points: the very next line, empty when the image has none.
      int64_t points_line = 0;
      if (!lines.NextRaw(&f, &points_line)) {
        return Fail(line + 1, "file ends before the 2D point line of image " +
                                  std::to_string(image.id));
      }
      if (f.size() % 3 != 0) {
        return Fail(points_line, "image " + std::to_string(image.id) +
                                     ": expected (X Y POINT3D_ID) triples, found " +
                                     std::to_string(f.size()) + " fields");
      }
      image.points2D.resize(f.size() / 3);
      for (size_t k = 0; k < image.points2D.size(); ++k) {
        ColmapPoint2D& point = image.points2D[k];
        std::string why;
        if (!ParseFinite(f[3 * k], &point.x, &why) ||
            !ParseFinite(f[3 * k + 1], &point.y, &why)) {
          return Fail(points_line, "image " + std::to_string(image.id) + " 2D point " +
                                       std::to_string(k) + ": " + why);
        }
        if (f[3 * k + 2] == "-1") {
          point.point3D_id = kInvalidPoint3DId;
        } else if (!ParseUnsigned(f[3 * k + 2], UINT64_MAX - 1, &point.point3D_id)) {
          return Fail(points_line, "image " + std::to_string(image.id) + " 2D point " +
                                       std::to_string(k) + ": 3D point id " +
                                       Quote(f[3 * k + 2]) + " is neither -1 nor an id");
        }
      }
      point_line_positions_.push_back(points_line);
      if (!AddImage(std::move(image), line)) return false;
    }
    return true;
  }

  bool AddImage(ColmapImage image, int64_t position) {
    if (!seen_images_.emplace(image.id, 0).second) {
      return Fail(position, "image id " + std::to_string(image.id) + " appears twice");
    }
    model_->images.push_back(std::move(image));
    return true;
  }

  bool AddPoint(ColmapPoint3D point, int64_t position) {
    if (!seen_points_.emplace(point.id, 0).second) {
      return Fail(position, "3D point id " + std::to_string(point.id) + " appears twice");
    }
    point_positions_.push_back(position);
    model_->points3D.push_back(std::move(point));
    return true;
  }

  bool ParsePoints3DText(const std::string& data) {
    file_ = Join(folder_, ColmapFileName(kPoints3D, format_));
    TextLines lines(data);
    std::vector<std::string> f;
    int64_t line = 0;
    while (lines.NextData(&f, &line)) {
      ColmapPoint3D point;
      if (!ParseUnsigned(f[0], UINT64_MAX - 1, &point.id)) {
        return Fail(line, "3D point id " + Quote(f[0]) + " is not an unsigned integer");
      }
      if (f.size() < 8 || (f.size() - 8) % 2 != 0) {
        return Fail(line, "expected 'POINT3D_ID X Y Z R G B ERROR' and (IMAGE_ID POINT2D_IDX) "
                          "pairs, found " + std::to_string(f.size()) + " fields");
      }
      std::string why;
      for (int k = 0; k < 3; ++k) {
        if (!ParseFinite(f[1 + k], &point.xyz[k], &why)) {
          return Fail(line, "3D point " + std::to_string(point.id) + ": " + why);
        }
      }
      for (int k = 0; k < 3; ++k) {
        uint64_t value = 0;
        if (!ParseUnsigned(f[4 + k], 255, &value)) {
          return Fail(line, "3D point " + std::to_string(point.id) + ": color " +
                                Quote(f[4 + k]) + " is not an integer in [0, 255]");
        }
        point.color[k] = static_cast<uint8_t>(value);
      }
      if (!ParseFinite(f[7], &point.error, &why)) {
        return Fail(line, "3D point " + std::to_string(point.id) + " error: " + why);
      }
      point.track.resize((f.size() - 8) / 2);
      for (size_t k = 0; k < point.track.size(); ++k) {
        uint64_t image_id = 0;
        uint64_t idx = 0;
        if (!ParseUnsigned(f[8 + 2 * k], UINT32_MAX, &image_id) ||
            !ParseUnsigned(f[9 + 2 * k], UINT32_MAX, &idx)) {
          return Fail(line, "3D point " + std::to_string(point.id) + " track element " +
                                std::to_string(k) + ": " + Quote(f[8 + 2 * k] + " " + f[9 + 2 * k]) +
                                " is not two integers in [0, 2^32)");
        }
        point.track[k].image_id = static_cast<uint32_t>(image_id);
        point.track[k].point2D_idx = static_cast<uint32_t>(idx);
      }
      if (!AddPoint(std::move(point), line)) return false;
    }
    return true;
  }

  // ---- binary

  bool ParseCamerasBinary(const std::string& data) {
    file_ = Join(folder_, ColmapFileName(kCameras, format_));
    Cursor c(data);
    uint64_t count = 0;
    if (!c.Read(&count)) return Truncated(c, "the number of cameras");
    if (!CheckCount(c, count, kMinCameraBytes, "cameras")) return false;
    model_->cameras.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      const int64_t start = c.offset();
      ColmapCamera camera;
      int32_t model_id = 0;
      if (!c.Read(&camera.id) || !c.Read(&model_id) || !c.Read(&camera.width) ||
          !c.Read(&camera.height)) {
        return Truncated(c, "camera " + std::to_string(i) + " of " + std::to_string(count));
      }
      const colmap_models::ModelInfo* info = colmap_models::FindModel(model_id);
      if (info == nullptr) {
        return Fail(start + 4, "camera " + std::to_string(camera.id) +
                                   ": unknown or unsupported camera model id " +
                                   std::to_string(model_id) + " (supported: " +
                                   colmap_models::SupportedModelNames() + ")");
      }
      camera.model_id = info->id;
      camera.params.resize(info->num_params);
      for (int k = 0; k < info->num_params; ++k) {
        const int64_t at = c.offset();
        if (!c.Read(&camera.params[k])) {
          return Truncated(c, "the parameters of camera " + std::to_string(camera.id));
        }
        if (!std::isfinite(camera.params[k])) {
          return Fail(at, "camera " + std::to_string(camera.id) + " parameter " +
                              std::to_string(k) + " is not finite");
        }
      }
      if (!AddCamera(std::move(camera), start)) return false;
    }
    return TrailingBytes(c);
  }

  bool TrailingBytes(const Cursor& c) {
    if (c.remaining() != 0) {
      return Fail(c.offset(), std::to_string(c.remaining()) +
                                  " bytes after the last record (the count at the start "
                                  "does not match the data)");
    }
    return true;
  }

  bool ParseImagesBinary(const std::string& data) {
    file_ = Join(folder_, ColmapFileName(kImages, format_));
    Cursor c(data);
    uint64_t count = 0;
    if (!c.Read(&count)) return Truncated(c, "the number of images");
    if (!CheckCount(c, count, kMinImageBytes, "images")) return false;
    model_->images.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      const int64_t start = c.offset();
      ColmapImage image;
      if (!c.Read(&image.id)) return Truncated(c, "image " + std::to_string(i));
      for (int k = 0; k < 7; ++k) {
        const int64_t at = c.offset();
        double* target = k < 4 ? &image.qvec[k] : &image.tvec[k - 4];
        if (!c.Read(target)) return Truncated(c, "the pose of image " + std::to_string(image.id));
        if (!std::isfinite(*target)) {
          return Fail(at, "image " + std::to_string(image.id) + ": pose value " +
                              std::to_string(k) + " is not finite");
        }
      }
      if (!CheckQuaternion(image.qvec, start + 4, image.id)) return false;
      if (!c.Read(&image.camera_id)) return Truncated(c, "image " + std::to_string(image.id));
      if (!c.ReadString(&image.name)) {
        return Truncated(c, "the name of image " + std::to_string(image.id) +
                                " (no terminating zero byte)");
      }
      uint64_t num_points = 0;
      if (!c.Read(&num_points)) return Truncated(c, "image " + std::to_string(image.id));
      if (!CheckCount(c, num_points, kPoint2DBytes,
                      "2D points in image " + std::to_string(image.id))) {
        return false;
      }
      image.points2D.resize(num_points);
      point_line_positions_.push_back(c.offset());
      for (uint64_t k = 0; k < num_points; ++k) {
        ColmapPoint2D& point = image.points2D[k];
        const int64_t at = c.offset();
        if (!c.Read(&point.x) || !c.Read(&point.y) || !c.Read(&point.point3D_id)) {
          return Truncated(c, "the 2D points of image " + std::to_string(image.id));
        }
        if (!std::isfinite(point.x) || !std::isfinite(point.y)) {
          return Fail(at, "image " + std::to_string(image.id) + " 2D point " +
                              std::to_string(k) + " is not finite");
        }
      }
      image_positions_.push_back(start);
      if (!AddImage(std::move(image), start)) return false;
    }
    return TrailingBytes(c);
  }

  bool ParsePoints3DBinary(const std::string& data) {
    file_ = Join(folder_, ColmapFileName(kPoints3D, format_));
    Cursor c(data);
    uint64_t count = 0;
    if (!c.Read(&count)) return Truncated(c, "the number of 3D points");
    if (!CheckCount(c, count, kMinPoint3DBytes, "3D points")) {
      return false;
    }
    model_->points3D.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      const int64_t start = c.offset();
      ColmapPoint3D point;
      if (!c.Read(&point.id)) return Truncated(c, "3D point " + std::to_string(i));
      if (point.id == kInvalidPoint3DId) {
        return Fail(start, "3D point id 2^64-1 is COLMAP's 'no point' marker");
      }
      for (int k = 0; k < 3; ++k) {
        const int64_t at = c.offset();
        if (!c.Read(&point.xyz[k])) return Truncated(c, "3D point " + std::to_string(point.id));
        if (!std::isfinite(point.xyz[k])) {
          return Fail(at, "3D point " + std::to_string(point.id) + " is not finite");
        }
      }
      const int64_t error_at = c.offset() + 3;
      if (!c.Read(&point.color[0]) || !c.Read(&point.color[1]) || !c.Read(&point.color[2]) ||
          !c.Read(&point.error)) {
        return Truncated(c, "3D point " + std::to_string(point.id));
      }
      if (!std::isfinite(point.error)) {
        return Fail(error_at, "3D point " + std::to_string(point.id) + ": error is not finite");
      }
      uint64_t length = 0;
      if (!c.Read(&length)) return Truncated(c, "3D point " + std::to_string(point.id));
      if (!CheckCount(c, length, kTrackElementBytes,
                      "track elements of 3D point " + std::to_string(point.id))) {
        return false;
      }
      point.track.resize(length);
      for (uint64_t k = 0; k < length; ++k) {
        if (!c.Read(&point.track[k].image_id) || !c.Read(&point.track[k].point2D_idx)) {
          return Truncated(c, "the track of 3D point " + std::to_string(point.id));
        }
      }
      if (!AddPoint(std::move(point), start)) return false;
    }
    return TrailingBytes(c);
  }

  // ---- ids

  bool CrossCheck() {
    model_->BuildIndex();
    // Each image's camera, each 2D point's 3D point.
    file_ = Join(folder_, ColmapFileName(kImages, format_));
    std::unordered_map<uint64_t, int> point_index;
    point_index.reserve(model_->points3D.size());
    for (size_t i = 0; i < model_->points3D.size(); ++i) {
      point_index.emplace(model_->points3D[i].id, static_cast<int>(i));
    }
    int64_t references = 0;
    for (size_t i = 0; i < model_->images.size(); ++i) {
      const ColmapImage& image = model_->images[i];
      if (model_->CameraIndex(image.camera_id) < 0) {
        return Fail(image_positions_[i], "image " + std::to_string(image.id) +
                                             " refers to camera " +
                                             std::to_string(image.camera_id) +
                                             ", which is not in " +
                                             ColmapFileName(kCameras, format_));
      }
      for (size_t k = 0; k < image.points2D.size(); ++k) {
        const uint64_t id = image.points2D[k].point3D_id;
        if (id == kInvalidPoint3DId) continue;
        ++references;
        if (point_index.count(id) == 0) {
          return Fail(PointPosition(i, k), "image " + std::to_string(image.id) + " 2D point " +
                                               std::to_string(k) + " refers to 3D point " +
                                               std::to_string(id) + ", which is not in " +
                                               ColmapFileName(kPoints3D, format_));
        }
      }
    }
    // Each track element's image and 2D point, which must refer back.
    file_ = Join(folder_, ColmapFileName(kPoints3D, format_));
    std::vector<std::vector<bool>> listed(model_->images.size());
    for (size_t i = 0; i < model_->images.size(); ++i) {
      listed[i].assign(model_->images[i].points2D.size(), false);
    }
    int64_t elements = 0;
    for (size_t p = 0; p < model_->points3D.size(); ++p) {
      const ColmapPoint3D& point = model_->points3D[p];
      for (const ColmapTrackElement& element : point.track) {
        ++elements;
        const std::string prefix = "3D point " + std::to_string(point.id) + ": track element (" +
                                   std::to_string(element.image_id) + ", " +
                                   std::to_string(element.point2D_idx) + ")";
        const int image = model_->ImageIndex(element.image_id);
        if (image < 0) {
          return Fail(point_positions_[p], prefix + " refers to image " +
                                               std::to_string(element.image_id) +
                                               ", which is not in " +
                                               ColmapFileName(kImages, format_));
        }
        const ColmapImage& im = model_->images[image];
        if (element.point2D_idx >= im.points2D.size()) {
          return Fail(point_positions_[p], prefix + ": image " + std::to_string(im.id) +
                                               " has only " + std::to_string(im.points2D.size()) +
                                               " 2D points");
        }
        if (im.points2D[element.point2D_idx].point3D_id != point.id) {
          return Fail(point_positions_[p],
                      prefix + ": that 2D point refers to " +
                          (im.points2D[element.point2D_idx].point3D_id == kInvalidPoint3DId
                               ? std::string("no 3D point")
                               : "3D point " + std::to_string(
                                                   im.points2D[element.point2D_idx].point3D_id)));
        }
        if (listed[image][element.point2D_idx]) {
          return Fail(point_positions_[p], prefix + " is listed twice");
        }
        listed[image][element.point2D_idx] = true;
      }
    }
    if (elements != references) {
      // Some 2D point refers to a 3D point whose track does not list it.
      file_ = Join(folder_, ColmapFileName(kImages, format_));
      for (size_t i = 0; i < model_->images.size(); ++i) {
        const ColmapImage& image = model_->images[i];
        for (size_t k = 0; k < image.points2D.size(); ++k) {
          if (image.points2D[k].point3D_id != kInvalidPoint3DId && !listed[i][k]) {
            return Fail(PointPosition(i, k),
                        "image " + std::to_string(image.id) + " 2D point " + std::to_string(k) +
                            " refers to 3D point " + std::to_string(image.points2D[k].point3D_id) +
                            ", whose track does not list it");
          }
        }
      }
    }
    return true;
  }

  // Where image i's 2D point k is: its line (text) or byte offset (binary).
  int64_t PointPosition(size_t i, size_t k) const {
    if (format_ == ColmapFormat::kText) return point_line_positions_[i];
    return point_line_positions_[i] + static_cast<int64_t>(k) * kPoint2DBytes;
  }

  const std::string folder_;
  const ColmapFormat format_;
  const ColmapReadOptions options_;
  ColmapModel* model_;
  std::string* error_;
  std::string file_;
  std::unordered_map<uint32_t, int> seen_cameras_;
  std::unordered_map<uint32_t, int> seen_images_;
  std::unordered_map<uint64_t, int> seen_points_;
  std::vector<int64_t> image_positions_;        // line / offset of each image
  std::vector<int64_t> point_line_positions_;   // of each image's 2D points
  std::vector<int64_t> point_positions_;        // of each 3D point
};

bool ReadWholeFile(const std::string& path, const ColmapReadOptions& options,
                   std::string* data, std::string* error) {
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat info;
  if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
    std::fclose(file);
    *error = path + ": not a regular file";
    return false;
  }
  const int64_t limit = MemoryLimit(options);
  if (limit > 0 && static_cast<double>(info.st_size) > static_cast<double>(limit) / 3.0) {
    std::fclose(file);
    *error = path + ": the file (" + MiB(static_cast<double>(info.st_size)) +
             ") needs more than the " + MiB(static_cast<double>(limit)) +
             " of memory available to be read";
    return false;
  }
  data->resize(static_cast<size_t>(info.st_size));
  const size_t got = data->empty() ? 0 : std::fread(&(*data)[0], 1, data->size(), file);
  const bool failed = got != data->size() || std::ferror(file);
  std::fclose(file);
  if (failed) {
    *error = path + ": cannot read: " + std::strerror(errno);
    return false;
  }
  return true;
}

bool Exists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

// ---------------------------------------------------------------- writer --

void AppendNumber(double value, std::string* out) {
  char text[32];
  // Shortest text that reads back as the same double.
  const auto result = std::to_chars(text, text + sizeof(text), value);
  out->append(text, result.ptr);
}

template <typename T>
void AppendInteger(T value, std::string* out) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  out->append(text, result.ptr);
}

template <typename T>
void AppendBinary(const T& value, std::string* out) {
  out->append(reinterpret_cast<const char*>(&value), sizeof(T));
}

}  // namespace

int64_t ColmapModel::NumTrackElements() const {
  int64_t total = 0;
  for (const ColmapPoint3D& point : points3D) total += static_cast<int64_t>(point.track.size());
  return total;
}

void BuildRigIndexTmp(const ColmapModel& model, std::vector<std::pair<uint32_t, int>>* rig_index,
                      std::vector<std::pair<uint32_t, int>>* frame_index,
                      std::vector<int>* image_frame, std::vector<int>* image_sensor);

void ColmapModel::BuildIndex() {
  camera_index_.clear();
  image_index_.clear();
  for (size_t i = 0; i < cameras.size(); ++i) camera_index_.emplace_back(cameras[i].id, i);
  for (size_t i = 0; i < images.size(); ++i) image_index_.emplace_back(images[i].id, i);
  std::sort(camera_index_.begin(), camera_index_.end());
  std::sort(image_index_.begin(), image_index_.end());
  BuildRigIndexTmp(*this, &rig_index_, &frame_index_, &image_frame_, &image_sensor_);
}

namespace {
int Lookup(const std::vector<std::pair<uint32_t, int>>& index, uint32_t id) {
  const auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(id, -1));
  if (it == index.end() || it->first != id) return -1;
  return it->second;
}
}  // namespace

int ColmapModel::CameraIndex(uint32_t id) const { return Lookup(camera_index_, id); }
int ColmapModel::ImageIndex(uint32_t id) const { return Lookup(image_index_, id); }

bool operator==(const ColmapModel& a, const ColmapModel& b) {
  auto same = [](double x, double y) { return std::memcmp(&x, &y, sizeof(double)) == 0; };
  if (a.cameras.size() != b.cameras.size() || a.images.size() != b.images.size() ||
      a.points3D.size() != b.points3D.size()) {
    return false;
  }
  for (size_t i = 0; i < a.cameras.size(); ++i) {
    const ColmapCamera& x = a.cameras[i];
    const ColmapCamera& y = b.cameras[i];
    if (x.id != y.id || x.model_id != y.model_id || x.width != y.width ||
        x.height != y.height || x.params.size() != y.params.size()) {
      return false;
    }
    for (size_t k = 0; k < x.params.size(); ++k) {
      if (!same(x.params[k], y.params[k])) return false;
    }
  }
  for (size_t i = 0; i < a.images.size(); ++i) {
    const ColmapImage& x = a.images[i];
    const ColmapImage& y = b.images[i];
    if (x.id != y.id || x.camera_id != y.camera_id || x.name != y.name ||
        x.points2D.size() != y.points2D.size()) {
      return false;
    }
    for (int k = 0; k < 4; ++k) if (!same(x.qvec[k], y.qvec[k])) return false;
    for (int k = 0; k < 3; ++k) if (!same(x.tvec[k], y.tvec[k])) return false;
    for (size_t k = 0; k < x.points2D.size(); ++k) {
      if (!same(x.points2D[k].x, y.points2D[k].x) || !same(x.points2D[k].y, y.points2D[k].y) ||
          x.points2D[k].point3D_id != y.points2D[k].point3D_id) {
        return false;
      }
    }
  }
  for (size_t i = 0; i < a.points3D.size(); ++i) {
    const ColmapPoint3D& x = a.points3D[i];
    const ColmapPoint3D& y = b.points3D[i];
    if (x.id != y.id || !same(x.error, y.error) || x.track.size() != y.track.size()) return false;
    for (int k = 0; k < 3; ++k) {
      if (!same(x.xyz[k], y.xyz[k]) || x.color[k] != y.color[k]) return false;
    }
    for (size_t k = 0; k < x.track.size(); ++k) {
      if (x.track[k].image_id != y.track[k].image_id ||
          x.track[k].point2D_idx != y.track[k].point2D_idx) {
        return false;
      }
    }
  }
  return true;
}

std::string ColmapFileName(const char* stem, ColmapFormat format) {
  return std::string(stem) + (format == ColmapFormat::kText ? ".txt" : ".bin");
}

bool DetectColmapFormat(const std::string& folder, ColmapFormat* format, std::string* error) {
  for (const ColmapFormat candidate : {ColmapFormat::kBinary, ColmapFormat::kText}) {
    if (Exists(Join(folder, ColmapFileName(kCameras, candidate))) &&
        Exists(Join(folder, ColmapFileName(kImages, candidate))) &&
        Exists(Join(folder, ColmapFileName(kPoints3D, candidate)))) {
      *format = candidate;
      return true;
    }
  }
  struct stat info;
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    *error = folder + ": not a folder";
  } else {
    *error = folder + ": no COLMAP model (expected cameras.bin, images.bin and points3D.bin, "
                      "or cameras.txt, images.txt and points3D.txt)";
  }
  return false;
}

bool ReadColmapModelFromMemory(ColmapFormat format, const std::string& folder,
                               const std::string& cameras, const std::string& images,
                               const std::string& points3D, const ColmapReadOptions& options,
                               ColmapModel* model, std::string* error) {
  *model = ColmapModel();
  Reader reader(folder, format, options, model, error);
  if (!reader.Parse(cameras, images, points3D)) {
    *model = ColmapModel();
    return false;
  }
  return true;
}

bool ReadColmapModel(const std::string& folder, const ColmapReadOptions& options,
                     ColmapModel* model, ColmapFormat* format, std::string* error) {
  *model = ColmapModel();
  if (!DetectColmapFormat(folder, format, error)) return false;
  std::string data[3];
  const char* stems[3] = {kCameras, kImages, kPoints3D};
  for (int k = 0; k < 3; ++k) {
    if (!ReadWholeFile(Join(folder, ColmapFileName(stems[k], *format)), options, &data[k],
                       error)) {
      return false;
    }
  }
  return ReadColmapModelFromMemory(*format, folder, data[0], data[1], data[2], options, model,
                                   error);
}

void SerializeColmapModel(const ColmapModel& model, ColmapFormat format, std::string* cameras,
                          std::string* images, std::string* points3D) {
  cameras->clear();
  images->clear();
  points3D->clear();
  if (format == ColmapFormat::kBinary) {
    AppendBinary<uint64_t>(model.cameras.size(), cameras);
    for (const ColmapCamera& camera : model.cameras) {
      AppendBinary(camera.id, cameras);
      AppendBinary<int32_t>(camera.model_id, cameras);
      AppendBinary(camera.width, cameras);
      AppendBinary(camera.height, cameras);
      for (double p : camera.params) AppendBinary(p, cameras);
    }
    AppendBinary<uint64_t>(model.images.size(), images);
    for (const ColmapImage& image : model.images) {
      AppendBinary(image.id, images);
      for (double q : image.qvec) AppendBinary(q, images);
      for (double t : image.tvec) AppendBinary(t, images);
      AppendBinary(image.camera_id, images);
      images->append(image.name);
      images->push_back('\0');
      AppendBinary<uint64_t>(image.points2D.size(), images);
      for (const ColmapPoint2D& point : image.points2D) {
        AppendBinary(point.x, images);
        AppendBinary(point.y, images);
        AppendBinary(point.point3D_id, images);
      }
    }
    AppendBinary<uint64_t>(model.points3D.size(), points3D);
    for (const ColmapPoint3D& point : model.points3D) {
      AppendBinary(point.id, points3D);
      for (double v : point.xyz) AppendBinary(v, points3D);
      for (uint8_t c : point.color) AppendBinary(c, points3D);
      AppendBinary(point.error, points3D);
      AppendBinary<uint64_t>(point.track.size(), points3D);
      for (const ColmapTrackElement& element : point.track) {
        AppendBinary(element.image_id, points3D);
        AppendBinary(element.point2D_idx, points3D);
      }
    }
    return;
  }
  // Text: the comment header, then one line per camera, two per image, one
  // per point; numbers in their shortest exact form.
  *cameras = "# Cameras: CAMERA_ID MODEL WIDTH HEIGHT PARAMS[]\n# Number of cameras: " +
             std::to_string(model.cameras.size()) + "\n";
  for (const ColmapCamera& camera : model.cameras) {
    const colmap_models::ModelInfo* info = colmap_models::FindModel(camera.model_id);
    AppendInteger(camera.id, cameras);
    *cameras += ' ';
    *cameras += info != nullptr ? info->name : "UNKNOWN";
    *cameras += ' ';
    AppendInteger(camera.width, cameras);
    *cameras += ' ';
    AppendInteger(camera.height, cameras);
    for (double p : camera.params) {
      *cameras += ' ';
      AppendNumber(p, cameras);
    }
    *cameras += '\n';
  }
  *images = "# Images, two lines each: IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME\n"
            "# and POINTS2D[] as (X Y POINT3D_ID)\n# Number of images: " +
            std::to_string(model.images.size()) + "\n";
  for (const ColmapImage& image : model.images) {
    AppendInteger(image.id, images);
    for (double q : image.qvec) {
      *images += ' ';
      AppendNumber(q, images);
    }
    for (double t : image.tvec) {
      *images += ' ';
      AppendNumber(t, images);
    }
    *images += ' ';
    AppendInteger(image.camera_id, images);
    *images += ' ';
    *images += image.name;
    *images += '\n';
    bool first = true;
    for (const ColmapPoint2D& point : image.points2D) {
      if (!first) *images += ' ';
      first = false;
      AppendNumber(point.x, images);
      *images += ' ';
      AppendNumber(point.y, images);
      *images += ' ';
      if (point.point3D_id == kInvalidPoint3DId) {
        *images += "-1";
      } else {
        AppendInteger(point.point3D_id, images);
      }
    }
    *images += '\n';
  }
  *points3D = "# 3D points: POINT3D_ID X Y Z R G B ERROR TRACK[] as (IMAGE_ID POINT2D_IDX)\n"
              "# Number of points: " + std::to_string(model.points3D.size()) + "\n";
  for (const ColmapPoint3D& point : model.points3D) {
    AppendInteger(point.id, points3D);
    for (double v : point.xyz) {
      *points3D += ' ';
      AppendNumber(v, points3D);
    }
    for (uint8_t c : point.color) {
      *points3D += ' ';
      AppendInteger(static_cast<int>(c), points3D);
    }
    *points3D += ' ';
    AppendNumber(point.error, points3D);
    for (const ColmapTrackElement& element : point.track) {
      *points3D += ' ';
      AppendInteger(element.image_id, points3D);
      *points3D += ' ';
      AppendInteger(element.point2D_idx, points3D);
    }
    *points3D += '\n';
  }
}

bool WriteColmapModel(const ColmapModel& model, const std::string& folder, ColmapFormat format,
                      std::string* error) {
  if (format == ColmapFormat::kText) {
    for (const ColmapImage& image : model.images) {
      if (image.name.empty() ||
          image.name.find_first_of(" \t\r\n\v\f") != std::string::npos) {
        *error = Join(folder, ColmapFileName(kImages, format)) + ": image " +
                 std::to_string(image.id) + "'s name " + Quote(image.name) +
                 " cannot be written in text form (empty, or holds white space)";
        return false;
      }
    }
  }
  std::string data[3];
  SerializeColmapModel(model, format, &data[0], &data[1], &data[2]);
  const char* stems[3] = {kCameras, kImages, kPoints3D};
  for (int k = 0; k < 3; ++k) {
    const std::string path = Join(folder, ColmapFileName(stems[k], format));
    FILE* file = std::fopen(path.c_str(), "wb");
    if (file == nullptr) {
      *error = path + ": cannot write: " + std::strerror(errno);
      return false;
    }
    const bool wrote = std::fwrite(data[k].data(), 1, data[k].size(), file) == data[k].size();
    const bool closed = std::fclose(file) == 0;
    if (!wrote || !closed) {
      *error = path + ": cannot write: " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
