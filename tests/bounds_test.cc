// Bounds (Problem::SetParameterLowerBound/UpperBound) as Ceres' trust-region
// minimizer honours them: Plus projects onto the box, the initial point is
// projected, a projected Armijo line search runs on every valid step of a
// bounded problem, and Ceres' checks refuse what cannot be solved. Each case
// against ceres::Solve (ITERATIVE_SCHUR) on the same problem.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::AddReprojectionResiduals;
using testing::MakeSyntheticBa;
using testing::SyntheticBa;

struct BoundedRun {
  ceres::Solver::Summary summary;
  SyntheticBa ba;
};

using Bounds = void (*)(SyntheticBa*, ceres::Problem*);

BoundedRun SolveBounded(bool ceres_solve, Bounds bounds, Precision precision = DOUBLE_PRECISION,
                        ceres::LinearSolverType ceres_solver = ceres::ITERATIVE_SCHUR) {
  BoundedRun run;
  run.ba = MakeSyntheticBa(5, 60, 3, 41);
  ceres::Problem problem;
  AddReprojectionResiduals(&run.ba, &problem, new ceres::HuberLoss(1.0));
  bounds(&run.ba, &problem);
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.precision = precision;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  o.linear_solver_type = ceres_solver;
  o.max_num_iterations = 200;
  o.function_tolerance = 1e-12;  // to where the projected steps stall
  o.eta = 1e-6;
  o.logging_type = ceres::SILENT;
  if (ceres_solve) {
    ceres::Solve(o, &problem, &run.summary);
  } else {
    ceres_sqrtba::Solve(o, &problem, &run.summary);
  }
  return run;
}

// Levenberg-Marquardt with steps projected onto the box stops where the
// rounding of its (inexact) steps leads it once bounds are active: Ceres'
// own ITERATIVE_SCHUR and SPARSE_SCHUR end up to 4e-3 apart on these
// problems. Double precision must end as close to Ceres' ITERATIVE_SCHUR as
// Ceres' two solvers end to each other, and within `stall_band` in any case
// (1e-6 where the bounds are not active and every solver reaches the same
// minimum); single precision, whose steps are less exact, within 1e-2,
// bounds held.
void ExpectSameEnd(Bounds bounds, double stall_band = 1e-6) {
  const BoundedRun ceres = SolveBounded(true, bounds);
  const BoundedRun ceres_sparse = SolveBounded(true, bounds, DOUBLE_PRECISION, ceres::SPARSE_SCHUR);
  ASSERT_TRUE(ceres.summary.IsSolutionUsable()) << ceres.summary.message;
  const double spread = std::abs(ceres_sparse.summary.final_cost - ceres.summary.final_cost) / ceres.summary.final_cost;
  for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
    const BoundedRun sqrt = SolveBounded(false, bounds, precision);
    ASSERT_TRUE(sqrt.summary.IsSolutionUsable()) << sqrt.summary.message;
    EXPECT_EQ(sqrt.summary.is_constrained, ceres.summary.is_constrained);
    EXPECT_NEAR(sqrt.summary.initial_cost, ceres.summary.initial_cost, 1e-12 * ceres.summary.initial_cost);
    const double tolerance = precision == DOUBLE_PRECISION ? std::max(stall_band, spread) : 1e-2;
    EXPECT_NEAR(sqrt.summary.final_cost, ceres.summary.final_cost, tolerance * ceres.summary.final_cost)
        << PrecisionToString(precision) << ", Ceres' spread " << spread;
    // (Not the points themselves: BA has a gauge freedom along which both
    // drift differently.)
  }
}

// An inactive bound still makes the problem bounded: line search on every
// step (Ceres' trajectory changes with it), the same end.
TEST(Bounds, InactiveBoundEndsWhereCeresEnds) {
  ExpectSameEnd([](SyntheticBa* ba, ceres::Problem* p) { p->SetParameterLowerBound(ba->points[3].data(), 1, -1e10); });
  const BoundedRun run = SolveBounded(false, [](SyntheticBa* ba, ceres::Problem* p) {
    p->SetParameterLowerBound(ba->points[3].data(), 1, -1e10);
  });
  EXPECT_TRUE(run.summary.is_constrained);
}

