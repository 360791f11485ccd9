#include "colmap_problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "Eigen/Core"
#include "Eigen/Geometry"
#include "Eigen/QR"
#include "cli_common.h"
#include "colmap_camera_models.h"

namespace ceres_sqrtba {
namespace examples {

namespace {

// The reprojection error of one observation: the point moved into the
// camera by the pose (Eigen quaternion x, y, z, w, then translation),
// projected by the camera model, minus the observed pixel.
template <typename Model>
struct ReprojectionError {
  double observed_x;
  double observed_y;

  template <typename T>
  bool operator()(const T* point, const T* pose, const T* camera, T* residuals) const {
    const Eigen::Map<const Eigen::Quaternion<T>> rotation(pose);
    const Eigen::Map<const Eigen::Matrix<T, 3, 1>> translation(pose + 4);
    const Eigen::Map<const Eigen::Matrix<T, 3, 1>> world(point);
    const Eigen::Matrix<T, 3, 1> in_camera = rotation * world + translation;
    T pixel[2];
    if (!Model::Project(camera, in_camera.data(), pixel)) {
      residuals[0] = T(0);
      residuals[1] = T(0);
      return true;
    }
    residuals[0] = pixel[0] - T(observed_x);
    residuals[1] = pixel[1] - T(observed_y);
    return true;
  }
};

struct CostFactory {
  double x;
  double y;
  ceres::CostFunction* result = nullptr;
  template <typename Model>
  void operator()() {
    result = new ceres::AutoDiffCostFunction<ReprojectionError<Model>, 2, 3, 7, Model::kNumParams>(
        new ReprojectionError<Model>{x, y});
  }
};

struct DoubleProjector {
  const double* params;
  const double* xyz;
  double* pixel;
  bool result = false;
  template <typename Model>
  void operator()() {
    result = Model::Project(params, xyz, pixel);
  }
};

// The reprojection error in pixels of an observation; false when the point
// does not project.
bool ObservationError(int model_id, const double* camera, const std::array<double, 7>& pose,
                      const double* point, double x, double y, double* error) {
  const Eigen::Map<const Eigen::Quaterniond> rotation(pose.data());
  const Eigen::Map<const Eigen::Vector3d> translation(pose.data() + 4);
  const Eigen::Vector3d in_camera = rotation * Eigen::Map<const Eigen::Vector3d>(point) + translation;
  double pixel[2];
  if (!colmap_models::ProjectWithModel(model_id, camera, in_camera.data(), pixel)) return false;
  *error = std::hypot(pixel[0] - x, pixel[1] - y);
  return true;
}

}  // namespace

namespace colmap_models {
bool ProjectWithModel(int id, const double* params, const double* xyz, double* pixel) {
  DoubleProjector projector{params, xyz, pixel};
  return VisitModel(id, projector) && projector.result;
}
}  // namespace colmap_models

ceres::CostFunction* CreateColmapReprojectionError(int model_id, double x, double y) {
  CostFactory factory{x, y};
  if (!colmap_models::VisitModel(model_id, factory)) return nullptr;
  return factory.result;
}

bool StringToColmapLoss(const std::string& name, ColmapLoss* loss) {
  const std::string lower = Lower(name);
  if (lower == "trivial") {
    *loss = ColmapLoss::kTrivial;
  } else if (lower == "soft_l1") {
    *loss = ColmapLoss::kSoftL1;
  } else if (lower == "cauchy") {
    *loss = ColmapLoss::kCauchy;
  } else if (lower == "huber") {
    *loss = ColmapLoss::kHuber;
  } else {
    return false;
  }
  return true;
}

bool ColmapProblem::Build(const ColmapBundleOptions& options, const ColmapModel& model,
                          ceres::Problem* problem, std::string* error) {
  const size_t num_images = model.images.size();
  poses_.assign(num_images, {});
  image_used_.assign(num_images, 0);
  for (size_t i = 0; i < num_images; ++i) {
    const ColmapImage& image = model.images[i];
    // Eigen's layout (x, y, z, w), normalized as COLMAP normalizes before a
    // bundle adjustment.
    Eigen::Quaterniond q(image.qvec[0], image.qvec[1], image.qvec[2], image.qvec[3]);
    q.normalize();
    poses_[i] = {q.x(), q.y(), q.z(), q.w(), image.tvec[0], image.tvec[1], image.tvec[2]};
  }
  cameras_.assign(model.cameras.size(), {});
  camera_models_.assign(model.cameras.size(), 0);
  camera_used_.assign(model.cameras.size(), 0);
  for (size_t c = 0; c < model.cameras.size(); ++c) {
    cameras_[c] = model.cameras[c].params;
    camera_models_[c] = model.cameras[c].model_id;
  }
  points_.assign(model.points3D.size(), {});
  point_used_.assign(model.points3D.size(), 0);
  std::unordered_map<uint64_t, int> point_index;
  point_index.reserve(model.points3D.size());
  for (size_t p = 0; p < model.points3D.size(); ++p) {
    const ColmapPoint3D& point = model.points3D[p];
    points_[p] = {point.xyz[0], point.xyz[1], point.xyz[2]};
    point_index.emplace(point.id, static_cast<int>(p));
  }

  ceres::LossFunction* loss = nullptr;  // owned by the problem
  switch (options.loss) {
    case ColmapLoss::kTrivial: break;
    case ColmapLoss::kSoftL1: loss = new ceres::SoftLOneLoss(options.loss_scale); break;
    case ColmapLoss::kCauchy: loss = new ceres::CauchyLoss(options.loss_scale); break;
    case ColmapLoss::kHuber: loss = new ceres::HuberLoss(options.loss_scale); break;
  }

  // Images in id order, as COLMAP's configuration holds them.
  std::vector<int> order(num_images);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return model.images[a].id < model.images[b].id; });
  observations_.clear();
  skipped_observations_ = 0;
  for (const int i : order) {
    const ColmapImage& image = model.images[i];
    const int camera = model.CameraIndex(image.camera_id);
    for (const ColmapPoint2D& point2D : image.points2D) {
      if (point2D.point3D_id == kInvalidPoint3DId) continue;
      const int point = point_index.at(point2D.point3D_id);
      if (model.points3D[point].track.size() < 2) {
        ++skipped_observations_;
        continue;
      }
      observations_.push_back({i, camera, point, point2D.x, point2D.y});
      problem->AddResidualBlock(
          CreateColmapReprojectionError(camera_models_[camera], point2D.x, point2D.y), loss,
          points_[point].data(), poses_[i].data(), cameras_[camera].data());
      image_used_[i] = 1;
      camera_used_[camera] = 1;
      point_used_[point] = 1;
    }
  }
  if (loss != nullptr && observations_.empty()) delete loss;
  if (observations_.empty()) {
    *error = "the model has no observation of a 3D point seen in at least 2 images: "
             "nothing to adjust";
    return false;
  }
  num_images_ = static_cast<int>(std::count(image_used_.begin(), image_used_.end(), 1));
  num_cameras_ = static_cast<int>(std::count(camera_used_.begin(), camera_used_.end(), 1));
  num_points_ = static_cast<int>(std::count(point_used_.begin(), point_used_.end(), 1));

