// The coordinate descent of inner iterations, unit by unit: Ceres' automatic
// ordering (recursive independent sets, reversed), the checks of a given
// ordering with Ceres' messages, one block's sub-solve against Ceres solving
// the same one-block problem with default options and DENSE_QR (bounds
// included), and a round's bits for any number of threads.
#include "ceres_sqrtba/internal/minimizer/coordinate_descent_minimizer.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// y = exp(a x + b) * c + noise: a non-linear fit of one 3-vector, 1 residual
// per observation; with a second block `offset` added to every residual so
// that the blocks interact.
struct ExpResidual {
  ExpResidual(double x, double y) : x(x), y(y) {}
  template <typename T>
  bool operator()(const T* abc, const T* offset, T* r) const {
    r[0] = abc[2] * exp(abc[0] * x + abc[1]) + offset[0] - y;
    return true;
  }
  double x, y;
};

struct Fit {
  std::vector<double> abc = {0.1, -0.2, 1.5};
  std::vector<double> offset = {0.3};
  std::vector<double> xs, ys;
};

Fit MakeFit(int n) {
  Fit f;
  for (int i = 0; i < n; ++i) {
    const double x = -1.0 + 2.0 * i / (n - 1);
    f.xs.push_back(x);
    f.ys.push_back(2.0 * std::exp(0.7 * x - 0.1) + 0.5 + 0.01 * std::sin(13.0 * i));
  }
  return f;
}

void AddFit(Fit* f, ceres::Problem* problem, ceres::LossFunction* loss) {
  for (size_t i = 0; i < f->xs.size(); ++i) {
    problem->AddResidualBlock(new ceres::AutoDiffCostFunction<ExpResidual, 1, 3, 1>(new ExpResidual(f->xs[i], f->ys[i])),
                              loss, f->abc.data(), f->offset.data());
  }
}

