#include "ceres_sqrtba/internal/solve/options_validation.h"

#include <sstream>

#include "ceres_sqrtba/internal/common/ceres_version.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// "Invalid configuration. Solver::Options::eta = 0. Violated constraint:
// Solver::Options::eta > 0", as Ceres words it.
template <typename T, typename U>
std::string Violation(const char* name, const T& value, const char* op, const U& bound) {
  std::ostringstream ss;
  ss << "Invalid configuration. Solver::Options::" << name << " = " << value
     << ". Violated constraint: Solver::Options::" << name << " " << op << " " << bound;
  return ss.str();
}

// "Solver::Options::<name> = <value> is not supported by <solver>: <why>".
std::string Unsupported(const Solver::Options& options, const char* name, const std::string& value,
                        const char* why) {
  std::ostringstream ss;
  ss << "Solver::Options::" << name << " = " << value << " is not supported by "
     << SqrtLinearSolverTypeToString(options.sqrt_linear_solver_type) << ": " << why;
  return ss.str();
}

// Two options out of order, word for word as Ceres (2.1 and 2.2) says it,
// its missing space before the operator included: "Invalid configuration.
// Solver::Options::min_lm_diagonal = 1e+40. Solver::Options::max_lm_diagonal
// = 1e+32. Violated constraint: Solver::Options::min_lm_diagonal<=
// Solver::Options::max_lm_diagonal."
template <typename T, typename U>
std::string PairViolation(const char* name, const T& value, const char* op, const char* other, const U& other_value) {
  std::ostringstream ss;
  ss << "Invalid configuration. Solver::Options::" << name << " = " << value << ". Solver::Options::" << other
     << " = " << other_value << ". Violated constraint: Solver::Options::" << name << op << " Solver::Options::"
     << other << ".";
  return ss.str();
}

}  // namespace

