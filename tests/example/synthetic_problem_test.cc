// Tests of the synthetic problem generator.
#include "synthetic_problem.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "build_problem.h"
#include "ceres/ceres.h"
#include "gtest/gtest.h"
#include "snavely_reprojection_error.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

SyntheticOptions SmallOptions() {
  SyntheticOptions options;
  options.num_cameras = 12;
  options.num_points = 800;
  options.observations_per_point = 4;
  options.outlier_ratio = 0.05;
  options.pixel_noise = 0.5;
  options.seed = 7;
  return options;
}

void ExpectSame(const BalProblem& a, const BalProblem& b) {
  EXPECT_EQ(a.num_cameras(), b.num_cameras());
  EXPECT_EQ(a.num_points(), b.num_points());
  EXPECT_EQ(a.camera_index(), b.camera_index());
  EXPECT_EQ(a.point_index(), b.point_index());
  EXPECT_EQ(a.observations(), b.observations());
  EXPECT_EQ(a.parameters(), b.parameters());
}

// Residual of observation i at the problem's current parameters.
void Residual(const BalProblem& problem, int i, double residual[2]) {
  const SnavelyAngleAxisError error(problem.observations()[2 * i],
                                    problem.observations()[2 * i + 1]);
  error(problem.camera(problem.camera_index()[i]),
        problem.point(problem.point_index()[i]), residual);
}

TEST(ExampleSyntheticProblem, SameSeedSameProblemOtherSeedOtherProblem) {
  std::string error;
  BalProblem a, b, c;
  SyntheticOptions options = SmallOptions();
  ASSERT_TRUE(MakeSyntheticProblem(options, &a, &error)) << error;
  ASSERT_TRUE(MakeSyntheticProblem(options, &b, &error)) << error;
  ExpectSame(a, b);
  options.seed = 8;
  ASSERT_TRUE(MakeSyntheticProblem(options, &c, &error)) << error;
  EXPECT_NE(a.observations(), c.observations());
  EXPECT_NE(a.parameters(), c.parameters());
}

TEST(ExampleSyntheticProblem, HasTheRequestedShape) {
  const SyntheticOptions options = SmallOptions();
  std::string error;
  BalProblem problem;
  SyntheticTruth truth;
  ASSERT_TRUE(MakeSyntheticProblem(options, &problem, &error, &truth)) << error;
  EXPECT_EQ(problem.num_cameras(), options.num_cameras);
  EXPECT_EQ(problem.num_points(), options.num_points);
  EXPECT_EQ(problem.num_observations(),
            options.num_points * options.observations_per_point);
  EXPECT_EQ(problem.camera_block_size(), 9);
  // Each point: the requested number of distinct cameras.
  std::vector<std::set<int>> cameras_of_point(options.num_points);
  std::vector<int> camera_use(options.num_cameras, 0);
  for (int i = 0; i < problem.num_observations(); ++i) {
    const int c = problem.camera_index()[i];
    const int p = problem.point_index()[i];
    ASSERT_GE(c, 0);
    ASSERT_LT(c, options.num_cameras);
    ASSERT_GE(p, 0);
    ASSERT_LT(p, options.num_points);
    cameras_of_point[p].insert(c);
    ++camera_use[c];
    // Every point is well in front of the camera that sees it.
    EXPECT_GT(problem.ObservationDepth(i), 2.0);
    EXPECT_LT(std::abs(problem.observations()[2 * i]), 400.0);
    EXPECT_LT(std::abs(problem.observations()[2 * i + 1]), 400.0);
  }
  for (const std::set<int>& cameras : cameras_of_point) {
    EXPECT_EQ(static_cast<int>(cameras.size()), options.observations_per_point);
  }
  for (int use : camera_use) EXPECT_GT(use, 0);
}

