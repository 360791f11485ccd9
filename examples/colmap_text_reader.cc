// The text files of a COLMAP model (cameras, images, points3D, rigs,
// frames .txt), parsed line by line: '#' lines and blank lines are comments,
// fields are separated by white space, every field is checked (integers in
// their type's range, finite numbers, known names) and a line holds exactly
// the fields its record needs. Layouts as COLMAP's reconstruction_io_text.cc
// writes them; the checks across files are in colmap_model_checks.cc.
#include <set>
#include <tuple>
#include <unordered_set>

#include "colmap_camera_models.h"
#include "colmap_model_internal.h"

namespace ceres_sqrtba {
namespace examples {
namespace colmap_internal {
namespace {

// COLMAP's text names of the sensor types.
bool ParseSensorType(const std::string& text, ColmapSensorType* type) {
  if (text == "CAMERA") {
    *type = ColmapSensorType::kCamera;
  } else if (text == "IMU") {
    *type = ColmapSensorType::kImu;
  } else {
    return false;
  }
  return true;
}

// An id field of 32 bits: "<what> id '<text>' is not an integer in [0, 2^32)".
bool ParseId32(const std::string& text, const std::string& what, int64_t line,
               ReadContext* context, uint32_t* id) {
  uint64_t value = 0;
  if (!ParseUnsigned(text, UINT32_MAX, &value)) {
    return context->Fail(line, what + " id " + Quote(text) + " is not an integer in [0, 2^32)");
  }
  *id = static_cast<uint32_t>(value);
  return true;
}

// The 7 values QW QX QY QZ TX TY TZ from f[first], finite, with a usable
// quaternion.
bool ParsePose(const std::vector<std::string>& f, size_t first, const std::string& owner,
               int64_t line, ReadContext* context, ColmapRigid3* pose) {
  for (int k = 0; k < 7; ++k) {
    double* target = k < 4 ? &pose->qvec[k] : &pose->tvec[k - 4];
    std::string why;
    if (!ParseFinite(f[first + k], target, &why)) return context->Fail(line, owner + ": " + why);
  }
  return context->CheckQuaternion(pose->qvec, line, owner);
}

}  // namespace

bool ParseCamerasText(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kCameras);
  TextLines lines(data);
  std::vector<std::string> f;
  int64_t line = 0;
  std::unordered_set<uint32_t> seen;
  while (lines.NextData(&f, &line)) {
    ColmapCamera camera;
    if (!ParseId32(f[0], "camera", line, context, &camera.id)) return false;
    if (f.size() < 4) {
      return context->Fail(line, "expected 'CAMERA_ID MODEL WIDTH HEIGHT PARAMS...', found " +
                                     std::to_string(f.size()) + " fields");
    }
    const colmap_models::ModelInfo* info = colmap_models::FindModel(f[1]);
    if (info == nullptr) {
      return context->Fail(line, "unknown or unsupported camera model " + Quote(f[1]) +
                                     " (supported: " + colmap_models::SupportedModelNames() +
                                     ")");
    }
    camera.model_id = info->id;
    if (!ParseUnsigned(f[2], UINT64_MAX, &camera.width) ||
        !ParseUnsigned(f[3], UINT64_MAX, &camera.height)) {
      return context->Fail(line, "image size " + Quote(f[2] + " " + f[3]) +
                                     " is not two unsigned integers");
    }
    const int given = static_cast<int>(f.size()) - 4;
    if (given != info->num_params) {
      return context->Fail(line, std::string("camera model ") + info->name + " has " +
                                     std::to_string(info->num_params) + " parameters (" +
                                     info->params_info + "), found " + std::to_string(given));
    }
    camera.params.resize(info->num_params);
    for (int k = 0; k < info->num_params; ++k) {
      std::string why;
      if (!ParseFinite(f[4 + k], &camera.params[k], &why)) {
        return context->Fail(line, "camera " + std::to_string(camera.id) + " parameter " +
                                       std::to_string(k) + ": " + why);
      }
    }
    if (!seen.insert(camera.id).second) {
      return context->Fail(line, "camera id " + std::to_string(camera.id) + " appears twice");
    }
    model->cameras.push_back(std::move(camera));
  }
  return true;
}

bool ParseImagesText(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kImages);
  TextLines lines(data);
  std::vector<std::string> f;
  int64_t line = 0;
  std::unordered_set<uint32_t> seen;
  while (lines.NextData(&f, &line)) {
    ColmapImage image;
    if (!ParseId32(f[0], "image", line, context, &image.id)) return false;
    if (f.size() != 10) {
      return context->Fail(line, "expected 'IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME' (10 "
                                 "fields, a name without spaces), found " +
                                     std::to_string(f.size()));
    }
    // The pose, checked also in a rig model, where it is replaced by the
    // one derived from the image's frame (COLMAP parses it there too).
    for (int k = 0; k < 7; ++k) {
      double* target = k < 4 ? &image.qvec[k] : &image.tvec[k - 4];
      std::string why;
      if (!ParseFinite(f[1 + k], target, &why)) {
        return context->Fail(line, "image " + std::to_string(image.id) + " pose: " + why);
      }
    }
    if (!context->CheckQuaternion(image.qvec, line, "image " + std::to_string(image.id))) {
      return false;
    }
    if (!ParseId32(f[8], "camera", line, context, &image.camera_id)) return false;
    image.name = f[9];
    if (image.name.find('\0') != std::string::npos) {
      return context->Fail(line, "image " + std::to_string(image.id) +
                                     ": the name holds a zero byte");
    }
    context->positions.images.push_back(line);
    // The 2D points: the very next line, empty when the image has none.
    int64_t points_line = 0;
    if (!lines.NextRaw(&f, &points_line)) {
      return context->Fail(line + 1, "file ends before the 2D point line of image " +
                                         std::to_string(image.id));
    }
    if (f.size() % 3 != 0) {
      return context->Fail(points_line, "image " + std::to_string(image.id) +
                                            ": expected (X Y POINT3D_ID) triples, found " +
                                            std::to_string(f.size()) + " fields");
    }
    image.points2D.resize(f.size() / 3);
    for (size_t k = 0; k < image.points2D.size(); ++k) {
      ColmapPoint2D& point = image.points2D[k];
      const std::string what = "image " + std::to_string(image.id) + " 2D point " +
                               std::to_string(k);
      std::string why;
      if (!ParseFinite(f[3 * k], &point.x, &why) || !ParseFinite(f[3 * k + 1], &point.y, &why)) {
        return context->Fail(points_line, what + ": " + why);
      }
      if (f[3 * k + 2] == "-1") {
        point.point3D_id = kInvalidPoint3DId;
      } else if (!ParseUnsigned(f[3 * k + 2], UINT64_MAX - 1, &point.point3D_id)) {
        return context->Fail(points_line, what + ": 3D point id " + Quote(f[3 * k + 2]) +
                                              " is neither -1 nor an id");
      }
    }
    context->positions.points2D.push_back(points_line);
    if (!seen.insert(image.id).second) {
      return context->Fail(line, "image id " + std::to_string(image.id) + " appears twice");
    }
    model->images.push_back(std::move(image));
  }
  return true;
}

bool ParsePoints3DText(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kPoints3D);
  TextLines lines(data);
  std::vector<std::string> f;
  int64_t line = 0;
  std::unordered_set<uint64_t> seen;
  while (lines.NextData(&f, &line)) {
    ColmapPoint3D point;
    if (!ParseUnsigned(f[0], UINT64_MAX - 1, &point.id)) {
      return context->Fail(line, "3D point id " + Quote(f[0]) + " is not an unsigned integer");
    }
    if (f.size() < 8 || (f.size() - 8) % 2 != 0) {
      return context->Fail(line, "expected 'POINT3D_ID X Y Z R G B ERROR' and (IMAGE_ID "
                                 "POINT2D_IDX) pairs, found " +
                                     std::to_string(f.size()) + " fields");
    }
    const std::string what = "3D point " + std::to_string(point.id);
    std::string why;
    for (int k = 0; k < 3; ++k) {
      if (!ParseFinite(f[1 + k], &point.xyz[k], &why)) {
        return context->Fail(line, what + ": " + why);
      }
    }
    for (int k = 0; k < 3; ++k) {
      uint64_t value = 0;
      if (!ParseUnsigned(f[4 + k], 255, &value)) {
        return context->Fail(line, what + ": color " + Quote(f[4 + k]) +
                                       " is not an integer in [0, 255]");
      }
      point.color[k] = static_cast<uint8_t>(value);
    }
    if (!ParseFinite(f[7], &point.error, &why)) return context->Fail(line, what + " error: " + why);
    point.track.resize((f.size() - 8) / 2);
    for (size_t k = 0; k < point.track.size(); ++k) {
      uint64_t image_id = 0;
      uint64_t idx = 0;
      if (!ParseUnsigned(f[8 + 2 * k], UINT32_MAX, &image_id) ||
          !ParseUnsigned(f[9 + 2 * k], UINT32_MAX, &idx)) {
        return context->Fail(line, what + " track element " + std::to_string(k) + ": " +
                                       Quote(f[8 + 2 * k] + " " + f[9 + 2 * k]) +
                                       " is not two integers in [0, 2^32)");
      }
      point.track[k].image_id = static_cast<uint32_t>(image_id);
      point.track[k].point2D_idx = static_cast<uint32_t>(idx);
    }
    if (!seen.insert(point.id).second) {
      return context->Fail(line, "3D point id " + std::to_string(point.id) + " appears twice");
    }
    context->positions.points3D.push_back(line);
    model->points3D.push_back(std::move(point));
  }
  return true;
}

