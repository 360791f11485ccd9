// Failure cases of docs/failure_modes.md that bad_input_test.cc,
// robustness_test.cc and trust_region_minimizer_test.cc do not cover: what
// the user sees (termination type, message, parameter blocks) in each.
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::AddReprojectionResiduals;
using testing::MakeSyntheticBa;
using testing::SyntheticBa;

Solver::Options SqrtOptions(Precision precision = DOUBLE_PRECISION) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.precision = precision;
  o.logging_type = ceres::SILENT;
  o.max_num_iterations = 10;
  return o;
}

struct Fixture {
  explicit Fixture(unsigned seed = 51) : ba(MakeSyntheticBa(5, 60, 3, seed)), original(ba) {
    AddReprojectionResiduals(&ba, &problem, nullptr);
  }
  bool Untouched() const {
    return ba.poses == original.poses && ba.points == original.points &&
           ba.intrinsics == original.intrinsics;
  }
  SyntheticBa ba, original;
  ceres::Problem problem;
};

// A solve that ended before the first iteration: FAILURE, the message, no
// iterations, nothing touched.
void ExpectEarlyFailure(const ceres::Solver::Summary& s, const Fixture& f,
                        const std::string& message_start) {
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message.rfind(message_start, 0), 0u) << s.message;
  EXPECT_TRUE(s.iterations.empty());
  EXPECT_FALSE(s.IsSolutionUsable());
  EXPECT_TRUE(f.Untouched());
}

TEST(FailureModes, InvalidOptionsEndBeforeAnyIteration) {
  Fixture f;
  Solver::Options o = SqrtOptions();
  o.eta = 0.0;
  ceres::Solver::Summary s;
  Solve(o, &f.problem, &s);
  ExpectEarlyFailure(s, f,
                     "Invalid configuration. Solver::Options::eta = 0. Violated constraint: "
                     "Solver::Options::eta > 0.0");
  // Relations between two options name both.
  o = SqrtOptions();
  o.min_trust_region_radius = 1e5;
  Solve(o, &f.problem, &s);
  ExpectEarlyFailure(s, f,
                     "Invalid configuration. Solver::Options::min_trust_region_radius = 100000. "
                     "Solver::Options::initial_trust_region_radius = 10000. "
                     "Violated constraint: Solver::Options::min_trust_region_radius<= "
                     "Solver::Options::initial_trust_region_radius");
  // Options the square-root solver does not implement.
  o = SqrtOptions();
  o.trust_region_strategy_type = ceres::DOGLEG;
  Solve(o, &f.problem, &s);
  ExpectEarlyFailure(s, f, "Invalid configuration. Solver::Options::trust_region_strategy_type = DOGLEG is not supported by SQRT_ITERATIVE_SCHUR: only LEVENBERG_MARQUARDT is implemented.");
}