  // Intrinsics.
  const bool constant_cameras = !options.refine_focal_length &&
                                !options.refine_principal_point && !options.refine_extra_params;
  for (size_t c = 0; c < cameras_.size(); ++c) {
    if (!camera_used_[c]) continue;
    const colmap_models::ModelInfo* info = colmap_models::FindModel(camera_models_[c]);
    std::vector<int> fixed;
    if (!options.refine_focal_length) {
      for (int k = 0; k < info->num_focal; ++k) fixed.push_back(k);
    }
    if (!options.refine_principal_point) {
      fixed.push_back(info->principal_point[0]);
      fixed.push_back(info->principal_point[1]);
    }
    if (!options.refine_extra_params) {
      for (int k = info->first_extra; k < info->num_params; ++k) fixed.push_back(k);
    }
    std::sort(fixed.begin(), fixed.end());
    if (constant_cameras || static_cast<int>(fixed.size()) == info->num_params) {
      problem->SetParameterBlockConstant(cameras_[c].data());
    } else if (!fixed.empty()) {
      problem->SetManifold(cameras_[c].data(), new ceres::SubsetManifold(info->num_params, fixed));
    }
  }

  // Poses.
  for (size_t i = 0; i < num_images; ++i) {
    if (!image_used_[i]) continue;
    if (!options.refine_extrinsics) {
      problem->SetParameterBlockConstant(poses_[i].data());
    } else {
      problem->SetManifold(
          poses_[i].data(),
          new ceres::ProductManifold<ceres::EigenQuaternionManifold, ceres::EuclideanManifold<3>>(
              ceres::EigenQuaternionManifold(), ceres::EuclideanManifold<3>()));
    }
  }
  gauge_images_.clear();
  gauge_fixed_points_ = 0;
  if (options.refine_extrinsics) FixGauge(model, problem);
  return true;
}

