// Edits of a COLMAP model (colmap_model_edits.h).
#include "colmap_model_edits.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "ceres/rotation.h"
#include "colmap_camera_models.h"
#include "synthetic_random.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using synthetic::SplitMix;
using synthetic::Vec3;

// R' = dR R and c' = c + dc (c = -R^T t the centre) of a COLMAP pose:
// q' = dq q and t' = -R' c' = dR t - R' dc. Exact (no rounding) when nothing
// moves.
void PerturbPose(double rotation_sigma, double distance, SplitMix* random, double qvec[4],
                 double tvec[3]) {
  double delta[3] = {rotation_sigma * random->Normal(), rotation_sigma * random->Normal(),
                     rotation_sigma * random->Normal()};
  const Vec3 center_move = distance * Vec3{random->Normal(), random->Normal(), random->Normal()};
  double delta_q[4];
  ceres::AngleAxisToQuaternion(delta, delta_q);
  double q[4];
  ceres::QuaternionProduct(delta_q, qvec, q);
  // (A product of unit quaternions: unit up to rounding, which the
  // problem's normalization before a solve takes care of.)
  double t[3];
  ceres::AngleAxisRotatePoint(delta, tvec, t);
  const double move[3] = {center_move.x, center_move.y, center_move.z};
  double rotated_move[3];
  ceres::UnitQuaternionRotatePoint(q, move, rotated_move);
  for (int k = 0; k < 4; ++k) qvec[k] = q[k];
  for (int k = 0; k < 3; ++k) tvec[k] = t[k] - rotated_move[k];
}

}  // namespace

void DeriveColmapImagePoses(ColmapModel* model) {
  for (size_t i = 0; i < model->images.size(); ++i) {
    const ColmapRigid3 pose = ColmapCamFromWorld(*model, static_cast<int>(i));
    std::copy(pose.qvec, pose.qvec + 4, model->images[i].qvec);
    std::copy(pose.tvec, pose.tvec + 3, model->images[i].tvec);
  }
}

double ColmapSceneScale(const ColmapModel& model) {
  if (model.points3D.empty()) return 1.0;
  double median[3];
  std::vector<double> values(model.points3D.size());
  for (int k = 0; k < 3; ++k) {
    for (size_t j = 0; j < values.size(); ++j) values[j] = model.points3D[j].xyz[k];
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    median[k] = values[values.size() / 2];
  }
  for (size_t j = 0; j < values.size(); ++j) {
    const double* x = model.points3D[j].xyz;
    values[j] = std::sqrt((x[0] - median[0]) * (x[0] - median[0]) +
                          (x[1] - median[1]) * (x[1] - median[1]) +
                          (x[2] - median[2]) * (x[2] - median[2]));
  }
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  const double scale = values[values.size() / 2];
  return scale > 0.0 && std::isfinite(scale) ? scale : 1.0;
}

void PerturbColmapModel(double perturbation, uint64_t seed, ColmapModel* model) {
  SplitMix random(seed);
  const double p = perturbation;
  const double distance = 0.03 * p * ColmapSceneScale(*model);
  for (ColmapCamera& camera : model->cameras) {
    const colmap_models::ModelInfo* info = colmap_models::FindModel(camera.model_id);
    if (info == nullptr) continue;
    const double focal_scale = 1.0 + 0.02 * p * random.Normal();
    for (int k = 0; k < info->num_focal; ++k) camera.params[k] *= focal_scale;
    for (size_t k = info->first_extra; k < camera.params.size(); ++k) {
      // OPENCV's tangential p1, p2 are an order smaller than the radial k.
      const bool tangential =
          (camera.model_id == colmap_models::kOpenCV || camera.model_id == colmap_models::kFullOpenCV) &&
          (k == 6 || k == 7);
      camera.params[k] += (tangential ? 0.001 : 0.01) * p * random.Normal();
    }
  }
  if (model->has_rigs_and_frames) {
    for (ColmapFrame& frame : model->frames) {
      PerturbPose(0.005 * p, distance, &random, frame.rig_from_world.qvec, frame.rig_from_world.tvec);
    }
    DeriveColmapImagePoses(model);
  } else {
    for (ColmapImage& image : model->images) {
      PerturbPose(0.005 * p, distance, &random, image.qvec, image.tvec);
    }
  }
  for (ColmapPoint3D& point : model->points3D) {
    for (double& v : point.xyz) v += distance * random.Normal();
  }
  UpdateColmapPointErrors(model);
}

void AddTrivialRigs(ColmapModel* model) {
  model->has_rigs_and_frames = true;
  model->rigs.clear();
  model->frames.clear();
  for (const ColmapCamera& camera : model->cameras) {
    ColmapRig rig;
    rig.id = camera.id;
    rig.has_ref_sensor = true;
    rig.ref_sensor = {ColmapSensorType::kCamera, camera.id};
    model->rigs.push_back(rig);
  }
  for (const ColmapImage& image : model->images) {
    ColmapFrame frame;
    frame.id = image.id;
    frame.rig_id = image.camera_id;
    std::copy(image.qvec, image.qvec + 4, frame.rig_from_world.qvec);
    std::copy(image.tvec, image.tvec + 3, frame.rig_from_world.tvec);
    frame.data_ids.push_back({{ColmapSensorType::kCamera, image.camera_id}, image.id});
    model->frames.push_back(std::move(frame));
  }
  model->BuildIndex();
}

void UpdateColmapPointErrors(ColmapModel* model) {
  for (ColmapPoint3D& point : model->points3D) {
    double sum = 0.0;
    int count = 0;
    for (const ColmapTrackElement& element : point.track) {
      const int image_index = model->ImageIndex(element.image_id);
      if (image_index < 0) continue;
      const ColmapImage& image = model->images[image_index];
      const int camera_index = model->CameraIndex(image.camera_id);
      if (camera_index < 0 || element.point2D_idx >= image.points2D.size()) continue;
      const ColmapCamera& camera = model->cameras[camera_index];
      double xyz[3];
      ceres::QuaternionRotatePoint(image.qvec, point.xyz, xyz);
      for (int k = 0; k < 3; ++k) xyz[k] += image.tvec[k];
      double pixel[2];
      if (!colmap_models::ProjectWithModel(camera.model_id, camera.params.data(), xyz, pixel)) {
        continue;
      }
      const ColmapPoint2D& observed = image.points2D[element.point2D_idx];
      sum += std::hypot(pixel[0] - observed.x, pixel[1] - observed.y);
      ++count;
    }
    point.error = count > 0 ? sum / count : 0.0;
  }
}

}  // namespace examples
}  // namespace ceres_sqrtba
