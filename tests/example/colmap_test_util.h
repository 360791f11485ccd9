// Helpers of the COLMAP example's tests: a small hand-made model, the shared
// real model's folder, perturbation, and solving a model with a named solver.
#ifndef CERES_SQRTBA_TESTS_EXAMPLE_COLMAP_TEST_UTIL_H_
#define CERES_SQRTBA_TESTS_EXAMPLE_COLMAP_TEST_UTIL_H_

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "../rounding_jitter.h"
#include "ceres/ceres.h"
#include "ceres_sqrtba/solver.h"
#include "colmap_model.h"
#include "colmap_problem.h"
#include "example_test_util.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace examples {
namespace testing_util {

// Three images (two cameras: SIMPLE_RADIAL and PINHOLE), three points; point
// 3 is seen once (left out of the bundle adjustment); image 1's third 2D
// point has no 3D point.
inline const char* SmallCamerasText() {
  return "# Camera list\n"
         "1 SIMPLE_RADIAL 640 480 500 320 240 0.01\n"
         "2 PINHOLE 640 480 500 510 320 240\n";
}
inline const char* SmallImagesText() {
  return "# Image list\n"
         "\n"
         "1 1 0 0 0 0 0 0 1 a.jpg\n"
         "100 200 1 110 210 2 5 5 -1\n"
         "2 0.9950041652780258 0 0.09983341664682815 0 -0.5 0 0 1 b.jpg\n"
         "120 220 1 130 230 2\n"
         "3 1 0 0 0 0.3 0.1 0 2 c.jpg\n"
         "140 240 1 150 250 3\n";
}
inline const char* SmallPointsText() {
  return "# 3D point list\n"
         "1 0.1 0.2 3 255 0 0 0.5 1 0 2 0 3 0\n"
         "2 -0.1 0.1 4 0 255 0 0.5 1 1 2 1\n"
         "3 0.2 -0.1 5 0 0 255 0.5 3 1\n";
}

// A rig model over the small model (rigs.txt and frames.txt beside the
// three files above): rig 1 has camera 1 as its reference sensor, camera 2
// at sensor_from_rig = (rotation of 0.1 about y, translation (-0.2, 0,
// 0.01)) and an IMU without a pose; frame 1 (rotation of 0.2 about z,
// translation (0.3, -0.1, 2)) holds images 1 and 3 and an IMU sample,
// frame 2 image 2, frame 3 an image that is not in images.txt.
inline const char* SmallRigsText() {
  return "# Rig list\n"
         "1 3 CAMERA 1 CAMERA 2 1 0.99875026039496628 0 0.049979169270678331 0 -0.2 0 0.01 "
         "IMU 1 0\n";
}
inline const char* SmallFramesText() {
  return "# Frame list\n"
         "1 1 0.99500416527802582 0 0 0.099833416646828155 0.3 -0.1 2 3 CAMERA 1 1 CAMERA 2 3 "
         "IMU 1 7\n"
         "2 1 1 0 0 0 -0.5 0 0 1 CAMERA 1 2\n"
         "3 1 1 0 0 0 0 0 0 1 CAMERA 2 99\n";
}

// Folder of the shared COLMAP models: $CERES_SQRTBA_COLMAP_DIR, else
// ../shared/colmap beside the source tree.
inline std::string ColmapDir() {
  const char* env = std::getenv("CERES_SQRTBA_COLMAP_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return CERES_SQRTBA_DEFAULT_COLMAP_DIR;
}

inline std::string SharedModel() { return ColmapDir() + "/statue-of-liberty"; }

// Moves every point and every image centre by Gaussian noise and scales the
// focal lengths, deterministically.
inline void Perturb(double point_sigma, double translation_sigma, double focal_factor,
                    ColmapModel* model) {
  std::mt19937 random(1234);
  ::ceres_sqrtba::testing::NormalDistribution normal(0.0, 1.0);
  for (ColmapPoint3D& point : model->points3D) {
    for (double& v : point.xyz) v += point_sigma * normal(random);
  }
  for (ColmapImage& image : model->images) {
    for (double& v : image.tvec) v += translation_sigma * normal(random);
  }
  for (ColmapCamera& camera : model->cameras) camera.params[0] *= focal_factor;
}

struct SolveResult {
  double initial_error = 0;
  double final_error = 0;
  double initial_cost = 0;
  double final_cost = 0;
  ceres::TerminationType termination = ceres::FAILURE;
};

// Solves the problem ColmapProblem builds from `model` (COLMAP's default
// options) with ceres_sqrtba::Solve, or with ceres::Solve when plain_ceres;
// the cost and the mean reprojection error before and after.
inline SolveResult SolveModel(const ColmapModel& model, const Solver::Options& options,
                              bool plain_ceres = false) {
  SolveResult result;
  ceres::Problem problem;
  ColmapProblem colmap_problem;
  std::string error;
  EXPECT_TRUE(colmap_problem.Build(ColmapBundleOptions(), model, &problem, &error)) << error;
  result.initial_error = colmap_problem.MeanReprojectionError();
  if (plain_ceres) {
    ceres::Solver::Options ceres_options = options;
    ceres_options.linear_solver_ordering = colmap_problem.PointsFirstOrdering();
    ceres::Solver::Summary summary;
    ceres::Solve(ceres_options, &problem, &summary);
    result.initial_cost = summary.initial_cost;
    result.final_cost = summary.final_cost;
    result.termination = summary.termination_type;
  } else {
    Solver::Options sqrt_options = options;
    sqrt_options.linear_solver_ordering = colmap_problem.PointsFirstOrdering();
    Solver::Summary summary;
    Solve(sqrt_options, &problem, &summary);
    result.initial_cost = summary.initial_cost;
    result.final_cost = summary.final_cost;
    result.termination = summary.termination_type;
    EXPECT_NE(summary.termination_type, ceres::FAILURE) << summary.message;
  }
  result.final_error = colmap_problem.MeanReprojectionError();
  return result;
}

// Options for a solver named as colmap_bundle_adjuster's --linear_solver
// (or "sqrt_automatic+dense_schur": COLMAP's DENSE_SCHUR choice through
// SQRT_AUTOMATIC), one thread, SCHUR_JACOBI with the iterative ones.
inline Solver::Options OptionsFor(const std::string& name, int iterations) {
  Solver::Options options;
  options.max_num_iterations = iterations;
  options.num_threads = 1;
  if (name == "sqrt_automatic+dense_schur") {
    // COLMAP's choice for 40 images, to its square-root counterpart.
    options.linear_solver_type = ceres::DENSE_SCHUR;
    options.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  } else if (name == "sqrt_iterative_schur" || name == "sqrt_sparse_schur") {
    EXPECT_TRUE(StringToSqrtLinearSolverType(name, &options.sqrt_linear_solver_type));
    options.linear_solver_type = name == "sqrt_sparse_schur" ? ceres::SPARSE_SCHUR
                                                             : ceres::ITERATIVE_SCHUR;
    options.preconditioner_type = ceres::SCHUR_JACOBI;
  } else {
    EXPECT_TRUE(ceres::StringToLinearSolverType(name, &options.linear_solver_type)) << name;
    if (options.linear_solver_type == ceres::ITERATIVE_SCHUR) {
      options.preconditioner_type = ceres::SCHUR_JACOBI;
    }
  }
  return options;
}

// Options that leave only the iteration cap to stop a solve (tolerances
// 1e-14), with room for PCG to converge (500 iterations).
inline Solver::Options Converging(Solver::Options options) {
  options.function_tolerance = 1e-14;
  options.gradient_tolerance = 1e-14;
  options.parameter_tolerance = 1e-14;
  options.max_linear_solver_iterations = 500;
  return options;
}

// A square-root solver (named as OptionsFor names it), its precision and the
// relative distance to the reference cost it must end within.
struct SquareRootRun {
  const char* solver;
  Precision precision;
  double tolerance;
};

// Each run solves `model` (Converging, `iterations` at most) and must end
// within its tolerance of `reference`, ceres::Solve's final cost with the
// solver named `reference_name`; prints every run's cost.
inline void ExpectSquareRootRunsEndAt(const ColmapModel& model, const SolveResult& reference,
                                      const char* reference_name, const std::vector<SquareRootRun>& runs,
                                      int iterations) {
  for (const SquareRootRun& run : runs) {
    Solver::Options options = Converging(OptionsFor(run.solver, iterations));
    options.precision = run.precision;
    const SolveResult result = SolveModel(model, options);
    const double relative = std::abs(result.final_cost - reference.final_cost) / reference.final_cost;
    EXPECT_LE(relative, run.tolerance)
        << run.solver << (run.precision == SINGLE_PRECISION ? " single" : " double") << ": "
        << result.final_cost << " vs ceres " << reference.final_cost;
    std::printf("%-26s %-6s final cost %.10e (ceres %s %.10e, relative %.2e)\n", run.solver,
                run.precision == SINGLE_PRECISION ? "single" : "double", result.final_cost, reference_name,
                reference.final_cost, relative);
  }
}

}  // namespace testing_util
}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_EXAMPLE_COLMAP_TEST_UTIL_H_
