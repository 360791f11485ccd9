#include "ceres_sqrtba/internal/minimizer/interpolating_polynomial.h"

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {

std::vector<double> InterpolatingPolynomial(const std::vector<LineSample>& samples) {
  int n = 0;
  for (const LineSample& s : samples) n += (s.value_is_valid ? 1 : 0) + (s.gradient_is_valid ? 1 : 0);
  if (n == 0) return {};
  // Row k: the conditions p(x) = value or p'(x) = gradient on the
  // coefficients c_0 .. c_{n-1} of increasing powers.
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd b(n);
  int row = 0;
  for (const LineSample& s : samples) {
    if (s.value_is_valid) {
      for (int j = 0; j < n; ++j) a(row, j) = std::pow(s.x, j);
      b(row++) = s.value;
    }
    if (s.gradient_is_valid) {
      for (int j = 1; j < n; ++j) a(row, j) = j * std::pow(s.x, j - 1);
      b(row++) = s.gradient;
    }
  }
  // Full pivoting without a rank threshold: nearly coincident samples still
  // give a (large) polynomial rather than no answer.
  Eigen::FullPivLU<Eigen::MatrixXd> lu(a);
  lu.setThreshold(0.0);
  const Eigen::VectorXd c = lu.solve(b);
  return std::vector<double>(c.data(), c.data() + n);
}

double EvaluatePolynomial(const std::vector<double>& coefficients, double x) {
  double v = 0.0;
  for (auto it = coefficients.rbegin(); it != coefficients.rend(); ++it) v = v * x + *it;
  return v;
}

namespace {

// Real parts of the roots of the polynomial c (increasing powers), from the
// eigenvalues of its companion matrix; empty for a constant.
std::vector<double> RootsRealParts(std::vector<double> c) {
  while (!c.empty() && c.back() == 0.0) c.pop_back();
  const int degree = static_cast<int>(c.size()) - 1;
  if (degree < 1) return {};
  if (degree == 1) return {-c[0] / c[1]};
  Eigen::MatrixXd companion = Eigen::MatrixXd::Zero(degree, degree);
  for (int i = 1; i < degree; ++i) companion(i, i - 1) = 1.0;
  for (int i = 0; i < degree; ++i) companion(i, degree - 1) = -c[i] / c[degree];
  Eigen::EigenSolver<Eigen::MatrixXd> solver(companion, /*computeEigenvectors=*/false);
  if (solver.info() != Eigen::Success) return {};
  std::vector<double> roots;
  for (int i = 0; i < degree; ++i) roots.push_back(solver.eigenvalues()(i).real());
  return roots;
}

}  // namespace

double MinimizeInterpolatingPolynomial(const std::vector<LineSample>& samples, double x_min, double x_max) {
  const std::vector<double> p = InterpolatingPolynomial(samples);
  double best_x = 0.5 * (x_min + x_max);
  double best = EvaluatePolynomial(p, best_x);
  auto consider = [&](double x) {
    if (x < x_min || x > x_max) return;
    const double v = EvaluatePolynomial(p, x);
    if (v < best) {
      best = v;
      best_x = x;
    }
  };
  consider(x_min);
  consider(x_max);
  if (p.size() > 2) {
    std::vector<double> derivative(p.size() - 1);
    for (size_t j = 1; j < p.size(); ++j) derivative[j - 1] = j * p[j];
    for (double root : RootsRealParts(derivative)) consider(root);
  }
  for (const LineSample& s : samples) consider(s.x);
  return best_x;
}

}  // namespace internal
}  // namespace ceres_sqrtba
