// Preconditioned conjugate gradients with Ceres' stopping rules
// (ConjugateGradientsSolver, as used by ITERATIVE_SCHUR):
//
// - start from x = 0; stop at once when |b| = 0;
// - the Nash-Sofer quadratic-model test: with Q_i = -x_i^T (b + r_i) (twice the
//   model value), stop with success when i (Q_i - Q_{i-1}) / Q_i < eta and
//   i >= min_num_iterations (truncated Newton: the step only needs to be as
//   good as the model is trusted);
// - the residual test |r| <= r_tolerance |b| (disabled by the trust-region
//   loop, as Ceres does, with a negative tolerance);
// - max_num_iterations ends with kNoConvergence (the step is still used);
// - rho = r^T z or beta equal to 0 or infinite, or alpha infinite, is a
//   numerical failure; p^T A p <= 0 means the matrix looks indefinite and ends
//   with kNoConvergence;
// - the residual is recomputed as b - A x every 10 iterations so that the
//   recurrence r -= alpha q does not drift.
//
// Vectors are Scalar (float or double); inner products are accumulated in
// double so that single precision only affects the matrix products.
#ifndef CERES_SQRTBA_INTERNAL_CAMERAS_PCG_H_
#define CERES_SQRTBA_INTERNAL_CAMERAS_PCG_H_

#include <Eigen/Core>

#include "ceres_sqrtba/internal/cameras/linear_operator.h"
#include "ceres_sqrtba/internal/linear/linear_solver_summary.h"

namespace ceres_sqrtba {
namespace internal {

struct PcgOptions {
  int min_num_iterations = 0;
  int max_num_iterations = 500;
  double q_tolerance = 0.1;   // eta
  double r_tolerance = -1.0;  // disabled
};

template <typename Scalar>
class Pcg {
 public:
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  explicit Pcg(int n) : r_(n), z_(n), p_(n), q_(n) {}

  // Solves A x = b; preconditioner may be null (identity). x is overwritten.
  LinearSolverSummary Solve(LinearOperator<Scalar>* a,
                            LinearOperator<Scalar>* preconditioner,
                            const Scalar* b, Scalar* x, const PcgOptions& options);

 private:
  Vector r_, z_, p_, q_;
};

extern template class Pcg<float>;
extern template class Pcg<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERAS_PCG_H_
