// The solves that ceres::Solve does for ceres_sqrtba::Solve:
//
// - sqrt_linear_solver_type == CERES_LINEAR_SOLVER, or a square-root request
//   that solver_choice.h sends to Ceres (LINE_SEARCH, SQRT_AUTOMATIC with a
//   linear solver or an option that has no square-root counterpart): the
//   user's options as they are, after the checks that catch what Ceres
//   accepts in IsValid but aborts on later (solve/options_validation.h) and
//   Ceres' refusals of inner iterations, which crash its Schur solvers (an
//   evaluation callback, an inner_iteration_ordering that is not made of
//   independent sets: refused first, with Ceres' messages); for a square-root
//   request the message ends with why Ceres solved it;
// - a problem with nothing to eliminate (every variable block is a camera, or
//   nothing is variable): Ceres' Schur solvers take such problems too (they
//   switch to CGNR or SPARSE_NORMAL_CHOLESKY, or report CONVERGENCE at once),
//   so a pipeline that meets one (a frame without points, a fully fixed
//   problem) keeps working: it goes to ceres::Solve with the Schur solver that
//   corresponds to the square-root one (ITERATIVE_SCHUR; SPARSE_SCHUR, or
//   DENSE_SCHUR for the dense factorization), in double precision, and the
//   message says so.
#ifndef CERES_SQRTBA_INTERNAL_SOLVE_CERES_PASS_THROUGH_H_
#define CERES_SQRTBA_INTERNAL_SOLVE_CERES_PASS_THROUGH_H_

#include <string>

#include "ceres/ceres.h"
#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace internal {

// reason: why a square-root request went to Ceres (empty for
// CERES_LINEAR_SOLVER).
void SolveWithCeres(const Solver::Options& options, const std::string& reason, ceres::Problem* problem,
                    Solver::Summary* summary);

void SolveWithoutLandmarks(const Solver::Options& options, ceres::Problem* problem,
                           Solver::Summary* summary);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVE_CERES_PASS_THROUGH_H_