// Long tracks: each point's number of cameras drawn from a range, distinct
// cameras, every length of the range used; a fixed length draws nothing more,
// so its problems stay what they were.
TEST(ExampleSyntheticProblem, TrackLengthsVaryWithinTheRange) {
  SyntheticOptions options = SmallOptions();
  options.num_cameras = 40;
  options.num_points = 600;
  options.observations_per_point = 10;
  options.max_observations_per_point = 30;
  std::string error;
  BalProblem problem;
  ASSERT_TRUE(MakeSyntheticProblem(options, &problem, &error)) << error;
  std::vector<std::set<int>> cameras_of_point(options.num_points);
  std::vector<int> observations_of_point(options.num_points, 0);
  for (int i = 0; i < problem.num_observations(); ++i) {
    cameras_of_point[problem.point_index()[i]].insert(problem.camera_index()[i]);
    ++observations_of_point[problem.point_index()[i]];
    EXPECT_GT(problem.ObservationDepth(i), 2.0);
  }
  std::set<int> lengths;
  for (int j = 0; j < options.num_points; ++j) {
    EXPECT_EQ(static_cast<int>(cameras_of_point[j].size()),
              observations_of_point[j]);
    EXPECT_GE(observations_of_point[j], 10);
    EXPECT_LE(observations_of_point[j], 30);
    lengths.insert(observations_of_point[j]);
  }
  EXPECT_EQ(lengths.size(), 21u);
  // Uniform: the mean length is 20 (standard error about 0.25 here).
  EXPECT_NEAR(problem.num_observations() / 600.0, 20.0, 1.5);
  EXPECT_EQ(SyntheticProblemName(options), "synthetic-c40-p600-k10-30-seed7");

  // max == min (or 0) is the fixed length, bit for bit.
  SyntheticOptions fixed = SmallOptions();
  BalProblem a, b;
  ASSERT_TRUE(MakeSyntheticProblem(fixed, &a, &error)) << error;
  fixed.max_observations_per_point = fixed.observations_per_point;
  ASSERT_TRUE(MakeSyntheticProblem(fixed, &b, &error)) << error;
  ExpectSame(a, b);
  EXPECT_EQ(SyntheticProblemName(fixed), "synthetic-c12-p800-k4-seed7");
}

TEST(ExampleSyntheticProblem, NoiseAndOutliersAreAsAsked) {
  SyntheticOptions options = SmallOptions();
  options.num_points = 4000;
  options.outlier_ratio = 0.1;
  options.pixel_noise = 1.0;
  std::string error;
  BalProblem problem;
  SyntheticTruth truth;
  ASSERT_TRUE(MakeSyntheticProblem(options, &problem, &error, &truth)) << error;
  ASSERT_EQ(static_cast<int>(truth.outlier.size()), problem.num_observations());
  int outliers = 0;
  double inlier_sum2 = 0.0;
  int inliers = 0;
  for (int i = 0; i < truth.problem.num_observations(); ++i) {
    double r[2];
    Residual(truth.problem, i, r);
    const double norm = std::hypot(r[0], r[1]);
    if (truth.outlier[i]) {
      ++outliers;
      EXPECT_GT(norm, 20.0 - 6.0);
      EXPECT_LT(norm, 100.0 + 6.0);
    } else {
      ++inliers;
      inlier_sum2 += r[0] * r[0] + r[1] * r[1];
    }
  }
  const double ratio =
      static_cast<double>(outliers) / problem.num_observations();
  EXPECT_NEAR(ratio, options.outlier_ratio, 0.015);
  // Per-coordinate standard deviation of the inlier residuals.
  EXPECT_NEAR(std::sqrt(inlier_sum2 / (2.0 * inliers)), options.pixel_noise,
              0.05);
  // The initial values are perturbed away from the truth.
  EXPECT_NE(problem.parameters(), truth.problem.parameters());
  EXPECT_EQ(problem.observations(), truth.problem.observations());
}

TEST(ExampleSyntheticProblem, WithoutNoiseTheTruthHasZeroCost) {
  SyntheticOptions options = SmallOptions();
  options.outlier_ratio = 0.0;
  options.pixel_noise = 0.0;
  std::string error;
  BalProblem problem;
  SyntheticTruth truth;
  ASSERT_TRUE(MakeSyntheticProblem(options, &problem, &error, &truth));
  for (int i = 0; i < truth.problem.num_observations(); ++i) {
    double r[2];
    Residual(truth.problem, i, r);
    ASSERT_NEAR(r[0], 0.0, 1e-9);
    ASSERT_NEAR(r[1], 0.0, 1e-9);
  }
}

