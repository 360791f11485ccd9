// The binary files of a COLMAP model (cameras, images, points3D, rigs,
// frames .bin), read field by field from a cursor that knows its byte
// offset. Layouts as COLMAP's reconstruction_io_binary.cc writes them
// (little-endian; each file starts with a u64 count). Every declared count
// is checked against the bytes that remain before anything is reserved for
// it, every double is finite, and a file holds nothing after its last
// record; the checks across files are in colmap_model_checks.cc.
#include <cmath>
#include <set>
#include <tuple>
#include <unordered_set>

#include "colmap_camera_models.h"
#include "colmap_model_internal.h"

namespace ceres_sqrtba {
namespace examples {
namespace colmap_internal {
namespace {

bool TrailingBytes(const Cursor& c, ReadContext* context) {
  if (c.remaining() != 0) {
    return context->Fail(c.offset(), std::to_string(c.remaining()) +
                                         " bytes after the last record (the count at the start "
                                         "does not match the data)");
  }
  return true;
}

// A sensor type as the files hold it (COLMAP's SensorType values).
bool SensorTypeFromInt(int32_t value, ColmapSensorType* type) {
  if (value != static_cast<int32_t>(ColmapSensorType::kCamera) &&
      value != static_cast<int32_t>(ColmapSensorType::kImu)) {
    return false;
  }
  *type = static_cast<ColmapSensorType>(value);
  return true;
}

std::string UnknownSensorType(int32_t value) {
  return "unknown sensor type " + std::to_string(value) + " (expected 0 for CAMERA or 1 for IMU)";
}

// A sensor (i32 type, u32 id) at the cursor; `what` names it in messages.
bool ReadSensor(Cursor* c, const std::string& what, ReadContext* context,
                ColmapSensorId* sensor) {
  const int64_t at = c->offset();
  int32_t type = 0;
  if (!c->Read(&type) || !c->Read(&sensor->id)) return context->Truncated(*c, what);
  if (!SensorTypeFromInt(type, &sensor->type)) {
    return context->Fail(at, what + ": " + UnknownSensorType(type));
  }
  return true;
}

// 7 doubles QW QX QY QZ TX TY TZ at the cursor, finite, with a usable
// quaternion.
bool ReadPose(Cursor* c, const std::string& what, ReadContext* context, ColmapRigid3* pose) {
  const int64_t start = c->offset();
  for (int k = 0; k < 7; ++k) {
    const int64_t at = c->offset();
    double* target = k < 4 ? &pose->qvec[k] : &pose->tvec[k - 4];
    if (!c->Read(target)) return context->Truncated(*c, what);
    if (!std::isfinite(*target)) {
      return context->Fail(at, what + " value " + std::to_string(k) + " is not finite");
    }
  }
  return context->CheckQuaternion(pose->qvec, start, what);
}

}  // namespace

bool ParseCamerasBinary(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kCameras);
  Cursor c(data);
  uint64_t count = 0;
  if (!c.Read(&count)) return context->Truncated(c, "the number of cameras");
  if (!context->CheckCount(c, count, kMinCameraBytes, "cameras")) return false;
  model->cameras.reserve(count);
  std::unordered_set<uint32_t> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t start = c.offset();
    ColmapCamera camera;
    int32_t model_id = 0;
    if (!c.Read(&camera.id) || !c.Read(&model_id) || !c.Read(&camera.width) ||
        !c.Read(&camera.height)) {
      return context->Truncated(c, "camera " + std::to_string(i) + " of " + std::to_string(count));
    }
    const colmap_models::ModelInfo* info = colmap_models::FindModel(model_id);
    if (info == nullptr) {
      return context->Fail(start + 4, "camera " + std::to_string(camera.id) +
                                          ": unknown or unsupported camera model id " +
                                          std::to_string(model_id) + " (supported: " +
                                          colmap_models::SupportedModelNames() + ")");
    }
    camera.model_id = info->id;
    camera.params.resize(info->num_params);
    for (int k = 0; k < info->num_params; ++k) {
      const int64_t at = c.offset();
      if (!c.Read(&camera.params[k])) {
        return context->Truncated(c, "the parameters of camera " + std::to_string(camera.id));
      }
      if (!std::isfinite(camera.params[k])) {
        return context->Fail(at, "camera " + std::to_string(camera.id) + " parameter " +
                                     std::to_string(k) + " is not finite");
      }
    }
    if (!seen.insert(camera.id).second) {
      return context->Fail(start, "camera id " + std::to_string(camera.id) + " appears twice");
    }
    model->cameras.push_back(std::move(camera));
  }
  return TrailingBytes(c, context);
}

bool ParseImagesBinary(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kImages);
  Cursor c(data);
  uint64_t count = 0;
  if (!c.Read(&count)) return context->Truncated(c, "the number of images");
  if (!context->CheckCount(c, count, kMinImageBytes, "images")) return false;
  model->images.reserve(count);
  std::unordered_set<uint32_t> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t start = c.offset();
    ColmapImage image;
    if (!c.Read(&image.id)) return context->Truncated(c, "image " + std::to_string(i));
    const std::string what = "image " + std::to_string(image.id);
    for (int k = 0; k < 7; ++k) {
      const int64_t at = c.offset();
      double* target = k < 4 ? &image.qvec[k] : &image.tvec[k - 4];
      if (!c.Read(target)) return context->Truncated(c, "the pose of " + what);
      if (!std::isfinite(*target)) {
        return context->Fail(at, what + ": pose value " + std::to_string(k) + " is not finite");
      }
    }
    if (!context->CheckQuaternion(image.qvec, start + 4, what)) return false;
    if (!c.Read(&image.camera_id)) return context->Truncated(c, what);
    if (!c.ReadString(&image.name)) {
      return context->Truncated(c, "the name of " + what + " (no terminating zero byte)");
    }
    uint64_t num_points = 0;
    if (!c.Read(&num_points)) return context->Truncated(c, what);
    if (!context->CheckCount(c, num_points, kPoint2DBytes, "2D points in " + what)) return false;
    image.points2D.resize(num_points);
    context->positions.points2D.push_back(c.offset());
    for (uint64_t k = 0; k < num_points; ++k) {
      ColmapPoint2D& point = image.points2D[k];
      const int64_t at = c.offset();
      if (!c.Read(&point.x) || !c.Read(&point.y) || !c.Read(&point.point3D_id)) {
        return context->Truncated(c, "the 2D points of " + what);
      }
      if (!std::isfinite(point.x) || !std::isfinite(point.y)) {
        return context->Fail(at, what + " 2D point " + std::to_string(k) + " is not finite");
      }
    }
    context->positions.images.push_back(start);
    if (!seen.insert(image.id).second) {
      return context->Fail(start, "image id " + std::to_string(image.id) + " appears twice");
    }
    model->images.push_back(std::move(image));
  }
  return TrailingBytes(c, context);
}

