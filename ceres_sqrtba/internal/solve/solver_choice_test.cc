// ChooseSolver and WithChoice (solve/solver_choice.h): every row of the
// header's table (CERES_LINEAR_SOLVER, LINE_SEARCH, the explicit square-root
// solvers, SQRT_AUTOMATIC's counterparts of DENSE_SCHUR, SPARSE_SCHUR and
// ITERATIVE_SCHUR, everything else, an option the counterpart does not
// implement), the reason being non-empty exactly when a square-root request
// goes to ceres::Solve, and WithChoice writing the choice into the options.
#include "ceres_sqrtba/internal/solve/solver_choice.h"

#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

constexpr SqrtLinearSolverType kSqrtRequests[] = {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR, SQRT_AUTOMATIC};
constexpr ReducedCameraFactorization kFactorizations[] = {AUTOMATIC_FACTORIZATION, DENSE_FACTORIZATION,
                                                          SPARSE_FACTORIZATION};
constexpr ceres::LinearSolverType kCeresSolvers[] = {ceres::DENSE_NORMAL_CHOLESKY,
                                                     ceres::DENSE_QR,
                                                     ceres::SPARSE_NORMAL_CHOLESKY,
                                                     ceres::DENSE_SCHUR,
                                                     ceres::SPARSE_SCHUR,
                                                     ceres::ITERATIVE_SCHUR,
                                                     ceres::CGNR};

Solver::Options Options(SqrtLinearSolverType type, ceres::LinearSolverType linear_solver_type,
                        ReducedCameraFactorization factorization = AUTOMATIC_FACTORIZATION) {
  Solver::Options o;
  o.sqrt_linear_solver_type = type;
  o.linear_solver_type = linear_solver_type;
  o.reduced_camera_factorization = factorization;
  return o;
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

TEST(SolverChoice, CeresLinearSolverGoesToCeresWithoutReason) {
  for (ceres::LinearSolverType linear : kCeresSolvers) {
    for (ceres::MinimizerType minimizer : {ceres::TRUST_REGION, ceres::LINE_SEARCH}) {
      Solver::Options o = Options(CERES_LINEAR_SOLVER, linear, SPARSE_FACTORIZATION);
      o.minimizer_type = minimizer;
      o.trust_region_strategy_type = ceres::DOGLEG;  // unsupported by sqrt, irrelevant here
      const SolverChoice c = ChooseSolver(o);
      EXPECT_EQ(c.type, CERES_LINEAR_SOLVER) << ceres::LinearSolverTypeToString(linear);
      EXPECT_EQ(c.factorization, SPARSE_FACTORIZATION);
      EXPECT_EQ(c.reason, "") << ceres::LinearSolverTypeToString(linear);
    }
  }
}

TEST(SolverChoice, LineSearchGoesToCeresWhateverTheSqrtType) {
  for (SqrtLinearSolverType type : kSqrtRequests) {
    for (ReducedCameraFactorization f : kFactorizations) {
      Solver::Options o = Options(type, ceres::DENSE_SCHUR, f);
      o.minimizer_type = ceres::LINE_SEARCH;
      const SolverChoice c = ChooseSolver(o);
      EXPECT_EQ(c.type, CERES_LINEAR_SOLVER) << SqrtLinearSolverTypeToString(type);
      // DENSE_SCHUR's dense factorization is not filled in: the options stay as they are.
      EXPECT_EQ(c.factorization, f) << SqrtLinearSolverTypeToString(type);
      EXPECT_EQ(c.reason, "minimizer_type = LINE_SEARCH solves no linear system");
    }
  }
}

// SQRT_ITERATIVE_SCHUR and SQRT_SPARSE_SCHUR are kept whatever
// linear_solver_type says, and even with an option they do not implement:
// the square-root solve refuses those (only SQRT_AUTOMATIC falls back).
TEST(SolverChoice, ExplicitSqrtSolversAreKept) {
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    for (ceres::LinearSolverType linear : kCeresSolvers) {
      for (ReducedCameraFactorization f : kFactorizations) {
        const SolverChoice c = ChooseSolver(Options(type, linear, f));
        EXPECT_EQ(c.type, type) << ceres::LinearSolverTypeToString(linear);
        EXPECT_EQ(c.factorization, f) << ceres::LinearSolverTypeToString(linear);
        EXPECT_EQ(c.reason, "");
      }
    }
    Solver::Options o = Options(type, ceres::SPARSE_SCHUR);
    o.trust_region_strategy_type = ceres::DOGLEG;
    o.check_gradients = true;
    const SolverChoice c = ChooseSolver(o);
    EXPECT_EQ(c.type, type);
    EXPECT_EQ(c.reason, "");
  }
}

