// Bundle adjustment problems shaped as the SfM pipelines build them, written
// from their public sources (COLMAP's bundle adjuster and rigs, GLOMAP's
// global positioning, Theia's homogeneous points, OpenMVG's Brown camera and
// ground control points, OpenSfM's dynamic cost functions, AliceVision's
// evaluation callback). Shared by tests/pipeline_shapes_test.cc (small
// scenes, compared with ceres::Solve) and benchmarks/pipeline_benchmark.cc
// (pipeline-sized scenes, timed against the pipelines' own solver options).
//
// A problem is built afresh for every solve from a copy of its initial values
// (SolvePipelineProblem), so that several solvers start from the same point.
#ifndef CERES_SQRTBA_TESTS_PIPELINE_SHAPES_H_
#define CERES_SQRTBA_TESTS_PIPELINE_SHAPES_H_

#include <Eigen/Core>
#include <Eigen/Geometry>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres/rotation.h"
#include "ceres_sqrtba/autodiff_cost_function.h"
#include "ceres_sqrtba/float_jacobians.h"
#include "ceres_sqrtba/solver.h"
#include "rounding_jitter.h"

namespace ceres_sqrtba {
namespace testing {

// A scene: images on an arc looking at points near the origin, noisy initial
// values. Poses are world-to-camera, x_cam = R(q) X + t.
struct Scene {
  std::vector<Eigen::Quaterniond> rotations;
  std::vector<Eigen::Vector3d> translations;
  std::vector<Eigen::Vector3d> points;
  // Before the noise (control points use them).
  std::vector<Eigen::Quaterniond> true_rotations;
  std::vector<Eigen::Vector3d> true_translations, true_points;
  struct Observation {
    int image, point;
    Eigen::Vector2d pixel;
  };
  std::vector<Observation> observations;
  double focal = 800.0, cx = 320.0, cy = 240.0, k = -0.05;
};

inline Eigen::Vector2d Project(const Scene& s, const Eigen::Vector3d& x) {
  const double u = x.x() / x.z(), v = x.y() / x.z();
  const double d = 1.0 + s.k * (u * u + v * v);
  return {s.focal * d * u + s.cx, s.focal * d * v + s.cy};
}

// num_images cameras, num_points points. observations_per_point = 0: every
// image sees every point but one in four ((image + point) % 4 == 0), the
// dense visibility of small scenes; > 0: each point is seen by that many
// consecutive images starting at a random one, the banded visibility of a
// sequence (a sparse reduced camera matrix).
inline Scene MakeScene(int num_images, int num_points, unsigned seed, int observations_per_point = 0) {
  Scene s;
  std::mt19937 rng(seed);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  ::ceres_sqrtba::testing::UniformRealDistribution u(-1.5, 1.5);
  std::vector<Eigen::Quaterniond> true_r;
  std::vector<Eigen::Vector3d> true_t;
  for (int i = 0; i < num_images; ++i) {
    // Camera centre on a circle of radius 8, looking at the origin (+z).
    const double angle = 0.8 * i / num_images;
    const Eigen::Vector3d centre(8.0 * std::sin(angle), 0.3 * n(rng), -8.0 * std::cos(angle));
    const Eigen::Vector3d z = -centre.normalized();
    const Eigen::Vector3d x = Eigen::Vector3d::UnitY().cross(z).normalized();
    Eigen::Matrix3d r;
    r.row(0) = x;
    r.row(1) = z.cross(x);
    r.row(2) = z;
    true_r.emplace_back(r);
    true_t.push_back(-r * centre);
  }
  for (int j = 0; j < num_points; ++j) s.true_points.emplace_back(u(rng), u(rng), u(rng));
  const int track = std::min(observations_per_point, num_images);
  std::uniform_int_distribution<int> first(0, std::max(0, num_images - track));
  for (int j = 0; j < num_points; ++j) {
    const int begin = track > 0 ? first(rng) : 0;
    const int end = track > 0 ? begin + track : num_images;
    for (int i = begin; i < end; ++i) {
      if (track == 0 && (i + j) % 4 == 0) continue;  // not every image sees every point
      const Eigen::Vector3d xc = true_r[i] * s.true_points[j] + true_t[i];
      s.observations.push_back({i, j, Project(s, xc) + 0.5 * Eigen::Vector2d(n(rng), n(rng))});
    }
  }
  for (int i = 0; i < num_images; ++i) {
    const Eigen::Quaterniond dq(
        Eigen::AngleAxisd(0.01 * n(rng), Eigen::Vector3d(n(rng), n(rng), n(rng)).normalized()));
    s.rotations.push_back((dq * true_r[i]).normalized());
    s.translations.push_back(true_t[i] + 0.05 * Eigen::Vector3d(n(rng), n(rng), n(rng)));
  }
  for (int j = 0; j < num_points; ++j) {
    s.points.push_back(s.true_points[j] + 0.05 * Eigen::Vector3d(n(rng), n(rng), n(rng)));
  }
  s.true_rotations = true_r;
  s.true_translations = true_t;
  s.focal *= 1.02;
  return s;
}

// COLMAP's SIMPLE_RADIAL reprojection error on a 7-vector pose
// [qx qy qz qw tx ty tz] and shared intrinsics [f cx cy k].
struct ReprojectionError {
  explicit ReprojectionError(const Eigen::Vector2d& pixel) : pixel(pixel) {}
  template <typename T>
  bool operator()(const T* pose, const T* intrinsics, const T* point, T* r) const {
    const Eigen::Map<const Eigen::Quaternion<T>> q(pose);
    const Eigen::Map<const Eigen::Matrix<T, 3, 1>> t(pose + 4), x(point);
    const Eigen::Matrix<T, 3, 1> xc = q * x + t;
    return Residual(xc, intrinsics, r);
  }
  template <typename T>
  bool Residual(const Eigen::Matrix<T, 3, 1>& xc, const T* intrinsics, T* r) const {
    const T u = xc[0] / xc[2], v = xc[1] / xc[2];
    const T d = T(1.0) + intrinsics[3] * (u * u + v * v);
    r[0] = intrinsics[0] * d * u + intrinsics[1] - T(pixel.x());
    r[1] = intrinsics[0] * d * v + intrinsics[2] - T(pixel.y());
    return true;
  }
  Eigen::Vector2d pixel;
};

// A rig: image pose = camera-from-rig * rig-from-world (both 7-vectors).
struct RigReprojectionError : ReprojectionError {
  using ReprojectionError::ReprojectionError;
  template <typename T>
  bool operator()(const T* rig_from_world, const T* cam_from_rig, const T* intrinsics, const T* point,
                  T* r) const {
    const Eigen::Map<const Eigen::Quaternion<T>> q1(rig_from_world), q2(cam_from_rig);
    const Eigen::Map<const Eigen::Matrix<T, 3, 1>> t1(rig_from_world + 4), t2(cam_from_rig + 4), x(point);
    const Eigen::Matrix<T, 3, 1> xc = q2 * (q1 * x + t1) + t2;
    return Residual(xc, intrinsics, r);
  }
};

// Theia: a homogeneous 4-vector point on the sphere.
struct HomogeneousReprojectionError : ReprojectionError {
  using ReprojectionError::ReprojectionError;
  template <typename T>
  bool operator()(const T* pose, const T* intrinsics, const T* point, T* r) const {
    const Eigen::Map<const Eigen::Quaternion<T>> q(pose);
    const Eigen::Map<const Eigen::Matrix<T, 3, 1>> t(pose + 4), x(point);
    const Eigen::Matrix<T, 3, 1> xc = q * x + t * point[3];
    return Residual(xc, intrinsics, r);
  }
};

// OpenMVG's pinhole camera with Brown distortion (radial k1 k2 k3,
// tangential t1 t2): intrinsics [f cx cy k1 k2 k3 t1 t2] first, then the pose
// as angle-axis + translation [rx ry rz tx ty tz], then the point. A weight
// scales the residual (OpenMVG weights its ground control points this way).
struct BrownReprojectionError {
  BrownReprojectionError(const Eigen::Vector2d& pixel, double weight) : pixel(pixel), weight(weight) {}
  template <typename T>
  bool operator()(const T* intrinsics, const T* pose, const T* point, T* r) const {
    T xc[3];
    ceres::AngleAxisRotatePoint(pose, point, xc);
    for (int k = 0; k < 3; ++k) xc[k] += pose[3 + k];
    const T x = xc[0] / xc[2], y = xc[1] / xc[2];
    const T r2 = x * x + y * y;
    const T radial = T(1.0) + r2 * (intrinsics[3] + r2 * (intrinsics[4] + r2 * intrinsics[5]));
    const T& t1 = intrinsics[6];
    const T& t2 = intrinsics[7];
    const T xd = x * radial + T(2.0) * t1 * x * y + t2 * (r2 + T(2.0) * x * x);
    const T yd = y * radial + t1 * (r2 + T(2.0) * y * y) + T(2.0) * t2 * x * y;
    r[0] = T(weight) * (intrinsics[0] * xd + intrinsics[1] - T(pixel.x()));
    r[1] = T(weight) * (intrinsics[0] * yd + intrinsics[2] - T(pixel.y()));
    return true;
  }
  Eigen::Vector2d pixel;
  double weight;
};

// The values a problem is built on, copied per solve. `extra` holds what a
// shape needs beyond poses, points and intrinsics (GLOMAP's scales, OpenMVG's
// control points).
struct Values {
  std::vector<std::vector<double>> poses, points, extra;
  std::vector<double> intrinsics;
};

inline Values ValuesOf(const Scene& s, bool homogeneous = false) {
  Values v;
  for (size_t i = 0; i < s.rotations.size(); ++i) {
    const Eigen::Quaterniond& q = s.rotations[i];
    const Eigen::Vector3d& t = s.translations[i];
    v.poses.push_back({q.x(), q.y(), q.z(), q.w(), t.x(), t.y(), t.z()});
  }
  for (const Eigen::Vector3d& p : s.points) {
    if (homogeneous) {
      const Eigen::Vector4d h = Eigen::Vector4d(p.x(), p.y(), p.z(), 1.0).normalized();
      v.points.push_back({h[0], h[1], h[2], h[3]});
    } else {
      v.points.push_back({p.x(), p.y(), p.z()});
    }
  }
  v.intrinsics = {s.focal, s.cx, s.cy, s.k};
  return v;
}

inline ceres::Manifold* PoseManifold() {
  return new ceres::ProductManifold<ceres::EigenQuaternionManifold, ceres::EuclideanManifold<3>>();
}

// Manifolds and constancy only for the blocks the residuals added (an image
// of a large sparse scene may see no point).
inline void SetManifoldIfPresent(ceres::Problem* problem, double* block, ceres::Manifold* manifold) {
  if (problem->HasParameterBlock(block)) {
    problem->SetManifold(block, manifold);
  } else {
    delete manifold;
  }
}
inline void SetConstantIfPresent(ceres::Problem* problem, double* block) {
  if (problem->HasParameterBlock(block)) problem->SetParameterBlockConstant(block);
}

using Build = std::function<void(Values*, ceres::Problem*)>;
// The problem's evaluation callback, made for the values of one solve.
using MakeCallback = std::function<std::unique_ptr<ceres::EvaluationCallback>(Values*)>;

// One pipeline's problem: its initial values, how to build it on a copy of
// them, and (AliceVision) the evaluation callback it needs.
struct PipelineProblem {
  Values values;
  Build build;
  MakeCallback make_callback;
};

// Builds the problem on a copy of the initial values and solves it; with
// solve_seconds, the wall time of the Solve call alone (building excluded).
inline Solver::Summary SolvePipelineProblem(const PipelineProblem& p, const Solver::Options& options,
                                            double* solve_seconds = nullptr) {
  Values v = p.values;
  const std::unique_ptr<ceres::EvaluationCallback> callback = p.make_callback ? p.make_callback(&v) : nullptr;
  ceres::Problem::Options problem_options;
  problem_options.evaluation_callback = callback.get();
  ceres::Problem problem(problem_options);
  p.build(&v, &problem);
  Solver::Summary summary;
  const auto start = std::chrono::steady_clock::now();
  Solve(options, &problem, &summary);
  if (solve_seconds != nullptr) {
    *solve_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return summary;
}

// COLMAP's problem: shared intrinsics with the principal point held
// (SubsetManifold), a Soft-L1 loss, the first pose constant (the gauge); the
// poses listed in `constant_images` constant too (COLMAP's local bundle
// adjustment holds the neighbouring images that way).
inline PipelineProblem ColmapProblem(const Scene& scene, double loss_scale = 1.0,
                                     std::vector<int> constant_images = {0}) {
  auto s = std::make_shared<const Scene>(scene);
  PipelineProblem p;
  p.values = ValuesOf(scene);
  p.build = [s, loss_scale, constant_images](Values* v, ceres::Problem* problem) {
    ceres::LossFunction* loss = new ceres::SoftLOneLoss(loss_scale);
    for (const Scene::Observation& o : s->observations) {
      problem->AddResidualBlock(
          new ceres_sqrtba::AutoDiffCostFunction<ReprojectionError, 2, 7, 4, 3>(new ReprojectionError(o.pixel)), loss,
          v->poses[o.image].data(), v->intrinsics.data(), v->points[o.point].data());
    }
    for (auto& pose : v->poses) SetManifoldIfPresent(problem, pose.data(), PoseManifold());
    SetManifoldIfPresent(problem, v->intrinsics.data(), new ceres::SubsetManifold(4, {1, 2}));
    for (int i : constant_images) SetConstantIfPresent(problem, v->poses[i].data());
  };
  return p;
}

// COLMAP's (and AliceVision's) rigs: two cameras on each rig pose, the
// camera-from-rig poses shared by the rigs, four parameter blocks per
// residual; the first rig pose and the first camera-from-rig constant.
// Rig r holds images 2r and 2r+1 (an even number of images).
inline PipelineProblem RigProblem(const Scene& scene, double loss_scale = 2.0) {
  auto s = std::make_shared<const Scene>(scene);
  PipelineProblem p;
  Values values = ValuesOf(scene);
  // The rig pose is image 2r's, the second camera's camera-from-rig relates
  // images 0 and 1.
  const int num_rigs = static_cast<int>(scene.rotations.size()) / 2;
  std::vector<std::vector<double>> rig_from_world(num_rigs);
  for (int r = 0; r < num_rigs; ++r) rig_from_world[r] = values.poses[2 * r];
  const Eigen::Quaterniond q0 = scene.rotations[0], q1 = scene.rotations[1];
  const Eigen::Quaterniond rel = (q1 * q0.conjugate()).normalized();
  const Eigen::Vector3d t_rel = scene.translations[1] - rel * scene.translations[0];
  values.poses = rig_from_world;
  values.poses.push_back({0, 0, 0, 1, 0, 0, 0});
  values.poses.push_back({rel.x(), rel.y(), rel.z(), rel.w(), t_rel.x(), t_rel.y(), t_rel.z()});
  p.values = std::move(values);
  p.build = [s, num_rigs, loss_scale](Values* v, ceres::Problem* problem) {
    ceres::LossFunction* loss = new ceres::CauchyLoss(loss_scale);
    for (const Scene::Observation& o : s->observations) {
      problem->AddResidualBlock(new ceres_sqrtba::AutoDiffCostFunction<RigReprojectionError, 2, 7, 7, 4, 3>(
                                    new RigReprojectionError(o.pixel)),
                                loss, v->poses[o.image / 2].data(), v->poses[num_rigs + o.image % 2].data(),
                                v->intrinsics.data(), v->points[o.point].data());
    }
    for (auto& pose : v->poses) SetManifoldIfPresent(problem, pose.data(), PoseManifold());
    SetManifoldIfPresent(problem, v->intrinsics.data(), new ceres::SubsetManifold(4, {1, 2}));
    SetConstantIfPresent(problem, v->poses[0].data());
    SetConstantIfPresent(problem, v->poses[num_rigs].data());
  };
  return p;
}

// Theia: homogeneous 4-vector points on the sphere (SphereManifold), a Huber
// loss.
inline PipelineProblem TheiaProblem(const Scene& scene, double loss_scale = 2.0) {
  auto s = std::make_shared<const Scene>(scene);
  PipelineProblem p;
  p.values = ValuesOf(scene, /*homogeneous=*/true);
  p.build = [s, loss_scale](Values* v, ceres::Problem* problem) {
    ceres::LossFunction* loss = new ceres::HuberLoss(loss_scale);
    for (const Scene::Observation& o : s->observations) {
      problem->AddResidualBlock(new ceres_sqrtba::AutoDiffCostFunction<HomogeneousReprojectionError, 2, 7, 4, 4>(
                                    new HomogeneousReprojectionError(o.pixel)),
                                loss, v->poses[o.image].data(), v->intrinsics.data(), v->points[o.point].data());
    }
    for (auto& pose : v->poses) SetManifoldIfPresent(problem, pose.data(), PoseManifold());
    for (auto& point : v->points) SetManifoldIfPresent(problem, point.data(), new ceres::SphereManifold<4>());
    SetManifoldIfPresent(problem, v->intrinsics.data(), new ceres::SubsetManifold(4, {1, 2}));
    SetConstantIfPresent(problem, v->poses[0].data());
  };
  return p;
}

// OpenSfM: DynamicAutoDiffCostFunction residuals (sizes set at run time),
// intrinsics held constant.
struct DynamicReprojection {
  explicit DynamicReprojection(const Eigen::Vector2d& pixel) : e(pixel) {}
  template <typename T>
  bool operator()(T const* const* parameters, T* r) const {
    return e(parameters[0], parameters[1], parameters[2], r);
  }
  ReprojectionError e;
};

inline PipelineProblem OpenSfmProblem(const Scene& scene, double loss_scale = 1.0) {
  auto s = std::make_shared<const Scene>(scene);
  PipelineProblem p;
  p.values = ValuesOf(scene);
  p.build = [s, loss_scale](Values* v, ceres::Problem* problem) {
    ceres::LossFunction* loss = new ceres::CauchyLoss(loss_scale);
    for (const Scene::Observation& o : s->observations) {
      auto* cost = new ceres_sqrtba::DynamicAutoDiffCostFunction<DynamicReprojection, 4>(new DynamicReprojection(o.pixel));
      cost->AddParameterBlock(7);
      cost->AddParameterBlock(4);
      cost->AddParameterBlock(3);
      cost->SetNumResiduals(2);
      problem->AddResidualBlock(cost, loss, v->poses[o.image].data(), v->intrinsics.data(),
                                v->points[o.point].data());
    }
    for (auto& pose : v->poses) SetManifoldIfPresent(problem, pose.data(), PoseManifold());
    SetConstantIfPresent(problem, v->poses[0].data());
    SetConstantIfPresent(problem, v->intrinsics.data());
  };
  return p;
}

// GLOMAP's global positioning: camera centres and points, each observation a
// direction v_ij with its own scale s_ij >= lower bound, residual
// (X_j - C_i) - s_ij v_ij. The scales are one-dimensional and each appears in
// one residual: they are the eliminated blocks. Bounded: Ceres' line search
// follows every step, in both solvers. Two centres fixed: the gauge
// (translation and scale; with one, the scene shrinks onto it and the scales
// onto their bound).
struct DirectionError {
  explicit DirectionError(const Eigen::Vector3d& v) : v(v) {}
  template <typename T>
  bool operator()(const T* centre, const T* point, const T* scale, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = point[k] - centre[k] - scale[0] * T(v[k]);
    return true;
  }
  Eigen::Vector3d v;
};

inline PipelineProblem GlomapPositioningProblem(const Scene& scene, unsigned seed, double loss_scale = 0.1) {
  auto s = std::make_shared<const Scene>(scene);
  std::mt19937 rng(seed);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 0.02);
  PipelineProblem p;
  Values& values = p.values;
  auto directions = std::make_shared<std::vector<Eigen::Vector3d>>();
  for (size_t i = 0; i < scene.rotations.size(); ++i) {
    const Eigen::Vector3d c = -(scene.rotations[i].conjugate() * scene.translations[i]);
    values.poses.push_back({c.x() + 0.3, c.y() - 0.2, c.z() + 0.1});
  }
  for (const Eigen::Vector3d& pt : scene.points) values.points.push_back({pt.x(), pt.y(), pt.z()});
  for (const Scene::Observation& o : scene.observations) {
    const Eigen::Vector3d c = -(scene.rotations[o.image].conjugate() * scene.translations[o.image]);
    const Eigen::Vector3d d = (scene.points[o.point] - c).normalized() + Eigen::Vector3d(n(rng), n(rng), n(rng));
    directions->push_back(d.normalized());
  }
  // One scale per observation: values.intrinsics holds them.
  values.intrinsics.assign(scene.observations.size(), 1.0);
  const int second_fixed = static_cast<int>(scene.rotations.size()) / 2;
  p.build = [s, directions, second_fixed, loss_scale](Values* v, ceres::Problem* problem) {
    ceres::LossFunction* loss = new ceres::HuberLoss(loss_scale);
    for (size_t k = 0; k < s->observations.size(); ++k) {
      const Scene::Observation& o = s->observations[k];
      problem->AddResidualBlock(
          new ceres_sqrtba::AutoDiffCostFunction<DirectionError, 3, 3, 3, 1>(new DirectionError((*directions)[k])), loss,
          v->poses[o.image].data(), v->points[o.point].data(), v->intrinsics.data() + k);
      problem->SetParameterLowerBound(v->intrinsics.data() + k, 0, 1e-5);
    }
    SetConstantIfPresent(problem, v->poses[0].data());
    SetConstantIfPresent(problem, v->poses[second_fixed].data());
  };
  return p;
}

// AliceVision: an evaluation callback that recomputes a per-image value the
// residuals read (here the pose's rotation matrix), so that residuals are
// only right after the callback has run at the point being evaluated.
class RotationCache : public ceres::EvaluationCallback {
 public:
  explicit RotationCache(std::vector<std::vector<double>>* poses) : poses_(poses), rotations_(poses->size()) {}
  void PrepareForEvaluation(bool, bool) override {
    for (size_t i = 0; i < poses_->size(); ++i) {
      const std::vector<double>& p = (*poses_)[i];
      rotations_[i] = Eigen::Quaterniond(p[3], p[0], p[1], p[2]).normalized().toRotationMatrix();
    }
  }
  const Eigen::Matrix3d& rotation(int i) const { return rotations_[i]; }