bool ParsePoints3DBinary(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kPoints3D);
  Cursor c(data);
  uint64_t count = 0;
  if (!c.Read(&count)) return context->Truncated(c, "the number of 3D points");
  if (!context->CheckCount(c, count, kMinPoint3DBytes, "3D points")) return false;
  model->points3D.reserve(count);
  std::unordered_set<uint64_t> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t start = c.offset();
    ColmapPoint3D point;
    if (!c.Read(&point.id)) return context->Truncated(c, "3D point " + std::to_string(i));
    if (point.id == kInvalidPoint3DId) {
      return context->Fail(start, "3D point id 2^64-1 is COLMAP's 'no point' marker");
    }
    const std::string what = "3D point " + std::to_string(point.id);
    for (int k = 0; k < 3; ++k) {
      const int64_t at = c.offset();
      if (!c.Read(&point.xyz[k])) return context->Truncated(c, what);
      if (!std::isfinite(point.xyz[k])) return context->Fail(at, what + " is not finite");
    }
    const int64_t error_at = c.offset() + 3;
    if (!c.Read(&point.color[0]) || !c.Read(&point.color[1]) || !c.Read(&point.color[2]) ||
        !c.Read(&point.error)) {
      return context->Truncated(c, what);
    }
    if (!std::isfinite(point.error)) {
      return context->Fail(error_at, what + ": error is not finite");
    }
    uint64_t length = 0;
    if (!c.Read(&length)) return context->Truncated(c, what);
    if (!context->CheckCount(c, length, kTrackElementBytes, "track elements of " + what)) {
      return false;
    }
    point.track.resize(length);
    for (uint64_t k = 0; k < length; ++k) {
      if (!c.Read(&point.track[k].image_id) || !c.Read(&point.track[k].point2D_idx)) {
        return context->Truncated(c, "the track of " + what);
      }
    }
    if (!seen.insert(point.id).second) {
      return context->Fail(start, "3D point id " + std::to_string(point.id) + " appears twice");
    }
    context->positions.points3D.push_back(start);
    model->points3D.push_back(std::move(point));
  }
  return TrailingBytes(c, context);
}