// Every option check of SQRT_ITERATIVE_SCHUR with its exact message; IsValid
// gives the same message as the solve.
TEST(FailureModes, EveryInvalidOptionWithItsMessage) {
  struct Case {
    std::function<void(Solver::Options*)> set;
    std::string message;
    bool ceres_checks_it = false;  // the linked Ceres' IsValid says the same, word for word
  };
  const std::string v = "Invalid configuration. Solver::Options::";
  const std::string c = ". Violated constraint: Solver::Options::";
  // Two options out of order, in Ceres' words (no space before the operator).
  auto pair = [&](const std::string& x, const std::string& vx, const std::string& op, const std::string& y,
                  const std::string& vy) {
    return v + x + " = " + vx + ". Solver::Options::" + y + " = " + vy + c + x + op + " Solver::Options::" + y + ".";
  };
  const std::string u = " is not supported by SQRT_ITERATIVE_SCHUR: ";
  const std::vector<Case> cases = {
      {[](Solver::Options* o) { o->max_num_iterations = -1; },
       v + "max_num_iterations = -1" + c + "max_num_iterations >= 0"},
      {[](Solver::Options* o) { o->max_solver_time_in_seconds = -1; },
       v + "max_solver_time_in_seconds = -1" + c + "max_solver_time_in_seconds >= 0.0"},
      {[](Solver::Options* o) { o->function_tolerance = -1; },
       v + "function_tolerance = -1" + c + "function_tolerance >= 0.0"},
      {[](Solver::Options* o) { o->gradient_tolerance = -1; },
       v + "gradient_tolerance = -1" + c + "gradient_tolerance >= 0.0"},
      {[](Solver::Options* o) { o->parameter_tolerance = -1; },
       v + "parameter_tolerance = -1" + c + "parameter_tolerance >= 0.0"},
      {[](Solver::Options* o) { o->num_threads = 0; }, v + "num_threads = 0" + c + "num_threads >= 1"},
      {[](Solver::Options* o) { o->initial_trust_region_radius = 0; },
       v + "initial_trust_region_radius = 0" + c + "initial_trust_region_radius > 0.0"},
      {[](Solver::Options* o) { o->min_trust_region_radius = 0; },
       v + "min_trust_region_radius = 0" + c + "min_trust_region_radius > 0.0"},
      {[](Solver::Options* o) { o->max_trust_region_radius = 0; },
       v + "max_trust_region_radius = 0" + c + "max_trust_region_radius > 0.0"},
      {[](Solver::Options* o) { o->max_trust_region_radius = 1e-40; },
       pair("min_trust_region_radius", "1e-32", "<=", "max_trust_region_radius", "1e-40"), true},
      {[](Solver::Options* o) { o->initial_trust_region_radius = 1e-40; },
       pair("min_trust_region_radius", "1e-32", "<=", "initial_trust_region_radius", "1e-40"), true},
      {[](Solver::Options* o) { o->initial_trust_region_radius = 1e20; },
       pair("initial_trust_region_radius", "1e+20", "<=", "max_trust_region_radius", "1e+16"), true},
      {[](Solver::Options* o) { o->min_relative_decrease = -1; },
       v + "min_relative_decrease = -1" + c + "min_relative_decrease >= 0.0"},
      {[](Solver::Options* o) { o->min_lm_diagonal = 0; },
       v + "min_lm_diagonal = 0" + c + "min_lm_diagonal > 0.0"},
      {[](Solver::Options* o) { o->max_lm_diagonal = 0; },
       v + "max_lm_diagonal = 0" + c + "max_lm_diagonal > 0.0"},
      {[](Solver::Options* o) { o->max_lm_diagonal = 1e-7; },
       pair("min_lm_diagonal", "1e-06", "<=", "max_lm_diagonal", "1e-07"), true},
      {[](Solver::Options* o) { o->max_num_consecutive_invalid_steps = -1; },
       v + "max_num_consecutive_invalid_steps = -1" + c + "max_num_consecutive_invalid_steps >= 0"},
      {[](Solver::Options* o) { o->eta = 0; }, v + "eta = 0" + c + "eta > 0.0"},
      {[](Solver::Options* o) { o->min_linear_solver_iterations = -1; },
       v + "min_linear_solver_iterations = -1" + c + "min_linear_solver_iterations >= 0"},
      // Ceres 2.2 allows 0 (CG still runs one iteration), 2.1 does not.
      {[](Solver::Options* o) { o->max_linear_solver_iterations = internal::kMinMaxLinearSolverIterations - 1; },
       v + "max_linear_solver_iterations = " + std::to_string(internal::kMinMaxLinearSolverIterations - 1) + c +
           "max_linear_solver_iterations >= " + std::to_string(internal::kMinMaxLinearSolverIterations)},
      {[](Solver::Options* o) { o->min_linear_solver_iterations = 600; },
       pair("min_linear_solver_iterations", "600", "<=", "max_linear_solver_iterations", "500"), true},
      {[](Solver::Options* o) { o->memory_limit_in_bytes = -1; },
       v + "memory_limit_in_bytes = -1" + c + "memory_limit_in_bytes >= 0"},
      {[](Solver::Options* o) {
         o->use_nonmonotonic_steps = true;
         o->max_consecutive_nonmonotonic_steps = 0;
       },
       v + "max_consecutive_nonmonotonic_steps = 0" + c + "max_consecutive_nonmonotonic_steps > 0"},
      // The line search's options, which Ceres checks whatever the minimizer
      // (a bounded problem's steps are followed by a projected line search).
      {[](Solver::Options* o) { o->max_lbfgs_rank = 0; }, v + "max_lbfgs_rank = 0" + c + "max_lbfgs_rank > 0"},
      {[](Solver::Options* o) { o->min_line_search_step_size = 0; },
       v + "min_line_search_step_size = 0" + c + "min_line_search_step_size > 0.0"},
      {[](Solver::Options* o) { o->max_line_search_step_contraction = 0; },
       v + "max_line_search_step_contraction = 0" + c + "max_line_search_step_contraction > 0.0"},
      {[](Solver::Options* o) { o->max_line_search_step_contraction = 1; },
       v + "max_line_search_step_contraction = 1" + c + "max_line_search_step_contraction < 1.0"},
      {[](Solver::Options* o) { o->max_line_search_step_contraction = 0.7; },
       pair("max_line_search_step_contraction", "0.7", "<", "min_line_search_step_contraction", "0.6"), true},
      {[](Solver::Options* o) { o->min_line_search_step_contraction = 1.5; },
       v + "min_line_search_step_contraction = 1.5" + c + "min_line_search_step_contraction <= 1.0"},
      {[](Solver::Options* o) { o->max_num_line_search_step_size_iterations = -1; },
       v + "max_num_line_search_step_size_iterations = -1" + c + "max_num_line_search_step_size_iterations >= 0"},
      {[](Solver::Options* o) { o->line_search_sufficient_function_decrease = 0; },
       v + "line_search_sufficient_function_decrease = 0" + c + "line_search_sufficient_function_decrease > 0.0"},
      {[](Solver::Options* o) { o->line_search_sufficient_function_decrease = 0.95; },
       pair("line_search_sufficient_function_decrease", "0.95", "<", "line_search_sufficient_curvature_decrease",
            "0.9"),
       true},
      {[](Solver::Options* o) { o->line_search_sufficient_curvature_decrease = 1; },
       v + "line_search_sufficient_curvature_decrease = 1" + c + "line_search_sufficient_curvature_decrease < 1.0"},
      {[](Solver::Options* o) { o->max_line_search_step_expansion = 1; },
       v + "max_line_search_step_expansion = 1" + c + "max_line_search_step_expansion > 1.0"},
      {[](Solver::Options* o) { o->line_search_type = ceres::ARMIJO; },
       "Invalid configuration: Solver::Options::line_search_type = ARMIJO. When using (L)BFGS, "
       "Solver::Options::line_search_type must be set to WOLFE."},
      {[](Solver::Options* o) { o->trust_region_strategy_type = ceres::DOGLEG; },
       v + "trust_region_strategy_type = DOGLEG" + u + "only LEVENBERG_MARQUARDT is implemented."},
      {[](Solver::Options* o) { o->preconditioner_type = ceres::SUBSET; },
       v + "preconditioner_type = SUBSET" + u +
           "use SCHUR_JACOBI, JACOBI, IDENTITY, CLUSTER_JACOBI or CLUSTER_TRIDIAGONAL."},
      {[](Solver::Options* o) {
         o->preconditioner_type = ceres::CLUSTER_JACOBI;
         o->use_explicit_reduced_rows = true;
       },
       v + "preconditioner_type = CLUSTER_JACOBI" + u +
           "with use_explicit_reduced_rows = true use SCHUR_JACOBI, JACOBI or IDENTITY (the visibility-based "
           "preconditioners are formed from the projected rows)."},
      {[](Solver::Options* o) { o->use_inner_iterations = true; o->inner_iteration_tolerance = -1; },
       v + "inner_iteration_tolerance = -1" + c + "inner_iteration_tolerance >= 0.0"},
      {[](Solver::Options* o) { o->check_gradients = true; },
       v + "check_gradients = true" + u +
           "check gradients with ceres::Solve (or ceres::GradientChecker) first."},
      {[](Solver::Options* o) { o->trust_region_minimizer_iterations_to_dump = {1}; },
       v + "trust_region_minimizer_iterations_to_dump = non-empty" + u +
           "the square-root solver has no sparse Jacobian to dump."},
      {[](Solver::Options* o) { o->callbacks.push_back(nullptr); },
       v + "callbacks[0] is null."},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.message);
    Fixture f;
    Solver::Options o = SqrtOptions();
    k.set(&o);
    std::string error;
    EXPECT_FALSE(o.IsValid(&error));
    EXPECT_EQ(error, k.message);
    if (k.ceres_checks_it) {
      std::string ceres_error;
      EXPECT_FALSE(o.ceres::Solver::Options::IsValid(&ceres_error));
      EXPECT_EQ(ceres_error, k.message);
    }
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    EXPECT_EQ(s.message, k.message);
    ExpectEarlyFailure(s, f, k.message);
  }
}

