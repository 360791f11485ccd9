// Problem building: the cost functors, the orderings, and the initial cost
// against Ceres' own bundle_adjuster example.
#include "build_problem.h"

#include <cmath>
#include <string>
#include <vector>

#include "bal_problem.h"
#include "bal_random.h"
#include "ceres/ceres.h"
#include "ceres/rotation.h"
#include "ceres_sqrtba/solver.h"
#include "example_test_util.h"
#include "gtest/gtest.h"
#include "snavely_reprojection_error.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

TEST(ExampleSnavelyError, MatchesAHandComputedProjection) {
  // Rotation by 90 degrees about z, so R (x, y, z) = (-y, x, z).
  const double half_pi = 1.5707963267948966;
  const double camera[9] = {0, 0, half_pi, 0.5, -0.25, -8.0, 600.0, -0.1, 0.02};
  const double point[3] = {1.0, 2.0, 3.0};
  // P = (-2 + 0.5, 1 - 0.25, 3 - 8) = (-1.5, 0.75, -5)
  const double u = 1.5 / -5.0 * -1.0 * -1.0;  // -P_x / P_z = -0.3
  const double v = -0.75 / -5.0;              // 0.15
  const double r2 = u * u + v * v;
  const double d = 1.0 + r2 * (-0.1 + 0.02 * r2);
  const double observed[2] = {3.0, -4.0};
  double residual[2];
  SnavelyAngleAxisError error(observed[0], observed[1]);
  ASSERT_TRUE(error(camera, point, residual));
  EXPECT_NEAR(residual[0], 600.0 * d * u - observed[0], 1e-9);
  EXPECT_NEAR(residual[1], 600.0 * d * v - observed[1], 1e-9);

  // The same camera as a (deliberately not normalized) quaternion.
  double quaternion_camera[10];
  ceres::AngleAxisToQuaternion(camera, quaternion_camera);
  for (int k = 0; k < 4; ++k) quaternion_camera[k] *= 3.0;
  for (int k = 0; k < 6; ++k) quaternion_camera[4 + k] = camera[3 + k];
  double quaternion_residual[2];
  SnavelyQuaternionError quaternion_error(observed[0], observed[1]);
  ASSERT_TRUE(quaternion_error(quaternion_camera, point, quaternion_residual));
  EXPECT_NEAR(quaternion_residual[0], residual[0], 1e-9);
  EXPECT_NEAR(quaternion_residual[1], residual[1], 1e-9);
}

BalProblem TinyProblem(bool quaternions) {
  std::vector<double> cameras = {0.01, -0.02, 0.03, 0.1, -0.2, -10.0, 500.0,
                                 0.0,  0.0,   0.0,  0.3, 0.0,  1.0,   0.0,
                                 -12.0, 520.0, -0.01, 0.001};
  return BalProblem::FromArrays(
      2, 3, {0, 1, 0, 1, 0}, {0, 0, 1, 1, 2},
      {25.5, 11.25, 60.0, 9.5, -50.0, 24.0, -19.0, 26.0, 15.0, -35.0},
      cameras, {0.5, 0.2, 1.0, -1.0, 0.5, -0.5, 0.3, -0.7, 0.2}, quaternions);
}

TEST(ExampleBuildProblem, OneResidualBlockPerObservation) {
  for (bool quaternions : {false, true}) {
    for (bool robustify : {false, true}) {
      BalProblem bal = TinyProblem(quaternions);
      ceres::Problem problem;
      BuildOptions options;
      options.robustify = robustify;
      options.use_manifolds = quaternions;
      std::string error;
      ASSERT_TRUE(BuildProblem(options, &bal, &problem, &error)) << error;
      EXPECT_EQ(problem.NumResidualBlocks(), 5);
      EXPECT_EQ(problem.NumResiduals(), 10);
      EXPECT_EQ(problem.NumParameterBlocks(), 5);
      EXPECT_EQ(problem.ParameterBlockSize(bal.mutable_camera(0)),
                quaternions ? 10 : 9);
      EXPECT_EQ(problem.ParameterBlockTangentSize(bal.mutable_camera(0)), 9);
      std::vector<ceres::ResidualBlockId> blocks;
      problem.GetResidualBlocks(&blocks);
      EXPECT_EQ(problem.GetLossFunctionForResidualBlock(blocks[0]) != nullptr,
                robustify);
    }
  }
}

TEST(ExampleBuildProblem, ManifoldsNeedQuaternions) {
  BalProblem bal = TinyProblem(false);
  ceres::Problem problem;
  BuildOptions options;
  options.use_manifolds = true;
  std::string error;
  EXPECT_FALSE(BuildProblem(options, &bal, &problem, &error));
  EXPECT_EQ(error, "--use_manifolds can only be used with --use_quaternions");
}

