// The linear solver of one inner-iteration sub-solve (coordinate descent,
// coordinate_descent_minimizer.h): a small dense Jacobian J (rows x t,
// row-major) and residuals r of one parameter block's residual blocks, and
// the damped least-squares problem of linear_solver.h,
//
//   y = argmin |J y - r|^2 + |D y|^2,
//
// solved as Ceres' DENSE_QR solves it: t Householder reflections of the
// stacked matrix A = [J; D] ((rows + t) x t, as Eigen's HouseholderQR), then
// R y = (Q^T [r; 0])[0, t) by back substitution. A zero column norm or a zero
// diagonal of R (a singular A: D = 0 and J rank deficient) is a kFailure,
// which the trust-region loop treats as an invalid step.
//
// The sub-solve writes each Jacobian and its residuals straight into the
// arrays it binds (Bind), not through a JacobianWriter (writer() is null),
// and scales each new Jacobian itself with ScaleColumns. Besides |J y|^2,
// Solve leaves r^T J y (ResidualDotJy), from which the sub-solve forms its
// model cost change -(J step)^T (r + J step / 2) = r^T J y - |J y|^2 / 2
// (step = -y), the sum Ceres' minimizer takes on its explicit Jacobian.
//
// Sized once for the largest sub-problem (rows, t); Bind and Solve allocate
// nothing.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_DENSE_QR_SOLVER_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_DENSE_QR_SOLVER_H_

#include <vector>

#include "ceres_sqrtba/internal/linear/linear_solver.h"

namespace ceres_sqrtba {
namespace internal {

class DenseQrSolver final : public LinearSolver {
 public:
  DenseQrSolver(int max_rows, int max_columns);

  // The sub-problem from here on: rows x t Jacobian (row-major) and rows
  // residuals, owned by the caller, rows and t at most the constructor's.
  void Bind(int rows, int t, double* jacobian, const double* residuals);

  JacobianWriter* writer() override { return nullptr; }
  void SquaredColumnNorms(double* norms) override;
  // Scales the columns of the bound Jacobian (the one there now).
  void ScaleColumns(const double* scale) override;
  LinearSolverSummary Solve(const double* d, double eta, double* y, double* jy_squared_norm) override;

  // r^T J y of the last Solve.
  double ResidualDotJy() const { return residual_dot_jy_; }

 private:
  int rows_ = 0, t_ = 0;
  double* jacobian_ = nullptr;
  const double* residuals_ = nullptr;
  std::vector<double> a_;  // (rows + t) x t, column-major
  std::vector<double> b_;  // rows + t
  double residual_dot_jy_ = 0.0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_DENSE_QR_SOLVER_H_