// RIG_ID NUM_SENSORS [REF_SENSOR_TYPE REF_SENSOR_ID]
//     (SENSOR_TYPE SENSOR_ID HAS_POSE [QW QX QY QZ TX TY TZ])...
// with NUM_SENSORS - 1 sensors after the reference one.
bool ParseRigsText(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kRigs);
  TextLines lines(data);
  std::vector<std::string> f;
  int64_t line = 0;
  std::unordered_set<uint32_t> seen;
  while (lines.NextData(&f, &line)) {
    ColmapRig rig;
    if (!ParseId32(f[0], "rig", line, context, &rig.id)) return false;
    const std::string what = "rig " + std::to_string(rig.id);
    uint64_t num_sensors = 0;
    if (f.size() < 2) {
      return context->Fail(line, "expected 'RIG_ID NUM_SENSORS [REF_SENSOR_TYPE REF_SENSOR_ID] "
                                 "(SENSOR_TYPE SENSOR_ID HAS_POSE [QW QX QY QZ TX TY TZ])...', "
                                 "found 1 field");
    }
    if (!ParseUnsigned(f[1], UINT32_MAX, &num_sensors)) {
      return context->Fail(line, what + ": number of sensors " + Quote(f[1]) +
                                     " is not an integer in [0, 2^32)");
    }
    // The reference sensor takes 2 fields, each further one at least 3: a
    // count the line cannot hold is refused before anything is reserved.
    const uint64_t fields_after_count = f.size() - 2;
    if (num_sensors > 0 &&
        (fields_after_count < 2 || num_sensors - 1 > (fields_after_count - 2) / 3)) {
      return context->Fail(line, what + ": declares " + std::to_string(num_sensors) +
                                     " sensors, which need more than the " +
                                     std::to_string(fields_after_count) +
                                     " fields after the count");
    }
    size_t k = 2;
    std::set<std::tuple<int32_t, uint32_t>> sensors_seen;
    // TYPE ID at f[k], unique in the rig.
    auto parse_sensor = [&](ColmapSensorId* sensor) {
      if (!ParseSensorType(f[k], &sensor->type)) {
        return context->Fail(line, what + ": unknown sensor type " + Quote(f[k]) +
                                       " (expected CAMERA or IMU)");
      }
      if (!ParseId32(f[k + 1], what + ": sensor", line, context, &sensor->id)) return false;
      if (!sensors_seen.emplace(static_cast<int32_t>(sensor->type), sensor->id).second) {
        return context->Fail(line, what + ": sensor " + SensorText(*sensor) + " appears twice");
      }
      k += 2;
      return true;
    };
    if (num_sensors > 0) {
      rig.has_ref_sensor = true;
      if (!parse_sensor(&rig.ref_sensor)) return false;
    }
    if (num_sensors > 1) rig.sensors.reserve(num_sensors - 1);
    for (uint64_t s = 1; s < num_sensors; ++s) {
      if (k + 3 > f.size()) {
        return context->Fail(line, what + ": the line ends inside sensor " + std::to_string(s) +
                                       " of " + std::to_string(num_sensors) +
                                       " (expected SENSOR_TYPE SENSOR_ID HAS_POSE)");
      }
      ColmapRigSensor sensor;
      if (!parse_sensor(&sensor.sensor)) return false;
      const std::string sensor_what = what + " sensor " + SensorText(sensor.sensor);
      if (f[k] != "0" && f[k] != "1") {
        return context->Fail(line, sensor_what + ": HAS_POSE " + Quote(f[k]) +
                                       " is neither 0 nor 1");
      }
      sensor.has_sensor_from_rig = f[k] == "1";
      ++k;
      if (sensor.has_sensor_from_rig) {
        if (k + 7 > f.size()) {
          return context->Fail(line, sensor_what + ": the line ends inside its sensor_from_rig "
                                                   "(QW QX QY QZ TX TY TZ)");
        }
        if (!ParsePose(f, k, sensor_what + " sensor_from_rig", line, context,
                       &sensor.sensor_from_rig)) {
          return false;
        }
        k += 7;
      }
      rig.sensors.push_back(sensor);
    }
    if (k != f.size()) {
      return context->Fail(line, what + ": " + std::to_string(f.size() - k) +
                                     " fields after its " + std::to_string(num_sensors) +
                                     " sensors");
    }
    if (!seen.insert(rig.id).second) {
      return context->Fail(line, "rig id " + std::to_string(rig.id) + " appears twice");
    }
    context->positions.rigs.push_back(line);
    context->positions.rig_sensors.emplace_back(rig.sensors.size(), line);
    model->rigs.push_back(std::move(rig));
  }
  return true;
}

