// Up-front validation of the options the square-root solver uses, with
// messages in Ceres' style that name the offending option. Options the solver
// cannot honour are rejected rather than silently ignored.
#ifndef CERES_SQRTBA_INTERNAL_SOLVE_OPTIONS_VALIDATION_H_
#define CERES_SQRTBA_INTERNAL_SOLVE_OPTIONS_VALIDATION_H_

#include <string>

#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace internal {

// The options of a square-root solve (sqrt_linear_solver_type is
// SQRT_ITERATIVE_SCHUR or SQRT_SPARSE_SCHUR, SQRT_AUTOMATIC already resolved:
// solve/solver_choice.h), in two parts:
//   ValidateSqrtOptionValues: values out of range or inconsistent, judged as
//     Ceres' IsValid judges them (and the options ceres_sqrtba adds);
//   UnsupportedSqrtOption: valid options the square-root solvers do not
//     implement ("" when there is none). A problem without landmarks goes to
//     ceres::Solve before this is asked, and SQRT_AUTOMATIC sends a problem
//     with such an option to ceres::Solve instead of refusing it.
// ValidateSqrtOptions is both (Solver::Options::IsValid).
bool ValidateSqrtOptionValues(const Solver::Options& options, std::string* error);
std::string UnsupportedSqrtOption(const Solver::Options& options);
bool ValidateSqrtOptions(const Solver::Options& options, std::string* error);

// CERES_LINEAR_SOLVER: ceres::Solver::Options::IsValid, then the combinations
// that Ceres 2.1 accepts there but aborts on later (a LOG(FATAL) inside
// ceres::Solve): mixed precision solves with a sparse Cholesky other than
// EIGEN_SPARSE, CGNR with a Schur-type preconditioner, ITERATIVE_SCHUR with
// SUBSET. A user of ceres_sqrtba::Solve gets a FAILURE with a message instead.
bool ValidateCeresOptions(const ceres::Solver::Options& options, std::string* error);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVE_OPTIONS_VALIDATION_H_