TEST(SolverChoice, AutomaticDenseSchurIsSparseSchurWithDenseFactorization) {
  const SolverChoice c = ChooseSolver(Options(SQRT_AUTOMATIC, ceres::DENSE_SCHUR));
  EXPECT_EQ(c.type, SQRT_SPARSE_SCHUR);
  EXPECT_EQ(c.factorization, DENSE_FACTORIZATION);
  EXPECT_EQ(c.reason, "");
}

TEST(SolverChoice, AutomaticDenseSchurKeepsANamedFactorization) {
  for (ReducedCameraFactorization f : {DENSE_FACTORIZATION, SPARSE_FACTORIZATION}) {
    const SolverChoice c = ChooseSolver(Options(SQRT_AUTOMATIC, ceres::DENSE_SCHUR, f));
    EXPECT_EQ(c.type, SQRT_SPARSE_SCHUR);
    EXPECT_EQ(c.factorization, f) << ReducedCameraFactorizationToString(f);
    EXPECT_EQ(c.reason, "");
  }
}

TEST(SolverChoice, AutomaticSparseSchurIsSparseSchurWithTheFactorizationAsGiven) {
  for (ReducedCameraFactorization f : kFactorizations) {
    const SolverChoice c = ChooseSolver(Options(SQRT_AUTOMATIC, ceres::SPARSE_SCHUR, f));
    EXPECT_EQ(c.type, SQRT_SPARSE_SCHUR);
    EXPECT_EQ(c.factorization, f) << ReducedCameraFactorizationToString(f);
    EXPECT_EQ(c.reason, "");
  }
}

TEST(SolverChoice, AutomaticIterativeSchurIsSqrtIterativeSchur) {
  for (ReducedCameraFactorization f : kFactorizations) {
    const SolverChoice c = ChooseSolver(Options(SQRT_AUTOMATIC, ceres::ITERATIVE_SCHUR, f));
    EXPECT_EQ(c.type, SQRT_ITERATIVE_SCHUR);
    EXPECT_EQ(c.factorization, f) << ReducedCameraFactorizationToString(f);
    EXPECT_EQ(c.reason, "");
  }
}

TEST(SolverChoice, AutomaticWithoutCounterpartGoesToCeres) {
  for (ceres::LinearSolverType linear :
       {ceres::DENSE_NORMAL_CHOLESKY, ceres::DENSE_QR, ceres::SPARSE_NORMAL_CHOLESKY, ceres::CGNR}) {
    const SolverChoice c = ChooseSolver(Options(SQRT_AUTOMATIC, linear, SPARSE_FACTORIZATION));
    EXPECT_EQ(c.type, CERES_LINEAR_SOLVER);
    EXPECT_EQ(c.factorization, SPARSE_FACTORIZATION);
    EXPECT_EQ(c.reason, std::string("SQRT_AUTOMATIC: linear_solver_type = ") +
                            ceres::LinearSolverTypeToString(linear) + " has no square-root counterpart");
  }
}