// Focal lengths held below their optimum and points held in a slab: active
// bounds, met exactly. Where each solver stalls on them is rounding: over
// 41 rounding jitters of this problem (tests/rounding_jitter.h, seeds
// 0-40) Ceres' SPARSE_SCHUR ended -3.6e-4 to +4.2e-3 from its
// ITERATIVE_SCHUR, double precision -4.6e-3 to +4.2e-3 and single precision
// -1.9e-3 to +3.7e-3, each seed on its own side: the band is 1e-2 (twice
// the widest), not the spread of one seed.
TEST(Bounds, ActiveBoundsEndWhereCeresEndsAndHold) {
  auto bounds = [](SyntheticBa* ba, ceres::Problem* p) {
    for (auto& intrinsics : ba->intrinsics) p->SetParameterUpperBound(intrinsics.data(), 0, intrinsics[0] - 2.0);
    for (auto& point : ba->points) p->SetParameterLowerBound(point.data(), 2, -0.5);
  };
  ExpectSameEnd(bounds, /*stall_band=*/1e-2);
  const SyntheticBa start = MakeSyntheticBa(5, 60, 3, 41);
  const BoundedRun run = SolveBounded(false, bounds);
  for (size_t c = 0; c < run.ba.intrinsics.size(); ++c) {
    EXPECT_LE(run.ba.intrinsics[c][0], start.intrinsics[c][0] - 2.0);
  }
  for (const auto& point : run.ba.points) EXPECT_GE(point[2], -0.5);
}

// The projected line search tries the steps Ceres' tries, trial by trial, for
// each interpolation type: the same number of line search steps and
// evaluations, and the same iterations (jacobians_at_candidates = false, so
// that the evaluations are Ceres' too). The polynomial's minimizer is where
// rounding could part them: before the roots were found as Ceres finds them
// (closed-form quadratics, a balanced companion matrix) CUBIC took 49 line
// search steps here where Ceres took 43.
TEST(Bounds, LineSearchTakesCeresStepsForEveryInterpolation) {
  for (ceres::LineSearchInterpolationType interpolation : {ceres::BISECTION, ceres::QUADRATIC, ceres::CUBIC}) {
    SCOPED_TRACE(ceres::LineSearchInterpolationTypeToString(interpolation));
    ceres::Solver::Summary summaries[2];
    for (int ours = 0; ours < 2; ++ours) {
      SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 41);
      ceres::Problem problem;
      AddReprojectionResiduals(&ba, &problem, new ceres::HuberLoss(1.0));
      // Narrow boxes around some points' first coordinate, and a focal
      // length capped just above its start: many trials end on the box.
      for (int j = 0; j < 10; ++j) {
        problem.SetParameterLowerBound(ba.points[j].data(), 0, ba.points[j][0] - 0.005);
        problem.SetParameterUpperBound(ba.points[j].data(), 0, ba.points[j][0] + 0.005);
      }
      problem.SetParameterUpperBound(ba.intrinsics[0].data(), 0, ba.intrinsics[0][0] + 0.1);
      Solver::Options o;
      o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
      o.jacobians_at_candidates = false;
      o.linear_solver_type = ceres::ITERATIVE_SCHUR;
      o.preconditioner_type = ceres::SCHUR_JACOBI;
      o.line_search_interpolation_type = interpolation;
      o.max_num_iterations = 30;
      o.num_threads = 1;
      o.logging_type = ceres::SILENT;
      if (ours == 1) {
        ceres_sqrtba::Solve(o, &problem, &summaries[ours]);
      } else {
        ceres::Solve(o, &problem, &summaries[ours]);
      }
      ASSERT_TRUE(summaries[ours].IsSolutionUsable()) << summaries[ours].message;
    }
    const ceres::Solver::Summary& ceres = summaries[0];
    const ceres::Solver::Summary& sqrt = summaries[1];
    EXPECT_GT(ceres.num_line_search_steps, 0);
    EXPECT_EQ(sqrt.num_line_search_steps, ceres.num_line_search_steps);
    EXPECT_EQ(sqrt.num_residual_evaluations, ceres.num_residual_evaluations);
    EXPECT_EQ(sqrt.num_jacobian_evaluations, ceres.num_jacobian_evaluations);
    ASSERT_EQ(sqrt.iterations.size(), ceres.iterations.size());
    for (size_t i = 0; i < ceres.iterations.size(); ++i) {
      EXPECT_NEAR(sqrt.iterations[i].cost, ceres.iterations[i].cost, 1e-9 * ceres.iterations[i].cost) << i;
      EXPECT_EQ(sqrt.iterations[i].step_is_successful, ceres.iterations[i].step_is_successful) << i;
    }
  }
}

// A variable block that starts outside its box is moved onto it before the
// first evaluation, as Ceres does: the same initial cost.
TEST(Bounds, StartOutsideTheBoxIsProjected) {
  auto bounds = [](SyntheticBa* ba, ceres::Problem* p) {
    p->SetParameterLowerBound(ba->points[0].data(), 0, ba->points[0][0] + 0.3);
  };
  ExpectSameEnd(bounds);
}

