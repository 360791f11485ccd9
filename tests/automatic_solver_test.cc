// SQRT_AUTOMATIC and what goes to ceres::Solve instead of being refused: a
// pipeline that picks Ceres' solver by problem size changes one call and one
// option, and every choice it can make still solves (solve/solver_choice.h).
// Each case is compared with ceres::Solve on the same problem and options.
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/solver.h"
#include "direct_solve.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::MakeSyntheticBa;
using testing::SolveCopy;
using testing::SyntheticBa;

Solver::Options PipelineOptions(ceres::LinearSolverType type) {
  Solver::Options o;
  o.linear_solver_type = type;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  o.max_num_iterations = 15;
  o.num_threads = 2;
  o.logging_type = ceres::SILENT;
  return o;
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Each Schur solver is replaced by its square-root counterpart, which ends
// where Ceres' own solver ends: the direct ones take the exact LM step (1e-6
// relative), the iterative one
// follows ITERATIVE_SCHUR iteration for iteration.
TEST(AutomaticSolver, EachSchurSolverRunsItsSquareRootCounterpart) {
  const SyntheticBa ba = MakeSyntheticBa(8, 150, 4, 281);
  struct Case {
    ceres::LinearSolverType ceres;
    SqrtLinearSolverType sqrt;
    ReducedCameraFactorization factorization;
    ceres::LinearSolverType stand_in;  // Summary::linear_solver_type_used
  };
  const std::vector<Case> cases = {
      {ceres::DENSE_SCHUR, SQRT_SPARSE_SCHUR, DENSE_FACTORIZATION, ceres::DENSE_SCHUR},
      {ceres::SPARSE_SCHUR, SQRT_SPARSE_SCHUR, AUTOMATIC_FACTORIZATION, ceres::DENSE_SCHUR},
      {ceres::ITERATIVE_SCHUR, SQRT_ITERATIVE_SCHUR, AUTOMATIC_FACTORIZATION, ceres::ITERATIVE_SCHUR},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ceres::LinearSolverTypeToString(c.ceres));
    Solver::Options o = PipelineOptions(c.ceres);
    const Solver::Summary reference = SolveCopy(ba, o);
    ASSERT_TRUE(reference.IsSolutionUsable()) << reference.message;
    for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
      o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
      o.precision = precision;
      std::string error;
      EXPECT_TRUE(o.IsValid(&error)) << error;
      const Solver::Summary s = SolveCopy(ba, o);
      ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
      EXPECT_EQ(s.sqrt_linear_solver_type_given, SQRT_AUTOMATIC);
      EXPECT_EQ(s.sqrt_linear_solver_type_used, c.sqrt);
      EXPECT_EQ(s.precision_used, precision);
      EXPECT_EQ(s.reduced_camera_factorization_given, AUTOMATIC_FACTORIZATION);
      if (c.sqrt == SQRT_SPARSE_SCHUR) {
        // 8 cameras that all share points: the automatic factorization is
        // dense too.
        EXPECT_EQ(s.reduced_camera_factorization_used, DENSE_FACTORIZATION);
      }
      EXPECT_EQ(s.linear_solver_type_used, c.stand_in);
      const double tolerance = precision == DOUBLE_PRECISION ? 1e-6 : 1e-4;
      EXPECT_NEAR(s.final_cost, reference.final_cost, tolerance * reference.final_cost);
      const std::string report = s.FullReport();
      EXPECT_NE(report.find("SQRT_AUTOMATIC"), std::string::npos) << report;
      EXPECT_NE(report.find(SqrtLinearSolverTypeToString(c.sqrt)), std::string::npos) << report;
    }
  }
}

// A factorization named in the options is kept (DENSE_SCHUR only fills in
// the automatic one).
TEST(AutomaticSolver, NamedFactorizationIsKept) {
  const SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 282);
  Solver::Options o = PipelineOptions(ceres::DENSE_SCHUR);
  o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  o.reduced_camera_factorization = SPARSE_FACTORIZATION;
  const Solver::Summary s = SolveCopy(ba, o);
  ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_EQ(s.sqrt_linear_solver_type_used, SQRT_SPARSE_SCHUR);
  EXPECT_EQ(s.reduced_camera_factorization_given, SPARSE_FACTORIZATION);
  EXPECT_EQ(s.reduced_camera_factorization_used, SPARSE_FACTORIZATION);
}