 private:
  std::vector<std::vector<double>>* poses_;
  std::vector<Eigen::Matrix3d> rotations_;
};

// The point's residual through the cached rotation (analytic: the rotation
// is data here, only translation, intrinsics and point vary in it). It opts
// in to float Jacobians (FloatJacobians) as an analytic cost function would:
// the same derivative code on Jet<float, 10>.
class CachedRotationError : public ceres::SizedCostFunction<2, 7, 4, 3>, public FloatJacobians {
 public:
  CachedRotationError(const RotationCache* const* cache, int image, const Eigen::Vector2d& pixel)
      : cache_(cache), image_(image), e_(pixel) {}
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    ceres::Jet<double, 10> out[2];
    Compute(parameters, out);
    for (int a = 0; a < 2; ++a) residuals[a] = out[a].a;
    CopyJacobians(out, jacobians);
    return true;
  }
  bool EvaluateFloatJacobians(double const* const* parameters, double* residuals,
                              float** jacobians) const override {
    Evaluate(parameters, residuals, nullptr);
    ceres::Jet<float, 10> out[2];
    Compute(parameters, out);
    CopyJacobians(out, jacobians);
    return true;
  }

 private:
  // The residuals and their derivatives with respect to the translation,
  // the intrinsics and the point, in S.
  template <typename S>
  void Compute(double const* const* parameters, ceres::Jet<S, 10>* out) const {
    const Eigen::Matrix3d& r = (*cache_)->rotation(image_);
    using Jet = ceres::Jet<S, 10>;
    const double* t = parameters[0] + 4;
    Jet in[10];
    for (int k = 0; k < 3; ++k) in[k] = Jet(static_cast<S>(t[k]), k);
    for (int k = 0; k < 4; ++k) in[3 + k] = Jet(static_cast<S>(parameters[1][k]), 3 + k);
    for (int k = 0; k < 3; ++k) in[7 + k] = Jet(static_cast<S>(parameters[2][k]), 7 + k);
    Eigen::Matrix<Jet, 3, 1> xc;
    for (int a = 0; a < 3; ++a) {
      xc[a] = in[a];
      for (int b = 0; b < 3; ++b) xc[a] += Jet(static_cast<S>(r(a, b))) * in[7 + b];
    }
    e_.Residual(xc, in + 3, out);
  }
  template <typename S>
  static void CopyJacobians(const ceres::Jet<S, 10>* out, S** jacobians) {
    if (jacobians == nullptr) return;
    for (int a = 0; a < 2; ++a) {
      if (jacobians[0] != nullptr) {
        for (int k = 0; k < 7; ++k) jacobians[0][a * 7 + k] = k < 4 ? S(0) : out[a].v[k - 4];
      }
      if (jacobians[1] != nullptr) {
        for (int k = 0; k < 4; ++k) jacobians[1][a * 4 + k] = out[a].v[3 + k];
      }
      if (jacobians[2] != nullptr) {
        for (int k = 0; k < 3; ++k) jacobians[2][a * 3 + k] = out[a].v[7 + k];
      }
    }
  }

