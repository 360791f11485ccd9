#include "ceres_sqrtba/internal/minimizer/dense_qr_solver.h"

#include <algorithm>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {
namespace {

// Least squares min |A y - b| for A ((m + t) x t, column-major in a, b in
// rhs) by t Householder reflections, then R y = (Q^T b)[0, t). Both are
// overwritten. False if R is singular.
bool SolveLeastSquares(int rows, int t, double* a, double* b, double* y) {
  for (int j = 0; j < t; ++j) {
    double* v = a + j * rows;
    double norm2 = 0.0;
    for (int i = j; i < rows; ++i) norm2 += v[i] * v[i];
    const double norm = std::sqrt(norm2);
    if (norm == 0.0) return false;
    const double alpha = v[j] >= 0.0 ? -norm : norm;
    const double vj = v[j] - alpha;
    const double vnorm2 = norm2 - v[j] * v[j] + vj * vj;
    v[j] = vj;
    const double beta = vnorm2 > 0.0 ? 2.0 / vnorm2 : 0.0;
    for (int c = j + 1; c < t; ++c) {
      double* col = a + c * rows;
      double dot = 0.0;
      for (int i = j; i < rows; ++i) dot += v[i] * col[i];
      dot *= beta;
      for (int i = j; i < rows; ++i) col[i] -= dot * v[i];
    }
    double dot = 0.0;
    for (int i = j; i < rows; ++i) dot += v[i] * b[i];
    dot *= beta;
    for (int i = j; i < rows; ++i) b[i] -= dot * v[i];
    v[j] = alpha;  // R's diagonal; the reflector is no longer needed
  }
  for (int j = t - 1; j >= 0; --j) {
    double v = b[j];
    for (int c = j + 1; c < t; ++c) v -= a[c * rows + j] * y[c];
    const double diagonal = a[j * rows + j];
    if (diagonal == 0.0) return false;
    y[j] = v / diagonal;
  }
  return true;
}

}  // namespace

DenseQrSolver::DenseQrSolver(int max_rows, int max_columns)
    : a_(std::max(1, (max_rows + max_columns) * max_columns)), b_(std::max(1, max_rows + max_columns)) {}

void DenseQrSolver::Bind(int rows, int t, double* jacobian, const double* residuals) {
  rows_ = rows;
  t_ = t;
  jacobian_ = jacobian;
  residuals_ = residuals;
}

void DenseQrSolver::SquaredColumnNorms(double* norms) {
  for (int c = 0; c < t_; ++c) {
    double norm2 = 0.0;
    for (int r = 0; r < rows_; ++r) norm2 += jacobian_[r * t_ + c] * jacobian_[r * t_ + c];
    norms[c] = norm2;
  }
}

void DenseQrSolver::ScaleColumns(const double* scale) {
  for (int r = 0; r < rows_; ++r) {
    for (int c = 0; c < t_; ++c) jacobian_[r * t_ + c] *= scale[c];
  }
}

LinearSolverSummary DenseQrSolver::Solve(const double* d, double /*eta*/, double* y, double* jy_squared_norm) {
  const int rows = rows_, t = t_, qr_rows = rows + t;
  const double* J = jacobian_;
  double* a = a_.data();
  double* b = b_.data();
  for (int c = 0; c < t; ++c) {
    double* col = a + c * qr_rows;
    for (int r = 0; r < rows; ++r) col[r] = J[r * t + c];
    for (int i = 0; i < t; ++i) col[rows + i] = i == c ? d[c] : 0.0;
  }
  for (int r = 0; r < rows; ++r) b[r] = residuals_[r];
  for (int i = 0; i < t; ++i) b[rows + i] = 0.0;
  LinearSolverSummary summary;
  summary.num_iterations = 1;
  if (!SolveLeastSquares(qr_rows, t, a, b, y)) {
    summary.termination = LinearSolverTermination::kFailure;
    summary.message = "The damped Jacobian is rank deficient.";
    return summary;
  }
  double jy_r = 0.0, jy2 = 0.0;
  for (int r = 0; r < rows; ++r) {
    double v = 0.0;
    for (int c = 0; c < t; ++c) v += J[r * t + c] * y[c];
    jy_r += v * residuals_[r];
    jy2 += v * v;
  }
  residual_dot_jy_ = jy_r;
  *jy_squared_norm = jy2;
  summary.termination = LinearSolverTermination::kSuccess;
  return summary;
}

}  // namespace internal
}  // namespace ceres_sqrtba
