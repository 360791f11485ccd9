// SQRT_SPARSE_SCHUR through ceres_sqrtba::Solve, with the dense and the
// sparse Cholesky:
// - the iterates are Ceres' SPARSE_SCHUR's (exact LM steps, rejected steps
//   included), in double and with single precision blocks;
// - a badly scaled problem (every tenth point
//   moved behind its first camera, cost 5e22) takes the steps Ceres'
//   SPARSE_SCHUR takes instead of failing;
// - the summary says which factorization ran (DENSE_SCHUR / SPARSE_SCHUR);
// - bit-identical results for any number of threads;
// - values single precision cannot hold continue in double precision.
#include <cmath>
#include <functional>
#include <string>

#include "ceres/rotation.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "direct_solve.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::AddReprojectionResiduals;
using testing::DirectOptions;
using testing::MakeSyntheticBa;
using testing::SolveCopy;
using testing::SyntheticBa;

double Rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

Solver::Options CeresSparseSchur() {
  Solver::Options o = DirectOptions(DOUBLE_PRECISION);
  o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
  o.linear_solver_type = ceres::SPARSE_SCHUR;
  o.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  return o;
}

// The first `n` iterations take the same decisions, and the costs of the
// accepted ones agree to `tolerance`.
void ExpectSameIterates(const Solver::Summary& a, const Solver::Summary& ceres, size_t n, double tolerance,
                        const std::string& what) {
  ASSERT_GE(a.iterations.size(), n) << what;
  ASSERT_GE(ceres.iterations.size(), n) << what;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(a.iterations[i].step_is_successful, ceres.iterations[i].step_is_successful)
        << what << ", iteration " << i;
    if (ceres.iterations[i].step_is_successful) {
      EXPECT_LT(Rel(a.iterations[i].cost, ceres.iterations[i].cost), tolerance) << what << ", iteration " << i;
    }
  }
}

int RejectedSteps(const Solver::Summary& s, size_t n) {
  int rejected = 0;
  for (size_t i = 1; i < n && i < s.iterations.size(); ++i) rejected += !s.iterations[i].step_is_successful;
  return rejected;
}

TEST(SqrtSparseSchurSolve, IteratesAreCeresSparseSchurs) {
  const SyntheticBa ba = MakeSyntheticBa(10, 400, 5, 12);
  const Solver::Summary ceres_summary = SolveCopy(ba, CeresSparseSchur());
  ASSERT_TRUE(ceres_summary.IsSolutionUsable()) << ceres_summary.message;
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    const std::string name = ReducedCameraFactorizationToString(f);
    const Solver::Summary dbl = SolveCopy(ba, DirectOptions(DOUBLE_PRECISION, f));
    const Solver::Summary single = SolveCopy(ba, DirectOptions(SINGLE_PRECISION, f));
    ASSERT_TRUE(dbl.IsSolutionUsable()) << dbl.message;
    ASSERT_TRUE(single.IsSolutionUsable()) << single.message;
    ExpectSameIterates(dbl, ceres_summary, 10, 1e-8, name + ", double");
    ExpectSameIterates(single, ceres_summary, 8, 1e-5, name + ", single");
    EXPECT_LT(Rel(dbl.final_cost, ceres_summary.final_cost), 1e-6) << name;
    // An exact solve passes the blocks' float rounding on (docs/solver.md).
    EXPECT_LT(Rel(single.final_cost, ceres_summary.final_cost), 1e-4) << name;
    EXPECT_EQ(dbl.termination_type, ceres_summary.termination_type) << name;
  }
}

// Rejected steps: from a point whose first steps overshoot, the radius
// shrinks exactly as Ceres shrinks it (the same damping, re-applied without
// a new Jacobian).
TEST(SqrtSparseSchurSolve, RejectedStepsAsCeres) {
  SyntheticBa ba = MakeSyntheticBa(8, 200, 4, 4);
  for (auto& p : ba.points) p[2] += 0.5;  // away from the solution, outliers unweighted
  const Solver::Summary ceres_summary = SolveCopy(ba, CeresSparseSchur(), /*huber=*/false);
  ASSERT_GE(RejectedSteps(ceres_summary, 10), 3) << "the test needs rejected steps";
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    const Solver::Summary s = SolveCopy(ba, DirectOptions(DOUBLE_PRECISION, f), /*huber=*/false);
    ExpectSameIterates(s, ceres_summary, 10, 1e-8, ReducedCameraFactorizationToString(f));
    for (size_t i = 0; i < 10; ++i) {
      EXPECT_LT(Rel(s.iterations[i].trust_region_radius, ceres_summary.iterations[i].trust_region_radius), 1e-9);
    }
  }
}

// A badly scaled problem: every tenth point reflected
// through the centre of the first camera that sees it, i.e. behind it.
// Residuals reach 1e11 (cost 5e22) and steps overshoot to 1e48; the damped
// camera system stays positive definite (min_lm_diagonal > 0), so no step may
// be refused for a relative rank estimate: the solve goes on, as Ceres'
// SPARSE_SCHUR, from 5e22 to below 1e12.
SyntheticBa PointsBehindCameras() {
  SyntheticBa ba = MakeSyntheticBa(20, 200, 5, 2);
  std::vector<int> first(ba.points.size(), -1);
  for (const auto& o : ba.observations) {
    if (first[o.point] < 0) first[o.point] = o.camera;
  }
  for (size_t i = 0; i < ba.points.size(); i += 10) {
    const std::vector<double>& pose = ba.poses[first[i]];
    const double minus_t[3] = {-pose[3], -pose[4], -pose[5]};
    const double inverse[3] = {-pose[0], -pose[1], -pose[2]};
    double centre[3];
    ceres::AngleAxisRotatePoint(inverse, minus_t, centre);  // -R^T t
    for (int k = 0; k < 3; ++k) ba.points[i][k] = 2 * centre[k] - ba.points[i][k];
  }
  return ba;
}