// An option the counterpart does not implement: ceres::Solve with the user's
// options (DENSE_SCHUR's filled-in factorization undone) and the reason.
TEST(SolverChoice, AutomaticWithUnsupportedOptionGoesToCeresWithReason) {
  {
    Solver::Options o = Options(SQRT_AUTOMATIC, ceres::ITERATIVE_SCHUR);
    o.trust_region_strategy_type = ceres::DOGLEG;
    const SolverChoice c = ChooseSolver(o);
    EXPECT_EQ(c.type, CERES_LINEAR_SOLVER);
    EXPECT_TRUE(StartsWith(c.reason,
                           "SQRT_AUTOMATIC: Solver::Options::trust_region_strategy_type = DOGLEG is "
                           "not supported by SQRT_ITERATIVE_SCHUR: "))
        << c.reason;
  }
  {
    Solver::Options o = Options(SQRT_AUTOMATIC, ceres::DENSE_SCHUR);
    o.check_gradients = true;
    const SolverChoice c = ChooseSolver(o);
    EXPECT_EQ(c.type, CERES_LINEAR_SOLVER);
    EXPECT_EQ(c.factorization, AUTOMATIC_FACTORIZATION);
    EXPECT_TRUE(StartsWith(c.reason,
                           "SQRT_AUTOMATIC: Solver::Options::check_gradients = true is not supported by "
                           "SQRT_SPARSE_SCHUR: "))
        << c.reason;
  }
  {
    Solver::Options o = Options(SQRT_AUTOMATIC, ceres::SPARSE_SCHUR, SPARSE_FACTORIZATION);
    o.trust_region_minimizer_iterations_to_dump = {1};
    const SolverChoice c = ChooseSolver(o);
    EXPECT_EQ(c.type, CERES_LINEAR_SOLVER);
    EXPECT_EQ(c.factorization, SPARSE_FACTORIZATION);
    EXPECT_NE(c.reason.find("trust_region_minimizer_iterations_to_dump"), std::string::npos) << c.reason;
  }
}

// The check runs on the counterpart: a preconditioner only the iterative
// solver reads sends ITERATIVE_SCHUR to Ceres but not SPARSE_SCHUR.
TEST(SolverChoice, UnsupportedOptionIsJudgedForTheCounterpart) {
  Solver::Options o = Options(SQRT_AUTOMATIC, ceres::ITERATIVE_SCHUR);
  o.preconditioner_type = ceres::SUBSET;
  SolverChoice c = ChooseSolver(o);
  EXPECT_EQ(c.type, CERES_LINEAR_SOLVER);
  EXPECT_NE(c.reason.find("preconditioner_type = SUBSET"), std::string::npos) << c.reason;
  o.linear_solver_type = ceres::SPARSE_SCHUR;
  c = ChooseSolver(o);
  EXPECT_EQ(c.type, SQRT_SPARSE_SCHUR);
  EXPECT_EQ(c.reason, "");

  o = Options(SQRT_AUTOMATIC, ceres::ITERATIVE_SCHUR);
  o.preconditioner_type = ceres::CLUSTER_JACOBI;
  EXPECT_EQ(ChooseSolver(o).type, SQRT_ITERATIVE_SCHUR);
  o.use_explicit_reduced_rows = true;
  c = ChooseSolver(o);
  EXPECT_EQ(c.type, CERES_LINEAR_SOLVER);
  EXPECT_NE(c.reason.find("use_explicit_reduced_rows"), std::string::npos) << c.reason;
  o.linear_solver_type = ceres::DENSE_SCHUR;
  c = ChooseSolver(o);
  EXPECT_EQ(c.type, SQRT_SPARSE_SCHUR);
  EXPECT_EQ(c.factorization, DENSE_FACTORIZATION);
}

// An out-of-range value is kept, for the square-root solve's validation to
// name, even with a line search.
TEST(SolverChoice, OutOfRangeTypeIsKept) {
  const SqrtLinearSolverType bad = static_cast<SqrtLinearSolverType>(9);
  for (ceres::MinimizerType minimizer : {ceres::TRUST_REGION, ceres::LINE_SEARCH}) {
    Solver::Options o = Options(bad, ceres::DENSE_SCHUR);
    o.minimizer_type = minimizer;
    const SolverChoice c = ChooseSolver(o);
    EXPECT_EQ(c.type, bad);
    EXPECT_EQ(c.factorization, AUTOMATIC_FACTORIZATION);
    EXPECT_EQ(c.reason, "");
  }
}

