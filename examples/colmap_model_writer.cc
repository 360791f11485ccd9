// The bytes of a COLMAP model's files (SerializeColmapModel), in the layouts
// COLMAP's reconstruction_io_{text,binary}.cc read, records in the model's
// order. Binary: little-endian fields, so that an unchanged model read from
// COLMAP's files is written back byte for byte. Text: a comment header, then
// one line per record (two per image), numbers in their shortest form that
// reads back as the same double. In a rig model the images' poses are the
// ones derived from their frames and rigs (ColmapCamFromWorld), whatever
// images[i].qvec and tvec hold.
#include <charconv>
#include <string>

#include "colmap_camera_models.h"
#include "colmap_model_internal.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

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

// " QW QX QY QZ TX TY TZ"
void AppendPoseText(const ColmapRigid3& pose, std::string* out) {
  for (double q : pose.qvec) {
    *out += ' ';
    AppendNumber(q, out);
  }
  for (double t : pose.tvec) {
    *out += ' ';
    AppendNumber(t, out);
  }
}

void AppendPoseBinary(const ColmapRigid3& pose, std::string* out) {
  for (double q : pose.qvec) AppendBinary(q, out);
  for (double t : pose.tvec) AppendBinary(t, out);
}

// A rig lists its sensors only after its reference sensor: one without a
// reference sensor has none.
uint32_t NumSensors(const ColmapRig& rig) {
  return rig.has_ref_sensor ? static_cast<uint32_t>(rig.sensors.size() + 1) : 0;
}