// Linear solvers without a square-root counterpart go to ceres::Solve with
// the options as they are: the same result as ceres::Solve, bit for bit, and
// a message that says why.
TEST(AutomaticSolver, OtherLinearSolversGoToCeresUnchanged) {
  const SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 283);
  for (ceres::LinearSolverType type : {ceres::SPARSE_NORMAL_CHOLESKY, ceres::DENSE_QR, ceres::CGNR}) {
    SCOPED_TRACE(ceres::LinearSolverTypeToString(type));
    Solver::Options o = PipelineOptions(type);
    o.preconditioner_type = ceres::JACOBI;  // what CGNR takes
    o.num_threads = 1;  // Ceres 2.2's threaded passes sum in varying order
    const Solver::Summary reference = SolveCopy(ba, o);
    o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
    o.precision = SINGLE_PRECISION;
    std::string error;
    EXPECT_TRUE(o.IsValid(&error)) << error;
    const Solver::Summary s = SolveCopy(ba, o);
    ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
    EXPECT_EQ(s.sqrt_linear_solver_type_given, SQRT_AUTOMATIC);
    EXPECT_EQ(s.sqrt_linear_solver_type_used, CERES_LINEAR_SOLVER);
    EXPECT_EQ(s.precision_used, DOUBLE_PRECISION);
    EXPECT_EQ(s.linear_solver_type_used, reference.linear_solver_type_used);
    EXPECT_EQ(s.final_cost, reference.final_cost);
    EXPECT_EQ(s.iterations.size(), reference.iterations.size());
    EXPECT_TRUE(EndsWith(s.message, std::string(" [ceres_sqrtba: SQRT_AUTOMATIC: linear_solver_type = ") +
                                        ceres::LinearSolverTypeToString(type) +
                                        " has no square-root counterpart; solved by ceres::Solve]"))
        << s.message;
    EXPECT_NE(s.FullReport().find("SQRT_AUTOMATIC"), std::string::npos);
  }
}

// A line search solves no linear system: every square-root type passes it to
// ceres::Solve, which gives its own result.
TEST(AutomaticSolver, LineSearchGoesToCeresWhateverTheType) {
  const SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 284);
  Solver::Options o = PipelineOptions(ceres::SPARSE_SCHUR);
  o.minimizer_type = ceres::LINE_SEARCH;
  o.num_threads = 1;  // Ceres 2.2's threaded evaluation sums in varying order
  const Solver::Summary reference = SolveCopy(ba, o);
  ASSERT_TRUE(reference.IsSolutionUsable()) << reference.message;
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR, SQRT_AUTOMATIC}) {
    SCOPED_TRACE(SqrtLinearSolverTypeToString(type));
    o.sqrt_linear_solver_type = type;
    std::string error;
    EXPECT_TRUE(o.IsValid(&error)) << error;
    const Solver::Summary s = SolveCopy(ba, o);
    ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
    EXPECT_EQ(s.minimizer_type, ceres::LINE_SEARCH);
    EXPECT_EQ(s.sqrt_linear_solver_type_given, type);
    EXPECT_EQ(s.sqrt_linear_solver_type_used, CERES_LINEAR_SOLVER);
    EXPECT_EQ(s.final_cost, reference.final_cost);
    EXPECT_TRUE(EndsWith(s.message,
                         " [ceres_sqrtba: minimizer_type = LINE_SEARCH solves no linear system; solved by "
                         "ceres::Solve]"))
        << s.message;
  }
  // Invalid line-search options are Ceres' to judge, in Ceres' words.
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.max_lbfgs_rank = 0;
  std::string error, ceres_error;
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_FALSE(o.ceres::Solver::Options::IsValid(&ceres_error));
  EXPECT_EQ(error, ceres_error);
  const Solver::Summary s = SolveCopy(ba, o);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
}