// Over every request, Ceres solver, minimizer and a few unsupported options:
// never SQRT_AUTOMATIC, and a reason exactly when a square-root request goes
// to Ceres.
TEST(SolverChoice, ReasonExactlyWhenASqrtRequestGoesToCeres) {
  int to_ceres = 0, kept = 0;
  for (SqrtLinearSolverType type :
       {CERES_LINEAR_SOLVER, SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR, SQRT_AUTOMATIC}) {
    for (ceres::LinearSolverType linear : kCeresSolvers) {
      for (ceres::MinimizerType minimizer : {ceres::TRUST_REGION, ceres::LINE_SEARCH}) {
        for (int unsupported = 0; unsupported < 3; ++unsupported) {
          Solver::Options o = Options(type, linear);
          o.minimizer_type = minimizer;
          if (unsupported == 1) o.trust_region_strategy_type = ceres::DOGLEG;
          if (unsupported == 2) o.check_gradients = true;
          const SolverChoice c = ChooseSolver(o);
          EXPECT_NE(c.type, SQRT_AUTOMATIC);
          const bool sqrt_request = type != CERES_LINEAR_SOLVER;
          const bool went_to_ceres = sqrt_request && c.type == CERES_LINEAR_SOLVER;
          EXPECT_EQ(!c.reason.empty(), went_to_ceres)
              << SqrtLinearSolverTypeToString(type) << " " << ceres::LinearSolverTypeToString(linear) << " "
              << ceres::MinimizerTypeToString(minimizer) << " " << unsupported << ": " << c.reason;
          (went_to_ceres ? to_ceres : kept) += sqrt_request ? 1 : 0;
        }
      }
    }
  }
  // 3 requests x 7 solvers x 3 option sets with LINE_SEARCH (63) go to Ceres;
  // with TRUST_REGION, SQRT_AUTOMATIC's 4 solvers without counterpart (12)
  // and the 3 counterparts with an unsupported option (6) do too.
  EXPECT_EQ(to_ceres, 63 + 12 + 6);
  EXPECT_EQ(kept, 3 * 7 * 3 * 2 - (63 + 12 + 6));
}

TEST(SolverChoice, WithChoiceWritesTheChoiceAndKeepsTheRest) {
  Solver::Options o = Options(SQRT_AUTOMATIC, ceres::DENSE_SCHUR);
  o.max_num_iterations = 17;
  o.precision = SINGLE_PRECISION;
  o.use_explicit_reduced_rows = true;
  o.function_tolerance = 0.25;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  const SolverChoice c = ChooseSolver(o);
  ASSERT_EQ(c.type, SQRT_SPARSE_SCHUR);
  const Solver::Options resolved = WithChoice(o, c);
  EXPECT_EQ(resolved.sqrt_linear_solver_type, SQRT_SPARSE_SCHUR);
  EXPECT_EQ(resolved.reduced_camera_factorization, DENSE_FACTORIZATION);
  EXPECT_EQ(resolved.linear_solver_type, ceres::DENSE_SCHUR);
  EXPECT_EQ(resolved.max_num_iterations, 17);
  EXPECT_EQ(resolved.precision, SINGLE_PRECISION);
  EXPECT_TRUE(resolved.use_explicit_reduced_rows);
  EXPECT_EQ(resolved.function_tolerance, 0.25);
  EXPECT_EQ(resolved.preconditioner_type, ceres::SCHUR_JACOBI);
  // The input is untouched.
  EXPECT_EQ(o.sqrt_linear_solver_type, SQRT_AUTOMATIC);
  EXPECT_EQ(o.reduced_camera_factorization, AUTOMATIC_FACTORIZATION);

  SolverChoice to_ceres;
  to_ceres.type = CERES_LINEAR_SOLVER;
  to_ceres.factorization = SPARSE_FACTORIZATION;
  to_ceres.reason = "anything";
  const Solver::Options back = WithChoice(o, to_ceres);
  EXPECT_EQ(back.sqrt_linear_solver_type, CERES_LINEAR_SOLVER);
  EXPECT_EQ(back.reduced_camera_factorization, SPARSE_FACTORIZATION);
  EXPECT_EQ(back.max_num_iterations, 17);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
