// Which solver a call of ceres_sqrtba::Solve runs, decided from the options
// alone before anything is read from the problem:
//
//   CERES_LINEAR_SOLVER            ceres::Solve, the options as they are;
//   minimizer_type = LINE_SEARCH   ceres::Solve whatever sqrt_linear_solver_type
//                                  says: a line search solves no linear system;
//   SQRT_ITERATIVE_SCHUR,          the square-root solve (which still sends a
//   SQRT_SPARSE_SCHUR              problem without landmarks to ceres::Solve,
//                                  and refuses options it does not implement);
//   SQRT_AUTOMATIC                 the square-root counterpart of
//                                  linear_solver_type, the one-line change for
//                                  a pipeline that picks Ceres' solver by size:
//       DENSE_SCHUR     -> SQRT_SPARSE_SCHUR, dense factorization of the
//                          reduced camera matrix (as Ceres' dense Cholesky of
//                          its Schur complement), unless the options name
//                          another reduced_camera_factorization;
//       SPARSE_SCHUR    -> SQRT_SPARSE_SCHUR;
//       ITERATIVE_SCHUR -> SQRT_ITERATIVE_SCHUR;
//       anything else   -> ceres::Solve;
//     and ceres::Solve too when the counterpart does not implement an option
//     (solve/options_validation.h: UnsupportedSqrtOption), so that nothing
//     Ceres accepts is refused.
//
// A square-root request that goes to ceres::Solve keeps the user's options
// unchanged; `reason` says why, and the summary's message ends with it.
#ifndef CERES_SQRTBA_INTERNAL_SOLVE_SOLVER_CHOICE_H_
#define CERES_SQRTBA_INTERNAL_SOLVE_SOLVER_CHOICE_H_

#include <string>

#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace internal {

struct SolverChoice {
  // CERES_LINEAR_SOLVER: ceres::Solve. Never SQRT_AUTOMATIC; an out-of-range
  // value is kept for the square-root solve's validation to name.
  SqrtLinearSolverType type = CERES_LINEAR_SOLVER;
  ReducedCameraFactorization factorization = AUTOMATIC_FACTORIZATION;
  // Why a square-root request is passed to ceres::Solve; empty otherwise.
  std::string reason;
};

SolverChoice ChooseSolver(const Solver::Options& options);

// The options with the choice written in: what the square-root solve reads.
Solver::Options WithChoice(const Solver::Options& options, const SolverChoice& choice);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVE_SOLVER_CHOICE_H_