  const RotationCache* const* cache_;  // the current solve's cache
  int image_;
  ReprojectionError e_;
};

inline PipelineProblem AliceVisionProblem(const Scene& scene, double loss_scale = 2.0) {
  auto s = std::make_shared<const Scene>(scene);
  // The cache of the solve being built; the cost functions read it through
  // this shared slot (one solve at a time).
  auto cache = std::make_shared<const RotationCache*>(nullptr);
  PipelineProblem p;
  p.values = ValuesOf(scene);
  p.make_callback = [cache](Values* v) {
    auto made = std::make_unique<RotationCache>(&v->poses);
    *cache = made.get();
    return std::unique_ptr<ceres::EvaluationCallback>(std::move(made));
  };
  p.build = [s, cache, loss_scale](Values* v, ceres::Problem* problem) {
    ceres::LossFunction* loss = new ceres::HuberLoss(loss_scale);
    for (const Scene::Observation& o : s->observations) {
      problem->AddResidualBlock(new CachedRotationError(cache.get(), o.image, o.pixel), loss,
                                v->poses[o.image].data(), v->intrinsics.data(), v->points[o.point].data());
    }
    // Only the translations move (the rotation is the callback's data).
    for (auto& pose : v->poses) SetManifoldIfPresent(problem, pose.data(), new ceres::SubsetManifold(7, {0, 1, 2, 3}));
    SetConstantIfPresent(problem, v->poses[0].data());
    SetManifoldIfPresent(problem, v->intrinsics.data(), new ceres::SubsetManifold(4, {1, 2}));
  };
  return p;
}

// OpenMVG: one Brown intrinsics block [f cx cy k1 k2 k3 t1 t2] (principal
// point held), angle-axis poses, Huber loss on the observations, the first
// pose constant. num_control_points > 0 adds ground control points: constant
// 3-D points at their true place, seen by every image of a window, their
// observations weighted by control_point_weight and without a loss (a
// second residual type whose only free block is the camera); they then fix
// the gauge instead of the first pose.
inline PipelineProblem OpenMvgProblem(const Scene& scene, double loss_scale = 16.0, int num_control_points = 0,
                                      double control_point_weight = 20.0) {
  auto s = std::make_shared<const Scene>(scene);
  PipelineProblem p;
  for (size_t i = 0; i < scene.rotations.size(); ++i) {
    double aa[3];
    const Eigen::Matrix3d r = scene.rotations[i].toRotationMatrix();
    ceres::RotationMatrixToAngleAxis(ceres::ColumnMajorAdapter3x3(r.data()), aa);
    const Eigen::Vector3d& t = scene.translations[i];
    p.values.poses.push_back({aa[0], aa[1], aa[2], t.x(), t.y(), t.z()});
  }
  for (const Eigen::Vector3d& pt : scene.points) p.values.points.push_back({pt.x(), pt.y(), pt.z()});
  p.values.intrinsics = {scene.focal, scene.cx, scene.cy, scene.k, 0.0, 0.0, 0.0, 0.0};
  // Control points: the first num_control_points true points, each seen by
  // every third image, exact pixels from the true cameras (surveyed points).
  auto gcp_observations = std::make_shared<std::vector<Scene::Observation>>();
  const int num_gcp = std::min<int>(num_control_points, static_cast<int>(scene.true_points.size()));
  for (int j = 0; j < num_gcp; ++j) {
    p.values.extra.push_back({scene.true_points[j].x(), scene.true_points[j].y(), scene.true_points[j].z()});
    for (size_t i = 0; i < scene.rotations.size(); i += 3) {
      const Eigen::Vector3d xc =
          scene.true_rotations[i] * scene.true_points[j] + scene.true_translations[i];
      Scene truth;  // the true camera (Project reads its intrinsics)
      gcp_observations->push_back({static_cast<int>(i), j, Project(truth, xc)});
    }
  }
  p.build = [s, gcp_observations, loss_scale, control_point_weight](Values* v, ceres::Problem* problem) {
    ceres::LossFunction* loss = new ceres::HuberLoss(loss_scale);
    for (const Scene::Observation& o : s->observations) {
      problem->AddResidualBlock(new ceres_sqrtba::AutoDiffCostFunction<BrownReprojectionError, 2, 8, 6, 3>(
                                    new BrownReprojectionError(o.pixel, 1.0)),
                                loss, v->intrinsics.data(), v->poses[o.image].data(), v->points[o.point].data());
    }
    for (const Scene::Observation& o : *gcp_observations) {
      problem->AddResidualBlock(new ceres_sqrtba::AutoDiffCostFunction<BrownReprojectionError, 2, 8, 6, 3>(
                                    new BrownReprojectionError(o.pixel, control_point_weight)),
                                nullptr, v->intrinsics.data(), v->poses[o.image].data(), v->extra[o.point].data());
    }
    for (auto& gcp : v->extra) SetConstantIfPresent(problem, gcp.data());
    SetManifoldIfPresent(problem, v->intrinsics.data(), new ceres::SubsetManifold(8, {1, 2}));
    // The gauge: the control points when there are some (a constant noisy
    // pose would contradict them), else the first pose.
    if (v->extra.empty()) SetConstantIfPresent(problem, v->poses[0].data());
  };
  return p;
}

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_PIPELINE_SHAPES_H_
