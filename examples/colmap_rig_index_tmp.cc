// TEMPORARY (until the colmap-io branch is merged): the rig and frame index
// and pose helpers declared in colmap_model.h.
#include <algorithm>

#include "Eigen/Geometry"
#include "colmap_model.h"

namespace ceres_sqrtba {
namespace examples {

namespace {
int LookupTmp(const std::vector<std::pair<uint32_t, int>>& index, uint32_t id) {
  const auto it = std::lower_bound(index.begin(), index.end(), std::make_pair(id, -1));
  if (it == index.end() || it->first != id) return -1;
  return it->second;
}
Eigen::Quaterniond Q(const ColmapRigid3& a) { return {a.qvec[0], a.qvec[1], a.qvec[2], a.qvec[3]}; }
ColmapRigid3 Make(const Eigen::Quaterniond& q, const Eigen::Vector3d& t) {
  ColmapRigid3 r;
  r.qvec[0] = q.w(); r.qvec[1] = q.x(); r.qvec[2] = q.y(); r.qvec[3] = q.z();
  for (int k = 0; k < 3; ++k) r.tvec[k] = t[k];
  return r;
}
}  // namespace

ColmapRigid3 operator*(const ColmapRigid3& a, const ColmapRigid3& b) {
  const Eigen::Quaterniond qa = Q(a);
  return Make(qa * Q(b), qa * Eigen::Vector3d(b.tvec[0], b.tvec[1], b.tvec[2]) +
                             Eigen::Vector3d(a.tvec[0], a.tvec[1], a.tvec[2]));
}

ColmapRigid3 Inverse(const ColmapRigid3& a) {
  const Eigen::Quaterniond inv = Q(a).inverse();
  return Make(inv, -(inv * Eigen::Vector3d(a.tvec[0], a.tvec[1], a.tvec[2])));
}

int ColmapModel::RigIndex(uint32_t id) const { return LookupTmp(rig_index_, id); }
int ColmapModel::FrameIndex(uint32_t id) const { return LookupTmp(frame_index_, id); }
int ColmapModel::ImageFrameIndex(int image) const {
  return image >= 0 && image < static_cast<int>(image_frame_.size()) ? image_frame_[image] : -1;
}
int ColmapModel::ImageSensorIndex(int image) const {
  return image >= 0 && image < static_cast<int>(image_sensor_.size()) ? image_sensor_[image] : -1;
}

ColmapRigid3 ColmapCamFromWorld(const ColmapModel& model, int image) {
  const ColmapImage& im = model.images[image];
  const int frame = model.ImageFrameIndex(image);
  if (frame < 0) {
    ColmapRigid3 pose;
    std::copy(im.qvec, im.qvec + 4, pose.qvec);
    std::copy(im.tvec, im.tvec + 3, pose.tvec);
    return pose;
  }
  const ColmapFrame& f = model.frames[frame];
  const int sensor = model.ImageSensorIndex(image);
  if (sensor < 0) return f.rig_from_world;
  return model.rigs[model.RigIndex(f.rig_id)].sensors[sensor].sensor_from_rig * f.rig_from_world;
}

void BuildRigIndexTmp(const ColmapModel& model, std::vector<std::pair<uint32_t, int>>* rig_index,
                      std::vector<std::pair<uint32_t, int>>* frame_index,
                      std::vector<int>* image_frame, std::vector<int>* image_sensor) {
  rig_index->clear();
  frame_index->clear();
  for (size_t i = 0; i < model.rigs.size(); ++i) rig_index->emplace_back(model.rigs[i].id, i);
  for (size_t i = 0; i < model.frames.size(); ++i) frame_index->emplace_back(model.frames[i].id, i);
  std::sort(rig_index->begin(), rig_index->end());
  std::sort(frame_index->begin(), frame_index->end());
  image_frame->assign(model.images.size(), -1);
  image_sensor->assign(model.images.size(), -1);
  if (!model.has_rigs_and_frames) return;
  std::vector<std::pair<uint64_t, int>> by_image;
  for (size_t i = 0; i < model.images.size(); ++i) by_image.emplace_back(model.images[i].id, i);
  std::sort(by_image.begin(), by_image.end());
  for (size_t f = 0; f < model.frames.size(); ++f) {
    for (const ColmapDataId& data : model.frames[f].data_ids) {
      if (data.sensor.type != ColmapSensorType::kCamera) continue;
      const auto it = std::lower_bound(by_image.begin(), by_image.end(), std::make_pair(data.id, -1));
      if (it == by_image.end() || it->first != data.id) continue;
      (*image_frame)[it->second] = static_cast<int>(f);
      const int rig = LookupTmp(*rig_index, model.frames[f].rig_id);
      if (rig < 0) continue;
      const ColmapRig& r = model.rigs[rig];
      for (size_t s = 0; s < r.sensors.size(); ++s) {
        if (r.sensors[s].sensor.type == ColmapSensorType::kCamera &&
            r.sensors[s].sensor.id == model.images[it->second].camera_id) {
          (*image_sensor)[it->second] = static_cast<int>(s);
        }
      }
    }
  }
}

}  // namespace examples
}  // namespace ceres_sqrtba