// A bound on a block that no residual uses: Ceres drops the block, the
// problem is not bounded, the block keeps its value.
TEST(Bounds, BoundOnABlockWithoutResidualsIsIgnored) {
  std::vector<double> lonely = {1.0, 2.0};
  ceres::Problem problem;
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 42);
  AddReprojectionResiduals(&ba, &problem, nullptr);
  problem.AddParameterBlock(lonely.data(), 2);
  problem.SetParameterUpperBound(lonely.data(), 1, 5.0);
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.logging_type = ceres::SILENT;
  Solver::Summary s;
  ceres_sqrtba::Solve(o, &problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_FALSE(s.is_constrained);
  EXPECT_EQ(lonely, (std::vector<double>{1.0, 2.0}));
}

// Nothing to eliminate (every point constant): the problem goes to
// ceres::Solve, bounds and all.
TEST(Bounds, ProblemWithoutLandmarksKeepsItsBounds) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 43);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  for (auto& point : ba.points) problem.SetParameterBlockConstant(point.data());
  problem.SetParameterUpperBound(ba.intrinsics[0].data(), 0, ba.intrinsics[0][0] - 1.0);
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.logging_type = ceres::SILENT;
  // Eliminate the (constant) points: nothing left to eliminate.
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto& point : ba.points) ordering->AddElementToGroup(point.data(), 0);
  for (auto& pose : ba.poses) ordering->AddElementToGroup(pose.data(), 1);
  for (auto& intrinsics : ba.intrinsics) ordering->AddElementToGroup(intrinsics.data(), 1);
  o.linear_solver_ordering = ordering;
  Solver::Summary s;
  ceres_sqrtba::Solve(o, &problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_TRUE(s.is_constrained);
  EXPECT_LE(ba.intrinsics[0][0], MakeSyntheticBa(5, 60, 3, 43).intrinsics[0][0] - 1.0);
  EXPECT_EQ(s.sqrt_linear_solver_type_used, CERES_LINEAR_SOLVER);
}

// Solves with the square-root solver and with Ceres' ITERATIVE_SCHUR on the
// same options: both must fail with the same message, which contains `what`.
void ExpectRefusedAsCeresRefusesIt(const Solver::Options& o, ceres::Problem* problem, const std::string& what) {
  Solver::Summary s;
  ceres_sqrtba::Solve(o, problem, &s);
  ceres::Solver::Options co = o;
  co.linear_solver_type = ceres::ITERATIVE_SCHUR;
  ceres::Solver::Summary c;
  ceres::Solve(co, problem, &c);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message, c.message);
  EXPECT_NE(s.message.find(what), std::string::npos) << s.message;
}

// What Ceres refuses before it solves is refused with Ceres' message: a
// constant block outside its box.
TEST(Bounds, ConstantBlockOutsideItsBoxIsRefusedAsCeresRefusesIt) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 44);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  problem.SetParameterBlockConstant(ba.intrinsics[1].data());
  problem.SetParameterLowerBound(ba.intrinsics[1].data(), 0, ba.intrinsics[1][0] + 1.0);
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.logging_type = ceres::SILENT;
  ExpectRefusedAsCeresRefusesIt(o, &problem, "has at least one infeasible value");
}

// The bounds are read while the rest of the structure is built: an
// infeasible box is still reported before what is found later (here an
// ordering that misses blocks), as Ceres checks boxes first.
TEST(Bounds, InfeasibleBoxIsReportedBeforeAnInvalidOrdering) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 45);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  problem.SetParameterLowerBound(ba.poses[2].data(), 1, 2.0);
  problem.SetParameterUpperBound(ba.poses[2].data(), 1, 1.0);
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  ordering->AddElementToGroup(ba.points[0].data(), 0);
  ordering->AddElementToGroup(ba.poses[0].data(), 1);
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.logging_type = ceres::SILENT;
  o.linear_solver_ordering = ordering;
  ExpectRefusedAsCeresRefusesIt(o, &problem, "has at least one infeasible bound");
  // Without the box, the ordering is what is wrong.
  problem.SetParameterUpperBound(ba.poses[2].data(), 1, 3.0);
  Solver::Summary s;
  ceres_sqrtba::Solve(o, &problem, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_NE(s.message.find("linear_solver_ordering"), std::string::npos) << s.message;
}

}  // namespace
}  // namespace ceres_sqrtba
