// The checks across a COLMAP model's files, once each file has been parsed
// (colmap_text_reader.cc, colmap_binary_reader.cc): every id that refers to
// a record of another file is resolved, and the two sides of a reference
// agree, as COLMAP's reader (or the first use of the model) requires. The
// message names the file and line or byte offset of the record that refers
// (ReadContext::positions), or of the record nothing refers to when that is
// what is wrong.
//
// In a rig model (rigs.* and frames.*), as COLMAP's Reconstruction::AddRig,
// AddFrame and AddImage check (src/colmap/scene/reconstruction.cc) and its
// images take their poses from their frames
// (reconstruction_io_{text,binary}.cc): each camera sensor of a rig is a
// camera; each frame's rig exists and its camera data are from sensors of
// that rig; no image id is data of two frames; each image is data of one
// frame under its own camera, and a non-reference sensor that took an image
// has its sensor_from_rig. Then every image's pose is the derived one.
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "colmap_model_internal.h"

namespace ceres_sqrtba {
namespace examples {
namespace colmap_internal {
namespace {

// Where image i's 2D point k is: its line (text) or byte offset (binary).
int64_t PointPosition(const ReadContext& context, size_t i, size_t k) {
  if (context.format() == ColmapFormat::kText) return context.positions.points2D[i];
  return context.positions.points2D[i] + static_cast<int64_t>(k) * kPoint2DBytes;
}

bool Finite(const ColmapRigid3& pose) {
  for (double q : pose.qvec) {
    if (!std::isfinite(q)) return false;
  }
  for (double t : pose.tvec) {
    if (!std::isfinite(t)) return false;
  }
  return true;
}

std::string DataText(const ColmapDataId& data_id) {
  return "data (" + SensorText(data_id.sensor) + ", " + std::to_string(data_id.id) + ")";
}

}  // namespace

bool CheckPointReferences(ReadContext* context, ColmapModel* model) {
  model->BuildIndex();
  const Positions& positions = context->positions;
  // Each image's camera, each 2D point's 3D point.
  context->SetFile(kImages);
  std::unordered_map<uint64_t, int> point_index;
  point_index.reserve(model->points3D.size());
  for (size_t i = 0; i < model->points3D.size(); ++i) {
    point_index.emplace(model->points3D[i].id, static_cast<int>(i));
  }
  int64_t references = 0;
  for (size_t i = 0; i < model->images.size(); ++i) {
    const ColmapImage& image = model->images[i];
    if (model->CameraIndex(image.camera_id) < 0) {
      return context->Fail(positions.images[i], "image " + std::to_string(image.id) +
                                                    " refers to camera " +
                                                    std::to_string(image.camera_id) +
                                                    ", which is not in " +
                                                    context->Name(kCameras));
    }
    for (size_t k = 0; k < image.points2D.size(); ++k) {
      const uint64_t id = image.points2D[k].point3D_id;
      if (id == kInvalidPoint3DId) continue;
      ++references;
      if (point_index.count(id) == 0) {
        return context->Fail(PointPosition(*context, i, k),
                             "image " + std::to_string(image.id) + " 2D point " +
                                 std::to_string(k) + " refers to 3D point " + std::to_string(id) +
                                 ", which is not in " + context->Name(kPoints3D));
      }
    }
  }
  // Each track element's image and 2D point, which must refer back.
  context->SetFile(kPoints3D);
  std::vector<std::vector<bool>> listed(model->images.size());
  for (size_t i = 0; i < model->images.size(); ++i) {
    listed[i].assign(model->images[i].points2D.size(), false);
  }
  int64_t elements = 0;
  for (size_t p = 0; p < model->points3D.size(); ++p) {
    const ColmapPoint3D& point = model->points3D[p];
    for (const ColmapTrackElement& element : point.track) {
      ++elements;
      const std::string prefix = "3D point " + std::to_string(point.id) + ": track element (" +
                                 std::to_string(element.image_id) + ", " +
                                 std::to_string(element.point2D_idx) + ")";
      const int image = model->ImageIndex(element.image_id);
      if (image < 0) {
        return context->Fail(positions.points3D[p], prefix + " refers to image " +
                                                        std::to_string(element.image_id) +
                                                        ", which is not in " +
                                                        context->Name(kImages));
      }
      const ColmapImage& im = model->images[image];
      if (element.point2D_idx >= im.points2D.size()) {
        return context->Fail(positions.points3D[p],
                             prefix + ": image " + std::to_string(im.id) + " has only " +
                                 std::to_string(im.points2D.size()) + " 2D points");
      }
      const uint64_t back = im.points2D[element.point2D_idx].point3D_id;
      if (back != point.id) {
        return context->Fail(positions.points3D[p],
                             prefix + ": that 2D point refers to " +
                                 (back == kInvalidPoint3DId ? std::string("no 3D point")
                                                            : "3D point " + std::to_string(back)));
      }
      if (listed[image][element.point2D_idx]) {
        return context->Fail(positions.points3D[p], prefix + " is listed twice");
      }
      listed[image][element.point2D_idx] = true;
    }
  }
  if (elements != references) {
    // Some 2D point refers to a 3D point whose track does not list it.
    context->SetFile(kImages);
    for (size_t i = 0; i < model->images.size(); ++i) {
      const ColmapImage& image = model->images[i];
      for (size_t k = 0; k < image.points2D.size(); ++k) {
        if (image.points2D[k].point3D_id != kInvalidPoint3DId && !listed[i][k]) {
          return context->Fail(PointPosition(*context, i, k),
                               "image " + std::to_string(image.id) + " 2D point " +
                                   std::to_string(k) + " refers to 3D point " +
                                   std::to_string(image.points2D[k].point3D_id) +
                                   ", whose track does not list it");
        }
      }
    }
  }
  return true;
}

bool CheckRigsAndFrames(ReadContext* context, ColmapModel* model) {
  model->BuildIndex();
  const Positions& positions = context->positions;
  // Each camera sensor of a rig is a camera (IMUs are not checked: COLMAP
  // has no records of them).
  context->SetFile(kRigs);
  for (size_t r = 0; r < model->rigs.size(); ++r) {
    const ColmapRig& rig = model->rigs[r];
    const std::string what = "rig " + std::to_string(rig.id);
    if (rig.has_ref_sensor && rig.ref_sensor.type == ColmapSensorType::kCamera &&
        model->CameraIndex(rig.ref_sensor.id) < 0) {
      return context->Fail(positions.rigs[r], what + ": reference sensor " +
                                                  SensorText(rig.ref_sensor) +
                                                  " is not in " + context->Name(kCameras));
    }
    for (size_t k = 0; k < rig.sensors.size(); ++k) {
      const ColmapSensorId& sensor = rig.sensors[k].sensor;
      if (sensor.type == ColmapSensorType::kCamera && model->CameraIndex(sensor.id) < 0) {
        return context->Fail(positions.rig_sensors[r][k], what + ": sensor " +
                                                              SensorText(sensor) +
                                                              " is not in " +
                                                              context->Name(kCameras));
      }
    }
  }
  // Each frame's rig, its camera data from that rig's sensors, and no image
  // id in two frames (nor twice in one).
  context->SetFile(kFrames);
  std::unordered_map<uint64_t, std::pair<int, int>> image_data;  // id -> (frame, data)
  for (size_t f = 0; f < model->frames.size(); ++f) {
    const ColmapFrame& frame = model->frames[f];
    const std::string what = "frame " + std::to_string(frame.id);
    const int r = model->RigIndex(frame.rig_id);
    if (r < 0) {
      return context->Fail(positions.frames[f], what + " refers to rig " +
                                                    std::to_string(frame.rig_id) +
                                                    ", which is not in " + context->Name(kRigs));
    }
    for (size_t d = 0; d < frame.data_ids.size(); ++d) {
      const ColmapDataId& data_id = frame.data_ids[d];
      if (data_id.sensor.type != ColmapSensorType::kCamera) continue;  // kept as it is
      const int64_t at = positions.data_ids[f][d];
      if (FindRigSensor(model->rigs[r], data_id.sensor) == kNotInRig) {
        return context->Fail(at, what + ": " + DataText(data_id) + " is from camera " +
                                     std::to_string(data_id.sensor.id) +
                                     ", which is not a sensor of rig " +
                                     std::to_string(frame.rig_id));
      }
      const auto inserted =
          image_data.emplace(data_id.id, std::make_pair(static_cast<int>(f), static_cast<int>(d)));
      if (!inserted.second) {
        const ColmapFrame& first = model->frames[inserted.first->second.first];
        return context->Fail(at, what + " lists image " + std::to_string(data_id.id) +
                                     ", which frame " + std::to_string(first.id) +
                                     " lists already (an image is data of one frame)");
      }
    }
  }
  // Each image in a frame, under its own camera, from a sensor with a pose.
  for (size_t i = 0; i < model->images.size(); ++i) {
    const ColmapImage& image = model->images[i];
    const auto found = image_data.find(image.id);
    if (found == image_data.end()) {
      context->SetFile(kImages);
      return context->Fail(positions.images[i], "image " + std::to_string(image.id) +
                                                    " is in no frame of " +
                                                    context->Name(kFrames) +
                                                    " (COLMAP takes each image's pose from "
                                                    "its frame)");
    }
    const int f = found->second.first;
    const int d = found->second.second;
    const ColmapFrame& frame = model->frames[f];
    const ColmapDataId& data_id = frame.data_ids[d];
    if (data_id.sensor.id != image.camera_id) {
      context->SetFile(kFrames);
      return context->Fail(positions.data_ids[f][d],
                           "frame " + std::to_string(frame.id) + " lists image " +
                               std::to_string(image.id) + " under camera " +
                               std::to_string(data_id.sensor.id) + ", but " +
                               context->Name(kImages) + " gives it camera " +
                               std::to_string(image.camera_id));
    }
    const int r = model->RigIndex(frame.rig_id);
    const ColmapRig& rig = model->rigs[r];
    const int s = FindRigSensor(rig, data_id.sensor);
    if (s >= 0 && !rig.sensors[s].has_sensor_from_rig) {
      context->SetFile(kRigs);
      return context->Fail(positions.rig_sensors[r][s],
                           "rig " + std::to_string(rig.id) + ": sensor " +
                               SensorText(data_id.sensor) +
                               " has no sensor_from_rig, but took image " +
                               std::to_string(image.id) + " (frame " + std::to_string(frame.id) +
                               "), whose pose needs it");
    }
  }
  // The images' poses, as COLMAP derives them.
  model->BuildIndex();
  context->SetFile(kFrames);
  for (size_t i = 0; i < model->images.size(); ++i) {
    ColmapImage& image = model->images[i];
    const ColmapRigid3 pose = ColmapCamFromWorld(*model, static_cast<int>(i));
    // As a pose read from images.* must be: finite, with a rotation of
    // usable norm (the product of two usable ones can overflow or vanish).
    if (!Finite(pose) || !UsableQuaternion(pose.qvec)) {
      const int f = model->ImageFrameIndex(static_cast<int>(i));
      const char* what = Finite(pose) ? " has a rotation quaternion with no usable norm" : " is not finite";
      return context->Fail(positions.frames[f], "image " + std::to_string(image.id) +
                                                    ": the pose derived from frame " +
                                                    std::to_string(model->frames[f].id) + " and rig " +
                                                    std::to_string(model->frames[f].rig_id) + what);
    }
    std::copy(pose.qvec, pose.qvec + 4, image.qvec);
    std::copy(pose.tvec, pose.tvec + 3, image.tvec);
  }
  return true;
}

}  // namespace colmap_internal
}  // namespace examples
}  // namespace ceres_sqrtba
