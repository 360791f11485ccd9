// Robust loss functions, applied as Ceres applies them.
//
// Ceres minimizes 1/2 sum rho(|r|^2). To give Gauss-Newton/LM a model whose
// gradient and curvature match rho, each residual block's residual r and
// Jacobian J are replaced by corrected ones (Triggs et al., "Bundle Adjustment
// - A Modern Synthesis", section 6.8):
//
//   s = |r|^2,  alpha = 1 - sqrt(1 + 2 s rho''/rho')      (rho'' > 0, s > 0)
//   r~ = sqrt(rho') / (1 - alpha) * r
//   J~ = sqrt(rho') * (I - alpha / s * r r^T) * J
//
// so that J~^T r~ = rho' J^T r. Where s = 0 or rho'' <= 0 (the outlier region
// of most robust losses) alpha is taken as 0, a first-order correction that
// keeps the model quadratic; Ceres found the full correction slows
// convergence there. The Jacobian is corrected with the uncorrected residual.
#ifndef CERES_SQRTBA_INTERNAL_EVALUATION_LOSS_CORRECTION_H_
#define CERES_SQRTBA_INTERNAL_EVALUATION_LOSS_CORRECTION_H_

#include <cmath>

namespace ceres_sqrtba {
namespace internal {

class LossCorrection {
 public:
  // Whether the correction exists for rho = {rho, rho', rho''} at s: it
  // scales by sqrt(rho'), so rho' must not be negative, and where the
  // second-order term is used (s > 0, rho'' > 0) it divides by rho'. A loss
  // with rho' = 0 and rho'' <= 0 (Tukey's, far out) is fine: the block then
  // contributes nothing to the step. Ceres aborts on the others; the
  // evaluator reports them as a failed evaluation instead.
  static bool IsDefined(double squared_norm, const double rho[3]) {
    if (!std::isfinite(rho[1]) || !std::isfinite(rho[2]) || !(rho[1] >= 0.0)) return false;
    return rho[1] > 0.0 || squared_norm == 0.0 || rho[2] <= 0.0;
  }

  // rho = {rho(s), rho'(s), rho''(s)} at s = squared_norm.
  LossCorrection(double squared_norm, const double rho[3]) {
    sqrt_rho1_ = std::sqrt(rho[1]);
    if (squared_norm == 0.0 || rho[2] <= 0.0) {
      residual_scale_ = sqrt_rho1_;
      alpha_over_s_ = 0.0;
      return;
    }
    const double alpha = 1.0 - std::sqrt(1.0 + 2.0 * squared_norm * rho[2] / rho[1]);
    residual_scale_ = sqrt_rho1_ / (1.0 - alpha);
    alpha_over_s_ = alpha / squared_norm;
  }

  // jacobian: row-major rows x cols; residuals: uncorrected.
  void CorrectJacobian(int rows, int cols, const double* residuals,
                       double* jacobian) const {
    if (alpha_over_s_ == 0.0) {
      // A scaling by 1 (a robust loss's inliers) changes nothing.
      if (sqrt_rho1_ == 1.0) return;
      for (int i = 0; i < rows * cols; ++i) jacobian[i] *= sqrt_rho1_;
      return;
    }
    for (int c = 0; c < cols; ++c) {
      double rtj = 0.0;
      for (int r = 0; r < rows; ++r) rtj += jacobian[r * cols + c] * residuals[r];
      for (int r = 0; r < rows; ++r) {
        double& j = jacobian[r * cols + c];
        j = sqrt_rho1_ * (j - alpha_over_s_ * residuals[r] * rtj);
      }
    }
  }

  void CorrectResiduals(int rows, double* residuals) const {
    if (residual_scale_ == 1.0) return;
    for (int r = 0; r < rows; ++r) residuals[r] *= residual_scale_;
  }

 private:
  double sqrt_rho1_ = 1.0;
  double residual_scale_ = 1.0;
  double alpha_over_s_ = 0.0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EVALUATION_LOSS_CORRECTION_H_