// Pass-through to Ceres: option combinations that ceres::Solver::Options::
// IsValid accepts but Ceres 2.1 aborts on (LOG(FATAL)) are rejected up front.
TEST(FailureModes, CeresCombinationsThatWouldAbortAreRejected) {
  struct Case {
    std::function<void(Solver::Options*)> set;
    std::string message;
  };
  const std::string v = "Invalid configuration. Solver::Options::";
  const std::vector<Case> cases = {
      {[](Solver::Options* o) {
         o->linear_solver_type = ceres::SPARSE_SCHUR;
         o->sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
         o->use_mixed_precision_solves = true;
       },
       v + "use_mixed_precision_solves = true with linear_solver_type = SPARSE_SCHUR needs "
           "sparse_linear_algebra_library_type = EIGEN_SPARSE: Ceres 2.1 has no single precision sparse "
           "Cholesky for SUITE_SPARSE and would abort."},
#if !CERES_SQRTBA_CERES_2_2  // 2.2 has no CXSparse
      {[](Solver::Options* o) {
         o->linear_solver_type = ceres::SPARSE_NORMAL_CHOLESKY;
         o->sparse_linear_algebra_library_type = ceres::CX_SPARSE;
         o->use_mixed_precision_solves = true;
       },
       v + "use_mixed_precision_solves = true with linear_solver_type = SPARSE_NORMAL_CHOLESKY needs "
           "sparse_linear_algebra_library_type = EIGEN_SPARSE: Ceres 2.1 has no single precision sparse "
           "Cholesky for CX_SPARSE and would abort."},
#endif
      {[](Solver::Options* o) {
         o->linear_solver_type = ceres::CGNR;
         o->preconditioner_type = ceres::SCHUR_JACOBI;
       },
       v + "preconditioner_type = SCHUR_JACOBI cannot be used with linear_solver_type = CGNR: Ceres 2.1 "
           "accepts IDENTITY, JACOBI and SUBSET there and would abort."},
      {[](Solver::Options* o) {
         o->linear_solver_type = ceres::ITERATIVE_SCHUR;
         o->preconditioner_type = ceres::SUBSET;
       },
       v + "preconditioner_type = SUBSET cannot be used with linear_solver_type = ITERATIVE_SCHUR: Ceres 2.1 "
           "accepts IDENTITY, JACOBI, SCHUR_JACOBI, CLUSTER_JACOBI and CLUSTER_TRIDIAGONAL there and would "
           "abort."},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.message);
    Fixture f;
    Solver::Options o;
    o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
    o.logging_type = ceres::SILENT;
    k.set(&o);
    // Ceres 2.2's IsValid refuses these itself, with its own message (what
    // ceres::Solve says then); 2.1's accepts them and would abort.
    std::string ceres_error;
    const bool ceres_accepts = o.ceres::Solver::Options::IsValid(&ceres_error);
    EXPECT_EQ(ceres_accepts, !internal::kCeres22);
    const std::string expected = ceres_accepts ? k.message : ceres_error;
    std::string error;
    EXPECT_FALSE(o.IsValid(&error));
    EXPECT_EQ(error, expected);
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    ExpectEarlyFailure(s, f, expected);
  }
  // Accepted by both versions' IsValid, fatal in both: refused here.
  {
    Fixture f;
    Solver::Options o;
    o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
    o.logging_type = ceres::SILENT;
    o.min_lm_diagonal = 0.0;
    std::string error;
    EXPECT_TRUE(o.ceres::Solver::Options::IsValid(&error)) << error;
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    ExpectEarlyFailure(s, f, v + "min_lm_diagonal = 0. Violated constraint: Solver::Options::min_lm_diagonal > 0");
  }
#if CERES_SQRTBA_CERES_2_2 && defined(CERES_NO_CUDA)
  // 2.2 without CUDA crashes on CUDA_SPARSE with its Schur solvers.
  {
    Fixture f;
    Solver::Options o;
    o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
    o.logging_type = ceres::SILENT;
    o.linear_solver_type = ceres::ITERATIVE_SCHUR;
    o.sparse_linear_algebra_library_type = ceres::CUDA_SPARSE;
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    ExpectEarlyFailure(s, f, "Invalid configuration. Solver::Options::sparse_linear_algebra_library_type = CUDA_SPARSE");
  }
#endif
  // The supported mixed precision combination still runs.
  Fixture f;
  Solver::Options o;
  o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
  o.logging_type = ceres::SILENT;
  o.linear_solver_type = ceres::SPARSE_SCHUR;
  o.sparse_linear_algebra_library_type = ceres::EIGEN_SPARSE;
  o.use_mixed_precision_solves = true;
  o.max_num_iterations = 3;
  ceres::Solver::Summary s;
  Solve(o, &f.problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
}

TEST(FailureModes, NullProblemInBothModes) {
  ceres::Solver::Summary s;
  Solver::Options o = SqrtOptions();
  Solve(o, nullptr, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message, "ceres_sqrtba::Solve was called with a null problem.");
  o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
  ceres::Solver::Summary pass_through;
  Solve(o, nullptr, &pass_through);
  EXPECT_EQ(pass_through.termination_type, ceres::FAILURE);
  EXPECT_EQ(pass_through.message, "ceres_sqrtba::Solve was called with a null problem.");
}

TEST(FailureModes, BoundOnAConstantBlockIsIgnored) {
  Fixture f;
  f.problem.SetParameterBlockConstant(f.ba.intrinsics[0].data());
  f.problem.SetParameterLowerBound(f.ba.intrinsics[0].data(), 0, 0.0);
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), &f.problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_EQ(f.ba.intrinsics[0], f.original.intrinsics[0]);
}

// Bounds are honoured (bounds_test.cc); what Ceres refuses before it solves
// is refused with Ceres' message: a variable block with lower >= upper.
TEST(FailureModes, EmptyBoxIsRefusedAsCeresRefusesIt) {
  Fixture f;
  f.problem.SetParameterLowerBound(f.ba.poses[1].data(), 2, 1.0);
  f.problem.SetParameterUpperBound(f.ba.poses[1].data(), 2, 1.0);
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), &f.problem, &s);
  std::ostringstream head;
  head << "ParameterBlock: " << static_cast<const void*>(f.ba.poses[1].data())
       << " with size 6 has at least one infeasible bound.\nFirst infeasible bound is at index: 2.\n";
  ExpectEarlyFailure(s, f, head.str());
  ceres::Solver::Summary ceres_summary;
  ceres::Solver::Options co = SqrtOptions();
  ceres::Solve(co, &f.problem, &ceres_summary);
  EXPECT_EQ(s.message, ceres_summary.message);
}

// The line search's options are judged as Ceres judges them (its IsValid
// checks them whatever the minimizer): each value Ceres refuses is refused,
// and one that would never end the projected line search of a bounded
// problem (both contractions 1, unlimited iterations) ends the solve up front
// instead.
TEST(FailureModes, LineSearchOptionsAreJudgedAsCeresJudgesThem) {
  struct Case {
    std::function<void(ceres::Solver::Options*)> set;
    bool valid;  // Ceres' verdict
  };
  const std::vector<Case> cases = {
      {[](ceres::Solver::Options* o) { o->max_lbfgs_rank = 0; }, false},
      {[](ceres::Solver::Options* o) { o->min_line_search_step_size = -1; }, false},
      {[](ceres::Solver::Options* o) { o->min_line_search_step_size = std::nan(""); }, false},
      {[](ceres::Solver::Options* o) { o->max_line_search_step_contraction = 1; }, false},
      {[](ceres::Solver::Options* o) {
         o->max_line_search_step_contraction = 0.5;
         o->min_line_search_step_contraction = 0.4;
       },
       false},
      {[](ceres::Solver::Options* o) { o->min_line_search_step_contraction = 1.01; }, false},
      {[](ceres::Solver::Options* o) { o->max_num_line_search_step_size_iterations = -1; }, false},
      {[](ceres::Solver::Options* o) { o->line_search_sufficient_function_decrease = -1; }, false},
      {[](ceres::Solver::Options* o) { o->line_search_sufficient_curvature_decrease = 1e-5; }, false},
      {[](ceres::Solver::Options* o) { o->max_line_search_step_expansion = 0.5; }, false},
      {[](ceres::Solver::Options* o) {
         o->line_search_direction_type = ceres::BFGS;
         o->line_search_type = ceres::ARMIJO;
       },
       false},
      // No line search iterations at all; an Armijo search along steepest
      // descent.
      {[](ceres::Solver::Options* o) { o->max_num_line_search_step_size_iterations = 0; }, true},
      {[](ceres::Solver::Options* o) {
         o->line_search_direction_type = ceres::STEEPEST_DESCENT;
         o->line_search_type = ceres::ARMIJO;
       },
       true},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(i);
    Solver::Options o = SqrtOptions();
    cases[i].set(&o);
    ceres::Solver::Options as_ceres = o;
    as_ceres.linear_solver_type = ceres::ITERATIVE_SCHUR;
    std::string ours, theirs;
    EXPECT_EQ(as_ceres.IsValid(&theirs), cases[i].valid) << theirs;
    EXPECT_EQ(o.IsValid(&ours), cases[i].valid) << ours;
    if (!cases[i].valid) EXPECT_NE(ours.find("Solver::Options::"), std::string::npos) << ours;
  }
  Fixture f;
  for (int k = 0; k < 3; ++k) {
    f.problem.SetParameterLowerBound(f.ba.points[0].data(), k, f.ba.points[0][k] - 1e-3);
  }
  Solver::Options o = SqrtOptions();
  o.max_line_search_step_contraction = 1.0;
  o.min_line_search_step_contraction = 1.0;
  o.max_num_line_search_step_size_iterations = std::numeric_limits<int>::max();
  ceres::Solver::Summary s;
  Solve(o, &f.problem, &s);
  ExpectEarlyFailure(s, f,
                     "Invalid configuration. Solver::Options::max_line_search_step_contraction = 1. "
                     "Violated constraint: Solver::Options::max_line_search_step_contraction < 1.0");
}

struct Between {
  template <typename T>
  bool operator()(const T* a, const T* b, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = a[k] - b[k];
    return true;
  }
};

TEST(FailureModes, TwoLandmarkResidualIsOnlyAnErrorWithAUserOrdering) {
  // Without an ordering, two points joined by a residual are never both
  // eliminated: the solve runs.
  Fixture f;
  f.problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Between, 3, 3, 3>(new Between),
                             nullptr, f.ba.points[0].data(), f.ba.points[1].data());
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), &f.problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  // With every point in group 0 the same residual is refused.
  Fixture g;
  g.problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Between, 3, 3, 3>(new Between),
                             nullptr, g.ba.points[0].data(), g.ba.points[1].data());
  Solver::Options o = SqrtOptions();
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto& p : g.ba.points) ordering->AddElementToGroup(p.data(), 0);
  for (auto& p : g.ba.poses) ordering->AddElementToGroup(p.data(), 1);
  for (auto& p : g.ba.intrinsics) ordering->AddElementToGroup(p.data(), 1);
  o.linear_solver_ordering = ordering;
  Solve(o, &g.problem, &s);
  // Ceres' message (Ceres refuses such a first group too), then the residual
  // block that shows it.
  ExpectEarlyFailure(s, g,
                     "The first elimination group in the parameter block ordering of size 60 is not an "
                     "independent set: the residual block ");
  std::ostringstream first, second;
  first << static_cast<const void*>(g.ba.points[0].data());
  second << static_cast<const void*>(g.ba.points[1].data());
  EXPECT_NE(s.message.find(" depends on the parameter block " + first.str() + " and the parameter block " +
                           second.str() + ", both in it. The square-root solver eliminates every variable "
                           "block of that group (its landmarks) and needs every residual block to depend on "
                           "at most one of them."),
            std::string::npos)
      << s.message;
  Solver::Options c = o;
  c.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
  c.linear_solver_type = ceres::ITERATIVE_SCHUR;
  ceres::Solver::Summary cs;
  Solve(c, &g.problem, &cs);
  EXPECT_EQ(cs.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message.rfind(cs.message, 0), 0u) << cs.message;
}

TEST(FailureModes, OrderingWithABlockNotInTheProblem) {
  Fixture f;
  std::vector<double> stranger(3, 0.0);
  Solver::Options o = SqrtOptions();
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  // As many blocks as the problem has, but one of them is not in it.
  for (size_t i = 1; i < f.ba.points.size(); ++i) ordering->AddElementToGroup(f.ba.points[i].data(), 0);
  ordering->AddElementToGroup(stranger.data(), 0);
  for (auto& p : f.ba.poses) ordering->AddElementToGroup(p.data(), 1);
  for (auto& p : f.ba.intrinsics) ordering->AddElementToGroup(p.data(), 1);
  o.linear_solver_ordering = ordering;
  ceres::Solver::Summary s;
  Solve(o, &f.problem, &s);
  ExpectEarlyFailure(s, f, "Solver::Options::linear_solver_ordering contains a parameter block (");
  EXPECT_NE(s.message.find(") that is not in the problem."), std::string::npos) << s.message;
}

TEST(FailureModes, OrderingWithOneGroupMeansAutomatic) {
  Fixture f;
  Solver::Options o = SqrtOptions();
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto* set : {&f.ba.poses, &f.ba.points, &f.ba.intrinsics}) {
    for (auto& b : *set) ordering->AddElementToGroup(b.data(), 0);
  }
  o.linear_solver_ordering = ordering;
  ceres::Solver::Summary s;
  Solve(o, &f.problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  ASSERT_EQ(s.linear_solver_ordering_used.size(), 2u);
  EXPECT_EQ(s.linear_solver_ordering_used[0], 60);  // the points, found automatically
}

// As Ceres reads an ordering: the blocks its reduced program drops (constant
// and unused ones) are taken out first; the rest must be every variable
// block, whatever the number of groups.
TEST(FailureModes, OrderingMustListEveryVariableBlockAsCeresRequires) {
  // poses and intrinsics only, in one group: Ceres refuses it (taking it as
  // "automatic" would drop the points silently).
  auto cameras_only = [](Fixture& f, int points_group) {
    auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (auto& p : f.ba.poses) ordering->AddElementToGroup(p.data(), 0);
    for (auto& p : f.ba.intrinsics) ordering->AddElementToGroup(p.data(), 0);
    if (points_group >= 0) {
      for (auto& p : f.ba.points) ordering->AddElementToGroup(p.data(), points_group);
    }
    return ordering;
  };
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    Fixture f;
    Solver::Options o = SqrtOptions();
    o.sqrt_linear_solver_type = type;
    o.linear_solver_ordering = cameras_only(f, -1);
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    const std::string ceres_message =
        "The program has 70 parameter blocks, but the parameter block ordering has 10 parameter blocks.";
    ExpectEarlyFailure(s, f, ceres_message + " (Solver::Options::linear_solver_ordering must contain every");
    // ceres::Solve says the same.
    Solver::Options c = SqrtOptions();
    c.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
    c.linear_solver_type = ceres::ITERATIVE_SCHUR;
    c.linear_solver_ordering = cameras_only(f, -1);
    ceres::Solver::Summary cs;
    Solve(c, &f.problem, &cs);
    EXPECT_EQ(cs.termination_type, ceres::FAILURE);
    EXPECT_EQ(cs.message, ceres_message);
  }
  // An empty ordering lists none of them; with nothing variable it lists
  // them all (ceres::Solve then reports CONVERGENCE at once).
  {
    Fixture f;
    Solver::Options o = SqrtOptions();
    o.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    ExpectEarlyFailure(s, f, "The program has 70 parameter blocks, but the parameter block ordering has 0 "
                             "parameter blocks.");
    for (auto* set : {&f.ba.poses, &f.ba.points, &f.ba.intrinsics}) {
      for (auto& b : *set) f.problem.SetParameterBlockConstant(b.data());
    }
    Solve(o, &f.problem, &s);
    EXPECT_EQ(s.termination_type, ceres::CONVERGENCE) << s.message;
  }
  // The points in group 0 and the cameras in group 1 but the first pose
  // constant and left out: Ceres drops constant blocks from the ordering
  // before it compares, and so do we.
  Fixture f;
  f.problem.SetParameterBlockConstant(f.ba.poses[0].data());
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto& p : f.ba.points) ordering->AddElementToGroup(p.data(), 0);
  for (size_t i = 1; i < f.ba.poses.size(); ++i) ordering->AddElementToGroup(f.ba.poses[i].data(), 1);
  for (auto& p : f.ba.intrinsics) ordering->AddElementToGroup(p.data(), 1);
  Solver::Options o = SqrtOptions();
  o.linear_solver_ordering = ordering;
  ceres::Solver::Summary s;
  Solve(o, &f.problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_EQ(s.linear_solver_ordering_used, std::vector<int>({60, 9}));
  // Variable blocks in one group once the constant ones are out: automatic,
  // as Ceres (group 0 holds only the constant pose, group 1 everything else
  // would instead leave nothing to eliminate; that is Ceres' business, see
  // ProblemWithoutLandmarksGoesToCeres).
  Fixture g;
  g.problem.SetParameterBlockConstant(g.ba.poses[0].data());
  ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto* set : {&g.ba.points, &g.ba.intrinsics}) {
    for (auto& b : *set) ordering->AddElementToGroup(b.data(), 1);
  }
  for (auto& p : g.ba.poses) ordering->AddElementToGroup(p.data(), &p == &g.ba.poses[0] ? 7 : 1);
  o.linear_solver_ordering = ordering;
  Solve(o, &g.problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_EQ(s.linear_solver_ordering_used, std::vector<int>({60, 9}));
}

// Nothing to eliminate: Ceres' Schur solvers take such problems (CONVERGENCE
// at once when nothing is variable, CGNR or SPARSE_NORMAL_CHOLESKY when the
// elimination group is empty), so Solve hands them to ceres::Solve and says so.
TEST(FailureModes, ProblemWithoutLandmarksGoesToCeres) {
  const std::string note_start = " [ceres_sqrtba: no landmark to eliminate; solved by ceres::Solve with ";
  {
    ceres::Problem empty;
    ceres::Solver::Summary s;
    Solve(SqrtOptions(), &empty, &s);
    EXPECT_EQ(s.termination_type, ceres::CONVERGENCE);
    // Nothing was solved: no solver is named (Ceres' summary would say
    // SPARSE_NORMAL_CHOLESKY, its field's default).
    EXPECT_EQ(s.message,
              "Function tolerance reached. No non-constant parameter blocks found. [ceres_sqrtba: no landmark to "
              "eliminate; passed to ceres::Solve, which ran no iteration]");
  }
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    // Everything constant: as Ceres, CONVERGENCE at once with the cost.
    Fixture f;
    for (auto* set : {&f.ba.poses, &f.ba.points, &f.ba.intrinsics}) {
      for (auto& b : *set) f.problem.SetParameterBlockConstant(b.data());
    }
    Solver::Options o = SqrtOptions(SINGLE_PRECISION);
    o.sqrt_linear_solver_type = type;
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    EXPECT_EQ(s.termination_type, ceres::CONVERGENCE) << s.message;
    EXPECT_NE(s.message.find("; passed to ceres::Solve, which ran no iteration]"), std::string::npos) << s.message;
    EXPECT_TRUE(f.Untouched());
    Solver::Options ceres_options = SqrtOptions();
    ceres_options.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
    ceres::Solver::Summary c;
    Solve(ceres_options, &f.problem, &c);
    EXPECT_EQ(c.termination_type, ceres::CONVERGENCE) << c.message;
    EXPECT_EQ(s.final_cost, c.final_cost);
  }
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    // The user's elimination group holds only constant points: the cameras
    // are solved as ceres::Solve solves them with the Schur solver.
    double costs[2];
    for (int run = 0; run < 2; ++run) {
      Fixture f;
      auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
      for (auto& b : f.ba.points) {
        f.problem.SetParameterBlockConstant(b.data());
        ordering->AddElementToGroup(b.data(), 0);
      }
      for (auto* set : {&f.ba.poses, &f.ba.intrinsics}) {
        for (auto& b : *set) ordering->AddElementToGroup(b.data(), 1);
      }
      Solver::Options o = SqrtOptions();
      o.linear_solver_ordering = ordering;
      if (run == 0) {
        o.sqrt_linear_solver_type = type;
      } else {
        o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
        o.linear_solver_type = type == SQRT_SPARSE_SCHUR ? ceres::SPARSE_SCHUR : ceres::ITERATIVE_SCHUR;
        o.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
      }
      ceres::Solver::Summary s;
      Solve(o, &f.problem, &s);
      EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
      if (run == 0) {
        const std::string used = type == SQRT_SPARSE_SCHUR ? "SPARSE_NORMAL_CHOLESKY]" : "CGNR]";
        EXPECT_EQ(s.message.substr(s.message.size() - (note_start.size() + used.size())), note_start + used)
            << s.message;
      }
      costs[run] = s.final_cost;
    }
    EXPECT_EQ(costs[0], costs[1]);
  }
}

// A reprojection error that fails in a chosen way (see Mode).
struct Faulty {
  enum Mode {
    kJacobianNanWhenMoved,  // finite residuals, NaN Jacobian once point[0] != start
    kNoJacobian,         // never writes its Jacobian
  };
  Faulty(double u, double v, Mode mode, double start) : e(u, v), mode(mode), start(start) {}
  bool Evaluate(double const* const* x, double* r, double** jacobians, int num_blocks) const {
    e(x[0], x[1], x[2], r);
    if (jacobians == nullptr) return true;
    if (mode == kNoJacobian) return true;
    // Finite differences are enough here: only finiteness matters.
    const int sizes[3] = {6, 3, 3};
    for (int b = 0; b < num_blocks; ++b) {
      if (jacobians[b] == nullptr) continue;
      std::vector<double> moved(x[b], x[b] + sizes[b]);
      for (int k = 0; k < sizes[b]; ++k) {
        const double h = 1e-6 * (1.0 + std::abs(moved[k]));
        moved[k] += h;
        const double* args[3] = {x[0], x[1], x[2]};
        args[b] = moved.data();
        double rh[2];
        e(args[0], args[1], args[2], rh);
        moved[k] -= h;
        for (int i = 0; i < 2; ++i) jacobians[b][i * sizes[b] + k] = (rh[i] - r[i]) / h;
      }
    }
    if (x[2][0] != start) jacobians[2][0] = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  testing::ReprojectionError e;
  Mode mode;
  double start;
};

class FaultyCost : public ceres::SizedCostFunction<2, 6, 3, 3> {
 public:
  explicit FaultyCost(Faulty f) : f_(f) {}
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    return f_.Evaluate(x, r, j, 3);
  }

 private:
  Faulty f_;
};

TEST(FailureModes, CostFunctionThatLeavesItsJacobianUnwritten) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 52);
  const SyntheticBa original = ba;
  ceres::Problem problem;
  for (const auto& o : ba.observations) {
    problem.AddResidualBlock(new FaultyCost(Faulty(o.u, o.v, Faulty::kNoJacobian, 0.0)), nullptr,
                             ba.poses[o.camera].data(), ba.intrinsics[o.camera].data(),
                             ba.points[o.point].data());
  }
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), &problem, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message.rfind(std::string(internal::kInitialEvaluationFailed) + " The Jacobian of the residual block ", 0),
            0u)
      << s.message;
  EXPECT_NE(s.message.find(" has a value that is not finite or was not written (row "), std::string::npos)
      << s.message;
  EXPECT_TRUE(s.iterations.empty());
  EXPECT_EQ(ba.points, original.points);
}

TEST(FailureModes, FailuresAreLoggedUnlessSilent) {
  Fixture f;
  Solver::Options o = SqrtOptions();
  o.logging_type = ceres::PER_MINIMIZER_ITERATION;
  o.eta = 0.0;
  ceres::Solver::Summary s;
  ::testing::internal::CaptureStderr();
  Solve(o, &f.problem, &s);
  const std::string logged = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(logged.find("] Terminating: Invalid configuration. Solver::Options::eta = 0."),
            std::string::npos)
      << logged;
  o.logging_type = ceres::SILENT;
  ::testing::internal::CaptureStderr();
  Solve(o, &f.problem, &s);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(FailureModes, JacobianFailingAtAnAcceptedPointEndsTheSolve) {
  // The cost evaluates everywhere, but the Jacobian is NaN once a point has
  // moved: the first step is accepted (its cost is fine), then the Jacobian
  // evaluation at the new point fails. As in Ceres: FAILURE, and the
  // parameter blocks keep their initial values.
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 53);
  const SyntheticBa original = ba;
  ceres::Problem problem;
  for (const auto& o : ba.observations) {
    // Every residual's Jacobian is NaN once its point has moved in x.
    const double start = ba.points[o.point][0];
    problem.AddResidualBlock(
        new FaultyCost(Faulty(o.u, o.v, Faulty::kJacobianNanWhenMoved, start)), nullptr,
        ba.poses[o.camera].data(), ba.intrinsics[o.camera].data(), ba.points[o.point].data());
  }
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), &problem, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE) << s.message;
  EXPECT_EQ(s.message.rfind("Residual and Jacobian evaluation failed. The Jacobian of the residual block ", 0), 0u)
      << s.message;
  EXPECT_FALSE(s.IsSolutionUsable());
  EXPECT_EQ(s.iterations.size(), 1u);  // the failed iteration is not listed
  EXPECT_EQ(ba.points, original.points);
  EXPECT_EQ(ba.poses, original.poses);

  // Ceres does the same.
  SyntheticBa ceres_ba = original;
  ceres::Problem ceres_problem;
  for (const auto& o : ceres_ba.observations) {
    const double start = ceres_ba.points[o.point][0];
    ceres_problem.AddResidualBlock(
        new FaultyCost(Faulty(o.u, o.v, Faulty::kJacobianNanWhenMoved, start)), nullptr,
        ceres_ba.poses[o.camera].data(), ceres_ba.intrinsics[o.camera].data(),
        ceres_ba.points[o.point].data());
  }
  ceres::Solver::Options co;
  co.linear_solver_type = ceres::ITERATIVE_SCHUR;
  co.preconditioner_type = ceres::SCHUR_JACOBI;
  co.logging_type = ceres::SILENT;
  ceres::Solver::Summary cs;
  ceres::Solve(co, &ceres_problem, &cs);
  EXPECT_EQ(cs.termination_type, ceres::FAILURE) << cs.message;
  EXPECT_EQ(cs.message, "Residual and Jacobian evaluation failed.");
  EXPECT_EQ(ceres_ba.points, original.points);
}

struct FailingPrior {
  template <typename T>
  bool operator()(const T* x, T* r) const {
    r[0] = x[0];
    return false;
  }
};

TEST(FailureModes, ConstantResidualBlockThatFails) {
  Fixture f;
  std::vector<double> fixed = {1.0};
  f.problem.AddResidualBlock(new ceres::AutoDiffCostFunction<FailingPrior, 1, 1>(new FailingPrior),
                             nullptr, fixed.data());
  f.problem.SetParameterBlockConstant(fixed.data());
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), &f.problem, &s);
  // Ceres' message, which names the residual block by its index.
  ExpectEarlyFailure(s, f,
                     "Evaluation of the residual " + std::to_string(f.problem.NumResidualBlocks() - 1) +
                         " failed during removal of fixed residual blocks.");
}

using testing::HugeReprojectionError;

// Bytes of landmark blocks the solve needs in a precision, from the message
// of a solve with a 1-byte memory limit.
int64_t LandmarkBlockBytes(const SyntheticBa& ba, Precision precision) {
  SyntheticBa copy = ba;
  ceres::Problem problem;
  AddReprojectionResiduals(&copy, &problem, nullptr);
  Solver::Options o = SqrtOptions(precision);
  o.memory_limit_in_bytes = 1;
  ceres::Solver::Summary s;
  Solve(o, &problem, &s);
  const size_t open = s.message.find(" MiB (");
  EXPECT_EQ(s.message.rfind("The landmark blocks (", 0), 0u) << s.message;
  if (open == std::string::npos) return 0;
  return std::strtoll(s.message.c_str() + open + 6, nullptr, 10);
}

TEST(FailureModes, SinglePrecisionOverflowWithoutMemoryForDouble) {
  const SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 37);
  const int64_t single_bytes = LandmarkBlockBytes(ba, SINGLE_PRECISION);
  const int64_t double_bytes = LandmarkBlockBytes(ba, DOUBLE_PRECISION);
  ASSERT_GT(single_bytes, 0);
  ASSERT_GT(double_bytes, single_bytes);

  // Residuals around 1e20: single precision cannot take them; the double
  // precision fallback does not fit in the memory limit.
  SyntheticBa copy = ba;
  const SyntheticBa original = ba;
  ceres::Problem problem;
  for (const auto& o : copy.observations) {
    problem.AddResidualBlock(
        new ceres::AutoDiffCostFunction<HugeReprojectionError, 2, 6, 3, 3>(new HugeReprojectionError(o.u, o.v)), nullptr,
        copy.poses[o.camera].data(), copy.intrinsics[o.camera].data(),
        copy.points[o.point].data());
  }
  Solver::Options o = SqrtOptions(SINGLE_PRECISION);
  o.memory_limit_in_bytes = single_bytes;
  ceres::Solver::Summary s;
  Solve(o, &problem, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_FALSE(s.IsSolutionUsable());
  EXPECT_EQ(copy.points, original.points);
  EXPECT_EQ(copy.poses, original.poses);
  // Both reasons: why single precision failed and why double does not fit.
  EXPECT_NE(s.message.find("Single precision cannot solve this problem"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("In double precision, the landmark blocks"), std::string::npos) << s.message;

  // With room for double precision the same solve continues in double and
  // says so at the end of the message.
  SyntheticBa again = ba;
  ceres::Problem problem2;
  for (const auto& ob : again.observations) {
    problem2.AddResidualBlock(
        new ceres::AutoDiffCostFunction<HugeReprojectionError, 2, 6, 3, 3>(new HugeReprojectionError(ob.u, ob.v)), nullptr,
        again.poses[ob.camera].data(), again.intrinsics[ob.camera].data(),
        again.points[ob.point].data());
  }
  o.memory_limit_in_bytes = double_bytes;
  Solve(o, &problem2, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  const std::string note =
      " [Single precision: the Jacobian or the residuals exceed its range at iteration 0; "
      "continued in double precision.]";
  ASSERT_GE(s.message.size(), note.size());
  EXPECT_EQ(s.message.substr(s.message.size() - note.size()), note) << s.message;
}

// Near a minimum, single precision's steps end in rounding: the gradient
// J^T r falls below float's error in forming it, and PCG returns steps that
// do not decrease the model. Ceres calls them invalid and fails after
// max_num_consecutive_invalid_steps in a row, which would throw away a
// converged solve (the user's parameters are not updated on FAILURE).
//
// The tests construct that case instead of searching for seeds whose
// rounding happens to reach it (which depends on the machine): the problem is
// well posed (no outliers, five observations per point, two poses constant,
// so no gauge freedom) and its observations are chosen so that the residual
// at the starting point is
//
//   r = n + J w,    J^T n = 0 (n: 0.5 px noise projected off J's columns),
//
// so that the gradient J^T r = J^T J w has exactly the size the test asks
// for, as a multiple of float's rounding level of the gradient,
// u_f max_j sum_i |J_ij| |r_i| (u_f = 2^-24). A multiple far below 1 makes
// every float step noise (its model change is about -|noise|^2 / 2, the
// gradient's part is 10^4 times smaller), while the same multiple is 2^29
// times that in double's units, so double's steps are the true ones. A
// multiple far above 1 makes float's steps valid (on three seeds, float's
// first step was invalid at multiples up to 1 and valid from 10 on). The
// constructor measures what it built; the tests check the margins they rely
// on before they rely on them.
class NearMinimumFixture {
 public:
  NearMinimumFixture(unsigned seed, double gradient_in_float_units)
      : ba(MakeSyntheticBa(8, 120, 5, seed, 0.0)) {
    // Predicted pixels and the Jacobian of the free blocks at the start:
    // the residuals of zero observations.
    SyntheticBa zero = ba;
    for (auto& o : zero.observations) o.u = o.v = 0.0;
    ceres::Problem predict;
    AddReprojectionResiduals(&zero, &predict, nullptr);
    ceres::Problem::EvaluateOptions eo;
    for (size_t c = kConstantPoses; c < zero.poses.size(); ++c) eo.parameter_blocks.push_back(zero.poses[c].data());
    for (auto& b : zero.intrinsics) eo.parameter_blocks.push_back(b.data());
    for (auto& b : zero.points) eo.parameter_blocks.push_back(b.data());
    std::vector<double> predicted;
    ceres::CRSMatrix crs;
    predict.Evaluate(eo, nullptr, &predicted, nullptr, &crs);
    Eigen::MatrixXd j = Eigen::MatrixXd::Zero(crs.num_rows, crs.num_cols);
    for (int row = 0; row < crs.num_rows; ++row) {
      for (int k = crs.rows[row]; k < crs.rows[row + 1]; ++k) j(row, crs.cols[k]) = crs.values[k];
    }
    std::mt19937 rng(seed);
    ::ceres_sqrtba::testing::NormalDistribution normal(0.0, 1.0);
    Eigen::VectorXd noise(j.rows()), w(j.cols());
    for (int i = 0; i < noise.size(); ++i) noise[i] = 0.5 * normal(rng);
    for (int i = 0; i < w.size(); ++i) w[i] = normal(rng);
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(j);
    const Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(j.rows(), j.cols());
    const Eigen::VectorXd n = noise - q * (q.transpose() * noise);
    const Eigen::VectorXd jw = j * w;
    const double level = FloatLevel(j, n);
    const double scale = gradient_in_float_units * level / (j.transpose() * jw).lpNorm<Eigen::Infinity>();
    const Eigen::VectorXd r = n + scale * jw;
    gauss_newton_decrease_relative = (scale * jw).squaredNorm() / r.squaredNorm();
    for (size_t i = 0; i < ba.observations.size(); ++i) {
      ba.observations[i].u = predicted[2 * i] - r[2 * i];
      ba.observations[i].v = predicted[2 * i + 1] - r[2 * i + 1];
    }
    AddReprojectionResiduals(&ba, &problem, nullptr);
    for (size_t c = 0; c < kConstantPoses; ++c) problem.SetParameterBlockConstant(ba.poses[c].data());
    // What was built: the gradient in double (the observations' own rounding
    // adds about 1e-3 of it) and float's level from the residuals as stored.
    std::vector<double> residuals, gradient;
    eo.parameter_blocks.clear();
    for (size_t c = kConstantPoses; c < ba.poses.size(); ++c) eo.parameter_blocks.push_back(ba.poses[c].data());
    for (auto& b : ba.intrinsics) eo.parameter_blocks.push_back(b.data());
    for (auto& b : ba.points) eo.parameter_blocks.push_back(b.data());
    problem.Evaluate(eo, nullptr, &residuals, &gradient, nullptr);
    gradient_max_norm = Eigen::Map<const Eigen::VectorXd>(gradient.data(), gradient.size()).lpNorm<Eigen::Infinity>();
    float_level = FloatLevel(j, Eigen::Map<const Eigen::VectorXd>(residuals.data(), residuals.size()));
  }

  // The gradient as a multiple of float's rounding level.
  double GradientInFloatUnits() const { return gradient_max_norm / float_level; }
  // The same in double's units (u_d = 2^-53).
  double GradientInDoubleUnits() const { return GradientInFloatUnits() * std::ldexp(1.0, 29); }

  static constexpr size_t kConstantPoses = 2;
  SyntheticBa ba;
  ceres::Problem problem;
  double gradient_max_norm = 0.0;
  double float_level = 0.0;
  // |J w|^2 / |r|^2: the cost's relative decrease to the minimum of the
  // linearized problem.
  double gauss_newton_decrease_relative = 0.0;

 private:
  static double FloatLevel(const Eigen::MatrixXd& j, const Eigen::VectorXd& r) {
    return std::ldexp((j.cwiseAbs().transpose() * r.cwiseAbs()).maxCoeff(), -24);
  }
};

Solver::Options ToConvergence(Solver::Options o) {
  o.max_num_iterations = 200;
  o.function_tolerance = 1e-14;
  o.gradient_tolerance = 1e-14;
  o.parameter_tolerance = 1e-12;
  return o;
}

// The gradient 10^-4 of float's level and 5e4 times double's: float's first
// step does not decrease the model, double's does, and its candidate changes
// the cost by less than 1e-14 of it (the cost's own rounding): the solve
// converges on the double step, at the cost double precision reaches alone.
TEST(FailureModes, SinglePrecisionRunToConvergenceEndsInDoubleInsteadOfFailing) {
  for (unsigned seed : {1u, 2u}) {
    for (bool explicit_rows : {false, true}) {
      double costs[2];
      for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
        NearMinimumFixture f(seed, 1e-4);
        ASSERT_LT(f.GradientInFloatUnits(), 1e-3) << "seed " << seed;
        ASSERT_GT(f.GradientInDoubleUnits(), 1e4) << "seed " << seed;
        Solver::Options o = ToConvergence(SqrtOptions(precision));
        o.use_explicit_reduced_rows = explicit_rows;
        ceres::Solver::Summary s;
        Solve(o, &f.problem, &s);
        EXPECT_EQ(s.termination_type, ceres::CONVERGENCE) << "seed " << seed << ": " << s.message;
        costs[precision == SINGLE_PRECISION] = s.final_cost;
        if (precision == SINGLE_PRECISION) {
          EXPECT_NE(s.message.find("[Single precision: a step did not decrease the model (model cost change "),
                    std::string::npos)
              << "seed " << seed << ": " << s.message;
        } else {
          EXPECT_EQ(s.message.find("Single precision"), std::string::npos) << s.message;
        }
      }
      EXPECT_NEAR(costs[1], costs[0], 1e-12 * costs[0]) << "seed " << seed;
    }
  }
}

// A float step that meets the function or parameter tolerance may be short
// only because PCG in float stopped at its rounding level (on generic
// problems — Tukey loss, orderings that eliminate only some points, no Jacobi
// scaling — float stopped 0.3-1% above the minimum in 2% of random
// configurations): convergence is declared on that iteration's step computed
// again in double. Constructed: the gradient 10^3 times float's level, so
// that float's first step is valid, and the minimum of the linearized
// problem less than 1e-8 of the cost below the start, so that the step meets
// the default function tolerance (1e-6) or the parameter tolerance.
TEST(FailureModes, SinglePrecisionConvergenceIsConfirmedInDouble) {
  for (unsigned seed : {1u, 2u}) {
    for (bool scaled : {true, false}) {
      double costs[2];
      for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
        NearMinimumFixture f(seed, 1e3);
        ASSERT_GT(f.GradientInFloatUnits(), 500.0) << "seed " << seed;
        ASSERT_LT(f.gauss_newton_decrease_relative, 1e-8) << "seed " << seed;
        Solver::Options o = SqrtOptions(precision);
        o.max_num_iterations = 200;
        o.jacobi_scaling = scaled;
        o.preconditioner_type = ceres::JACOBI;
        ceres::Solver::Summary s;
        Solve(o, &f.problem, &s);
        EXPECT_EQ(s.termination_type, ceres::CONVERGENCE) << "seed " << seed << ": " << s.message;
        costs[precision == SINGLE_PRECISION] = s.final_cost;
        if (precision == SINGLE_PRECISION) {
          EXPECT_NE(s.message.find("tolerance was met by a float step (convergence is only declared on a "
                                   "double precision step)"),
                    std::string::npos)
              << "seed " << seed << " scaled " << scaled << ": " << s.message;
        }
      }
      // Both stop within the linearized decrease of the minimum.
      EXPECT_NEAR(costs[1], costs[0], 1e-8 * costs[0]) << "seed " << seed << " scaled " << scaled;
    }
  }
}

// Without memory for double precision the invalid steps count as Ceres
// counts them: float's steps of the first test's problem are all noise,
// whatever the radius (the damping never grows enough in five steps for the
// gradient's part to matter), so the fifth ends the solve.
TEST(FailureModes, SinglePrecisionInvalidStepsWithoutMemoryForDouble) {
  for (unsigned seed : {1u, 2u}) {
    NearMinimumFixture f(seed, 1e-4);
    ASSERT_LT(f.GradientInFloatUnits(), 1e-3) << "seed " << seed;
    Solver::Options o = ToConvergence(SqrtOptions(SINGLE_PRECISION));
    o.memory_limit_in_bytes = LandmarkBlockBytes(f.ba, SINGLE_PRECISION);
    ASSERT_GT(o.memory_limit_in_bytes, 0);
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    EXPECT_EQ(s.termination_type, ceres::FAILURE) << s.message;
    EXPECT_NE(s.message.find("max_num_consecutive_invalid_steps"), std::string::npos) << s.message;
    // Iteration 0 and the first four invalid steps: as Ceres, no row for
    // the step that ends the solve.
    ASSERT_EQ(s.iterations.size(), static_cast<size_t>(o.max_num_consecutive_invalid_steps)) << s.message;
    for (size_t i = 1; i < s.iterations.size(); ++i) EXPECT_FALSE(s.iterations[i].step_is_valid) << i;
  }
}

TEST(FailureModes, LandmarkAtInfinity) {
  for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
    Fixture f;
    f.ba.points[2][2] = std::numeric_limits<double>::infinity();
    f.original.points[2][2] = f.ba.points[2][2];
    ceres::Solver::Summary s;
    Solve(SqrtOptions(precision), &f.problem, &s);
    EXPECT_EQ(s.termination_type, ceres::FAILURE);
    // Ceres checks the values before it solves, with this message.
    std::ostringstream head;
    head << "ParameterBlock: " << static_cast<const void*>(f.ba.points[2].data())
         << " with size 3 has at least one invalid value.\nFirst invalid value is at index: 2.\n"
         << "Parameter block values: ";
    EXPECT_EQ(s.message.rfind(head.str(), 0), 0u) << s.message;
    EXPECT_NE(s.message.find("inf "), std::string::npos) << s.message;
    EXPECT_TRUE(f.Untouched());
  }
}

TEST(FailureModes, BlockWithoutResidualsKeepsItsValues) {
  Fixture f;
  std::vector<double> lonely = {0.1, 0.2, 0.3, 1.0, 2.0, 3.0};
  f.problem.AddParameterBlock(lonely.data(), 6);
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), &f.problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_LT(s.final_cost, s.initial_cost);
  EXPECT_EQ(lonely, (std::vector<double>{0.1, 0.2, 0.3, 1.0, 2.0, 3.0}));
  EXPECT_EQ(s.num_parameter_blocks_reduced, s.num_parameter_blocks - 1);
}

TEST(FailureModes, ZeroResidualsConvergeByTheGradientTolerance) {
  SyntheticBa ba = MakeSyntheticBa(4, 30, 3, 54, 0.0);
  for (auto& o : ba.observations) {
    double r[2];
    testing::ReprojectionError(0, 0)(ba.poses[o.camera].data(), ba.intrinsics[o.camera].data(),
                                     ba.points[o.point].data(), r);
    o.u = r[0];
    o.v = r[1];
  }
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), &problem, &s);
  EXPECT_EQ(s.termination_type, ceres::CONVERGENCE);
  EXPECT_EQ(s.message.rfind("Gradient tolerance reached. Gradient max norm: ", 0), 0u) << s.message;
  EXPECT_EQ(s.iterations.size(), 1u);
}

}  // namespace
}  // namespace ceres_sqrtba