TEST(ExampleSyntheticProblem, IsSolvable) {
  // A few Levenberg-Marquardt iterations bring the cost near the noise floor.
  SyntheticOptions options = SmallOptions();
  options.outlier_ratio = 0.0;
  std::string error;
  BalProblem problem;
  ASSERT_TRUE(MakeSyntheticProblem(options, &problem, &error));
  ASSERT_TRUE(problem.Normalize(&error));
  ceres::Problem ceres_problem;
  ASSERT_TRUE(BuildProblem(BuildOptions(), &problem, &ceres_problem, &error));
  ceres::Solver::Options solver_options;
  solver_options.linear_solver_type = ceres::SPARSE_SCHUR;
  solver_options.max_num_iterations = 20;
  ceres::Solver::Summary summary;
  ceres::Solve(solver_options, &ceres_problem, &summary);
  // Noise floor: half the squared noise of 2 residuals per observation,
  // minus what the parameters absorb.
  const double floor = 0.5 * 2 * problem.num_observations() *
                       options.pixel_noise * options.pixel_noise;
  EXPECT_GT(summary.initial_cost, 20.0 * floor);
  EXPECT_LT(summary.final_cost, 1.1 * floor);
}

TEST(ExampleSyntheticProblem, QuaternionCamerasWhenAsked) {
  SyntheticOptions options = SmallOptions();
  options.use_quaternions = true;
  std::string error;
  BalProblem problem;
  ASSERT_TRUE(MakeSyntheticProblem(options, &problem, &error));
  EXPECT_EQ(problem.camera_block_size(), 10);
  EXPECT_EQ(problem.parameters().size(),
            10u * options.num_cameras + 3u * options.num_points);
}

TEST(ExampleSyntheticProblem, MakesA100kObservationProblemQuickly) {
  SyntheticOptions options;
  options.num_cameras = 200;
  options.num_points = 20000;
  options.observations_per_point = 5;
  std::string error;
  BalProblem problem;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(MakeSyntheticProblem(options, &problem, &error)) << error;
  const double seconds = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  EXPECT_EQ(problem.num_observations(), 100000);
  EXPECT_LT(seconds, 5.0);
}

TEST(ExampleSyntheticProblem, RejectsBadOptions) {
  struct Case {
    void (*change)(SyntheticOptions*);
    const char* message;
  };
  const Case cases[] = {
      {[](SyntheticOptions* o) { o->num_cameras = 1; },
       "--synthetic_num_cameras must be at least 2, got 1"},
      {[](SyntheticOptions* o) { o->num_points = 1; },
       "--synthetic_num_points must be at least 2, got 1"},
      {[](SyntheticOptions* o) { o->observations_per_point = 1; },
       "--synthetic_observations_per_point must be between 2 and the number "
       "of cameras (12), got 1"},
      {[](SyntheticOptions* o) { o->observations_per_point = 13; },
       "--synthetic_observations_per_point must be between 2"},
      {[](SyntheticOptions* o) { o->max_observations_per_point = 3; },
       "--synthetic_max_observations_per_point must be 0 or between "
       "--synthetic_observations_per_point (4) and the number of cameras "
       "(12), got 3"},
      {[](SyntheticOptions* o) { o->max_observations_per_point = 13; },
       "--synthetic_max_observations_per_point must be 0 or between"},
      {[](SyntheticOptions* o) { o->outlier_ratio = 1.5; },
       "--synthetic_outlier_ratio must be in [0, 1]"},
      {[](SyntheticOptions* o) { o->pixel_noise = -1.0; },
       "--synthetic_pixel_noise must be a finite value >= 0"},
      {[](SyntheticOptions* o) {
         o->num_points = 1000000000;
         o->observations_per_point = 12;
       },
       "more than 2147483647 observations"},
      {[](SyntheticOptions* o) {
         o->num_points = 100000;
         o->memory_limit_in_bytes = 1 << 20;
       },
       "MiB of memory available"},
      {[](SyntheticOptions* o) {
         o->num_points = 100000;
         o->memory_limit_in_bytes = 64 << 20;
         o->solve_bytes_per_observation = 1000;
       },
       "MiB to generate and solve, more than the 64 MiB of memory available"},
  };
  for (const Case& c : cases) {
    SyntheticOptions options = SmallOptions();
    c.change(&options);
    std::string error;
    BalProblem problem;
    EXPECT_FALSE(MakeSyntheticProblem(options, &problem, &error));
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "expected '" << c.message << "' in '" << error << "'";
  }
}

TEST(ExampleSyntheticProblem, NameDescribesTheProblem) {
  EXPECT_EQ(SyntheticProblemName(SmallOptions()), "synthetic-c12-p800-k4-seed7");
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
