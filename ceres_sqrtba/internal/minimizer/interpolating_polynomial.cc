#include "ceres_sqrtba/internal/minimizer/interpolating_polynomial.h"

#include <Eigen/Dense>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {

// The system is laid out as Ceres lays out its own (column j holds the power
// degree - j) so that the same pivoting gives the same rounding: a line search
// whose trials differ in the last bits from Ceres' can take a different
// number of trials (seen on bounded problems with CUBIC interpolation).
std::vector<double> InterpolatingPolynomial(const std::vector<LineSample>& samples) {
  int n = 0;
  for (const LineSample& s : samples) n += (s.value_is_valid ? 1 : 0) + (s.gradient_is_valid ? 1 : 0);
  if (n == 0) return {};
  const int degree = n - 1;
  // Row k: the condition p(x) = value or p'(x) = gradient on the
  // coefficients of decreasing powers.
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  Eigen::VectorXd b(n);
  int row = 0;
  for (const LineSample& s : samples) {
    if (s.value_is_valid) {
      for (int j = 0; j <= degree; ++j) a(row, j) = std::pow(s.x, degree - j);
      b(row++) = s.value;
    }
    if (s.gradient_is_valid) {
      for (int j = 0; j < degree; ++j) a(row, j) = (degree - j) * std::pow(s.x, degree - j - 1);
      b(row++) = s.gradient;
    }
  }
  // Full pivoting without a rank threshold: nearly coincident samples still
  // give a (large) polynomial rather than no answer.
  Eigen::FullPivLU<Eigen::MatrixXd> lu(a);
  lu.setThreshold(0.0);
  const Eigen::VectorXd c = lu.solve(b);
  std::vector<double> increasing(c.data(), c.data() + n);
  std::reverse(increasing.begin(), increasing.end());
  return increasing;
}

double EvaluatePolynomial(const std::vector<double>& coefficients, double x) {
  double v = 0.0;
  for (auto it = coefficients.rbegin(); it != coefficients.rend(); ++it) v = v * x + *it;
  return v;
}

namespace {

// Scales the companion matrix's rows and columns by powers of two (exact)
// until no pair's 1-norms can be brought closer, which makes its eigenvalues
// better conditioned (Parlett and Reinsch's balancing, as Ceres balances its
// companion matrices; a change must lower the pair's norms by 10%). Bounded
// by a number of sweeps no finite matrix needs, so that it cannot loop.
void Balance(Eigen::MatrixXd* m) {
  const int n = static_cast<int>(m->rows());
  Eigen::MatrixXd off = *m;
  off.diagonal().setZero();
  constexpr double kGamma = 0.9;
  constexpr int kMaxSweeps = 1000;
  bool changed = true;
  for (int sweep = 0; changed && sweep < kMaxSweeps; ++sweep) {
    changed = false;
    for (int i = 0; i < n; ++i) {
      const double row = off.row(i).lpNorm<1>();
      const double col = off.col(i).lpNorm<1>();
      int exponent = 0;
      std::frexp(row / col, &exponent);
      exponent /= 2;
      if (exponent == 0) continue;
      if (std::ldexp(col, exponent) + std::ldexp(row, -exponent) < kGamma * (col + row)) {
        changed = true;
        off.row(i) *= std::ldexp(1.0, -exponent);
        off.col(i) *= std::ldexp(1.0, exponent);
      }
    }
  }
  off.diagonal() = m->diagonal();
  *m = off;
}

// Real parts of the roots of the polynomial c (decreasing powers); empty for
// a constant. Linear and quadratic in closed form (the quadratic's roots
// without cancellation: the root of larger magnitude from the formula, the
// other from their product), higher degrees as the eigenvalues of the
// balanced companion matrix.
std::vector<double> RootsRealParts(const std::vector<double>& c_in) {
  size_t lead = 0;
  while (lead + 1 < c_in.size() && c_in[lead] == 0.0) ++lead;
  const std::vector<double> c(c_in.begin() + lead, c_in.end());
  const int degree = static_cast<int>(c.size()) - 1;
  if (degree < 1) return {};
  if (degree == 1) return {-c[1] / c[0]};
  if (degree == 2) {
    const double a = c[0], b = c[1], k = c[2];
    const double discriminant = b * b - 4 * a * k;
    const double root = std::sqrt(std::fabs(discriminant));
    if (discriminant < 0) return {-b / (2.0 * a), -b / (2.0 * a)};
    if (b >= 0) return {(-b - root) / (2.0 * a), (2.0 * k) / (-b - root)};
    return {(2.0 * k) / (-b + root), (-b + root) / (2.0 * a)};
  }
  // Monic, then the companion matrix: ones below the diagonal, the negated
  // coefficients of increasing powers in the last column.
  Eigen::VectorXd monic(degree + 1);
  for (int i = 0; i <= degree; ++i) monic(i) = c[i];
  monic /= c[0];
  Eigen::MatrixXd companion = Eigen::MatrixXd::Zero(degree, degree);
  companion.diagonal(-1).setOnes();
  for (int i = 0; i < degree; ++i) companion(i, degree - 1) = -monic(degree - i);
  Balance(&companion);
  Eigen::EigenSolver<Eigen::MatrixXd> solver(companion, /*computeEigenvectors=*/false);
  if (solver.info() != Eigen::Success) return {};
  std::vector<double> roots;
  for (int i = 0; i < degree; ++i) roots.push_back(solver.eigenvalues()(i).real());
  return roots;
}

}  // namespace

double MinimizeInterpolatingPolynomial(const std::vector<LineSample>& samples, double x_min, double x_max) {
  const std::vector<double> p = InterpolatingPolynomial(samples);
  double best_x = (x_min + x_max) / 2.0;
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
    // p' in decreasing powers.
    const int degree = static_cast<int>(p.size()) - 1;
    std::vector<double> derivative(degree);
    for (int j = 1; j <= degree; ++j) derivative[degree - j] = j * p[j];
    for (double root : RootsRealParts(derivative)) consider(root);
  }
  for (const LineSample& s : samples) consider(s.x);
  return best_x;
}

}  // namespace internal
}  // namespace ceres_sqrtba