TEST(SqrtSparseSchurSolve, PointsBehindCamerasTakeCeresSteps) {
  const SyntheticBa ba = PointsBehindCameras();
  Solver::Options ceres_options = CeresSparseSchur();
  ceres_options.max_num_iterations = 28;
  const Solver::Summary ceres_summary = SolveCopy(ba, ceres_options, /*huber=*/false);
  ASSERT_GT(ceres_summary.initial_cost, 1e22);
  ASSERT_LT(ceres_summary.final_cost, 1e12);
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    const std::string name = ReducedCameraFactorizationToString(f);
    Solver::Options o = DirectOptions(DOUBLE_PRECISION, f);
    o.max_num_iterations = 28;
    const Solver::Summary s = SolveCopy(ba, o, /*huber=*/false);
    EXPECT_EQ(s.termination_type, ceres::NO_CONVERGENCE) << name << ": " << s.message;
    ExpectSameIterates(s, ceres_summary, 29, 1e-2, name);
    EXPECT_LT(Rel(s.final_cost, ceres_summary.final_cost), 1e-2) << name;
    for (const ceres::IterationSummary& it : s.iterations) EXPECT_TRUE(it.step_is_valid) << name;
  }
}

TEST(SqrtSparseSchurSolve, SummarySaysWhichFactorizationRan) {
  const SyntheticBa ba = MakeSyntheticBa(6, 100, 3, 42);
  for (ReducedCameraFactorization f : {AUTOMATIC_FACTORIZATION, DENSE_FACTORIZATION, SPARSE_FACTORIZATION}) {
    Solver::Options o = DirectOptions(SINGLE_PRECISION, f);
    o.max_num_iterations = 5;
    o.function_tolerance = 1e-16;
    o.gradient_tolerance = 1e-16;
    const Solver::Summary s = SolveCopy(ba, o);
    EXPECT_EQ(s.termination_type, ceres::NO_CONVERGENCE) << s.message;
    const bool dense = f != SPARSE_FACTORIZATION;  // 54 camera parameters: AUTOMATIC is dense
    EXPECT_EQ(s.reduced_camera_factorization_given, f);
    EXPECT_EQ(s.reduced_camera_factorization_used, dense ? DENSE_FACTORIZATION : SPARSE_FACTORIZATION);
    EXPECT_EQ(s.linear_solver_type_given, ceres::SPARSE_SCHUR);
    EXPECT_EQ(s.linear_solver_type_used, dense ? ceres::DENSE_SCHUR : ceres::SPARSE_SCHUR);
    EXPECT_FALSE(s.explicit_reduced_rows_used);
    EXPECT_EQ(s.num_linear_solves, 5);
    for (size_t i = 1; i < s.iterations.size(); ++i) EXPECT_EQ(s.iterations[i].linear_solver_iterations, 1);
    const std::string report = s.FullReport();
    EXPECT_NE(report.find(dense ? "DENSE_FACTORIZATION\n" : "SPARSE_FACTORIZATION\n"), std::string::npos) << report;
    EXPECT_NE(report.find(dense ? "EIGEN" : "SUITE_SPARSE"), std::string::npos) << report;
    EXPECT_LT(s.final_cost, s.initial_cost);
  }
}

TEST(SqrtSparseSchurSolve, DeterministicAcrossRunsAndThreads) {
  const SyntheticBa ba = MakeSyntheticBa(8, 300, 4, 43);
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    std::vector<double> costs;
    for (int threads : {1, 2, 2}) {
      Solver::Options o = DirectOptions(DOUBLE_PRECISION, f);
      o.num_threads = threads;
      costs.push_back(SolveCopy(ba, o).final_cost);
    }
    EXPECT_EQ(costs[1], costs[2]) << ReducedCameraFactorizationToString(f);
    EXPECT_EQ(costs[0], costs[1]) << ReducedCameraFactorizationToString(f);
  }
}

// Residuals around 1e20 do not fit single precision blocks: the solve goes on
// with double blocks (the fallback factory makes a SQRT_SPARSE_SCHUR solver).
// (robustness_test runs its hard problems, concurrent solves included, with
// SQRT_SPARSE_SCHUR too.)
using testing::HugeReprojectionError;

TEST(SqrtSparseSchurSolve, SinglePrecisionFallsBackToDouble) {
  const SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 37);
  auto solve = [&](Precision precision) {
    SyntheticBa copy = ba;
    ceres::Problem problem;
    for (const auto& o : copy.observations) {
      problem.AddResidualBlock(
          new ceres::AutoDiffCostFunction<HugeReprojectionError, 2, 6, 3, 3>(new HugeReprojectionError(o.u, o.v)), nullptr,
          copy.poses[o.camera].data(), copy.intrinsics[o.camera].data(),
          copy.points[o.point].data());
    }
    Solver::Summary s;
    Solve(DirectOptions(precision), &problem, &s);
    return s;
  };
  const Solver::Summary single = solve(SINGLE_PRECISION);
  const Solver::Summary dbl = solve(DOUBLE_PRECISION);
  ASSERT_TRUE(single.IsSolutionUsable()) << single.message;
  EXPECT_NE(single.message.find("continued in double precision"), std::string::npos)
      << single.message;
  EXPECT_NEAR(single.final_cost, dbl.final_cost, 1e-6 * dbl.final_cost);
}

}  // namespace
}  // namespace ceres_sqrtba
