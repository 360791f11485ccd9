#include "ceres_sqrtba/internal/solve/solver_choice.h"

#include "ceres_sqrtba/internal/solve/options_validation.h"

namespace ceres_sqrtba {
namespace internal {

SolverChoice ChooseSolver(const Solver::Options& options) {
  SolverChoice choice;
  choice.type = options.sqrt_linear_solver_type;
  choice.factorization = options.reduced_camera_factorization;
  if (choice.type == CERES_LINEAR_SOLVER) return choice;
  const bool known = choice.type == SQRT_ITERATIVE_SCHUR || choice.type == SQRT_SPARSE_SCHUR ||
                     choice.type == SQRT_AUTOMATIC;
  if (!known) return choice;
  if (options.minimizer_type == ceres::LINE_SEARCH) {
    choice.type = CERES_LINEAR_SOLVER;
    choice.reason = "minimizer_type = LINE_SEARCH solves no linear system";
    return choice;
  }
  if (choice.type != SQRT_AUTOMATIC) return choice;
  switch (options.linear_solver_type) {
    case ceres::DENSE_SCHUR:
      choice.type = SQRT_SPARSE_SCHUR;
      if (choice.factorization == AUTOMATIC_FACTORIZATION) choice.factorization = DENSE_FACTORIZATION;
      break;
    case ceres::SPARSE_SCHUR:
      choice.type = SQRT_SPARSE_SCHUR;
      break;
    case ceres::ITERATIVE_SCHUR:
      choice.type = SQRT_ITERATIVE_SCHUR;
      break;
    default:
      choice.type = CERES_LINEAR_SOLVER;
      choice.reason = std::string("SQRT_AUTOMATIC: linear_solver_type = ") +
                      ceres::LinearSolverTypeToString(options.linear_solver_type) +
                      " has no square-root counterpart";
      return choice;
  }
  const std::string unsupported = UnsupportedSqrtOption(WithChoice(options, choice));
  if (!unsupported.empty()) {
    choice.type = CERES_LINEAR_SOLVER;
    choice.factorization = options.reduced_camera_factorization;
    choice.reason = "SQRT_AUTOMATIC: " + unsupported;
  }
  return choice;
}

Solver::Options WithChoice(const Solver::Options& options, const SolverChoice& choice) {
  Solver::Options resolved = options;
  resolved.sqrt_linear_solver_type = choice.type;
  resolved.reduced_camera_factorization = choice.factorization;
  return resolved;
}

}  // namespace internal
}  // namespace ceres_sqrtba
