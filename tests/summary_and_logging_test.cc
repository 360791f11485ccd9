// What a user sees besides the result: the summary says what ran, in Ceres'
// report layout, and a program that never initialised glog gets nothing on
// stderr from a successful solve, as with ceres::Solve. (This executable
// must not call google::InitGoogleLogging: gtest_main does not.)
#include <cstdio>
#include <memory>
#include <string>

#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::AddReprojectionResiduals;
using testing::MakeSyntheticBa;
using testing::SyntheticBa;

Solver::Options Options(SqrtLinearSolverType type, Precision precision) {
  Solver::Options o;
  o.sqrt_linear_solver_type = type;
  o.precision = precision;
  o.max_num_iterations = 4;
  o.num_threads = 2;
  return o;
}

// A row of Ceres' Given/Used table: a 20-character label, two right-aligned
// 25-character columns (Ceres' FullReport layout).
std::string Row(const char* label, const char* given, const char* used) {
  char row[128];
  std::snprintf(row, sizeof(row), "\n%-20s%25s%25s\n", label, given, used);
  return row;
}

// A value as wide as its column is still set apart from the one before it.
TEST(SummaryReport, ASwitchAtALateIterationKeepsTheColumnsApart) {
  Solver::Summary s;
  s.linear_solver_type_given = s.linear_solver_type_used = ceres::ITERATIVE_SCHUR;
  s.sqrt_linear_solver_type_given = s.sqrt_linear_solver_type_used = SQRT_ITERATIVE_SCHUR;
  s.precision_given = SINGLE_PRECISION;
  s.precision_used = DOUBLE_PRECISION;
  s.precision_switch_iteration = 127;
  const std::string report = s.FullReport();
  char head[64];
  std::snprintf(head, sizeof(head), "\n%-20s%25s", "Precision", "SINGLE");
  EXPECT_NE(report.find(head + std::string(" DOUBLE from iteration 127\n")), std::string::npos) << report;
  s.precision_switch_iteration = 56;
  EXPECT_NE(s.FullReport().find(Row("Precision", "SINGLE", "DOUBLE from iteration 56")), std::string::npos)
      << s.FullReport();
}

struct Case {
  SqrtLinearSolverType type;
  Precision precision;
  bool explicit_rows;
};

TEST(QuietLogging, SuccessfulSolvesWriteNothingToStderr) {
  for (const Case& c : {Case{SQRT_ITERATIVE_SCHUR, SINGLE_PRECISION, false},
                        Case{SQRT_ITERATIVE_SCHUR, DOUBLE_PRECISION, false},
                        Case{SQRT_ITERATIVE_SCHUR, SINGLE_PRECISION, true},
                        Case{SQRT_SPARSE_SCHUR, DOUBLE_PRECISION, false},
                        Case{CERES_LINEAR_SOLVER, DOUBLE_PRECISION, false}}) {
    SyntheticBa ba = MakeSyntheticBa(5, 80, 3, 7);
    ceres::Problem problem;
    AddReprojectionResiduals(&ba, &problem, nullptr);
    Solver::Options o = Options(c.type, c.precision);
    o.use_explicit_reduced_rows = c.explicit_rows;
    o.linear_solver_type = ceres::ITERATIVE_SCHUR;
    o.preconditioner_type = ceres::SCHUR_JACOBI;
    Solver::Summary summary;
    ::testing::internal::CaptureStderr();
    Solve(o, &problem, &summary);
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(summary.IsSolutionUsable()) << summary.message;
    EXPECT_EQ(err, "") << SqrtLinearSolverTypeToString(c.type) << " " << PrecisionToString(c.precision);
  }
}

TEST(Summary, SaysWhatRanInCeresLayout) {
  SyntheticBa ba = MakeSyntheticBa(6, 100, 3, 16);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  Solver::Options o = Options(SQRT_ITERATIVE_SCHUR, SINGLE_PRECISION);
  o.linear_solver_type = ceres::SPARSE_NORMAL_CHOLESKY;  // ignored: the square-root solver runs
  o.logging_type = ceres::SILENT;
  Solver::Summary s;
  Solve(o, &problem, &s);
  ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_EQ(s.sqrt_linear_solver_type_given, SQRT_ITERATIVE_SCHUR);
  EXPECT_EQ(s.sqrt_linear_solver_type_used, SQRT_ITERATIVE_SCHUR);
  EXPECT_EQ(s.precision_given, SINGLE_PRECISION);
  EXPECT_EQ(s.precision_used, SINGLE_PRECISION);
  EXPECT_EQ(s.precision_switch_iteration, -1);
  EXPECT_FALSE(s.explicit_reduced_rows_used);
  // Ceres' stand-in for drop-in code that reads the Ceres fields.
  EXPECT_EQ(s.linear_solver_type_used, ceres::ITERATIVE_SCHUR);
  const std::string report = s.FullReport();
  EXPECT_NE(report.find(Row("Linear solver", "SQRT_ITERATIVE_SCHUR", "SQRT_ITERATIVE_SCHUR")),
            std::string::npos)
      << report;
  EXPECT_NE(report.find(Row("Precision", "SINGLE", "SINGLE")), std::string::npos) << report;
  EXPECT_NE(report.find(Row("Reduced rows", "PROJECTED", "PROJECTED")), std::string::npos) << report;
  EXPECT_NE(report.find("\nSchur structure"), std::string::npos) << report;
  EXPECT_NE(s.BriefReport().find("Linear solver: SQRT_ITERATIVE_SCHUR, Precision: SINGLE"), std::string::npos)
      << s.BriefReport();

  // A drop-in caller with a ceres::Solver::Summary gets every Ceres field.
  SyntheticBa ba2 = MakeSyntheticBa(6, 100, 3, 16);
  ceres::Problem problem2;
  AddReprojectionResiduals(&ba2, &problem2, nullptr);
  ceres::Solver::Summary plain;
  Solve(o, &problem2, &plain);
  EXPECT_EQ(plain.final_cost, s.final_cost);
  EXPECT_EQ(plain.iterations.size(), s.iterations.size());
}

