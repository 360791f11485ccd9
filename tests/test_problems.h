// Problems for the tests: random linear least-squares problems shaped like
// bundle adjustment (with known Jacobians), and a small synthetic bundle
// adjustment problem with autodiff reprojection errors.
#ifndef CERES_SQRTBA_TESTS_TEST_PROBLEMS_H_
#define CERES_SQRTBA_TESTS_TEST_PROBLEMS_H_

#include <Eigen/Core>
#include <memory>
#include <random>
#include <vector>

#include "ceres/ceres.h"
#include "ceres/rotation.h"
#include "rounding_jitter.h"

namespace ceres_sqrtba {
namespace testing {

// r = sum_i A_i x_i + b with fixed random A_i, b.
class RandomLinearCost : public ceres::CostFunction {
 public:
  RandomLinearCost(int num_residuals, const std::vector<int>& sizes, std::mt19937* rng) {
    set_num_residuals(num_residuals);
    ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
    for (int s : sizes) {
      mutable_parameter_block_sizes()->push_back(s);
      Eigen::MatrixXd a(num_residuals, s);
      for (int i = 0; i < a.size(); ++i) a.data()[i] = n(*rng);
      a_.push_back(a);
    }
    b_.resize(num_residuals);
    for (int i = 0; i < num_residuals; ++i) b_[i] = n(*rng);
  }
  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    Eigen::Map<Eigen::VectorXd> r(residuals, num_residuals());
    r = b_;
    for (size_t i = 0; i < a_.size(); ++i) {
      r += a_[i] * Eigen::Map<const Eigen::VectorXd>(parameters[i], a_[i].cols());
      if (jacobians != nullptr && jacobians[i] != nullptr) {
        Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
            jacobians[i], a_[i].rows(), a_[i].cols()) = a_[i];
      }
    }
    return true;
  }

 private:
  std::vector<Eigen::MatrixXd> a_;
  Eigen::VectorXd b_;
};

struct RandomProblemConfig {
  int num_cameras = 4;
  int camera_size = 6;
  int intrinsics_size = 0;    // > 0: one shared intrinsics block per 2 cameras
  std::vector<int> intrinsics_sizes;  // if not empty: their sizes, cycled (intrinsics_size unused)
  int num_landmarks = 10;
  std::vector<int> landmark_sizes = {3};  // cycled
  int residual_size = 2;
  int min_observations = 2;
  int max_observations = 4;
  bool repeat_camera = false;  // a landmark seen twice by the same camera
  bool single_observation = false;  // a landmark seen once
  unsigned seed = 1;
};

struct RandomProblem {
  std::unique_ptr<ceres::Problem> problem;
  std::vector<std::vector<double>> cameras, intrinsics, landmarks;
};

inline RandomProblem MakeRandomProblem(const RandomProblemConfig& c) {
  RandomProblem p;
  ceres::Problem::Options po;
  po.cost_function_ownership = ceres::TAKE_OWNERSHIP;
  p.problem = std::make_unique<ceres::Problem>(po);
  std::mt19937 rng(c.seed);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  auto random_vector = [&](int size) {
    std::vector<double> v(size);
    for (double& x : v) x = n(rng);
    return v;
  };
  p.cameras.reserve(c.num_cameras);
  p.landmarks.reserve(c.num_landmarks);
  p.intrinsics.reserve(c.num_cameras);
  for (int i = 0; i < c.num_landmarks; ++i) {
    p.landmarks.push_back(random_vector(c.landmark_sizes[i % c.landmark_sizes.size()]));
  }
  for (int i = 0; i < c.num_cameras; ++i) p.cameras.push_back(random_vector(c.camera_size));
  if (c.intrinsics_size > 0 || !c.intrinsics_sizes.empty()) {
    for (int i = 0; i < (c.num_cameras + 1) / 2; ++i) {
      const int size = c.intrinsics_sizes.empty() ? c.intrinsics_size
                                                   : c.intrinsics_sizes[i % c.intrinsics_sizes.size()];
      p.intrinsics.push_back(random_vector(size));
    }
  }
  // Landmark blocks first, so that problem order is landmarks then cameras.
  for (auto& l : p.landmarks) p.problem->AddParameterBlock(l.data(), static_cast<int>(l.size()));
  for (auto& cam : p.cameras) p.problem->AddParameterBlock(cam.data(), c.camera_size);
  for (auto& in : p.intrinsics) p.problem->AddParameterBlock(in.data(), static_cast<int>(in.size()));
  std::uniform_int_distribution<int> nobs(c.min_observations, c.max_observations);
  for (int l = 0; l < c.num_landmarks; ++l) {
    int k = std::min(nobs(rng), c.num_cameras);
    if (c.single_observation && l == 0) k = 1;
    std::vector<int> cams(c.num_cameras);
    for (int i = 0; i < c.num_cameras; ++i) cams[i] = i;
    std::shuffle(cams.begin(), cams.end(), rng);
    cams.resize(k);
    if (c.repeat_camera && l == 1) cams.push_back(cams[0]);
    for (int cam : cams) {
      std::vector<int> sizes = {c.camera_size, static_cast<int>(p.landmarks[l].size())};
      std::vector<double*> blocks = {p.cameras[cam].data(), p.landmarks[l].data()};
      if (!p.intrinsics.empty()) {
        sizes.push_back(static_cast<int>(p.intrinsics[cam / 2].size()));
        blocks.push_back(p.intrinsics[cam / 2].data());
      }
      p.problem->AddResidualBlock(new RandomLinearCost(c.residual_size, sizes, &rng), nullptr, blocks);
    }
  }
  return p;
}