#define SQRTBA_CHECK_OPTION(x, op, y)                         \
  if (!(options.x op(y))) {                                   \
    *error = Violation(#x, options.x, #op, #y);               \
    return false;                                             \
  }
#define SQRTBA_CHECK_OPTION_PAIR(x, op, y)                    \
  if (!(options.x op options.y)) {                            \
    *error = PairViolation(#x, options.x, #op, #y, options.y); \
    return false;                                             \
  }

bool ValidateCeresOptions(const ceres::Solver::Options& options, std::string* error) {
  if (!options.ceres::Solver::Options::IsValid(error)) return false;
  if (options.minimizer_type != ceres::TRUST_REGION) return true;
  const ceres::LinearSolverType solver = options.linear_solver_type;
  const ceres::PreconditionerType preconditioner = options.preconditioner_type;
  std::ostringstream ss;
  ss << "Invalid configuration. ";
  // IsValid accepts 0 (>= 0), but the trust-region strategies CHECK > 0 (2.1
  // and 2.2).
  if (!(options.min_lm_diagonal > 0.0)) {
    *error = Violation("min_lm_diagonal", options.min_lm_diagonal, ">", 0.0) +
             " (Ceres' Levenberg-Marquardt and dogleg strategies would abort)";
    return false;
  }
#if CERES_SQRTBA_CERES_2_2
#ifdef CERES_NO_CUDA
  // 2.2 picks a CUDA Jacobian writer for the Schur solvers whenever the
  // sparse library is CUDA_SPARSE, and crashes when CUDA is not built in.
  if (options.sparse_linear_algebra_library_type == ceres::CUDA_SPARSE &&
      (solver == ceres::DENSE_SCHUR || solver == ceres::ITERATIVE_SCHUR || solver == ceres::SPARSE_SCHUR ||
       solver == ceres::CGNR || solver == ceres::SPARSE_NORMAL_CHOLESKY)) {
    ss << "Solver::Options::sparse_linear_algebra_library_type = CUDA_SPARSE with linear_solver_type = "
       << ceres::LinearSolverTypeToString(solver) << ": this Ceres was built without CUDA and would crash.";
    *error = ss.str();
    return false;
  }
#endif
#endif
  if (options.use_mixed_precision_solves &&
      (solver == ceres::SPARSE_SCHUR || solver == ceres::SPARSE_NORMAL_CHOLESKY) &&
      options.sparse_linear_algebra_library_type != ceres::EIGEN_SPARSE) {
    ss << "Solver::Options::use_mixed_precision_solves = true with linear_solver_type = "
       << ceres::LinearSolverTypeToString(solver) << " needs sparse_linear_algebra_library_type = "
       << "EIGEN_SPARSE: Ceres 2.1 has no single precision sparse Cholesky for "
       << ceres::SparseLinearAlgebraLibraryTypeToString(options.sparse_linear_algebra_library_type)
       << " and would abort.";
    *error = ss.str();
    return false;
  }
  if (solver == ceres::CGNR && preconditioner != ceres::IDENTITY && preconditioner != ceres::JACOBI &&
      preconditioner != ceres::SUBSET) {
    ss << "Solver::Options::preconditioner_type = " << ceres::PreconditionerTypeToString(preconditioner)
       << " cannot be used with linear_solver_type = CGNR: Ceres 2.1 accepts IDENTITY, JACOBI and SUBSET "
       << "there and would abort.";
    *error = ss.str();
    return false;
  }
  if (solver == ceres::ITERATIVE_SCHUR && preconditioner == ceres::SUBSET) {
    ss << "Solver::Options::preconditioner_type = SUBSET cannot be used with linear_solver_type = "
       << "ITERATIVE_SCHUR: Ceres 2.1 accepts IDENTITY, JACOBI, SCHUR_JACOBI, CLUSTER_JACOBI and "
       << "CLUSTER_TRIDIAGONAL there and would abort.";
    *error = ss.str();
    return false;
  }
  return true;
}

bool ValidateSqrtOptionValues(const Solver::Options& options, std::string* error) {
  if (options.sqrt_linear_solver_type != SQRT_ITERATIVE_SCHUR &&
      options.sqrt_linear_solver_type != SQRT_SPARSE_SCHUR) {
    *error = Violation("sqrt_linear_solver_type", static_cast<int>(options.sqrt_linear_solver_type),
                       "is one of",
                       "CERES_LINEAR_SOLVER, SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR, SQRT_AUTOMATIC");
    return false;
  }
  // The forcing sequence and the iteration limits are checked for both
  // square-root solvers, as Ceres checks them for every linear solver.
  if (options.precision != DOUBLE_PRECISION && options.precision != SINGLE_PRECISION) {
    *error = Violation("precision", static_cast<int>(options.precision), "is one of",
                       "DOUBLE_PRECISION, SINGLE_PRECISION");
    return false;
  }
  if (options.reduced_camera_factorization != AUTOMATIC_FACTORIZATION &&
      options.reduced_camera_factorization != DENSE_FACTORIZATION &&
      options.reduced_camera_factorization != SPARSE_FACTORIZATION) {
    *error = Violation("reduced_camera_factorization", static_cast<int>(options.reduced_camera_factorization),
                       "is one of", "AUTOMATIC_FACTORIZATION, DENSE_FACTORIZATION, SPARSE_FACTORIZATION");
    return false;
  }
  SQRTBA_CHECK_OPTION(max_num_iterations, >=, 0);
  SQRTBA_CHECK_OPTION(max_solver_time_in_seconds, >=, 0.0);
  SQRTBA_CHECK_OPTION(function_tolerance, >=, 0.0);
  SQRTBA_CHECK_OPTION(gradient_tolerance, >=, 0.0);
  SQRTBA_CHECK_OPTION(parameter_tolerance, >=, 0.0);
  SQRTBA_CHECK_OPTION(num_threads, >=, 1);
  SQRTBA_CHECK_OPTION(initial_trust_region_radius, >, 0.0);
  SQRTBA_CHECK_OPTION(min_trust_region_radius, >, 0.0);
  SQRTBA_CHECK_OPTION(max_trust_region_radius, >, 0.0);
  SQRTBA_CHECK_OPTION_PAIR(min_trust_region_radius, <=, max_trust_region_radius);
  SQRTBA_CHECK_OPTION_PAIR(min_trust_region_radius, <=, initial_trust_region_radius);
  SQRTBA_CHECK_OPTION_PAIR(initial_trust_region_radius, <=, max_trust_region_radius);
  SQRTBA_CHECK_OPTION(min_relative_decrease, >=, 0.0);
  // A strictly positive LM diagonal keeps every landmark block full rank,
  // including landmarks seen by a single camera.
  SQRTBA_CHECK_OPTION(min_lm_diagonal, >, 0.0);
  SQRTBA_CHECK_OPTION(max_lm_diagonal, >, 0.0);
  SQRTBA_CHECK_OPTION_PAIR(min_lm_diagonal, <=, max_lm_diagonal);
  SQRTBA_CHECK_OPTION(max_num_consecutive_invalid_steps, >=, 0);
  SQRTBA_CHECK_OPTION(eta, >, 0.0);
  SQRTBA_CHECK_OPTION(min_linear_solver_iterations, >=, 0);
  if (options.max_linear_solver_iterations < kMinMaxLinearSolverIterations) {
    *error = Violation("max_linear_solver_iterations", options.max_linear_solver_iterations, ">=",
                                    kMinMaxLinearSolverIterations);
    return false;
  }
  SQRTBA_CHECK_OPTION_PAIR(min_linear_solver_iterations, <=, max_linear_solver_iterations);
  SQRTBA_CHECK_OPTION(memory_limit_in_bytes, >=, 0);
  if (options.use_inner_iterations) {
    SQRTBA_CHECK_OPTION(inner_iteration_tolerance, >=, 0.0);
  }
  if (options.use_nonmonotonic_steps) {
    SQRTBA_CHECK_OPTION(max_consecutive_nonmonotonic_steps, >, 0);
  }
  // Ceres checks the line search's options whatever the minimizer, as a
  // bounded problem's trust-region steps are followed by a projected line
  // search; its limits come from these (a contraction of 1 and no iteration
  // limit would never end it).
  SQRTBA_CHECK_OPTION(max_lbfgs_rank, >, 0);
  SQRTBA_CHECK_OPTION(min_line_search_step_size, >, 0.0);
  SQRTBA_CHECK_OPTION(max_line_search_step_contraction, >, 0.0);
  SQRTBA_CHECK_OPTION(max_line_search_step_contraction, <, 1.0);
  SQRTBA_CHECK_OPTION_PAIR(max_line_search_step_contraction, <, min_line_search_step_contraction);
  SQRTBA_CHECK_OPTION(min_line_search_step_contraction, <=, 1.0);
  SQRTBA_CHECK_OPTION(max_num_line_search_step_size_iterations, >=, 0);
  SQRTBA_CHECK_OPTION(line_search_sufficient_function_decrease, >, 0.0);
  SQRTBA_CHECK_OPTION_PAIR(line_search_sufficient_function_decrease, <, line_search_sufficient_curvature_decrease);
  SQRTBA_CHECK_OPTION(line_search_sufficient_curvature_decrease, <, 1.0);
  SQRTBA_CHECK_OPTION(max_line_search_step_expansion, >, 1.0);
  if ((options.line_search_direction_type == ceres::BFGS || options.line_search_direction_type == ceres::LBFGS) &&
      options.line_search_type != ceres::WOLFE) {
    *error = std::string("Invalid configuration: Solver::Options::line_search_type = ") +
             ceres::LineSearchTypeToString(options.line_search_type) +
             ". When using (L)BFGS, Solver::Options::line_search_type must be set to WOLFE.";
    return false;
  }
  for (size_t i = 0; i < options.callbacks.size(); ++i) {
    if (options.callbacks[i] == nullptr) {
      std::ostringstream ss;
      ss << "Invalid configuration. Solver::Options::callbacks[" << i << "] is null.";
      *error = ss.str();
      return false;
    }
  }
  return true;
}

std::string UnsupportedSqrtOption(const Solver::Options& options) {
  // The preconditioner means nothing to the direct SQRT_SPARSE_SCHUR.
  const bool iterative = options.sqrt_linear_solver_type == SQRT_ITERATIVE_SCHUR;
  // (minimizer_type = LINE_SEARCH never gets here: solve/solver_choice.h
  // sends it to ceres::Solve.)
  if (options.trust_region_strategy_type != ceres::LEVENBERG_MARQUARDT) {
    return Unsupported(options, "trust_region_strategy_type",
                       ceres::TrustRegionStrategyTypeToString(options.trust_region_strategy_type),
                       "only LEVENBERG_MARQUARDT is implemented.");
  }
  const ceres::PreconditionerType preconditioner = options.preconditioner_type;
  const bool clusters = preconditioner == ceres::CLUSTER_JACOBI || preconditioner == ceres::CLUSTER_TRIDIAGONAL;
  if (iterative && preconditioner != ceres::IDENTITY && preconditioner != ceres::JACOBI &&
      preconditioner != ceres::SCHUR_JACOBI && !clusters) {
    return Unsupported(options, "preconditioner_type", ceres::PreconditionerTypeToString(preconditioner),
                       "use SCHUR_JACOBI, JACOBI, IDENTITY, CLUSTER_JACOBI or CLUSTER_TRIDIAGONAL.");
  }
  if (iterative && clusters && options.use_explicit_reduced_rows) {
    return Unsupported(options, "preconditioner_type", ceres::PreconditionerTypeToString(preconditioner),
                       "with use_explicit_reduced_rows = true use SCHUR_JACOBI, JACOBI or IDENTITY (the "
                       "visibility-based preconditioners are formed from the projected rows).");
  }
#if CERES_SQRTBA_CERES_2_2
  // Ceres 2.2 refuses mixed precision with ITERATIVE_SCHUR; the square-root
  // solvers have their own switch.
  if (options.use_mixed_precision_solves) {
    return Unsupported(options, "use_mixed_precision_solves", "true",
                       "set Solver::Options::precision = SINGLE_PRECISION instead.");
  }
  if (options.use_spse_initialization) {
    return Unsupported(options, "use_spse_initialization", "true",
                       "PCG starts from zero, as with SCHUR_JACOBI in Ceres.");
  }
#endif
  if (options.check_gradients) {
    return Unsupported(options, "check_gradients", "true",
                       "check gradients with ceres::Solve (or ceres::GradientChecker) first.");
  }
  if (!options.trust_region_minimizer_iterations_to_dump.empty()) {
    return Unsupported(options, "trust_region_minimizer_iterations_to_dump", "non-empty",
                       "the square-root solver has no sparse Jacobian to dump.");
  }
  return "";
}

bool ValidateSqrtOptions(const Solver::Options& options, std::string* error) {
  if (!ValidateSqrtOptionValues(options, error)) return false;
  const std::string unsupported = UnsupportedSqrtOption(options);
  if (unsupported.empty()) return true;
  *error = "Invalid configuration. " + unsupported;
  return false;
}

#undef SQRTBA_CHECK_OPTION
#undef SQRTBA_CHECK_OPTION_PAIR

}  // namespace internal
}  // namespace ceres_sqrtba
