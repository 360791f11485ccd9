#include "ceres_sqrtba/internal/cameras/pcg.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

constexpr int kResidualResetPeriod = 10;

bool IsZeroOrInfinity(double x) { return x == 0.0 || std::isinf(x); }

template <typename A, typename B>
double Dot(const A& a, const B& b) {
  return a.template cast<double>().dot(b.template cast<double>());
}

std::string Format(const char* fmt, double a, double b = 0, double c = 0, double d = 0) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), fmt, a, b, c, d);
  return buf;
}

}  // namespace

template <typename Scalar>
LinearSolverSummary Pcg<Scalar>::Solve(LinearOperator<Scalar>* a,
                                       LinearOperator<Scalar>* preconditioner,
                                       const Scalar* b_ptr, Scalar* x_ptr,
                                       const PcgOptions& options) {
  const int n = a->num_rows();
  // The work vectors are sized once, at construction (no allocation per solve).
  DCHECK_EQ(r_.size(), n);
  DCHECK(preconditioner == nullptr || preconditioner->num_rows() == n);
  Eigen::Map<const Vector> b(b_ptr, n);
  Eigen::Map<Vector> x(x_ptr, n);
  LinearSolverSummary summary;
  summary.termination = LinearSolverTermination::kNoConvergence;
  summary.message = "Maximum number of iterations reached.";
  summary.num_iterations = 0;
  x.setZero();

  const double norm_b = std::sqrt(Dot(b, b));
  if (norm_b == 0.0) {
    summary.termination = LinearSolverTermination::kSuccess;
    summary.message = "Convergence. |b| = 0.";
    return summary;
  }
  if (!std::isfinite(norm_b)) {
    summary.termination = LinearSolverTermination::kFailure;
    summary.message = "Numerical failure. |b| is not finite.";
    return summary;
  }
  const double tol_r = options.r_tolerance * norm_b;
  r_ = b;  // x = 0, so r = b - A x = b
  double norm_r = norm_b;
  if (options.min_num_iterations == 0 && norm_r <= tol_r) {
    summary.termination = LinearSolverTermination::kSuccess;
    summary.message = Format("Convergence. |r| = %e <= %e.", norm_r, tol_r);
    return summary;
  }

  double rho = 1.0;
  double q0 = -Dot(x, b + r_);
  for (summary.num_iterations = 1;; ++summary.num_iterations) {
    if (preconditioner != nullptr) {
      preconditioner->Multiply(r_.data(), z_.data());
    } else {
      z_ = r_;
    }
    const double last_rho = rho;
    rho = Dot(r_, z_);
    if (IsZeroOrInfinity(rho) || std::isnan(rho)) {
      summary.termination = LinearSolverTermination::kFailure;
      summary.message = Format("Numerical failure. rho = r'z = %e.", rho);
      break;
    }
    if (summary.num_iterations == 1) {
      p_ = z_;
    } else {
      const double beta = rho / last_rho;
      if (IsZeroOrInfinity(beta) || std::isnan(beta)) {
        summary.termination = LinearSolverTermination::kFailure;
        summary.message = Format(
            "Numerical failure. beta = rho_n / rho_{n-1} = %e, rho_n = %e, rho_{n-1} = %e",
            beta, rho, last_rho);
        break;
      }
      p_ = z_ + static_cast<Scalar>(beta) * p_;
    }
    a->Multiply(p_.data(), q_.data());
    const double pq = Dot(p_, q_);
    if (pq <= 0.0 || std::isinf(pq) || std::isnan(pq)) {
      summary.termination = LinearSolverTermination::kNoConvergence;
      summary.message = Format(
          "Matrix is indefinite, no more progress can be made. p'q = %e. |p| = %e, |q| = %e",
          pq, std::sqrt(Dot(p_, p_)), std::sqrt(Dot(q_, q_)));
      break;
    }
    const double alpha = rho / pq;
    if (std::isinf(alpha) || std::isnan(alpha)) {
      summary.termination = LinearSolverTermination::kFailure;
      summary.message = Format(
          "Numerical failure. alpha = rho / pq = %e, rho = %e, pq = %e.", alpha, rho, pq);
      break;
    }
    x += static_cast<Scalar>(alpha) * p_;
    if (summary.num_iterations % kResidualResetPeriod == 0) {
      a->Multiply(x.data(), q_.data());
      r_ = b - q_;
    } else {
      r_ -= static_cast<Scalar>(alpha) * q_;
    }
    const double q1 = -Dot(x, b + r_);
    const double zeta = summary.num_iterations * (q1 - q0) / q1;
    if (zeta < options.q_tolerance &&
        summary.num_iterations >= options.min_num_iterations) {
      summary.termination = LinearSolverTermination::kSuccess;
      summary.message = Format("Iteration: %g Convergence: zeta = %e < %e. |r| = %e",
                               summary.num_iterations, zeta, options.q_tolerance,
                               std::sqrt(Dot(r_, r_)));
      break;
    }
    q0 = q1;
    norm_r = std::sqrt(Dot(r_, r_));
    if (norm_r <= tol_r && summary.num_iterations >= options.min_num_iterations) {
      summary.termination = LinearSolverTermination::kSuccess;
      summary.message = Format("Iteration: %g Convergence. |r| = %e <= %e.",
                               summary.num_iterations, norm_r, tol_r);
      break;
    }
    if (summary.num_iterations >= options.max_num_iterations) break;
  }
  return summary;
}

template class Pcg<float>;
template class Pcg<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
