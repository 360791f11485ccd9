// What the COLMAP model's readers share (colmap_model_internal.h): paths
// and memory figures in messages, quoting and parsing fields, the lines of a
// text file, and ReadContext, which writes the one error line naming the
// file and the line or byte offset.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <system_error>

#include "ceres_sqrtba/solver.h"
#include "colmap_model_internal.h"

namespace ceres_sqrtba {
namespace examples {
namespace colmap_internal {

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

std::string SensorText(const ColmapSensorId& sensor) {
  return std::string(ColmapSensorTypeName(sensor.type)) + " " + std::to_string(sensor.id);
}

bool UsableQuaternion(const double* q) {
  const double norm2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
  return norm2 > 1e-20 && std::isfinite(norm2);
}

int FindRigSensor(const ColmapRig& rig, const ColmapSensorId& sensor) {
  if (rig.has_ref_sensor && rig.ref_sensor.type == sensor.type && rig.ref_sensor.id == sensor.id) {
    return -1;
  }
  for (size_t k = 0; k < rig.sensors.size(); ++k) {
    if (rig.sensors[k].sensor.type == sensor.type && rig.sensors[k].sensor.id == sensor.id) {
      return static_cast<int>(k);
    }
  }
  return kNotInRig;
}

bool TextLines::NextRaw(std::vector<std::string>* fields, int64_t* line_number) {
  if (pos_ >= data_.size()) return false;
  size_t end = data_.find('\n', pos_);
  if (end == std::string::npos) end = data_.size();
  ++line_;
  *line_number = line_;
  fields->clear();
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
  };
  size_t i = pos_;
  while (i < end) {
    while (i < end && is_space(data_[i])) ++i;
    size_t j = i;
    while (j < end && !is_space(data_[j])) ++j;
    if (j > i) fields->emplace_back(data_, i, j - i);
    i = j;
  }
  pos_ = end + 1;
  return true;
}

bool ReadContext::Fail(int64_t position, const std::string& what) {
  if (position < 0) {
    *error_ = file_ + ": " + what;
  } else if (format_ == ColmapFormat::kText) {
    *error_ = file_ + ":" + std::to_string(position) + ": " + what;
  } else {
    *error_ = file_ + ": byte " + std::to_string(position) + ": " + what;
  }
  return false;
}

bool ReadContext::Truncated(const Cursor& cursor, const std::string& what) {
  return Fail(cursor.offset(), "file ends inside " + what + " (truncated file?)");
}

bool ReadContext::CheckCount(const Cursor& cursor, uint64_t count, int64_t min_bytes,
                             const std::string& what, int64_t count_position) {
  const double need = static_cast<double>(count) * static_cast<double>(min_bytes);
  if (need > static_cast<double>(cursor.remaining())) {
    // (The product may exceed every integer type: printed from the double.)
    char need_text[64];
    std::snprintf(need_text, sizeof(need_text), "%.0f", need);
    return Fail(count_position >= 0 ? count_position : cursor.offset() - 8,
                "declares " + std::to_string(count) + " " + what + ", which need at least " +
                    need_text + " more bytes, but only " + std::to_string(cursor.remaining()) +
                    " remain (a count that does not match the data, or a truncated file)");
  }
  return true;
}

bool ReadContext::CheckQuaternion(const double* q, int64_t position, const std::string& owner) {
  if (!UsableQuaternion(q)) {
    return Fail(position, owner + ": the rotation quaternion has no usable norm");
  }
  return true;
}

}  // namespace colmap_internal
}  // namespace examples
}  // namespace ceres_sqrtba
