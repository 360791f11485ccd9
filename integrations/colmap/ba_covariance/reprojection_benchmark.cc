// colmap_reprojection_benchmark: the cost of one Jacobian evaluation of
// COLMAP's plain reprojection error (point, cam_from_world, camera
// parameters) per camera model, as COLMAP builds it, in nanoseconds:
//   - "colmap": what CreateCameraCostFunction<ReprojErrorCostFunctor> makes
//     (SIMPLE_RADIAL: COLMAP's analytical Jacobians, in double; every other
//     model: autodiff);
//   - "autodiff double": the autodiff functor, Jet<double, N>;
//   - "autodiff float" (a COLMAP patched with SQRTBA_ENABLED): the same
//     functor's float Jacobians, Jet<float, N> (ceres_sqrtba::FloatJacobians),
//     what a single precision square-root solve evaluates.
// 4 096 observations of a synthetic scene, evaluated round-robin; the least
// of 5 repetitions of 2^20 evaluations each. One line per model, JSON.
//
//   colmap_reprojection_benchmark [--models SIMPLE_RADIAL,PINHOLE,OPENCV]
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "colmap/estimators/cost_functions/reprojection_error.h"
#include "colmap/sensor/models.h"
#ifdef COLMAP_SQRTBA_ENABLED
#include "ceres_sqrtba/float_jacobians.h"
#endif

namespace {

constexpr int kObservations = 4096;
constexpr int kEvaluations = 1 << 20;
constexpr int kRepetitions = 5;

struct Scene {
  std::vector<std::array<double, 3>> points;
  std::vector<std::array<double, 7>> poses;
  std::vector<double> params;
  std::vector<Eigen::Vector2d> observed;
};

Scene MakeScene(colmap::CameraModelId model) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Scene s;
  s.params = colmap::CameraModelInitializeParams(model, 1000.0, 1000, 800);
  for (size_t i = 3; i < s.params.size(); ++i) s.params[i] = 0.01 * u(rng);
  for (int i = 0; i < kObservations; ++i) {
    s.points.push_back({u(rng), u(rng), 4.0 + u(rng)});
    const Eigen::Quaterniond q = Eigen::Quaterniond(1.0, 0.05 * u(rng), 0.05 * u(rng), 0.05 * u(rng)).normalized();
    s.poses.push_back({q.x(), q.y(), q.z(), q.w(), 0.1 * u(rng), 0.1 * u(rng), 0.1 * u(rng)});
    s.observed.emplace_back(500.0 + 100.0 * u(rng), 400.0 + 100.0 * u(rng));
  }
  return s;
}

template <typename Fn>
double NanosecondsPerCall(const Fn& fn) {
  double best = 1e300;
  for (int rep = 0; rep < kRepetitions; ++rep) {
    const auto start = std::chrono::steady_clock::now();
    for (int e = 0; e < kEvaluations; ++e) fn(e % kObservations);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, 1e9 * s / kEvaluations);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace colmap;  // NOLINT: CAMERA_MODEL_SWITCH_CASES names the models unqualified
  std::string models = "SIMPLE_RADIAL,PINHOLE,RADIAL,OPENCV";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--models=", 0) == 0) {
      models = arg.substr(9);
    } else if (arg == "--models" && i + 1 < argc) {
      models = argv[++i];
    } else {
      std::fprintf(stderr, "usage: colmap_reprojection_benchmark [--models SIMPLE_RADIAL,PINHOLE,...]\n");
      return 2;
    }
  }
  std::stringstream list(models);
  std::string name;
  while (std::getline(list, name, ',')) {
    if (!colmap::ExistsCameraModelWithName(name)) {
      std::fprintf(stderr, "colmap_reprojection_benchmark: no camera model %s\n", name.c_str());
      return 2;
    }
    const colmap::CameraModelId model = colmap::CameraModelNameToId(name);
    Scene s = MakeScene(model);
    const int np = static_cast<int>(s.params.size());
    std::vector<std::unique_ptr<ceres::CostFunction>> as_colmap, autodiff;
    for (int i = 0; i < kObservations; ++i) {
      as_colmap.emplace_back(
          colmap::CreateCameraCostFunction<colmap::ReprojErrorCostFunctor>(model, s.observed[i]));
      std::unique_ptr<ceres::CostFunction> a;
      switch (model) {
#define CAMERA_MODEL_CASE(CameraModel)                                                         \
  case CameraModel::model_id:                                                                  \
    a.reset(colmap::ReprojErrorCostFunctor<CameraModel>::Create(s.observed[i]));              \
    break;
        CAMERA_MODEL_SWITCH_CASES
#undef CAMERA_MODEL_CASE
      }
      autodiff.push_back(std::move(a));
    }
    double residuals[2];
    double j_point[6], j_pose[14];
    std::vector<double> j_params(2 * np);
    auto evaluate = [&](const std::vector<std::unique_ptr<ceres::CostFunction>>& costs) {
      return [&](int i) {
        const double* parameters[3] = {s.points[i].data(), s.poses[i].data(), s.params.data()};
        double* jacobians[3] = {j_point, j_pose, j_params.data()};
        costs[i]->Evaluate(parameters, residuals, jacobians);
      };
    };
    const double ns_colmap = NanosecondsPerCall(evaluate(as_colmap));
    const double ns_double = NanosecondsPerCall(evaluate(autodiff));
    double ns_float = -1.0;
#ifdef COLMAP_SQRTBA_ENABLED
    float f_point[6], f_pose[14];
    std::vector<float> f_params(2 * np);
    if (dynamic_cast<const ceres_sqrtba::FloatJacobians*>(autodiff[0].get()) != nullptr) {
      ns_float = NanosecondsPerCall([&](int i) {
        const double* parameters[3] = {s.points[i].data(), s.poses[i].data(), s.params.data()};
        float* jacobians[3] = {f_point, f_pose, f_params.data()};
        dynamic_cast<const ceres_sqrtba::FloatJacobians*>(autodiff[i].get())
            ->EvaluateFloatJacobians(parameters, residuals, jacobians);
      });
    }
#endif
    bool analytical = false;
    switch (model) {
#define CAMERA_MODEL_CASE(CameraModel)                      \
  case CameraModel::model_id:                               \
    analytical = CameraModel::has_img_from_cam_with_jac;    \
    break;
      CAMERA_MODEL_SWITCH_CASES
#undef CAMERA_MODEL_CASE
    }
    std::printf("{\"model\": \"%s\", \"colmap\": \"%s\", \"colmap_ns\": %.1f, \"autodiff_double_ns\": %.1f, "
                "\"autodiff_float_ns\": %.1f}\n",
                name.c_str(), analytical ? "analytical" : "autodiff", ns_colmap, ns_double, ns_float);
  }
  return 0;
}