// FRAME_ID RIG_ID QW QX QY QZ TX TY TZ NUM_DATA_IDS
//     (SENSOR_TYPE SENSOR_ID DATA_ID)...
bool ParseFramesText(const std::string& data, ReadContext* context, ColmapModel* model) {
  context->SetFile(kFrames);
  TextLines lines(data);
  std::vector<std::string> f;
  int64_t line = 0;
  std::unordered_set<uint32_t> seen;
  while (lines.NextData(&f, &line)) {
    ColmapFrame frame;
    if (!ParseId32(f[0], "frame", line, context, &frame.id)) return false;
    const std::string what = "frame " + std::to_string(frame.id);
    if (frame.id == UINT32_MAX) {
      return context->Fail(line, "frame id 4294967295 is COLMAP's invalid frame id");
    }
    if (f.size() < 10) {
      return context->Fail(line, "expected 'FRAME_ID RIG_ID QW QX QY QZ TX TY TZ NUM_DATA_IDS "
                                 "(SENSOR_TYPE SENSOR_ID DATA_ID)...', found " +
                                     std::to_string(f.size()) + " fields");
    }
    if (!ParseId32(f[1], what + ": rig", line, context, &frame.rig_id)) return false;
    if (frame.rig_id == UINT32_MAX) {
      return context->Fail(line, what + ": rig id 4294967295 is COLMAP's invalid rig id");
    }
    if (!ParsePose(f, 2, what + " rig_from_world", line, context, &frame.rig_from_world)) {
      return false;
    }
    uint64_t num_data_ids = 0;
    if (!ParseUnsigned(f[9], UINT32_MAX, &num_data_ids)) {
      return context->Fail(line, what + ": number of data ids " + Quote(f[9]) +
                                     " is not an integer in [0, 2^32)");
    }
    if ((f.size() - 10) % 3 != 0 || (f.size() - 10) / 3 != num_data_ids) {
      return context->Fail(line, what + ": declares " + std::to_string(num_data_ids) +
                                     " data ids, which take 3 fields each (SENSOR_TYPE "
                                     "SENSOR_ID DATA_ID), but " +
                                     std::to_string(f.size() - 10) + " fields follow");
    }
    frame.data_ids.resize(num_data_ids);
    std::set<std::tuple<int32_t, uint32_t, uint64_t>> data_seen;
    for (size_t d = 0; d < frame.data_ids.size(); ++d) {
      ColmapDataId& data_id = frame.data_ids[d];
      const size_t k = 10 + 3 * d;
      if (!ParseSensorType(f[k], &data_id.sensor.type)) {
        return context->Fail(line, what + " data id " + std::to_string(d) +
                                       ": unknown sensor type " + Quote(f[k]) +
                                       " (expected CAMERA or IMU)");
      }
      if (!ParseId32(f[k + 1], what + " data id " + std::to_string(d) + ": sensor", line,
                     context, &data_id.sensor.id)) {
        return false;
      }
      if (!ParseUnsigned(f[k + 2], UINT64_MAX, &data_id.id)) {
        return context->Fail(line, what + " data id " + std::to_string(d) + ": " +
                                       Quote(f[k + 2]) + " is not an integer in [0, 2^64)");
      }
      if (!data_seen.emplace(static_cast<int32_t>(data_id.sensor.type), data_id.sensor.id,
                             data_id.id)
               .second) {
        return context->Fail(line, what + " lists data (" + SensorText(data_id.sensor) + ", " +
                                       std::to_string(data_id.id) + ") twice");
      }
    }
    if (!seen.insert(frame.id).second) {
      return context->Fail(line, "frame id " + std::to_string(frame.id) + " appears twice");
    }
    context->positions.frames.push_back(line);
    context->positions.data_ids.emplace_back(frame.data_ids.size(), line);
    model->frames.push_back(std::move(frame));
  }
  return true;
}

}  // namespace colmap_internal
}  // namespace examples
}  // namespace ceres_sqrtba
