// Bundle adjustment problems shaped as the SfM pipelines build them (written
// from their public sources: COLMAP's bundle adjuster, GLOMAP's global
// positioning, Theia's homogeneous points, OpenSfM's dynamic cost functions,
// AliceVision's evaluation callback and rigs), each solved by ceres::Solve
// with the pipeline's options and by ceres_sqrtba::Solve with the same
// options and SQRT_AUTOMATIC: the one-line change of issue #28. The direct
// counterparts end within 1e-6 of the pipeline's direct Ceres solver, the
// iterative one within 1e-6 of Ceres' ITERATIVE_SCHUR, in double precision;
// in single precision both within 1e-4.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace {

// A scene: images on a circle looking at points near the origin, noisy
// initial values. Poses are world-to-camera, x_cam = R(q) X + t.
struct Scene {
  std::vector<Eigen::Quaterniond> rotations;
  std::vector<Eigen::Vector3d> translations;
  std::vector<Eigen::Vector3d> points;
  struct Observation {
    int image, point;
    Eigen::Vector2d pixel;
  };
  std::vector<Observation> observations;
  double focal = 800.0, cx = 320.0, cy = 240.0, k = -0.05;
};

Eigen::Vector2d Project(const Scene& s, const Eigen::Vector3d& x) {
  const double u = x.x() / x.z(), v = x.y() / x.z();
  const double d = 1.0 + s.k * (u * u + v * v);
  return {s.focal * d * u + s.cx, s.focal * d * v + s.cy};
}

