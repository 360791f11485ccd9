// The public entry points: the memory a solve may take, option checks, and
// Solve, which dispatches to ceres::Solve or to the square-root solve
// (internal/solve/solver_choice.h says which, square_root_solve.h how).
#include "ceres_sqrtba/solver.h"

#include <string>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/solve/ceres_pass_through.h"
#include "ceres_sqrtba/internal/solve/options_validation.h"
#include "ceres_sqrtba/internal/solve/solver_choice.h"
#include "ceres_sqrtba/internal/solve/square_root_solve.h"
#include "glog/logging.h"

namespace ceres_sqrtba {

int64_t AvailableMemoryInBytes() { return internal::AvailableMemoryBytes(); }

bool Solver::Options::IsValid(std::string* error) const {
  const internal::SolverChoice choice = internal::ChooseSolver(*this);
  if (choice.type == CERES_LINEAR_SOLVER) return internal::ValidateCeresOptions(*this, error);
  return internal::ValidateSqrtOptions(internal::WithChoice(*this, choice), error);
}

void Solve(const Solver::Options& options, ceres::Problem* problem, Solver::Summary* summary) {
  if (summary == nullptr) {
    LOG(ERROR) << "ceres_sqrtba::Solve was called with a null summary.";
    return;
  }
  const internal::SolverChoice choice = internal::ChooseSolver(options);
  if (choice.type == CERES_LINEAR_SOLVER) return internal::SolveWithCeres(options, choice.reason, problem, summary);
  if (options.sqrt_linear_solver_type != SQRT_AUTOMATIC) return internal::SolveSquareRoot(options, problem, summary);
  internal::SolveSquareRoot(internal::WithChoice(options, choice), problem, summary);
  summary->sqrt_linear_solver_type_given = SQRT_AUTOMATIC;
  summary->reduced_camera_factorization_given = options.reduced_camera_factorization;
}

void Solve(const Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary) {
  if (summary == nullptr) {
    LOG(ERROR) << "ceres_sqrtba::Solve was called with a null summary.";
    return;
  }
  Solver::Summary full;
  Solve(options, problem, &full);
  *summary = full;
}

}  // namespace ceres_sqrtba