ProblemStructure Structure(const ceres::Problem& problem) {
  ProblemStructure s;
  std::string error;
  EXPECT_EQ(BuildProblemStructure(problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  return s;
}

// One round over the set {abc} (offset held constant) against Ceres solving
// the same problem with offset constant, default options and DENSE_QR, as
// Ceres' inner iterations solve each block: the same iterations, the same
// point up to rounding. With a loss, and with a bound that is active at the
// solution (ParameterBlock::Plus projects onto it).
TEST(CoordinateDescentMinimizer, OneBlockSolvedAsCeresWithDefaultOptions) {
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    Fit ours = MakeFit(40);
    // Variant 3 starts far off, where steps are rejected: the step after a
    // rejection is computed from the current point's residuals, not from
    // the rejected candidate's.
    if (variant == 3) ours.abc = {2.5, 1.0, -3.0};
    Fit theirs = ours;
    ceres::Problem problem, reference;
    AddFit(&ours, &problem, variant == 1 ? new ceres::CauchyLoss(0.5) : nullptr);
    AddFit(&theirs, &reference, variant == 1 ? new ceres::CauchyLoss(0.5) : nullptr);
    if (variant == 2) {
      problem.SetParameterUpperBound(ours.abc.data(), 2, 1.6);
      reference.SetParameterUpperBound(theirs.abc.data(), 2, 1.6);
    }
    reference.SetParameterBlockConstant(theirs.offset.data());
    ceres::Solver::Options options;  // Ceres' defaults, as its sub-solves
    options.linear_solver_type = ceres::DENSE_QR;
    options.logging_type = ceres::SILENT;
    ceres::Solver::Summary summary;
    ceres::Solve(options, &reference, &summary);
    ASSERT_TRUE(summary.IsSolutionUsable()) << summary.message;
    if (variant == 3) EXPECT_GT(summary.num_unsuccessful_steps, 0) << "no step was rejected";

    ProblemStructure s = Structure(problem);
    const int abc = s.index_of.at(ours.abc.data());
    ParallelContext context(1);
    CoordinateDescentMinimizer cdm(s, {{abc}}, &context);
    std::vector<double> x = StateFromUser(s);
    const std::vector<double> x0 = x;
    cdm.Minimize(x.data());
    const int offset = s.parameter_blocks[s.index_of.at(ours.offset.data())].state_offset;
    EXPECT_EQ(x[offset], x0[offset]) << "the block outside the sets moved";
    const int at = s.parameter_blocks[abc].state_offset;
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(x[at + k], theirs.abc[k], 1e-9 * (1 + std::abs(theirs.abc[k]))) << k;
    // Ceres' iterations less its iteration 0, plus the one that met a
    // tolerance (Ceres returns before recording it).
    const bool ended_in_loop = summary.message.rfind("Function tolerance", 0) == 0 ||
                               summary.message.rfind("Parameter tolerance", 0) == 0;
    EXPECT_EQ(cdm.last_round_iterations(), static_cast<int>(summary.iterations.size()) - 1 + (ended_in_loop ? 1 : 0))
        << summary.message;
    if (variant == 2) {
      EXPECT_LE(x[at + 2], 1.6);
      EXPECT_EQ(theirs.abc[2], 1.6) << "the bound should be active";
    }
  }
}

// A point whose cost decreases all the way to infinity (two cameras side by
// side that see it at the same pixel: parallel rays), the case where a
// sub-solve runs its 50 iterations with a growing radius: still Ceres' path.
TEST(CoordinateDescentMinimizer, RunawayPointSolvedAsCeres) {
  std::vector<std::vector<double>> poses = {{0, 0, 0, 0, 0, -10}, {0, 0, 0, -1, 0, -10}};
  std::vector<double> intrinsics = {500, 0, 0};
  std::vector<std::vector<double>> point = {{0.3, -0.2, 5.0}, {0.3, -0.2, 5.0}};
  ceres::Problem problem, reference;
  for (int which = 0; which < 2; ++which) {
    ceres::Problem* p = which == 0 ? &problem : &reference;
    for (int c = 0; c < 2; ++c) {
      p->AddResidualBlock(new ceres::AutoDiffCostFunction<testing::ReprojectionError, 2, 6, 3, 3>(
                              new testing::ReprojectionError(12.0, -7.0)),
                          new ceres::HuberLoss(1.0), poses[c].data(), intrinsics.data(), point[which].data());
    }
  }
  for (auto& pose : poses) reference.SetParameterBlockConstant(pose.data());
  reference.SetParameterBlockConstant(intrinsics.data());
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_QR;
  options.logging_type = ceres::SILENT;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &reference, &summary);
  ProblemStructure s = Structure(problem);
  const int p = s.index_of.at(point[0].data());
  ParallelContext context(1);
  CoordinateDescentMinimizer cdm(s, {{p}}, &context);
  std::vector<double> x = StateFromUser(s);
  cdm.Minimize(x.data());
  const int at = s.parameter_blocks[p].state_offset;
  std::printf("ceres: %s, %d iterations: %.9g %.9g %.9g; ours: %d: %.9g %.9g %.9g\n", summary.message.c_str(),
              static_cast<int>(summary.iterations.size()), point[1][0], point[1][1], point[1][2],
              cdm.last_round_iterations(), x[at], x[at + 1], x[at + 2]);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(x[at + k], point[1][k], 1e-6 * (1 + std::abs(point[1][k]))) << k;
  EXPECT_GT(std::abs(x[at + 2]), 1e4) << "the point should have run away";
  EXPECT_EQ(cdm.last_round_iterations(), static_cast<int>(summary.iterations.size()) - 1);
}

// Bundle adjustment with pose and intrinsics in separate blocks: points
// first, then {poses or intrinsics}, then the rest; Ceres visits them
// reversed. Every set is independent, and together they are every variable
// block once.
TEST(CoordinateDescentMinimizer, RecursiveIndependentSetOrderingOfBundleAdjustment) {
  testing::SyntheticBa ba = testing::MakeSyntheticBa(6, 50, 3, 7);
  ceres::Problem problem;
  testing::AddReprojectionResiduals(&ba, &problem, nullptr);
  problem.SetParameterBlockConstant(ba.intrinsics[0].data());
  const ProblemStructure s = Structure(problem);
  const std::vector<std::vector<int>> sets = RecursiveIndependentSetOrdering(s);
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(sets[2].size(), 50u);
  EXPECT_EQ(sets[0].size() + sets[1].size(), 11u);
  std::set<int> seen;
  for (size_t g = 0; g < sets.size(); ++g) {
    std::vector<int> group_of(s.parameter_blocks.size(), -1);
    for (int p : sets[g]) {
      EXPECT_TRUE(seen.insert(p).second);
      EXPECT_FALSE(s.parameter_blocks[p].is_constant);
      group_of[p] = 1;
    }
    for (const ResidualBlockInfo& rb : s.residual_blocks) {
      int in = 0;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) in += group_of[s.residual_parameters[rb.parameter_begin + i]] == 1;
      EXPECT_LE(in, 1) << "set " << g << " is not independent";
    }
  }
  EXPECT_EQ(seen.size(), s.variable_blocks.size());
  for (int p : sets[2]) EXPECT_TRUE(s.parameter_blocks[p].is_landmark);
}

