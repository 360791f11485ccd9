#include "colmap_problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "Eigen/Core"
#include "Eigen/Geometry"
#include "Eigen/QR"
#include "cli_common.h"
#include "autodiff_cost.h"
#include "colmap_camera_models.h"

namespace ceres_sqrtba {
namespace examples {

namespace {

// x_out = pose * x (Eigen quaternion x, y, z, w, then translation).
template <typename T>
Eigen::Matrix<T, 3, 1> Transform(const T* pose, const Eigen::Matrix<T, 3, 1>& x) {
  const Eigen::Map<const Eigen::Quaternion<T>> rotation(pose);
  const Eigen::Map<const Eigen::Matrix<T, 3, 1>> translation(pose + 4);
  return rotation * x + translation;
}

// A point in the camera projected by the camera model, minus the observed
// pixel; 0 when it does not project (behind the camera), as COLMAP's cost
// functions do.
template <typename Model, typename T>
bool PixelResidual(const T* camera, const Eigen::Matrix<T, 3, 1>& in_camera, double observed_x,
                   double observed_y, T* residuals) {
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

// The reprojection error of one observation: the point moved into the
// camera by its pose (cam_from_world), projected, minus the observed pixel.
template <typename Model>
struct ReprojectionError {
  double observed_x;
  double observed_y;

  template <typename T>
  bool operator()(const T* point, const T* pose, const T* camera, T* residuals) const {
    const Eigen::Map<const Eigen::Matrix<T, 3, 1>> world(point);
    return PixelResidual<Model>(camera, Transform(pose, Eigen::Matrix<T, 3, 1>(world)), observed_x,
                                observed_y, residuals);
  }
};

// The same for an image that is not its frame's reference sensor:
// cam_from_world = sensor_from_rig * rig_from_world (COLMAP's
// RigReprojErrorCostFunctor), both poses in the layout above.
template <typename Model>
struct RigReprojectionError {
  double observed_x;
  double observed_y;

  template <typename T>
  bool operator()(const T* point, const T* sensor_from_rig, const T* rig_from_world,
                  const T* camera, T* residuals) const {
    const Eigen::Map<const Eigen::Matrix<T, 3, 1>> world(point);
    const Eigen::Matrix<T, 3, 1> in_rig = Transform(rig_from_world, Eigen::Matrix<T, 3, 1>(world));
    return PixelResidual<Model>(camera, Transform(sensor_from_rig, in_rig), observed_x, observed_y,
                                residuals);
  }
};

// And with sensor_from_rig held constant (COLMAP's
// RigReprojErrorConstantRigCostFunctor): a value of the cost function.
template <typename Model>
struct ConstantRigReprojectionError {
  RigReprojectionError<Model> error;
  std::array<double, 7> sensor_from_rig;

  template <typename T>
  bool operator()(const T* point, const T* rig_from_world, const T* camera, T* residuals) const {
    T sensor[7];
    for (int k = 0; k < 7; ++k) sensor[k] = T(sensor_from_rig[k]);
    return error(point, sensor, rig_from_world, camera, residuals);
  }
};

// kind 0: (point, pose, camera); 1: (point, sensor_from_rig, rig_from_world,
// camera); 2: (point, rig_from_world, camera) with sensor_from_rig constant.
// float_jacobians: ceres_sqrtba::AutoDiffCostFunction (Jacobians in float in
// a single precision solve), else ceres::AutoDiffCostFunction.
struct CostFactory {
  double x;
  double y;
  bool float_jacobians = true;
  int kind = 0;
  const std::array<double, 7>* sensor_from_rig = nullptr;
  ceres::CostFunction* result = nullptr;
  template <typename Functor, int... Ns>
  ceres::CostFunction* Make(Functor* functor) const {
    return NewAutoDiffCostFunction<Functor, 2, Ns...>(functor, float_jacobians);
  }
  template <typename Model>
  void operator()() {
    if (kind == 0) {
      result = Make<ReprojectionError<Model>, 3, 7, Model::kNumParams>(new ReprojectionError<Model>{x, y});
    } else if (kind == 1) {
      result = Make<RigReprojectionError<Model>, 3, 7, 7, Model::kNumParams>(new RigReprojectionError<Model>{x, y});
    } else {
      result = Make<ConstantRigReprojectionError<Model>, 3, 7, Model::kNumParams>(
          new ConstantRigReprojectionError<Model>{{x, y}, *sensor_from_rig});
    }
  }
};

// Eigen layout (x, y, z, w, t) of a COLMAP transform, normalized.
std::array<double, 7> ToEigenLayout(const ColmapRigid3& pose) {
  Eigen::Quaterniond q(pose.qvec[0], pose.qvec[1], pose.qvec[2], pose.qvec[3]);
  q.normalize();
  return {q.x(), q.y(), q.z(), q.w(), pose.tvec[0], pose.tvec[1], pose.tvec[2]};
}

ColmapRigid3 FromEigenLayout(const std::array<double, 7>& pose) {
  ColmapRigid3 r;
  r.qvec[0] = pose[3];
  r.qvec[1] = pose[0];
  r.qvec[2] = pose[1];
  r.qvec[3] = pose[2];
  for (int k = 0; k < 3; ++k) r.tvec[k] = pose[4 + k];
  return r;
}

// a * b in the Eigen layout.
std::array<double, 7> Compose(const std::array<double, 7>& a, const std::array<double, 7>& b) {
  const Eigen::Map<const Eigen::Quaterniond> qa(a.data());
  const Eigen::Map<const Eigen::Quaterniond> qb(b.data());
  const Eigen::Quaterniond q = qa * qb;
  const Eigen::Vector3d t =
      qa * Eigen::Map<const Eigen::Vector3d>(b.data() + 4) + Eigen::Map<const Eigen::Vector3d>(a.data() + 4);
  return {q.x(), q.y(), q.z(), q.w(), t.x(), t.y(), t.z()};
}

ceres::Manifold* PoseManifold(bool constant_rotation) {
  if (constant_rotation) return new ceres::SubsetManifold(7, {0, 1, 2, 3});
  return new ceres::ProductManifold<ceres::EigenQuaternionManifold, ceres::EuclideanManifold<3>>(
      ceres::EigenQuaternionManifold(), ceres::EuclideanManifold<3>());
}

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

ceres::CostFunction* CreateColmapReprojectionError(int model_id, double x, double y, bool float_jacobians) {
  CostFactory factory{x, y, float_jacobians};
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
  rig_model_ = model.has_rigs_and_frames;
  point_rank_ = options.point_rank;
  rank_ = options.rank;
  if (point_rank_ != nullptr && point_rank_->size() != model.points3D.size()) {
    *error = "the share of 3D points lists " + std::to_string(point_rank_->size()) + " points, the model has " +
             std::to_string(model.points3D.size());
    return false;
  }
  // Frames and sensors: a legacy model's images are its frames, all of them
  // reference sensors (COLMAP reads it as one rig per camera and one frame
  // per image).
  frame_poses_.clear();
  sensor_poses_.clear();
  sensor_rig_.clear();
  image_frame_.assign(num_images, -1);
  image_sensor_.assign(num_images, -1);
  std::vector<int> rig_sensor_offset(model.rigs.size(), 0);
  if (rig_model_) {
    for (const ColmapFrame& frame : model.frames) frame_poses_.push_back(ToEigenLayout(frame.rig_from_world));
    for (size_t r = 0; r < model.rigs.size(); ++r) {
      rig_sensor_offset[r] = static_cast<int>(sensor_poses_.size());
      for (const ColmapRigSensor& sensor : model.rigs[r].sensors) {
        sensor_poses_.push_back(ToEigenLayout(sensor.sensor_from_rig));
        sensor_rig_.push_back(static_cast<int>(r));
      }
    }
    for (size_t i = 0; i < num_images; ++i) {
      const int frame = model.ImageFrameIndex(static_cast<int>(i));
      const int sensor = model.ImageSensorIndex(static_cast<int>(i));
      if (frame < 0) {
        *error = "image " + std::to_string(model.images[i].id) + " is in no frame";
        return false;
      }
      image_frame_[i] = frame;
      if (sensor >= 0) {
        image_sensor_[i] = rig_sensor_offset[model.RigIndex(model.frames[frame].rig_id)] + sensor;
      }
    }
  } else {
    for (size_t i = 0; i < num_images; ++i) {
      const ColmapImage& image = model.images[i];
      ColmapRigid3 pose;
      std::copy(image.qvec, image.qvec + 4, pose.qvec);
      std::copy(image.tvec, image.tvec + 3, pose.tvec);
      frame_poses_.push_back(ToEigenLayout(pose));
      image_frame_[i] = static_cast<int>(i);
    }
  }
  image_used_.assign(num_images, 0);
  frame_used_.assign(frame_poses_.size(), 0);
  sensor_used_.assign(sensor_poses_.size(), 0);
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
    const int frame = image_frame_[i];
    const int sensor = image_sensor_[i];
    for (const ColmapPoint2D& point2D : image.points2D) {
      if (point2D.point3D_id == kInvalidPoint3DId) continue;
      const int point = point_index.at(point2D.point3D_id);
      const size_t track = model.points3D[point].track.size();
      if (track < 2 || (options.min_track_length > 0 &&
                        track < static_cast<size_t>(options.min_track_length))) {
        ++skipped_observations_;
        continue;
      }
      observations_.push_back({i, camera, point, point2D.x, point2D.y});
      CostFactory factory{point2D.x, point2D.y, options.float_jacobians};
      if (!OwnsPoint(point)) {
        // Another rank's point: its residual blocks are on that rank; what
        // they use is marked below all the same.
      } else if (sensor < 0) {
        colmap_models::VisitModel(camera_models_[camera], factory);
        problem->AddResidualBlock(factory.result, loss, points_[point].data(),
                                  frame_poses_[frame].data(), cameras_[camera].data());
      } else if (options.refine_sensor_from_rig) {
        factory.kind = 1;
        colmap_models::VisitModel(camera_models_[camera], factory);
        problem->AddResidualBlock(factory.result, loss, points_[point].data(),
                                  sensor_poses_[sensor].data(), frame_poses_[frame].data(),
                                  cameras_[camera].data());
      } else {
        factory.kind = 2;
        factory.sensor_from_rig = &sensor_poses_[sensor];
        colmap_models::VisitModel(camera_models_[camera], factory);
        problem->AddResidualBlock(factory.result, loss, points_[point].data(),
                                  frame_poses_[frame].data(), cameras_[camera].data());
      }
      if (sensor >= 0 && options.refine_sensor_from_rig) sensor_used_[sensor] = 1;
      image_used_[i] = 1;
      frame_used_[frame] = 1;
      camera_used_[camera] = 1;
      point_used_[point] = 1;
    }
  }
  // The problem owns the loss once a residual block holds it.
  if (loss != nullptr && problem->NumResidualBlocks() == 0) delete loss;
  if (observations_.empty()) {
    *error = "the model has no observation of a 3D point seen in at least " +
             std::to_string(std::max(2, options.min_track_length)) + " images: nothing to adjust";
    return false;
  }
  num_images_ = static_cast<int>(std::count(image_used_.begin(), image_used_.end(), 1));
  num_frames_ = static_cast<int>(std::count(frame_used_.begin(), frame_used_.end(), 1));
  num_sensor_poses_ = static_cast<int>(std::count(sensor_used_.begin(), sensor_used_.end(), 1));
  num_cameras_ = static_cast<int>(std::count(camera_used_.begin(), camera_used_.end(), 1));
  num_points_ = static_cast<int>(std::count(point_used_.begin(), point_used_.end(), 1));
  // Every camera-side block the whole problem uses, on every rank, also where
  // none of this rank's residual blocks reaches it (a no-op for the others).
  for (size_t f = 0; f < frame_poses_.size(); ++f) {
    if (frame_used_[f]) problem->AddParameterBlock(frame_poses_[f].data(), 7);
  }
  for (size_t k = 0; k < sensor_poses_.size(); ++k) {
    if (sensor_used_[k]) problem->AddParameterBlock(sensor_poses_[k].data(), 7);
  }
  for (size_t c = 0; c < cameras_.size(); ++c) {
    if (camera_used_[c]) problem->AddParameterBlock(cameras_[c].data(), static_cast<int>(cameras_[c].size()));
  }

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

  // Poses: rig_from_world per frame, sensor_from_rig per used sensor.
  for (size_t f = 0; f < frame_poses_.size(); ++f) {
    if (!frame_used_[f]) continue;
    if (!options.refine_rig_from_world) {
      problem->SetParameterBlockConstant(frame_poses_[f].data());
    } else {
      problem->SetManifold(frame_poses_[f].data(),
                           PoseManifold(options.constant_rig_from_world_rotation));
    }
  }
  // A rig whose reference sensor has no image in the problem: its sensors'
  // poses constant (COLMAP's ParameterizeRigsAndFrames).
  std::vector<char> rig_has_reference(model.rigs.size(), 0);
  for (size_t i = 0; i < num_images; ++i) {
    if (image_used_[i] && rig_model_ && image_sensor_[i] < 0) {
      rig_has_reference[model.RigIndex(model.frames[image_frame_[i]].rig_id)] = 1;
    }
  }
  for (size_t k = 0; k < sensor_poses_.size(); ++k) {
    if (!sensor_used_[k]) continue;
    problem->SetManifold(sensor_poses_[k].data(), PoseManifold(false));
    if (!rig_has_reference[sensor_rig_[k]]) problem->SetParameterBlockConstant(sensor_poses_[k].data());
  }

  // Points.
  if (!options.refine_points3D) {
    for (size_t p = 0; p < points_.size(); ++p) {
      if (point_used_[p] && OwnsPoint(static_cast<int>(p))) problem->SetParameterBlockConstant(points_[p].data());
    }
  }
  gauge_images_.clear();
  gauge_frames_.clear();
  gauge_fixed_points_ = 0;
  if (options.refine_rig_from_world) FixGauge(model, options, problem);
  return true;
}

void ColmapProblem::FixGauge(const ColmapModel& model, const ColmapBundleOptions& options,
                             ceres::Problem* problem) {
  std::vector<int> order;
  for (size_t i = 0; i < model.images.size(); ++i) {
    if (image_used_[i]) order.push_back(static_cast<int>(i));
  }
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return model.images[a].id < model.images[b].id; });
  // An image whose camera's pose in its frame is fixed: a reference sensor,
  // or a sensor whose sensor_from_rig is constant.
  auto fixed_sensor = [&](int i) {
    const int sensor = image_sensor_[i];
    return sensor < 0 || !options.refine_sensor_from_rig ||
           problem->IsParameterBlockConstant(sensor_poses_[sensor].data());
  };
  int first = -1;
  int second = -1;
  int fixed_coordinate = 0;
  for (const int i : order) {
    if (!fixed_sensor(i)) continue;
    if (first < 0) {
      first = i;
      continue;
    }
    if (image_frame_[i] == image_frame_[first]) continue;
    // The translation of frame1_from_frame2: the baseline, in the first
    // frame's coordinates.
    const std::array<double, 7>& f1 = frame_poses_[image_frame_[first]];
    const std::array<double, 7>& f2 = frame_poses_[image_frame_[i]];
    const Eigen::Map<const Eigen::Quaterniond> q1(f1.data());
    const Eigen::Map<const Eigen::Quaterniond> q2(f2.data());
    const Eigen::Map<const Eigen::Vector3d> t1(f1.data() + 4);
    const Eigen::Map<const Eigen::Vector3d> t2(f2.data() + 4);
    const Eigen::Vector3d baseline = t1 - (q1 * q2.conjugate()) * t2;
    Eigen::Index largest = 0;
    if (baseline.cwiseAbs().maxCoeff(&largest) > 1e-9) {
      second = i;
      fixed_coordinate = static_cast<int>(largest);
      break;
    }
  }
  if (first >= 0 && second >= 0) {
    double* frame1 = frame_poses_[image_frame_[first]].data();
    double* frame2 = frame_poses_[image_frame_[second]].data();
    problem->SetParameterBlockConstant(frame1);
    if (options.constant_rig_from_world_rotation) {
      problem->SetManifold(frame2, new ceres::SubsetManifold(7, {0, 1, 2, 3, 4 + fixed_coordinate}));
    } else {
      problem->SetManifold(
          frame2, new ceres::ProductManifold<ceres::EigenQuaternionManifold, ceres::SubsetManifold>(
                      ceres::EigenQuaternionManifold(), ceres::SubsetManifold(3, {fixed_coordinate})));
    }
    gauge_images_ = {model.images[first].id, model.images[second].id};
    if (rig_model_) {
      gauge_frames_ = {model.frames[image_frame_[first]].id, model.frames[image_frame_[second]].id};
    } else {
      gauge_frames_ = gauge_images_;
    }
    return;
  }
  // Three points that span space (in file order); each held fixed by the
  // rank whose problem holds it.
  Eigen::Matrix3d fixed = Eigen::Matrix3d::Zero();
  int count = 0;
  for (size_t p = 0; p < points_.size() && count < 3; ++p) {
    if (!point_used_[p] || !options.refine_points3D) continue;
    fixed.col(count) = Eigen::Map<const Eigen::Vector3d>(points_[p].data());
    if (fixed.colPivHouseholderQr().rank() > count) {
      if (OwnsPoint(static_cast<int>(p))) problem->SetParameterBlockConstant(points_[p].data());
      ++count;
    } else {
      fixed.col(count).setZero();
    }
  }
  gauge_fixed_points_ = count;
}

std::array<double, 7> ColmapProblem::CamFromWorld(int image) const {
  const std::array<double, 7>& frame = frame_poses_[image_frame_[image]];
  const int sensor = image_sensor_[image];
  return sensor < 0 ? frame : Compose(sensor_poses_[sensor], frame);
}

std::shared_ptr<ceres::ParameterBlockOrdering> ColmapProblem::PointsFirstOrdering() const {
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (size_t p = 0; p < points_.size(); ++p) {
    if (point_used_[p] && OwnsPoint(static_cast<int>(p))) {
      ordering->AddElementToGroup(const_cast<double*>(points_[p].data()), 0);
    }
  }
  for (size_t f = 0; f < frame_poses_.size(); ++f) {
    if (frame_used_[f]) ordering->AddElementToGroup(const_cast<double*>(frame_poses_[f].data()), 1);
  }
  for (size_t k = 0; k < sensor_poses_.size(); ++k) {
    if (sensor_used_[k]) ordering->AddElementToGroup(const_cast<double*>(sensor_poses_[k].data()), 1);
  }
  for (size_t c = 0; c < cameras_.size(); ++c) {
    if (camera_used_[c]) ordering->AddElementToGroup(const_cast<double*>(cameras_[c].data()), 1);
  }
  return ordering;
}

std::vector<double*> ColmapProblem::CameraBlocks() {
  std::vector<double*> blocks;
  for (size_t f = 0; f < frame_poses_.size(); ++f) {
    if (frame_used_[f]) blocks.push_back(frame_poses_[f].data());
  }
  for (size_t k = 0; k < sensor_poses_.size(); ++k) {
    if (sensor_used_[k]) blocks.push_back(sensor_poses_[k].data());
  }
  for (size_t c = 0; c < cameras_.size(); ++c) {
    if (camera_used_[c]) blocks.push_back(cameras_[c].data());
  }
  return blocks;
}

void ColmapProblem::PointErrors(std::vector<double>* sum, std::vector<int>* count,
                                int64_t* not_projected) const {
  sum->assign(points_.size(), 0.0);
  count->assign(points_.size(), 0);
  int64_t failed = 0;
  for (const Observation& o : observations_) {
    double error = 0.0;
    if (ObservationError(camera_models_[o.camera], cameras_[o.camera].data(), CamFromWorld(o.image),
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
  if (rig_model_) {
    for (size_t f = 0; f < model->frames.size(); ++f) {
      if (frame_used_[f]) model->frames[f].rig_from_world = FromEigenLayout(frame_poses_[f]);
    }
    size_t k = 0;
    for (ColmapRig& rig : model->rigs) {
      for (ColmapRigSensor& sensor : rig.sensors) {
        if (sensor_used_[k]) sensor.sensor_from_rig = FromEigenLayout(sensor_poses_[k]);
        ++k;
      }
    }
  }
  for (size_t i = 0; i < model->images.size(); ++i) {
    // Every image of a rig model: its frame or sensor may have moved with
    // another image's observations.
    if (!rig_model_ && !image_used_[i]) continue;
    const ColmapRigid3 pose = rig_model_ ? ColmapCamFromWorld(*model, static_cast<int>(i))
                                         : FromEigenLayout(frame_poses_[i]);
    ColmapImage& image = model->images[i];
    std::copy(pose.qvec, pose.qvec + 4, image.qvec);
    std::copy(pose.tvec, pose.tvec + 3, image.tvec);
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

void ColmapProblem::ImagePoseBlocks(const ColmapModel& model, std::vector<uint64_t>* ids,
                                    std::vector<const double*>* blocks) const {
  for (size_t i = 0; i < model.images.size(); ++i) {
    if (!image_used_[i] || image_sensor_[i] >= 0 || !frame_used_[image_frame_[i]]) continue;
    ids->push_back(model.images[i].id);
    blocks->push_back(frame_poses_[image_frame_[i]].data());
  }
}

void ColmapProblem::PointBlocks(const ColmapModel& model, std::vector<uint64_t>* ids,
                                std::vector<const double*>* blocks) const {
  for (size_t p = 0; p < model.points3D.size(); ++p) {
    if (!point_used_[p]) continue;
    ids->push_back(model.points3D[p].id);
    blocks->push_back(points_[p].data());
  }
}

}  // namespace examples
}  // namespace ceres_sqrtba