Scene MakeScene(int num_images, int num_points, unsigned seed) {
  Scene s;
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  std::vector<Eigen::Quaterniond> true_r;
  std::vector<Eigen::Vector3d> true_t, true_p;
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
  for (int j = 0; j < num_points; ++j) true_p.emplace_back(u(rng), u(rng), u(rng));
  for (int j = 0; j < num_points; ++j) {
    for (int i = 0; i < num_images; ++i) {
      if ((i + j) % 4 == 0) continue;  // not every image sees every point
      const Eigen::Vector3d xc = true_r[i] * true_p[j] + true_t[i];
      s.observations.push_back({i, j, Project(s, xc) + 0.5 * Eigen::Vector2d(n(rng), n(rng))});
    }
  }
  for (int i = 0; i < num_images; ++i) {
    const Eigen::Quaterniond dq(Eigen::AngleAxisd(0.01 * n(rng), Eigen::Vector3d(n(rng), n(rng), n(rng)).normalized()));
    s.rotations.push_back((dq * true_r[i]).normalized());
    s.translations.push_back(true_t[i] + 0.05 * Eigen::Vector3d(n(rng), n(rng), n(rng)));
  }
  for (int j = 0; j < num_points; ++j) s.points.push_back(true_p[j] + 0.05 * Eigen::Vector3d(n(rng), n(rng), n(rng)));
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
    r[0] = intrinsics[0] * d * u + intrinsics[1] - pixel.x();
    r[1] = intrinsics[0] * d * v + intrinsics[2] - pixel.y();
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

// The values a problem is built on, copied per solve.
struct Values {
  std::vector<std::vector<double>> poses, points;
  std::vector<double> intrinsics;
};

Values ValuesOf(const Scene& s, bool homogeneous = false) {
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

ceres::Manifold* PoseManifold() {
  return new ceres::ProductManifold<ceres::EigenQuaternionManifold, ceres::EuclideanManifold<3>>();
}

// COLMAP's problem: shared intrinsics with the principal point held
// (SubsetManifold), a robust loss, the first pose constant (the gauge).
void BuildColmapProblem(const Scene& s, Values* v, ceres::Problem* problem) {
  ceres::LossFunction* loss = new ceres::SoftLOneLoss(1.0);
  for (const Scene::Observation& o : s.observations) {
    problem->AddResidualBlock(
        new ceres::AutoDiffCostFunction<ReprojectionError, 2, 7, 4, 3>(new ReprojectionError(o.pixel)), loss,
        v->poses[o.image].data(), v->intrinsics.data(), v->points[o.point].data());
  }
  for (auto& pose : v->poses) problem->SetManifold(pose.data(), PoseManifold());
  problem->SetManifold(v->intrinsics.data(), new ceres::SubsetManifold(4, {1, 2}));
  problem->SetParameterBlockConstant(v->poses[0].data());
}

Solver::Options PipelineOptions(ceres::LinearSolverType type) {
  Solver::Options o;
  o.linear_solver_type = type;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  o.max_num_iterations = 30;
  o.function_tolerance = 1e-10;
  o.num_threads = 2;
  o.logging_type = ceres::SILENT;
  return o;
}

using Build = std::function<void(Values*, ceres::Problem*)>;
// The problem's evaluation callback, made for the values of one solve.
using MakeCallback = std::function<std::unique_ptr<ceres::EvaluationCallback>(Values*)>;

Solver::Summary SolveShape(const Values& values, const Build& build, const Solver::Options& options,
                           const MakeCallback& make_callback) {
  Values v = values;
  const std::unique_ptr<ceres::EvaluationCallback> callback = make_callback ? make_callback(&v) : nullptr;
  ceres::Problem::Options problem_options;
  problem_options.evaluation_callback = callback.get();
  ceres::Problem problem(problem_options);
  build(&v, &problem);
  Solver::Summary summary;
  Solve(options, &problem, &summary);
  return summary;
}

// The pipeline's own solve and SQRT_AUTOMATIC on the same options, for the
// direct solver it would pick (dense or sparse) and for ITERATIVE_SCHUR.
void ExpectSameAsCeres(const Values& values, const Build& build, const Solver::Options& base,
                       const MakeCallback& make_callback = nullptr) {
  for (ceres::LinearSolverType type : {ceres::DENSE_SCHUR, ceres::SPARSE_SCHUR, ceres::ITERATIVE_SCHUR}) {
    SCOPED_TRACE(ceres::LinearSolverTypeToString(type));
    Solver::Options o = base;
    o.linear_solver_type = type;
    const Solver::Summary reference = SolveShape(values, build, o, make_callback);
    ASSERT_TRUE(reference.IsSolutionUsable()) << reference.message;
    ASSERT_LT(reference.final_cost, reference.initial_cost);
    o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
    for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
      SCOPED_TRACE(PrecisionToString(precision));
      o.precision = precision;
      std::string error;
      EXPECT_TRUE(o.IsValid(&error)) << error;
      const Solver::Summary s = SolveShape(values, build, o, make_callback);
      ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
      EXPECT_EQ(s.sqrt_linear_solver_type_used,
                type == ceres::ITERATIVE_SCHUR ? SQRT_ITERATIVE_SCHUR : SQRT_SPARSE_SCHUR)
          << s.message;
      const double tolerance = precision == DOUBLE_PRECISION ? 1e-6 : 1e-4;
      EXPECT_NEAR(s.final_cost, reference.final_cost, tolerance * reference.final_cost)
          << "sqrt iterations " << s.iterations.size() << ", Ceres' " << reference.iterations.size();
    }
  }
}

TEST(PipelineShapes, ColmapProductManifoldPosesSharedIntrinsics) {
  const Scene scene = MakeScene(8, 120, 401);
  ExpectSameAsCeres(ValuesOf(scene), [&](Values* v, ceres::Problem* p) { BuildColmapProblem(scene, v, p); },
                    PipelineOptions(ceres::DENSE_SCHUR));
}

// COLMAP's (and AliceVision's) rigs: two cameras on each rig pose, the
// camera-from-rig poses shared by the rigs, four parameter blocks per
// residual; the first rig pose and the first camera-from-rig constant.
TEST(PipelineShapes, RigResidualsWithFourBlocks) {
  const Scene scene = MakeScene(8, 100, 402);
  Values values = ValuesOf(scene);
  // Rig r holds images 2r and 2r+1: the rig pose is image 2r's, the second
  // camera's camera-from-rig relates the two.
  const int num_rigs = 4;
  std::vector<std::vector<double>> rig_from_world(values.poses.begin(), values.poses.begin() + num_rigs);
  for (int r = 0; r < num_rigs; ++r) rig_from_world[r] = values.poses[2 * r];
  const Eigen::Quaterniond q0 = scene.rotations[0], q1 = scene.rotations[1];
  const Eigen::Quaterniond rel = (q1 * q0.conjugate()).normalized();
  const Eigen::Vector3d t_rel = scene.translations[1] - rel * scene.translations[0];
  const std::vector<std::vector<double>> cam_from_rig = {
      {0, 0, 0, 1, 0, 0, 0}, {rel.x(), rel.y(), rel.z(), rel.w(), t_rel.x(), t_rel.y(), t_rel.z()}};
  values.poses = rig_from_world;
  values.poses.insert(values.poses.end(), cam_from_rig.begin(), cam_from_rig.end());
  const Build build = [&](Values* v, ceres::Problem* p) {
    ceres::LossFunction* loss = new ceres::CauchyLoss(2.0);
    for (const Scene::Observation& o : scene.observations) {
      p->AddResidualBlock(new ceres::AutoDiffCostFunction<RigReprojectionError, 2, 7, 7, 4, 3>(
                              new RigReprojectionError(o.pixel)),
                          loss, v->poses[o.image / 2].data(), v->poses[num_rigs + o.image % 2].data(),
                          v->intrinsics.data(), v->points[o.point].data());
    }
    for (auto& pose : v->poses) p->SetManifold(pose.data(), PoseManifold());
    p->SetManifold(v->intrinsics.data(), new ceres::SubsetManifold(4, {1, 2}));
    p->SetParameterBlockConstant(v->poses[0].data());
    p->SetParameterBlockConstant(v->poses[num_rigs].data());
  };
  ExpectSameAsCeres(values, build, PipelineOptions(ceres::DENSE_SCHUR));
}

// Theia: homogeneous 4-vector points on the sphere (SphereManifold).
TEST(PipelineShapes, TheiaHomogeneousPoints) {
  const Scene scene = MakeScene(8, 120, 403);
  const Build build = [&](Values* v, ceres::Problem* p) {
    for (const Scene::Observation& o : scene.observations) {
      p->AddResidualBlock(new ceres::AutoDiffCostFunction<HomogeneousReprojectionError, 2, 7, 4, 4>(
                              new HomogeneousReprojectionError(o.pixel)),
                          new ceres::HuberLoss(2.0), v->poses[o.image].data(), v->intrinsics.data(),
                          v->points[o.point].data());
    }
    for (auto& pose : v->poses) p->SetManifold(pose.data(), PoseManifold());
    for (auto& point : v->points) p->SetManifold(point.data(), new ceres::SphereManifold<4>());
    p->SetManifold(v->intrinsics.data(), new ceres::SubsetManifold(4, {1, 2}));
    p->SetParameterBlockConstant(v->poses[0].data());
  };
  ExpectSameAsCeres(ValuesOf(scene, /*homogeneous=*/true), build, PipelineOptions(ceres::SPARSE_SCHUR));
}

// OpenSfM: DynamicAutoDiffCostFunction residuals (sizes set at run time).
struct DynamicReprojection {
  explicit DynamicReprojection(const Eigen::Vector2d& pixel) : e(pixel) {}
  template <typename T>
  bool operator()(T const* const* parameters, T* r) const {
    return e(parameters[0], parameters[1], parameters[2], r);
  }
  ReprojectionError e;
};

TEST(PipelineShapes, OpenSfmDynamicCostFunctions) {
  const Scene scene = MakeScene(8, 120, 404);
  const Build build = [&](Values* v, ceres::Problem* p) {
    for (const Scene::Observation& o : scene.observations) {
      auto* cost = new ceres::DynamicAutoDiffCostFunction<DynamicReprojection, 4>(new DynamicReprojection(o.pixel));
      cost->AddParameterBlock(7);
      cost->AddParameterBlock(4);
      cost->AddParameterBlock(3);
      cost->SetNumResiduals(2);
      p->AddResidualBlock(cost, new ceres::CauchyLoss(1.0), v->poses[o.image].data(), v->intrinsics.data(),
                          v->points[o.point].data());
    }
    for (auto& pose : v->poses) p->SetManifold(pose.data(), PoseManifold());
    p->SetParameterBlockConstant(v->poses[0].data());
    p->SetParameterBlockConstant(v->intrinsics.data());
  };
  ExpectSameAsCeres(ValuesOf(scene), build, PipelineOptions(ceres::SPARSE_SCHUR));
}

// GLOMAP's global positioning: camera centres and points, each observation a
// direction v_ij with its own scale s_ij >= lower bound, residual
// (X_j - C_i) - s_ij v_ij. The scales are one-dimensional and each appears in
// one residual: they are the eliminated blocks. Bounded: Ceres' line search
// follows every step, in both solvers.
struct DirectionError {
  explicit DirectionError(const Eigen::Vector3d& v) : v(v) {}
  template <typename T>
  bool operator()(const T* centre, const T* point, const T* scale, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = point[k] - centre[k] - scale[0] * T(v[k]);
    return true;
  }
  Eigen::Vector3d v;
};

TEST(PipelineShapes, GlomapOneDimensionalEliminatedBlocksWithBounds) {
  const Scene scene = MakeScene(8, 80, 405);
  std::mt19937 rng(406);
  std::normal_distribution<double> n(0.0, 0.02);
  Values values;
  std::vector<Eigen::Vector3d> directions;
  for (size_t i = 0; i < scene.rotations.size(); ++i) {
    const Eigen::Vector3d c = -(scene.rotations[i].conjugate() * scene.translations[i]);
    values.poses.push_back({c.x() + 0.3, c.y() - 0.2, c.z() + 0.1});
  }
  for (const Eigen::Vector3d& p : scene.points) values.points.push_back({p.x(), p.y(), p.z()});
  for (const Scene::Observation& o : scene.observations) {
    const Eigen::Vector3d c = -(scene.rotations[o.image].conjugate() * scene.translations[o.image]);
    const Eigen::Vector3d d = (scene.points[o.point] - c).normalized() + Eigen::Vector3d(n(rng), n(rng), n(rng));
    directions.push_back(d.normalized());
  }
  // One scale per observation: values.intrinsics holds them.
  values.intrinsics.assign(scene.observations.size(), 1.0);
  const Build build = [&](Values* v, ceres::Problem* p) {
    for (size_t k = 0; k < scene.observations.size(); ++k) {
      const Scene::Observation& o = scene.observations[k];
      p->AddResidualBlock(new ceres::AutoDiffCostFunction<DirectionError, 3, 3, 3, 1>(new DirectionError(directions[k])),
                          new ceres::HuberLoss(0.1), v->poses[o.image].data(), v->points[o.point].data(),
                          v->intrinsics.data() + k);
      p->SetParameterLowerBound(v->intrinsics.data() + k, 0, 1e-5);
    }
    // Two centres fixed: the gauge (translation and scale; with one, the
    // scene shrinks onto it and the scales onto their bound).
    p->SetParameterBlockConstant(v->poses[0].data());
    p->SetParameterBlockConstant(v->poses[4].data());
  };
  Solver::Options o = PipelineOptions(ceres::SPARSE_SCHUR);
  // GLOMAP's preconditioner, which Ceres ignores for SPARSE_SCHUR and which
  // must not be refused.
  o.preconditioner_type = ceres::CLUSTER_TRIDIAGONAL;
  ExpectSameAsCeres(values, build, o);
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
// is data here, only translation, intrinsics and point vary in it).
class CachedRotationError : public ceres::SizedCostFunction<2, 7, 4, 3> {
 public:
  CachedRotationError(const RotationCache* cache, int image, const Eigen::Vector2d& pixel)
      : cache_(cache), image_(image), e_(pixel) {}
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const Eigen::Matrix3d& r = cache_->rotation(image_);
    using Jet = ceres::Jet<double, 10>;
    const double* t = parameters[0] + 4;
    Jet in[10];
    for (int k = 0; k < 3; ++k) in[k] = Jet(t[k], k);
    for (int k = 0; k < 4; ++k) in[3 + k] = Jet(parameters[1][k], 3 + k);
    for (int k = 0; k < 3; ++k) in[7 + k] = Jet(parameters[2][k], 7 + k);
    Eigen::Matrix<Jet, 3, 1> xc;
    for (int a = 0; a < 3; ++a) {
      xc[a] = in[a];
      for (int b = 0; b < 3; ++b) xc[a] += Jet(r(a, b)) * in[7 + b];
    }
    Jet out[2];
    e_.Residual(xc, in + 3, out);
    for (int a = 0; a < 2; ++a) residuals[a] = out[a].a;
    if (jacobians != nullptr) {
      for (int a = 0; a < 2; ++a) {
        if (jacobians[0] != nullptr) {
          for (int k = 0; k < 7; ++k) jacobians[0][a * 7 + k] = k < 4 ? 0.0 : out[a].v[k - 4];
        }
        if (jacobians[1] != nullptr) {
          for (int k = 0; k < 4; ++k) jacobians[1][a * 4 + k] = out[a].v[3 + k];
        }
        if (jacobians[2] != nullptr) {
          for (int k = 0; k < 3; ++k) jacobians[2][a * 3 + k] = out[a].v[7 + k];
        }
      }
    }
    return true;
  }

 private:
  const RotationCache* cache_;
  int image_;
  ReprojectionError e_;
};

TEST(PipelineShapes, AliceVisionEvaluationCallbackChangesTheResiduals) {
  const Scene scene = MakeScene(8, 100, 407);
  const RotationCache* cache = nullptr;  // the current solve's
  const MakeCallback make_callback = [&](Values* v) {
    auto made = std::make_unique<RotationCache>(&v->poses);
    cache = made.get();
    return made;
  };
  const Build build = [&](Values* v, ceres::Problem* p) {
    for (const Scene::Observation& o : scene.observations) {
      p->AddResidualBlock(new CachedRotationError(cache, o.image, o.pixel), new ceres::HuberLoss(2.0),
                          v->poses[o.image].data(), v->intrinsics.data(), v->points[o.point].data());
    }
    // Only the translations move (the rotation is the callback's data).
    for (auto& pose : v->poses) p->SetManifold(pose.data(), new ceres::SubsetManifold(7, {0, 1, 2, 3}));
    p->SetParameterBlockConstant(v->poses[0].data());
    p->SetManifold(v->intrinsics.data(), new ceres::SubsetManifold(4, {1, 2}));
  };
  ExpectSameAsCeres(ValuesOf(scene), build, PipelineOptions(ceres::DENSE_SCHUR), make_callback);
}

}  // namespace
}  // namespace ceres_sqrtba