void ColmapProblem::FixGauge(const ColmapModel& model, ceres::Problem* problem) {
  std::vector<int> order;
  for (size_t i = 0; i < model.images.size(); ++i) {
    if (image_used_[i]) order.push_back(static_cast<int>(i));
  }
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return model.images[a].id < model.images[b].id; });
  int first = -1;
  int second = -1;
  int fixed_coordinate = 0;
  for (const int i : order) {
    if (first < 0) {
      first = i;
      continue;
    }
    // The translation of first-from-second: the baseline, in the first
    // camera's frame.
    const Eigen::Map<const Eigen::Quaterniond> q1(poses_[first].data());
    const Eigen::Map<const Eigen::Quaterniond> q2(poses_[i].data());
    const Eigen::Map<const Eigen::Vector3d> t1(poses_[first].data() + 4);
    const Eigen::Map<const Eigen::Vector3d> t2(poses_[i].data() + 4);
    const Eigen::Vector3d baseline = t1 - (q1 * q2.conjugate()) * t2;
    Eigen::Index largest = 0;
    if (baseline.cwiseAbs().maxCoeff(&largest) > 1e-9) {
      second = i;
      fixed_coordinate = static_cast<int>(largest);
      break;
    }
  }
  if (first >= 0 && second >= 0) {
    problem->SetParameterBlockConstant(poses_[first].data());
    problem->SetManifold(
        poses_[second].data(),
        new ceres::ProductManifold<ceres::EigenQuaternionManifold, ceres::SubsetManifold>(
            ceres::EigenQuaternionManifold(), ceres::SubsetManifold(3, {fixed_coordinate})));
    gauge_images_ = {model.images[first].id, model.images[second].id};
    return;
  }
  // Three points that span space (in file order).
  Eigen::Matrix3d fixed = Eigen::Matrix3d::Zero();
  int count = 0;
  for (size_t p = 0; p < points_.size() && count < 3; ++p) {
    if (!point_used_[p]) continue;
    fixed.col(count) = Eigen::Map<const Eigen::Vector3d>(points_[p].data());
    if (fixed.colPivHouseholderQr().rank() > count) {
      problem->SetParameterBlockConstant(points_[p].data());
      ++count;
    } else {
      fixed.col(count).setZero();
    }
  }
  gauge_fixed_points_ = count;
}

std::shared_ptr<ceres::ParameterBlockOrdering> ColmapProblem::PointsFirstOrdering() const {
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (size_t p = 0; p < points_.size(); ++p) {
    if (point_used_[p]) ordering->AddElementToGroup(const_cast<double*>(points_[p].data()), 0);
  }
  for (size_t i = 0; i < poses_.size(); ++i) {
    if (image_used_[i]) ordering->AddElementToGroup(const_cast<double*>(poses_[i].data()), 1);
  }
  for (size_t c = 0; c < cameras_.size(); ++c) {
    if (camera_used_[c]) ordering->AddElementToGroup(const_cast<double*>(cameras_[c].data()), 1);
  }
  return ordering;
}

void ColmapProblem::PointErrors(std::vector<double>* sum, std::vector<int>* count,
                                int64_t* not_projected) const {
  sum->assign(points_.size(), 0.0);
  count->assign(points_.size(), 0);
  int64_t failed = 0;
  for (const Observation& o : observations_) {
    double error = 0.0;
    if (ObservationError(camera_models_[o.camera], cameras_[o.camera].data(), poses_[o.image],
                         points_[o.point].data(), o.x, o.y, &error)) {
      (*sum)[o.point] += error;
      ++(*count)[o.point];
    } else {
      ++failed;
    }
  }
  if (not_projected != nullptr) *not_projected = failed;
}

double ColmapProblem::MeanReprojectionError(int64_t* not_projected) const {
  std::vector<double> sum;
  std::vector<int> count;
  PointErrors(&sum, &count, not_projected);
  double total = 0.0;
  int points = 0;
  for (size_t p = 0; p < sum.size(); ++p) {
    if (count[p] == 0) continue;
    total += sum[p] / count[p];
    ++points;
  }
  return points > 0 ? total / points : 0.0;
}

void ColmapProblem::WriteBack(ColmapModel* model) const {
  for (size_t i = 0; i < model->images.size(); ++i) {
    if (!image_used_[i]) continue;
    ColmapImage& image = model->images[i];
    const std::array<double, 7>& pose = poses_[i];
    image.qvec[0] = pose[3];
    image.qvec[1] = pose[0];
    image.qvec[2] = pose[1];
    image.qvec[3] = pose[2];
    for (int k = 0; k < 3; ++k) image.tvec[k] = pose[4 + k];
  }
  for (size_t c = 0; c < model->cameras.size(); ++c) {
    if (camera_used_[c]) model->cameras[c].params = cameras_[c];
  }
  std::vector<double> error_sum;
  std::vector<int> error_count;
  PointErrors(&error_sum, &error_count, nullptr);
  for (size_t p = 0; p < model->points3D.size(); ++p) {
    if (!point_used_[p]) continue;
    ColmapPoint3D& point = model->points3D[p];
    for (int k = 0; k < 3; ++k) point.xyz[k] = points_[p][k];
    if (error_count[p] > 0) point.error = error_sum[p] / error_count[p];
  }
}

}  // namespace examples
}  // namespace ceres_sqrtba