TEST(CoordinateDescentMinimizer, GivenOrderingsCheckedAsCeresChecksThem) {
  testing::SyntheticBa ba = testing::MakeSyntheticBa(4, 20, 3, 8);
  ceres::Problem problem;
  testing::AddReprojectionResiduals(&ba, &problem, nullptr);
  problem.SetParameterBlockConstant(ba.intrinsics[1].data());
  const ProblemStructure s = Structure(problem);
  InnerIterationSetup setup;
  std::string error;

  // Points, poses, intrinsics (one constant, dropped) in groups 3, 5, 9.
  ceres::ParameterBlockOrdering good;
  for (auto& p : ba.points) good.AddElementToGroup(p.data(), 3);
  for (auto& p : ba.poses) good.AddElementToGroup(p.data(), 5);
  for (auto& p : ba.intrinsics) good.AddElementToGroup(p.data(), 9);
  ASSERT_TRUE(SetUpInnerIterations(s, &good, false, &setup, &error)) << error;
  EXPECT_TRUE(setup.used);
  EXPECT_EQ(setup.ordering_used, (std::vector<int>{20, 4, 3}));

  // A pose and its intrinsics together in group 5: not independent.
  ceres::ParameterBlockOrdering bad = good;
  bad.AddElementToGroup(ba.intrinsics[0].data(), 5);
  EXPECT_FALSE(SetUpInnerIterations(s, &bad, false, &setup, &error));
  EXPECT_EQ(error,
            "The user-provided parameter_blocks_for_inner_iterations does not form an independent set. Group Id: 5");

  double stranger[3] = {0, 0, 0};
  ceres::ParameterBlockOrdering unknown = good;
  unknown.AddElementToGroup(stranger, 0);
  EXPECT_FALSE(SetUpInnerIterations(s, &unknown, false, &setup, &error));
  EXPECT_NE(error.find("inner_iteration_ordering contains a parameter block"), std::string::npos) << error;

  // Only constant blocks: nothing left, inner iterations not used.
  ceres::ParameterBlockOrdering constant_only;
  constant_only.AddElementToGroup(ba.intrinsics[1].data(), 0);
  ASSERT_TRUE(SetUpInnerIterations(s, &constant_only, false, &setup, &error));
  EXPECT_FALSE(setup.used);

  EXPECT_FALSE(SetUpInnerIterations(s, nullptr, true, &setup, &error));
  EXPECT_EQ(error, "Inner iterations cannot be used with EvaluationCallbacks");

  ASSERT_TRUE(SetUpInnerIterations(s, nullptr, false, &setup, &error));
  EXPECT_TRUE(setup.used);
  EXPECT_EQ(setup.ordering_used.size(), 3u);
}

// A round over all sets of a robustified BA problem: the cost does not
// increase, and 1, 2 and 3 threads give the same bits.
TEST(CoordinateDescentMinimizer, RoundIsBitIdenticalForAnyNumberOfThreads) {
  testing::SyntheticBa ba = testing::MakeSyntheticBa(8, 300, 4, 9);
  ceres::Problem problem;
  testing::AddReprojectionResiduals(&ba, &problem, new ceres::HuberLoss(1.0));
  const ProblemStructure s = Structure(problem);
  const std::vector<double> x0 = StateFromUser(s);
  std::vector<double> results[3];
  for (int threads = 1; threads <= 3; ++threads) {
    ParallelContext context(threads);
    CoordinateDescentMinimizer cdm(s, RecursiveIndependentSetOrdering(s), &context);
    std::vector<double> x = x0;
    cdm.Minimize(x.data());
    cdm.Minimize(x.data());
    results[threads - 1] = x;
    EXPECT_GT(cdm.last_round_iterations(), 0);
  }
  EXPECT_TRUE(results[0] == results[1]);
  EXPECT_TRUE(results[0] == results[2]);
  EXPECT_FALSE(results[0] == x0);
  // The cost went down.
  auto cost = [&](const std::vector<double>& x) {
    StateToUser(s, x.data());
    double c = 0.0;
    problem.Evaluate(ceres::Problem::EvaluateOptions(), &c, nullptr, nullptr, nullptr);
    return c;
  };
  EXPECT_LT(cost(results[0]), 0.5 * cost(x0));
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