// Snavely's reprojection error: camera = angle-axis(3), translation(3),
// intrinsics f, k1, k2 in a separate block or appended.
struct ReprojectionError {
  ReprojectionError(double u, double v) : u(u), v(v) {}
  template <typename T>
  bool operator()(const T* pose, const T* intr, const T* point, T* r) const {
    T p[3];
    ceres::AngleAxisRotatePoint(pose, point, p);
    p[0] += pose[3];
    p[1] += pose[4];
    p[2] += pose[5];
    const T xp = -p[0] / p[2];
    const T yp = -p[1] / p[2];
    const T r2 = xp * xp + yp * yp;
    const T distortion = T(1.0) + r2 * (intr[1] + intr[2] * r2);
    r[0] = intr[0] * distortion * xp - u;
    r[1] = intr[0] * distortion * yp - v;
    return true;
  }
  double u, v;
};

// The reprojection error times 1e19: residuals around 1e20, beyond what
// single precision blocks can square safely.
struct HugeReprojectionError {
  HugeReprojectionError(double u, double v) : e(u, v) {}
  template <typename T>
  bool operator()(const T* pose, const T* intr, const T* point, T* r) const {
    e(pose, intr, point, r);
    r[0] *= T(1e19);
    r[1] *= T(1e19);
    return true;
  }
  ReprojectionError e;
};

struct SyntheticBa {
  std::vector<std::vector<double>> poses;       // 6
  std::vector<std::vector<double>> intrinsics;  // 3
  std::vector<std::vector<double>> points;      // 3
  struct Observation { int camera, point; double u, v; };
  std::vector<Observation> observations;
};

// Cameras on a circle around a point cloud, a few percent outliers, noisy
// initial values. Deterministic in the seed.
inline SyntheticBa MakeSyntheticBa(int num_cameras, int num_points, int obs_per_point,
                                   unsigned seed, double outlier_ratio = 0.03) {
  SyntheticBa ba;
  std::mt19937 rng(seed);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  ::ceres_sqrtba::testing::UniformRealDistribution u(-1.0, 1.0);
  std::vector<std::vector<double>> true_poses;
  for (int c = 0; c < num_cameras; ++c) {
    const double angle = 2.0 * M_PI * c / num_cameras;
    // Camera looks down -z at the origin from radius 10: rotation about y.
    std::vector<double> pose = {0.0, angle, 0.0, 0.0, 0.0, -10.0};
    true_poses.push_back(pose);
    ba.intrinsics.push_back({500.0 + 5 * n(rng), 1e-3 * n(rng), 1e-4 * n(rng)});
  }
  std::vector<std::vector<double>> true_points;
  for (int i = 0; i < num_points; ++i) true_points.push_back({2 * u(rng), 2 * u(rng), 2 * u(rng)});
  ::ceres_sqrtba::testing::UniformRealDistribution unit(0.0, 1.0);
  for (int i = 0; i < num_points; ++i) {
    std::vector<int> cams(num_cameras);
    for (int c = 0; c < num_cameras; ++c) cams[c] = c;
    std::shuffle(cams.begin(), cams.end(), rng);
    cams.resize(std::min(obs_per_point, num_cameras));
    for (int c : cams) {
      double res[2];
      ReprojectionError e(0, 0);
      e(true_poses[c].data(), ba.intrinsics[c].data(), true_points[i].data(), res);
      double uu = res[0] + 0.5 * n(rng), vv = res[1] + 0.5 * n(rng);
      if (unit(rng) < outlier_ratio) {
        uu += 50 * n(rng);
        vv += 50 * n(rng);
      }
      ba.observations.push_back({c, i, uu, vv});
    }
  }
  for (auto p : true_poses) {
    for (int k = 0; k < 3; ++k) p[k] += 0.01 * n(rng);
    for (int k = 3; k < 6; ++k) p[k] += 0.05 * n(rng);
    ba.poses.push_back(p);
  }
  for (auto p : true_points) {
    for (int k = 0; k < 3; ++k) p[k] += 0.05 * n(rng);
    ba.points.push_back(p);
  }
  return ba;
}

inline void AddReprojectionResiduals(SyntheticBa* ba, ceres::Problem* problem,
                                     ceres::LossFunction* loss) {
  for (const auto& o : ba->observations) {
    auto* cost = new ceres::AutoDiffCostFunction<ReprojectionError, 2, 6, 3, 3>(
        new ReprojectionError(o.u, o.v));
    problem->AddResidualBlock(cost, loss, ba->poses[o.camera].data(),
                              ba->intrinsics[o.camera].data(), ba->points[o.point].data());
  }
}

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_TEST_PROBLEMS_H_