// The option fields Ceres copies into every summary, whatever the minimizer,
// are copied here too (and equal ceres::Solve's).
TEST(Summary, CopiesTheOptionsCeresCopies) {
  Solver::Options o = Options(SQRT_ITERATIVE_SCHUR, DOUBLE_PRECISION);
  o.logging_type = ceres::SILENT;
  o.line_search_direction_type = ceres::NONLINEAR_CONJUGATE_GRADIENT;
  o.nonlinear_conjugate_gradient_type = ceres::POLAK_RIBIERE;
  o.line_search_type = ceres::ARMIJO;
  o.line_search_interpolation_type = ceres::QUADRATIC;
  o.max_lbfgs_rank = 7;
  o.dogleg_type = ceres::SUBSPACE_DOGLEG;
  for (bool ours : {true, false}) {
    SCOPED_TRACE(ours ? "ceres_sqrtba::Solve" : "ceres::Solve");
    SyntheticBa ba = MakeSyntheticBa(6, 100, 3, 16);
    ceres::Problem problem;
    AddReprojectionResiduals(&ba, &problem, nullptr);
    ceres::Solver::Summary s;
    if (ours) {
      Solve(o, &problem, &s);
    } else {
      ceres::Solver::Options co = o;
      co.linear_solver_type = ceres::ITERATIVE_SCHUR;
      ceres::Solve(co, &problem, &s);
    }
    ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
    EXPECT_EQ(s.line_search_direction_type, ceres::NONLINEAR_CONJUGATE_GRADIENT);
    EXPECT_EQ(s.nonlinear_conjugate_gradient_type, ceres::POLAK_RIBIERE);
    EXPECT_EQ(s.line_search_type, ceres::ARMIJO);
    EXPECT_EQ(s.line_search_interpolation_type, ceres::QUADRATIC);
    EXPECT_EQ(s.max_lbfgs_rank, 7);
    EXPECT_EQ(s.dogleg_type, ceres::SUBSPACE_DOGLEG);
    EXPECT_EQ(s.minimizer_type, ceres::TRUST_REGION);
  }
}

TEST(Summary, DirectSolverSaysItsFactorization) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 3);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  Solver::Options o = Options(SQRT_SPARSE_SCHUR, DOUBLE_PRECISION);
  o.logging_type = ceres::SILENT;
  o.use_explicit_reduced_rows = true;  // ignored: the direct solver forms S from projected rows
  Solver::Summary s;
  Solve(o, &problem, &s);
  ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_FALSE(s.explicit_reduced_rows_used);
  EXPECT_NE(s.FullReport().find(Row("Linear solver", "SQRT_SPARSE_SCHUR", "SQRT_SPARSE_SCHUR")),
            std::string::npos)
      << s.FullReport();
  EXPECT_NE(s.FullReport().find(Row("Reduced rows", "PROJECTED", "PROJECTED")), std::string::npos)
      << s.FullReport();
  // 45 camera parameters, every camera pair shares points: dense.
  EXPECT_NE(s.FullReport().find(Row("Factorization", "AUTOMATIC_FACTORIZATION", "DENSE_FACTORIZATION")),
            std::string::npos)
      << s.FullReport();
}

TEST(Summary, UserOrderingGroupsAreReportedAsGiven) {
  // Ceres reports the groups of a user ordering one by one (without constant
  // blocks and empty groups): points, poses, intrinsics.
  SyntheticBa ba = MakeSyntheticBa(6, 100, 3, 16);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto& p : ba.points) ordering->AddElementToGroup(p.data(), 0);
  for (auto& p : ba.poses) ordering->AddElementToGroup(p.data(), 1);
  for (auto& p : ba.intrinsics) ordering->AddElementToGroup(p.data(), 2);
  Solver::Options o = Options(SQRT_ITERATIVE_SCHUR, DOUBLE_PRECISION);
  o.logging_type = ceres::SILENT;
  o.linear_solver_ordering = ordering;
  Solver::Summary s;
  Solve(o, &problem, &s);
  ASSERT_TRUE(s.IsSolutionUsable()) << s.message;

  SyntheticBa ba2 = MakeSyntheticBa(6, 100, 3, 16);
  ceres::Problem problem2;
  AddReprojectionResiduals(&ba2, &problem2, nullptr);
  auto ordering2 = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto& p : ba2.points) ordering2->AddElementToGroup(p.data(), 0);
  for (auto& p : ba2.poses) ordering2->AddElementToGroup(p.data(), 1);
  for (auto& p : ba2.intrinsics) ordering2->AddElementToGroup(p.data(), 2);
  ceres::Solver::Options co = o;
  co.linear_solver_type = ceres::ITERATIVE_SCHUR;
  co.preconditioner_type = ceres::SCHUR_JACOBI;
  co.linear_solver_ordering = ordering2;
  ceres::Solver::Summary ceres_summary;
  ceres::Solve(co, &problem2, &ceres_summary);
  EXPECT_EQ(s.linear_solver_ordering_given, ceres_summary.linear_solver_ordering_given);
  EXPECT_EQ(s.linear_solver_ordering_used, ceres_summary.linear_solver_ordering_used);
  EXPECT_EQ(s.linear_solver_ordering_used.size(), 3u);
}

}  // namespace
}  // namespace ceres_sqrtba