// u64 count; per rig: u32 id, u32 num_sensors, then when num_sensors > 0 the
// reference sensor (i32 type, u32 id) and num_sensors - 1 sensors (i32 type,
// u32 id, u8 has_pose, when 1: 7 doubles sensor_from_rig).
bool ParseRigsBinary(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kRigs);
  Cursor c(data);
  uint64_t count = 0;
  if (!c.Read(&count)) return context->Truncated(c, "the number of rigs");
  if (!context->CheckCount(c, count, kMinRigBytes, "rigs")) return false;
  model->rigs.reserve(count);
  std::unordered_set<uint32_t> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t start = c.offset();
    ColmapRig rig;
    uint32_t num_sensors = 0;
    if (!c.Read(&rig.id) || !c.Read(&num_sensors)) {
      return context->Truncated(c, "rig " + std::to_string(i) + " of " + std::to_string(count));
    }
    const std::string what = "rig " + std::to_string(rig.id);
    std::set<std::tuple<int32_t, uint32_t>> sensors_seen;
    std::vector<int64_t> positions;
    if (num_sensors > 0) {
      rig.has_ref_sensor = true;
      if (!ReadSensor(&c, "the reference sensor of " + what, context, &rig.ref_sensor)) {
        return false;
      }
      sensors_seen.emplace(static_cast<int32_t>(rig.ref_sensor.type), rig.ref_sensor.id);
      // The count of the further sensors is the field at start + 4.
      if (!context->CheckCount(c, num_sensors - 1, kMinRigSensorBytes,
                               "further sensors in " + what, start + 4)) {
        return false;
      }
      rig.sensors.reserve(num_sensors - 1);
      positions.reserve(num_sensors - 1);
    }
    for (uint32_t s = 1; s < num_sensors; ++s) {
      const int64_t at = c.offset();
      ColmapRigSensor sensor;
      if (!ReadSensor(&c, "sensor " + std::to_string(s) + " of " + what, context,
                      &sensor.sensor)) {
        return false;
      }
      const std::string sensor_what = what + " sensor " + SensorText(sensor.sensor);
      if (!sensors_seen.emplace(static_cast<int32_t>(sensor.sensor.type), sensor.sensor.id)
               .second) {
        return context->Fail(at, what + ": sensor " + SensorText(sensor.sensor) +
                                     " appears twice");
      }
      uint8_t has_pose = 0;
      if (!c.Read(&has_pose)) return context->Truncated(c, sensor_what);
      if (has_pose > 1) {
        return context->Fail(at + 8, sensor_what + ": has_pose byte " +
                                         std::to_string(has_pose) + " is neither 0 nor 1");
      }
      sensor.has_sensor_from_rig = has_pose == 1;
      if (sensor.has_sensor_from_rig &&
          !ReadPose(&c, sensor_what + " sensor_from_rig", context, &sensor.sensor_from_rig)) {
        return false;
      }
      rig.sensors.push_back(sensor);
      positions.push_back(at);
    }
    if (!seen.insert(rig.id).second) {
      return context->Fail(start, "rig id " + std::to_string(rig.id) + " appears twice");
    }
    context->positions.rigs.push_back(start);
    context->positions.rig_sensors.push_back(std::move(positions));
    model->rigs.push_back(std::move(rig));
  }
  return TrailingBytes(c, context);
}

// u64 count; per frame: u32 id, u32 rig id, 7 doubles rig_from_world, u32
// num_data_ids, then num_data_ids x (i32 sensor type, u32 sensor id, u64 id).
bool ParseFramesBinary(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kFrames);
  Cursor c(data);
  uint64_t count = 0;
  if (!c.Read(&count)) return context->Truncated(c, "the number of frames");
  if (!context->CheckCount(c, count, kMinFrameBytes, "frames")) return false;
  model->frames.reserve(count);
  std::unordered_set<uint32_t> seen;
  for (uint64_t i = 0; i < count; ++i) {
    const int64_t start = c.offset();
    ColmapFrame frame;
    if (!c.Read(&frame.id) || !c.Read(&frame.rig_id)) {
      return context->Truncated(c, "frame " + std::to_string(i) + " of " + std::to_string(count));
    }
    const std::string what = "frame " + std::to_string(frame.id);
    if (frame.id == UINT32_MAX) {
      return context->Fail(start, "frame id 4294967295 is COLMAP's invalid frame id");
    }
    if (frame.rig_id == UINT32_MAX) {
      return context->Fail(start + 4, what + ": rig id 4294967295 is COLMAP's invalid rig id");
    }
    if (!ReadPose(&c, what + " rig_from_world", context, &frame.rig_from_world)) return false;
    uint32_t num_data_ids = 0;
    if (!c.Read(&num_data_ids)) return context->Truncated(c, what);
    if (!context->CheckCount(c, num_data_ids, kDataIdBytes, "data ids of " + what,
                             c.offset() - 4)) {
      return false;
    }
    frame.data_ids.resize(num_data_ids);
    std::vector<int64_t> positions(num_data_ids);
    std::set<std::tuple<int32_t, uint32_t, uint64_t>> data_seen;
    for (uint32_t d = 0; d < num_data_ids; ++d) {
      ColmapDataId& data_id = frame.data_ids[d];
      positions[d] = c.offset();
      if (!ReadSensor(&c, what + " data id " + std::to_string(d), context, &data_id.sensor)) {
        return false;
      }
      if (!c.Read(&data_id.id)) return context->Truncated(c, "the data ids of " + what);
      if (!data_seen.emplace(static_cast<int32_t>(data_id.sensor.type), data_id.sensor.id,
                             data_id.id)
               .second) {
        return context->Fail(positions[d], what + " lists data (" + SensorText(data_id.sensor) +
                                               ", " + std::to_string(data_id.id) + ") twice");
      }
    }
    if (!seen.insert(frame.id).second) {
      return context->Fail(start, "frame id " + std::to_string(frame.id) + " appears twice");
    }
    context->positions.frames.push_back(start);
    context->positions.data_ids.push_back(std::move(positions));
    model->frames.push_back(std::move(frame));
  }
  return TrailingBytes(c, context);
}

}  // namespace colmap_internal
}  // namespace examples
}  // namespace ceres_sqrtba
