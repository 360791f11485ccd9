// What differs between the Ceres versions ceres_sqrtba builds against (2.1 and
// 2.2), in one place. Everything else in the library follows both versions
// alike; docs/solver.md has the table of differences and what is done about
// each.
#ifndef CERES_SQRTBA_INTERNAL_COMMON_CERES_VERSION_H_
#define CERES_SQRTBA_INTERNAL_COMMON_CERES_VERSION_H_

#include "ceres/ceres.h"
#include "ceres/version.h"

#if CERES_VERSION_MAJOR > 2 || (CERES_VERSION_MAJOR == 2 && CERES_VERSION_MINOR >= 2)
#define CERES_SQRTBA_CERES_2_2 1
#else
#define CERES_SQRTBA_CERES_2_2 0
#endif

namespace ceres_sqrtba {
namespace internal {

constexpr bool kCeres22 = CERES_SQRTBA_CERES_2_2 != 0;

// The summary message when the first evaluation fails: 2.2 prefixes Ceres'
// evaluation failure with "Initial".
constexpr const char* kInitialEvaluationFailed =
    kCeres22 ? "Initial residual and Jacobian evaluation failed." : "Residual and Jacobian evaluation failed.";

// 2.2 fills IterationSummary::step_norm only once a step has been accepted
// (its parameter tolerance test, which computes it, is skipped before); 2.1
// fills it on every valid step.
constexpr bool kStepNormOnlyAfterFirstSuccess = kCeres22;

// Solver::Options::max_linear_solver_iterations may be 0 in 2.2 (CG still
// runs one iteration); 2.1 requires at least 1.
constexpr int kMinMaxLinearSolverIterations = kCeres22 ? 0 : 1;

// The largest trust-region radius of an inner iteration's sub-solve:
// TrustRegionStrategy's own default (the sub-solves do not read
// Solver::Options), 1e32 in 2.2's source; the linked 2.1 caps its
// sub-solves at 1e16 (measured: a point that runs off to infinity,
// coordinate_descent_minimizer_test.cc).
constexpr double kInnerIterationMaxRadius = kCeres22 ? 1e32 : 1e16;

// The problem's EvaluationCallback. 2.2 has Problem::options(); 2.1 has no
// way to read it, so *known is false there and the caller must assume a
// callback may exist.
inline ceres::EvaluationCallback* ProblemEvaluationCallback(const ceres::Problem& problem, bool* known) {
#if CERES_SQRTBA_CERES_2_2
  *known = true;
  return problem.options().evaluation_callback;
#else
  (void)problem;
  *known = false;
  return nullptr;
#endif
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_CERES_VERSION_H_