void WriteBinary(const ColmapModel& model, ColmapFiles* files) {
  std::string* cameras = &files->cameras;
  AppendBinary<uint64_t>(model.cameras.size(), cameras);
  for (const ColmapCamera& camera : model.cameras) {
    AppendBinary(camera.id, cameras);
    AppendBinary<int32_t>(camera.model_id, cameras);
    AppendBinary(camera.width, cameras);
    AppendBinary(camera.height, cameras);
    for (double p : camera.params) AppendBinary(p, cameras);
  }
  std::string* images = &files->images;
  AppendBinary<uint64_t>(model.images.size(), images);
  for (size_t i = 0; i < model.images.size(); ++i) {
    const ColmapImage& image = model.images[i];
    AppendBinary(image.id, images);
    AppendPoseBinary(ColmapCamFromWorld(model, static_cast<int>(i)), images);
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
  std::string* points3D = &files->points3D;
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
  if (!model.has_rigs_and_frames) return;
  std::string* rigs = &files->rigs.emplace();
  AppendBinary<uint64_t>(model.rigs.size(), rigs);
  for (const ColmapRig& rig : model.rigs) {
    AppendBinary(rig.id, rigs);
    AppendBinary(NumSensors(rig), rigs);
    if (!rig.has_ref_sensor) continue;
    AppendBinary(static_cast<int32_t>(rig.ref_sensor.type), rigs);
    AppendBinary(rig.ref_sensor.id, rigs);
    for (const ColmapRigSensor& sensor : rig.sensors) {
      AppendBinary(static_cast<int32_t>(sensor.sensor.type), rigs);
      AppendBinary(sensor.sensor.id, rigs);
      AppendBinary<uint8_t>(sensor.has_sensor_from_rig ? 1 : 0, rigs);
      if (sensor.has_sensor_from_rig) AppendPoseBinary(sensor.sensor_from_rig, rigs);
    }
  }
  std::string* frames = &files->frames.emplace();
  AppendBinary<uint64_t>(model.frames.size(), frames);
  for (const ColmapFrame& frame : model.frames) {
    AppendBinary(frame.id, frames);
    AppendBinary(frame.rig_id, frames);
    AppendPoseBinary(frame.rig_from_world, frames);
    AppendBinary(static_cast<uint32_t>(frame.data_ids.size()), frames);
    for (const ColmapDataId& data_id : frame.data_ids) {
      AppendBinary(static_cast<int32_t>(data_id.sensor.type), frames);
      AppendBinary(data_id.sensor.id, frames);
      AppendBinary(data_id.id, frames);
    }
  }
}

void WriteText(const ColmapModel& model, ColmapFiles* files) {
  std::string* cameras = &files->cameras;
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
  std::string* images = &files->images;
  *images = "# Images, two lines each: IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME\n"
            "# and POINTS2D[] as (X Y POINT3D_ID)\n# Number of images: " +
            std::to_string(model.images.size()) + "\n";
  for (size_t i = 0; i < model.images.size(); ++i) {
    const ColmapImage& image = model.images[i];
    AppendInteger(image.id, images);
    AppendPoseText(ColmapCamFromWorld(model, static_cast<int>(i)), images);
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
  std::string* points3D = &files->points3D;
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
  if (!model.has_rigs_and_frames) return;
  // The comment headers of COLMAP's writers.
  std::string* rigs = &files->rigs.emplace();
  *rigs = "# Rig calib list with one line of data per calib:\n"
          "#   RIG_ID, NUM_SENSORS, REF_SENSOR_TYPE, REF_SENSOR_ID, SENSORS[] as (SENSOR_TYPE, "
          "SENSOR_ID, HAS_POSE, [QW, QX, QY, QZ, TX, TY, TZ])\n"
          "# Number of rigs: " + std::to_string(model.rigs.size()) + "\n";
  for (const ColmapRig& rig : model.rigs) {
    AppendInteger(rig.id, rigs);
    *rigs += ' ';
    AppendInteger(NumSensors(rig), rigs);
    if (rig.has_ref_sensor) {
      *rigs += ' ';
      *rigs += colmap_internal::SensorText(rig.ref_sensor);
      for (const ColmapRigSensor& sensor : rig.sensors) {
        *rigs += ' ';
        *rigs += colmap_internal::SensorText(sensor.sensor);
        *rigs += sensor.has_sensor_from_rig ? " 1" : " 0";
        if (sensor.has_sensor_from_rig) AppendPoseText(sensor.sensor_from_rig, rigs);
      }
    }
    *rigs += '\n';
  }
  std::string* frames = &files->frames.emplace();
  *frames = "# Frame list with one line of data per frame:\n"
            "#   FRAME_ID, RIG_ID, RIG_FROM_WORLD[QW, QX, QY, QZ, TX, TY, TZ], NUM_DATA_IDS, "
            "DATA_IDS[] as (SENSOR_TYPE, SENSOR_ID, DATA_ID)\n"
            "# Number of frames: " + std::to_string(model.frames.size()) + "\n";
  for (const ColmapFrame& frame : model.frames) {
    AppendInteger(frame.id, frames);
    *frames += ' ';
    AppendInteger(frame.rig_id, frames);
    AppendPoseText(frame.rig_from_world, frames);
    *frames += ' ';
    AppendInteger(frame.data_ids.size(), frames);
    for (const ColmapDataId& data_id : frame.data_ids) {
      *frames += ' ';
      *frames += colmap_internal::SensorText(data_id.sensor);
      *frames += ' ';
      AppendInteger(data_id.id, frames);
    }
    *frames += '\n';
  }
}

}  // namespace

void SerializeColmapModel(const ColmapModel& model, ColmapFormat format, ColmapFiles* files) {
  *files = ColmapFiles();
  if (format == ColmapFormat::kBinary) {
    WriteBinary(model, files);
  } else {
    WriteText(model, files);
  }
}

void SerializeColmapModel(const ColmapModel& model, ColmapFormat format, std::string* cameras,
                          std::string* images, std::string* points3D) {
  ColmapFiles files;
  SerializeColmapModel(model, format, &files);
  *cameras = std::move(files.cameras);
  *images = std::move(files.images);
  *points3D = std::move(files.points3D);
}

}  // namespace examples
}  // namespace ceres_sqrtba