TEST(ExampleBuildProblem, UserOrderingPutsPointsFirst) {
  BalProblem bal = TinyProblem(false);
  ceres::Problem problem;
  std::string error;
  ASSERT_TRUE(BuildProblem(BuildOptions(), &bal, &problem, &error));
  const auto ordering = PointsFirstOrdering(&bal, problem);
  EXPECT_EQ(ordering->NumGroups(), 2);
  EXPECT_EQ(ordering->GroupSize(0), 3);
  EXPECT_EQ(ordering->GroupSize(1), 2);
  EXPECT_EQ(ordering->GroupId(bal.mutable_point(0)), 0);
  EXPECT_EQ(ordering->GroupId(bal.mutable_camera(1)), 1);

  std::shared_ptr<ceres::ParameterBlockOrdering> inner;
  ASSERT_TRUE(
      InnerIterationOrdering("points,cameras", &bal, problem, &inner, &error));
  EXPECT_EQ(inner->GroupId(bal.mutable_point(2)), 0);
  EXPECT_EQ(inner->GroupId(bal.mutable_camera(0)), 1);
  ASSERT_TRUE(InnerIterationOrdering("cameras", &bal, problem, &inner, &error));
  EXPECT_EQ(inner->NumElements(), 2);
  ASSERT_TRUE(
      InnerIterationOrdering("automatic", &bal, problem, &inner, &error));
  EXPECT_EQ(inner, nullptr);
  EXPECT_FALSE(InnerIterationOrdering("all", &bal, problem, &inner, &error));
  EXPECT_NE(error.find("unknown --blocks_for_inner_iterations 'all'"),
            std::string::npos);
}

// Initial costs printed by Ceres 2.1's own examples/bundle_adjuster (Debian's
// ceres-solver-doc sources, built unchanged except for printing
// summary.initial_cost with %.17g) on problem-49-7776-pre.txt (the .bz2
// decompressed), --num_iterations=0 and the flags below.
struct CeresReference {
  const char* flags;
  double rotation_sigma;
  double translation_sigma;
  double point_sigma;
  int seed;
  bool robustify;
  bool quaternions;
  bool manifolds;
  double initial_cost;
};

const CeresReference kCeresReferences[] = {
    {"(no perturbation)", 0, 0, 0, 38401, false, false, false,
     850912.46068082948},
    {"--rotation_sigma=0.01 --translation_sigma=0.1 --point_sigma=0.5 "
     "--robustify",
     0.01, 0.1, 0.5, 38401, true, false, false, 282911.67407634557},
    {"--rotation_sigma=0.01 --translation_sigma=0.1 --point_sigma=0.5", 0.01,
     0.1, 0.5, 38401, false, false, false, 3132011.4981020312},
    {"--rotation_sigma=0.01 --translation_sigma=0.1 --point_sigma=0.5 "
     "--use_quaternions",
     0.01, 0.1, 0.5, 38401, false, true, false, 3132011.4981019651},
    {"--rotation_sigma=0.01 --translation_sigma=0.1 --point_sigma=0.5 "
     "--use_quaternions --use_manifolds",
     0.01, 0.1, 0.5, 38401, false, true, true, 3132011.4981019651},
    {"--rotation_sigma=0.02 --translation_sigma=0.2 --point_sigma=1 "
     "--random_seed=7",
     0.02, 0.2, 1.0, 7, false, false, false, 8163252.7973152082},
};

TEST(ExampleBuildProblem, InitialCostMatchesCeresOwnExampleOnLadybug49) {
  const std::string path =
      testing_util::BalDir() + "/problem-49-7776-pre.txt.bz2";
  if (!testing_util::FileExists(path)) {
    GTEST_SKIP() << "BAL problem not found: " << path
                 << " (set CERES_SQRTBA_BAL_DIR)";
  }
  for (const CeresReference& reference : kCeresReferences) {
    SCOPED_TRACE(reference.flags);
    BalReadOptions read_options;
    read_options.use_quaternions = reference.quaternions;
    BalProblem bal;
    std::string error;
    ASSERT_TRUE(BalProblem::Read(path, read_options, &bal, &error)) << error;
    ASSERT_TRUE(bal.Normalize(&error)) << error;
    BalRandom random(static_cast<uint32_t>(reference.seed));
    bal.Perturb(reference.rotation_sigma, reference.translation_sigma,
                reference.point_sigma, &random);
    ceres::Problem problem;
    BuildOptions build_options;
    build_options.robustify = reference.robustify;
    build_options.use_manifolds = reference.manifolds;
    ASSERT_TRUE(BuildProblem(build_options, &bal, &problem, &error)) << error;

    double cost = 0.0;
    ASSERT_TRUE(problem.Evaluate(ceres::Problem::EvaluateOptions(), &cost,
                                 nullptr, nullptr, nullptr));
    EXPECT_NEAR(cost, reference.initial_cost, 1e-9 * reference.initial_cost);

    // The same through ceres_sqrtba::Solve in pass-through mode.
    Solver::Options options;
    options.max_num_iterations = 0;
    options.linear_solver_type = ceres::SPARSE_SCHUR;
    options.logging_type = ceres::SILENT;
    Solver::Summary summary;
    Solve(options, &problem, &summary);
    EXPECT_NEAR(summary.initial_cost, reference.initial_cost,
                1e-9 * reference.initial_cost);
  }
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba
