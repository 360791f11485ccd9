// The validation functions of solve/options_validation.h, check by check: for
// each option a value just inside its allowed range (accepted) and one just
// outside (rejected with a message naming the option), for both square-root
// solvers; the message formats; UnsupportedSqrtOption's refusals;
// ValidateSqrtOptions combining both; and ValidateCeresOptions' checks of
// the combinations Ceres 2.1 accepts but aborts on.
//
// "Just inside/outside" of a floating-point bound b means b itself and its
// neighbouring double (std::nextafter), or the smallest denormal for a bound
// of 0: the comparisons are exact, so these are the tightest probes.
#include "ceres_sqrtba/internal/solve/options_validation.h"

#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

constexpr double kTiny = std::numeric_limits<double>::denorm_min();
double Above(double x) { return std::nextafter(x, std::numeric_limits<double>::infinity()); }
double Below(double x) { return std::nextafter(x, -std::numeric_limits<double>::infinity()); }

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Solver::Options SqrtOptions(SqrtLinearSolverType type) {
  Solver::Options o;
  o.sqrt_linear_solver_type = type;
  return o;
}

// One check: options just inside its range and just outside it, and what the
// message must contain (the constraint, which names the option).
struct Check {
  const char* name;
  std::function<void(Solver::Options*)> inside;
  std::function<void(Solver::Options*)> outside;
  std::string expected;
};

std::string Constraint(const std::string& option, const std::string& op_and_bound) {
  return "Violated constraint: Solver::Options::" + option + " " + op_and_bound;
}
// Two options out of order, as Ceres words it (no space before the operator).
std::string PairConstraint(const std::string& a, const std::string& op, const std::string& b) {
  return "Violated constraint: Solver::Options::" + a + op + " Solver::Options::" + b + ".";
}

std::vector<Check> ValueChecks() {
  using O = Solver::Options;
  std::vector<Check> c;
  // A lower bound of 0 (>=) on a double option.
  auto non_negative = [&c](const char* name, double O::*field) {
    c.push_back({name, [field](O* o) { o->*field = 0.0; }, [field](O* o) { o->*field = -kTiny; },
                 Constraint(name, ">= 0.0")});
  };
  auto positive = [&c](const char* name, double O::*field) {
    c.push_back({name, [field](O* o) { o->*field = kTiny; }, [field](O* o) { o->*field = 0.0; },
                 Constraint(name, "> 0.0")});
  };
  auto int_at_least = [&c](const char* name, int O::*field, int bound, const std::string& constraint) {
    c.push_back({name, [field, bound](O* o) { o->*field = bound; },
                 [field, bound](O* o) { o->*field = bound - 1; }, Constraint(name, constraint)});
  };
  c.push_back({"sqrt_linear_solver_type", [](O* o) { o->sqrt_linear_solver_type = SQRT_SPARSE_SCHUR; },
               [](O* o) { o->sqrt_linear_solver_type = SQRT_AUTOMATIC; },
               "Solver::Options::sqrt_linear_solver_type = 3. Violated constraint: "
               "Solver::Options::sqrt_linear_solver_type is one of"});
  c.push_back({"sqrt_linear_solver_type (below)",
               [](O* o) { o->sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR; },
               [](O* o) { o->sqrt_linear_solver_type = CERES_LINEAR_SOLVER; },
               "Solver::Options::sqrt_linear_solver_type = 0. Violated constraint"});
  c.push_back({"precision", [](O* o) { o->precision = SINGLE_PRECISION; },
               [](O* o) { o->precision = static_cast<Precision>(2); },
               "Solver::Options::precision = 2. Violated constraint: Solver::Options::precision is one of"});
  c.push_back({"precision (below)", [](O* o) { o->precision = DOUBLE_PRECISION; },
               [](O* o) { o->precision = static_cast<Precision>(-1); }, "Solver::Options::precision = -1."});
  c.push_back({"reduced_camera_factorization",
               [](O* o) { o->reduced_camera_factorization = SPARSE_FACTORIZATION; },
               [](O* o) { o->reduced_camera_factorization = static_cast<ReducedCameraFactorization>(3); },
               "Solver::Options::reduced_camera_factorization = 3. Violated constraint: "
               "Solver::Options::reduced_camera_factorization is one of"});
  c.push_back({"reduced_camera_factorization (below)",
               [](O* o) { o->reduced_camera_factorization = AUTOMATIC_FACTORIZATION; },
               [](O* o) { o->reduced_camera_factorization = static_cast<ReducedCameraFactorization>(-1); },
               "Solver::Options::reduced_camera_factorization = -1."});
  int_at_least("max_num_iterations", &O::max_num_iterations, 0, ">= 0");
  non_negative("max_solver_time_in_seconds", &O::max_solver_time_in_seconds);
  non_negative("function_tolerance", &O::function_tolerance);
  non_negative("gradient_tolerance", &O::gradient_tolerance);
  non_negative("parameter_tolerance", &O::parameter_tolerance);
  int_at_least("num_threads", &O::num_threads, 1, ">= 1");
  // The radii: the other two set so that only the probed constraint can fail.
  c.push_back({"initial_trust_region_radius",
               [](O* o) { o->min_trust_region_radius = o->initial_trust_region_radius = kTiny; },
               [](O* o) { o->initial_trust_region_radius = 0.0; },
               Constraint("initial_trust_region_radius", "> 0.0")});
  positive("min_trust_region_radius", &O::min_trust_region_radius);
  c.push_back(
      {"max_trust_region_radius",
       [](O* o) {
         o->min_trust_region_radius = o->initial_trust_region_radius = o->max_trust_region_radius = kTiny;
       },
       [](O* o) { o->max_trust_region_radius = 0.0; }, Constraint("max_trust_region_radius", "> 0.0")});
  c.push_back({"min_trust_region_radius <= max_trust_region_radius",
               [](O* o) {
                 o->min_trust_region_radius = o->initial_trust_region_radius = o->max_trust_region_radius =
                     1.0;
               },
               [](O* o) {
                 o->initial_trust_region_radius = o->max_trust_region_radius = 1.0;
                 o->min_trust_region_radius = Above(1.0);
               },
               PairConstraint("min_trust_region_radius", "<=", "max_trust_region_radius")});
  c.push_back({"min_trust_region_radius <= initial_trust_region_radius",
               [](O* o) { o->min_trust_region_radius = o->initial_trust_region_radius = 1.0; },
               [](O* o) {
                 o->initial_trust_region_radius = 1.0;
                 o->min_trust_region_radius = Above(1.0);
               },
               PairConstraint("min_trust_region_radius", "<=", "initial_trust_region_radius")});
  c.push_back({"initial_trust_region_radius <= max_trust_region_radius",
               [](O* o) { o->initial_trust_region_radius = o->max_trust_region_radius = 2.0; },
               [](O* o) {
                 o->max_trust_region_radius = 2.0;
                 o->initial_trust_region_radius = Above(2.0);
               },
               PairConstraint("initial_trust_region_radius", "<=", "max_trust_region_radius")});
  non_negative("min_relative_decrease", &O::min_relative_decrease);
  positive("min_lm_diagonal", &O::min_lm_diagonal);
  c.push_back({"max_lm_diagonal", [](O* o) { o->min_lm_diagonal = o->max_lm_diagonal = kTiny; },
               [](O* o) { o->max_lm_diagonal = 0.0; }, Constraint("max_lm_diagonal", "> 0.0")});
  c.push_back({"min_lm_diagonal <= max_lm_diagonal",
               [](O* o) { o->min_lm_diagonal = o->max_lm_diagonal = 1.0; },
               [](O* o) {
                 o->max_lm_diagonal = 1.0;
                 o->min_lm_diagonal = Above(1.0);
               },
               PairConstraint("min_lm_diagonal", "<=", "max_lm_diagonal")});
  int_at_least("max_num_consecutive_invalid_steps", &O::max_num_consecutive_invalid_steps, 0, ">= 0");
  positive("eta", &O::eta);
  int_at_least("min_linear_solver_iterations", &O::min_linear_solver_iterations, 0, ">= 0");
  c.push_back(
      {"max_linear_solver_iterations",
       [](O* o) { o->max_linear_solver_iterations = kMinMaxLinearSolverIterations; },
       [](O* o) { o->max_linear_solver_iterations = kMinMaxLinearSolverIterations - 1; },
       Constraint("max_linear_solver_iterations", ">= " + std::to_string(kMinMaxLinearSolverIterations))});
  c.push_back({"min_linear_solver_iterations <= max_linear_solver_iterations",
               [](O* o) { o->min_linear_solver_iterations = o->max_linear_solver_iterations = 10; },
               [](O* o) {
                 o->max_linear_solver_iterations = 10;
                 o->min_linear_solver_iterations = 11;
               },
               PairConstraint("min_linear_solver_iterations", "<=", "max_linear_solver_iterations")});
  c.push_back({"memory_limit_in_bytes", [](O* o) { o->memory_limit_in_bytes = 0; },
               [](O* o) { o->memory_limit_in_bytes = -1; }, Constraint("memory_limit_in_bytes", ">= 0")});
  c.push_back({"inner_iteration_tolerance",
               [](O* o) {
                 o->use_inner_iterations = true;
                 o->inner_iteration_tolerance = 0.0;
               },
               [](O* o) {
                 o->use_inner_iterations = true;
                 o->inner_iteration_tolerance = -kTiny;
               },
               Constraint("inner_iteration_tolerance", ">= 0.0")});
  c.push_back({"max_consecutive_nonmonotonic_steps",
               [](O* o) {
                 o->use_nonmonotonic_steps = true;
                 o->max_consecutive_nonmonotonic_steps = 1;
               },
               [](O* o) {
                 o->use_nonmonotonic_steps = true;
                 o->max_consecutive_nonmonotonic_steps = 0;
               },
               Constraint("max_consecutive_nonmonotonic_steps", "> 0")});
  c.push_back({"max_lbfgs_rank", [](O* o) { o->max_lbfgs_rank = 1; }, [](O* o) { o->max_lbfgs_rank = 0; },
               Constraint("max_lbfgs_rank", "> 0")});
  positive("min_line_search_step_size", &O::min_line_search_step_size);
  positive("max_line_search_step_contraction", &O::max_line_search_step_contraction);
  c.push_back({"max_line_search_step_contraction < 1",
               [](O* o) {
                 o->min_line_search_step_contraction = 1.0;
                 o->max_line_search_step_contraction = Below(1.0);
               },
               [](O* o) {
                 o->min_line_search_step_contraction = 1.0;
                 o->max_line_search_step_contraction = 1.0;
               },
               Constraint("max_line_search_step_contraction", "< 1.0")});
  c.push_back({"max_line_search_step_contraction < min_line_search_step_contraction",
               [](O* o) {
                 o->min_line_search_step_contraction = 0.5;
                 o->max_line_search_step_contraction = Below(0.5);
               },
               [](O* o) { o->min_line_search_step_contraction = o->max_line_search_step_contraction = 0.5; },
               PairConstraint("max_line_search_step_contraction", "<", "min_line_search_step_contraction")});
  c.push_back({"min_line_search_step_contraction <= 1",
               [](O* o) { o->min_line_search_step_contraction = 1.0; },
               [](O* o) { o->min_line_search_step_contraction = Above(1.0); },
               Constraint("min_line_search_step_contraction", "<= 1.0")});
  int_at_least("max_num_line_search_step_size_iterations", &O::max_num_line_search_step_size_iterations, 0,
               ">= 0");
  positive("line_search_sufficient_function_decrease", &O::line_search_sufficient_function_decrease);
  c.push_back({"line_search_sufficient_function_decrease < line_search_sufficient_curvature_decrease",
               [](O* o) {
                 o->line_search_sufficient_curvature_decrease = 0.5;
                 o->line_search_sufficient_function_decrease = Below(0.5);
               },
               [](O* o) {
                 o->line_search_sufficient_curvature_decrease = o->line_search_sufficient_function_decrease =
                     0.5;
               },
               PairConstraint("line_search_sufficient_function_decrease", "<",
                              "line_search_sufficient_curvature_decrease")});
  c.push_back({"line_search_sufficient_curvature_decrease < 1",
               [](O* o) { o->line_search_sufficient_curvature_decrease = Below(1.0); },
               [](O* o) { o->line_search_sufficient_curvature_decrease = 1.0; },
               Constraint("line_search_sufficient_curvature_decrease", "< 1.0")});
  c.push_back({"max_line_search_step_expansion > 1",
               [](O* o) { o->max_line_search_step_expansion = Above(1.0); },
               [](O* o) { o->max_line_search_step_expansion = 1.0; },
               Constraint("max_line_search_step_expansion", "> 1.0")});
  c.push_back({"line_search_type with LBFGS",
               [](O* o) {
                 o->line_search_direction_type = ceres::LBFGS;
                 o->line_search_type = ceres::WOLFE;
               },
               [](O* o) {
                 o->line_search_direction_type = ceres::LBFGS;
                 o->line_search_type = ceres::ARMIJO;
               },
               "Solver::Options::line_search_type = ARMIJO. When using (L)BFGS, "
               "Solver::Options::line_search_type must be set to WOLFE."});
  c.push_back({"line_search_type with BFGS",
               [](O* o) {
                 o->line_search_direction_type = ceres::STEEPEST_DESCENT;
                 o->line_search_type = ceres::ARMIJO;
               },
               [](O* o) {
                 o->line_search_direction_type = ceres::BFGS;
                 o->line_search_type = ceres::ARMIJO;
               },
               "Solver::Options::line_search_type = ARMIJO."});
  return c;
}

class ValueCheck : public ::testing::TestWithParam<int> {};

TEST_P(ValueCheck, InsideAcceptedOutsideRejectedNamingTheOption) {
  const Check check = ValueChecks()[GetParam()];
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    SCOPED_TRACE(std::string(check.name) + ", " + SqrtLinearSolverTypeToString(type));
    Solver::Options inside = SqrtOptions(type);
    check.inside(&inside);
    std::string error;
    EXPECT_TRUE(ValidateSqrtOptionValues(inside, &error)) << error;
    EXPECT_TRUE(ValidateSqrtOptions(inside, &error)) << error;
    Solver::Options outside = SqrtOptions(type);
    check.outside(&outside);
    error.clear();
    EXPECT_FALSE(ValidateSqrtOptionValues(outside, &error));
    EXPECT_TRUE(Contains(error, check.expected)) << error << "\nexpected: " << check.expected;
    std::string combined;
    EXPECT_FALSE(ValidateSqrtOptions(outside, &combined));
    EXPECT_EQ(combined, error);
  }
}

INSTANTIATE_TEST_SUITE_P(OptionsValidation, ValueCheck,
                         ::testing::Range(0, static_cast<int>(ValueChecks().size())),
                         [](const ::testing::TestParamInfo<int>& info) {
                           std::string name = ValueChecks()[info.param].name;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name + "_" + std::to_string(info.param);
                         });

TEST(OptionsValidation, DefaultSqrtOptionsAreValid) {
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    std::string error = "untouched";
    EXPECT_TRUE(ValidateSqrtOptions(SqrtOptions(type), &error)) << error;
    EXPECT_EQ(UnsupportedSqrtOption(SqrtOptions(type)), "");
  }
}

// The message formats, word for word.
TEST(OptionsValidation, MessagesInCeresWords) {
  Solver::Options o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
  o.eta = 0.0;
  std::string error;
  ASSERT_FALSE(ValidateSqrtOptionValues(o, &error));
  EXPECT_EQ(
      error,
      "Invalid configuration. Solver::Options::eta = 0. Violated constraint: Solver::Options::eta > 0.0");
  o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
  o.min_lm_diagonal = 4.0;
  o.max_lm_diagonal = 2.0;
  ASSERT_FALSE(ValidateSqrtOptionValues(o, &error));
  EXPECT_EQ(
      error,
      "Invalid configuration. Solver::Options::min_lm_diagonal = 4. Solver::Options::max_lm_diagonal = 2. "
      "Violated constraint: Solver::Options::min_lm_diagonal<= Solver::Options::max_lm_diagonal.");
  o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
  o.precision = static_cast<Precision>(5);
  ASSERT_FALSE(ValidateSqrtOptionValues(o, &error));
  EXPECT_EQ(error,
            "Invalid configuration. Solver::Options::precision = 5. Violated constraint: "
            "Solver::Options::precision "
            "is one of DOUBLE_PRECISION, SINGLE_PRECISION");
}

// Options that only matter with a switch are not checked without it.
TEST(OptionsValidation, SwitchedOffOptionsAreNotChecked) {
  Solver::Options o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
  o.use_inner_iterations = false;
  o.inner_iteration_tolerance = -1.0;
  o.use_nonmonotonic_steps = false;
  o.max_consecutive_nonmonotonic_steps = 0;
  std::string error;
  EXPECT_TRUE(ValidateSqrtOptionValues(o, &error)) << error;
}

TEST(OptionsValidation, NullCallbackIsNamedByIndex) {
  struct Nothing : ceres::IterationCallback {
    ceres::CallbackReturnType operator()(const ceres::IterationSummary&) override {
      return ceres::SOLVER_CONTINUE;
    }
  } callback;
  Solver::Options o = SqrtOptions(SQRT_SPARSE_SCHUR);
  o.callbacks = {&callback, &callback};
  std::string error;
  EXPECT_TRUE(ValidateSqrtOptionValues(o, &error)) << error;
  o.callbacks[1] = nullptr;
  EXPECT_FALSE(ValidateSqrtOptionValues(o, &error));
  EXPECT_EQ(error, "Invalid configuration. Solver::Options::callbacks[1] is null.");
}

// The first violated check is reported: the options are checked in order.
TEST(OptionsValidation, FirstViolationIsReported) {
  Solver::Options o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
  o.num_threads = 0;
  o.eta = 0.0;
  std::string error;
  EXPECT_FALSE(ValidateSqrtOptionValues(o, &error));
  EXPECT_TRUE(Contains(error, "num_threads")) << error;
  EXPECT_FALSE(Contains(error, "eta")) << error;
}

TEST(OptionsValidation, UnsupportedTrustRegionStrategy) {
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    Solver::Options o = SqrtOptions(type);
    o.trust_region_strategy_type = ceres::DOGLEG;
    EXPECT_EQ(UnsupportedSqrtOption(o),
              std::string("Solver::Options::trust_region_strategy_type = DOGLEG is not "
                          "supported by ") +
                  SqrtLinearSolverTypeToString(type) + ": only LEVENBERG_MARQUARDT is implemented.");
    // Values first, then the unsupported option, with Ceres' prefix.
    std::string error;
    EXPECT_TRUE(ValidateSqrtOptionValues(o, &error)) << error;
    EXPECT_FALSE(ValidateSqrtOptions(o, &error));
    EXPECT_EQ(error, "Invalid configuration. " + UnsupportedSqrtOption(o));
    o.eta = 0.0;
    EXPECT_FALSE(ValidateSqrtOptions(o, &error));
    EXPECT_TRUE(Contains(error, "eta")) << error;
  }
}

// The iterative solver's preconditioners; the direct solver reads none.
TEST(OptionsValidation, PreconditionersOfTheIterativeSolver) {
  for (ceres::PreconditionerType p : {ceres::IDENTITY, ceres::JACOBI, ceres::SCHUR_JACOBI,
                                      ceres::CLUSTER_JACOBI, ceres::CLUSTER_TRIDIAGONAL}) {
    Solver::Options o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
    o.preconditioner_type = p;
    EXPECT_EQ(UnsupportedSqrtOption(o), "") << ceres::PreconditionerTypeToString(p);
  }
  Solver::Options o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
  o.preconditioner_type = ceres::SUBSET;
  EXPECT_TRUE(Contains(UnsupportedSqrtOption(o),
                       "Solver::Options::preconditioner_type = SUBSET is not supported by "
                       "SQRT_ITERATIVE_SCHUR"))
      << UnsupportedSqrtOption(o);
  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  EXPECT_EQ(UnsupportedSqrtOption(o), "");
}

// The visibility-based preconditioners are formed from the projected rows.
TEST(OptionsValidation, ClusterPreconditionersNeedProjectedRows) {
  for (ceres::PreconditionerType p : {ceres::CLUSTER_JACOBI, ceres::CLUSTER_TRIDIAGONAL}) {
    Solver::Options o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
    o.preconditioner_type = p;
    o.use_explicit_reduced_rows = true;
    const std::string message = UnsupportedSqrtOption(o);
    EXPECT_TRUE(
        Contains(message, std::string("preconditioner_type = ") + ceres::PreconditionerTypeToString(p)))
        << message;
    EXPECT_TRUE(Contains(message, "use_explicit_reduced_rows = true")) << message;
    o.preconditioner_type = ceres::SCHUR_JACOBI;
    EXPECT_EQ(UnsupportedSqrtOption(o), "");
    o.preconditioner_type = p;
    o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;  // ignores the storage option
    EXPECT_EQ(UnsupportedSqrtOption(o), "");
  }
}

TEST(OptionsValidation, CheckGradientsAndDumpsAreUnsupported) {
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    Solver::Options o = SqrtOptions(type);
    o.check_gradients = true;
    EXPECT_TRUE(
        Contains(UnsupportedSqrtOption(o), "Solver::Options::check_gradients = true is not supported by"))
        << UnsupportedSqrtOption(o);
    o = SqrtOptions(type);
    o.trust_region_minimizer_iterations_to_dump = {0};
    EXPECT_TRUE(
        Contains(UnsupportedSqrtOption(o),
                 "Solver::Options::trust_region_minimizer_iterations_to_dump = non-empty is not supported"))
        << UnsupportedSqrtOption(o);
  }
}

#if CERES_SQRTBA_CERES_2_2
TEST(OptionsValidation, Ceres22OptionsWithoutSqrtCounterpart) {
  Solver::Options o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
  o.use_mixed_precision_solves = true;
  EXPECT_TRUE(Contains(UnsupportedSqrtOption(o), "use_mixed_precision_solves = true"))
      << UnsupportedSqrtOption(o);
  o = SqrtOptions(SQRT_ITERATIVE_SCHUR);
  o.use_spse_initialization = true;
  EXPECT_TRUE(Contains(UnsupportedSqrtOption(o), "use_spse_initialization = true"))
      << UnsupportedSqrtOption(o);
}
#endif

// ---- ValidateCeresOptions ----

ceres::Solver::Options CeresOptions(ceres::LinearSolverType type) {
  ceres::Solver::Options o;
  o.linear_solver_type = type;
  return o;
}

TEST(ValidateCeresOptions, CeresIsValidComesFirst) {
  ceres::Solver::Options o = CeresOptions(ceres::SPARSE_SCHUR);
  std::string error;
  EXPECT_TRUE(ValidateCeresOptions(o, &error)) << error;
  o.num_threads = 0;
  EXPECT_FALSE(ValidateCeresOptions(o, &error));
  EXPECT_TRUE(Contains(error, "num_threads")) << error;
}

// Ceres' IsValid accepts min_lm_diagonal = 0; its trust-region strategies
// abort on it.
TEST(ValidateCeresOptions, MinLmDiagonalMustBePositiveForTrustRegion) {
  ceres::Solver::Options o = CeresOptions(ceres::DENSE_QR);
  std::string error;
  o.min_lm_diagonal = kTiny;
  EXPECT_TRUE(ValidateCeresOptions(o, &error)) << error;
  o.min_lm_diagonal = 0.0;
  EXPECT_FALSE(ValidateCeresOptions(o, &error));
  EXPECT_TRUE(Contains(error, Constraint("min_lm_diagonal", "> 0"))) << error;
  o.minimizer_type = ceres::LINE_SEARCH;
  EXPECT_TRUE(ValidateCeresOptions(o, &error)) << error;
}

TEST(ValidateCeresOptions, MixedPrecisionSparseNeedsEigenSparse) {
  for (ceres::LinearSolverType type : {ceres::SPARSE_SCHUR, ceres::SPARSE_NORMAL_CHOLESKY}) {
    ceres::Solver::Options o = CeresOptions(type);
    o.use_mixed_precision_solves = true;
    o.sparse_linear_algebra_library_type = ceres::EIGEN_SPARSE;
    std::string error;
    EXPECT_TRUE(ValidateCeresOptions(o, &error)) << error;
    o.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
    EXPECT_FALSE(ValidateCeresOptions(o, &error));
    // Ceres 2.2 refuses it itself, with its own message.
    EXPECT_TRUE(
        kCeres22 ? Contains(error, "use_mixed_precision_solves with " +
                                       std::string(ceres::LinearSolverTypeToString(type)) +
                                       " is not supported with sparse_linear_algebra_library_type = SUITE_SPARSE")
                 : Contains(error, "Solver::Options::use_mixed_precision_solves = true with linear_solver_type = " +
                                       std::string(ceres::LinearSolverTypeToString(type))))
        << error;
  }
  // Not a sparse Cholesky: accepted.
  ceres::Solver::Options o = CeresOptions(ceres::DENSE_SCHUR);
  o.use_mixed_precision_solves = true;
  o.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  std::string error;
  EXPECT_TRUE(ValidateCeresOptions(o, &error)) << error;
}

TEST(ValidateCeresOptions, CgnrPreconditioners) {
  for (ceres::PreconditionerType p : {ceres::IDENTITY, ceres::JACOBI}) {
    ceres::Solver::Options o = CeresOptions(ceres::CGNR);
    o.preconditioner_type = p;
    std::string error;
    EXPECT_TRUE(ValidateCeresOptions(o, &error)) << ceres::PreconditionerTypeToString(p) << ": " << error;
  }
  for (ceres::PreconditionerType p :
       {ceres::SCHUR_JACOBI, ceres::CLUSTER_JACOBI, ceres::CLUSTER_TRIDIAGONAL}) {
    ceres::Solver::Options o = CeresOptions(ceres::CGNR);
    o.preconditioner_type = p;
    std::string error;
    EXPECT_FALSE(ValidateCeresOptions(o, &error)) << ceres::PreconditionerTypeToString(p);
    EXPECT_TRUE(kCeres22 ? Contains(error, std::string("Can't use CGNR with preconditioner_type = ") +
                                               ceres::PreconditionerTypeToString(p))
                         : Contains(error, std::string("Solver::Options::preconditioner_type = ") +
                                               ceres::PreconditionerTypeToString(p) +
                                               " cannot be used with linear_solver_type = CGNR"))
        << error;
  }
}

TEST(ValidateCeresOptions, IterativeSchurWithSubset) {
  // SUBSET needs residual blocks (Ceres' own check): a real one.
  struct Identity : ceres::SizedCostFunction<1, 1> {
    bool Evaluate(double const* const* p, double* r, double** j) const override {
      r[0] = p[0][0];
      if (j != nullptr && j[0] != nullptr) j[0][0] = 1.0;
      return true;
    }
  };
  double x = 1.0;
  ceres::Problem problem;
  const ceres::ResidualBlockId id = problem.AddResidualBlock(new Identity, nullptr, &x);
  ceres::Solver::Options o = CeresOptions(ceres::ITERATIVE_SCHUR);
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  std::string error;
  EXPECT_TRUE(ValidateCeresOptions(o, &error)) << error;
  o.preconditioner_type = ceres::SUBSET;
  o.residual_blocks_for_subset_preconditioner.insert(id);
  EXPECT_FALSE(ValidateCeresOptions(o, &error));
  EXPECT_TRUE(kCeres22 ? Contains(error, "Can't use SUBSET preconditioner with ITERATIVE_SCHUR")
                       : Contains(error,
                                  "Solver::Options::preconditioner_type = SUBSET cannot be used with "
                                  "linear_solver_type = ITERATIVE_SCHUR"))
      << error;
  // CGNR takes SUBSET.
  o.linear_solver_type = ceres::CGNR;
  EXPECT_TRUE(ValidateCeresOptions(o, &error)) << error;
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
