// The Cholesky factorization S = L L^T of the damped reduced camera matrix
// (reduced_camera_matrix.h) and the solve S y_p = b with it: the last step
// of SQRT_SPARSE_SCHUR before back substitution. Two implementations, chosen
// by the size of the camera system (Solver::Options::
// reduced_camera_factorization; the choice is the factory's):
//
//   DenseCameraCholesky   (dense_cholesky.h)  Eigen's blocked LLT of S copied
//                          into a dense matrix: small systems, as Ceres'
//                          DENSE_SCHUR;
//   SparseCameraCholesky  (sparse_cholesky.h) CHOLMOD's supernodal LL^T on
//                          the block-sparse pattern, as Ceres' SPARSE_SCHUR.
//
// Both read S as its upper triangle in CSC form (reduced_camera_pattern.h),
// in double, and say how a factorization ended as Ceres' linear solvers do:
//   kFailure     S is not numerically positive definite (a truly rank
//                deficient camera system, or rounding at a huge trust-region
//                radius): the step fails and the radius shrinks, as when
//                Ceres' Cholesky reports "not positive definite";
//   kFatalError  anything else (out of memory in CHOLMOD, ...), with the
//                library's message: the solve ends.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_CHOLESKY_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_CHOLESKY_H_

#include <string>

#include "ceres_sqrtba/internal/linear/linear_solver_summary.h"

namespace ceres_sqrtba {
namespace internal {

class CameraCholesky {
 public:
  virtual ~CameraCholesky() = default;
  // Factorizes S given by the values of its upper-triangle pattern.
  virtual LinearSolverSummary Factorize(const double* values) = 0;
  // x = S^-1 b with the last successful factorization (b, x: n values; may
  // alias).
  virtual LinearSolverSummary Solve(const double* b, double* x) = 0;
  // One line for the log: what was factorized and how large.
  virtual std::string Statistics() const = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_CHOLESKY_H_