// An option the counterpart does not implement sends the problem to
// ceres::Solve (SQRT_AUTOMATIC), where an explicit square-root type refuses
// it with a message naming the option.
TEST(AutomaticSolver, UnimplementedOptionsGoToCeresInsteadOfBeingRefused) {
  const SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 285);
  Solver::Options o = PipelineOptions(ceres::SPARSE_SCHUR);
  o.trust_region_strategy_type = ceres::DOGLEG;
  o.num_threads = 1;  // Ceres' threaded Schur elimination sums in varying order
  const Solver::Summary reference = SolveCopy(ba, o);
  ASSERT_TRUE(reference.IsSolutionUsable()) << reference.message;

  o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  std::string error;
  EXPECT_TRUE(o.IsValid(&error)) << error;
  Solver::Summary s = SolveCopy(ba, o);
  ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_EQ(s.sqrt_linear_solver_type_used, CERES_LINEAR_SOLVER);
  EXPECT_EQ(s.final_cost, reference.final_cost);
  EXPECT_TRUE(EndsWith(s.message,
                       " [ceres_sqrtba: SQRT_AUTOMATIC: Solver::Options::trust_region_strategy_type = DOGLEG is "
                       "not supported by SQRT_SPARSE_SCHUR: only LEVENBERG_MARQUARDT is implemented.; solved by "
                       "ceres::Solve]"))
      << s.message;

  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  const std::string refusal =
      "Invalid configuration. Solver::Options::trust_region_strategy_type = DOGLEG is not supported by "
      "SQRT_SPARSE_SCHUR: only LEVENBERG_MARQUARDT is implemented.";
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_EQ(error, refusal);
  s = SolveCopy(ba, o);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message, refusal);
}

// Values out of range are refused as Ceres refuses them, whatever the type.
TEST(AutomaticSolver, InvalidValuesAreRefused) {
  const SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 286);
  for (ceres::LinearSolverType type : {ceres::ITERATIVE_SCHUR, ceres::SPARSE_NORMAL_CHOLESKY}) {
    Solver::Options o = PipelineOptions(type);
    o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
    o.max_num_iterations = -1;
    std::string error;
    EXPECT_FALSE(o.IsValid(&error));
    EXPECT_NE(error.find("max_num_iterations"), std::string::npos) << error;
    const Solver::Summary s = SolveCopy(ba, o);
    EXPECT_EQ(s.termination_type, ceres::FAILURE);
    EXPECT_NE(s.message.find("max_num_iterations"), std::string::npos) << s.message;
  }
}

// A problem without landmarks goes to ceres::Solve before any check that only
// the square-root solvers need: Ceres' SPARSE_SCHUR takes DOGLEG there.
TEST(AutomaticSolver, ProblemWithoutLandmarksGoesToCeresFirst) {
  const SyntheticBa original = MakeSyntheticBa(6, 80, 3, 287);
  for (SqrtLinearSolverType type : {SQRT_SPARSE_SCHUR, SQRT_AUTOMATIC}) {
    SCOPED_TRACE(SqrtLinearSolverTypeToString(type));
    SyntheticBa ba = original;
    ceres::Problem problem;
    testing::AddReprojectionResiduals(&ba, &problem, nullptr);
    // The (constant) points are to be eliminated: nothing is left to.
    auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (auto& point : ba.points) {
      problem.SetParameterBlockConstant(point.data());
      ordering->AddElementToGroup(point.data(), 0);
    }
    for (auto& pose : ba.poses) ordering->AddElementToGroup(pose.data(), 1);
    for (auto& intrinsics : ba.intrinsics) ordering->AddElementToGroup(intrinsics.data(), 1);
    Solver::Options o = PipelineOptions(ceres::SPARSE_SCHUR);
    o.linear_solver_ordering = ordering;
    o.trust_region_strategy_type = ceres::DOGLEG;
    o.sqrt_linear_solver_type = type;
    Solver::Summary s;
    Solve(o, &problem, &s);
    EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
    EXPECT_EQ(s.sqrt_linear_solver_type_used, CERES_LINEAR_SOLVER);
    EXPECT_LT(s.final_cost, s.initial_cost);
  }
}

TEST(AutomaticSolver, Names) {
  SqrtLinearSolverType type = CERES_LINEAR_SOLVER;
  EXPECT_TRUE(StringToSqrtLinearSolverType("sqrt_automatic", &type));
  EXPECT_EQ(type, SQRT_AUTOMATIC);
  EXPECT_STREQ(SqrtLinearSolverTypeToString(SQRT_AUTOMATIC), "SQRT_AUTOMATIC");
  Solver::Options o;
  o.sqrt_linear_solver_type = static_cast<SqrtLinearSolverType>(7);
  std::string error;
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_NE(error.find("SQRT_AUTOMATIC"), std::string::npos) << error;
}

}  // namespace
}  // namespace ceres_sqrtba
