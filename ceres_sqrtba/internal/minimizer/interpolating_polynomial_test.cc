#include "ceres_sqrtba/internal/minimizer/interpolating_polynomial.h"

#include <cmath>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

LineSample Sample(double x, double value, double gradient) {
  LineSample s;
  s.x = x;
  s.value = value;
  s.gradient = gradient;
  s.value_is_valid = s.gradient_is_valid = true;
  return s;
}

LineSample ValueOnly(double x, double value) {
  LineSample s = Sample(x, value, 0.0);
  s.gradient_is_valid = false;
  return s;
}

// A polynomial given by its coefficients of increasing powers.
struct Poly {
  std::vector<double> c;
  double operator()(double x) const { return EvaluatePolynomial(c, x); }
  double Derivative(double x) const {
    double v = 0.0;
    for (size_t j = c.size() - 1; j >= 1; --j) v = v * x + j * c[j];
    return v;
  }
  LineSample At(double x) const { return Sample(x, (*this)(x), Derivative(x)); }
};

// The quintic whose derivative is (x - r[0])(x - r[1])(x - r[2])(x - r[3]),
// with p(0) = 0: the integral of the expanded quartic (e_k: the elementary
// symmetric sums of the roots).
Poly QuinticWithCriticalPoints(const double r[4]) {
  const double e1 = r[0] + r[1] + r[2] + r[3];
  const double e2 = r[0] * r[1] + r[0] * r[2] + r[0] * r[3] + r[1] * r[2] + r[1] * r[3] + r[2] * r[3];
  const double e3 = r[0] * r[1] * r[2] + r[0] * r[1] * r[3] + r[0] * r[2] * r[3] + r[1] * r[2] * r[3];
  const double e4 = r[0] * r[1] * r[2] * r[3];
  return Poly{{0.0, e4, -e3 / 2.0, e2 / 3.0, -e1 / 4.0, 1.0 / 5.0}};
}

// Where p is lowest on [lo, hi], to within 1e-6 of the interval: a grid.
double GridMinimizer(const Poly& p, double lo, double hi) {
  constexpr int kSteps = 1000000;
  double best_x = lo, best = p(lo);
  for (int i = 1; i <= kSteps; ++i) {
    const double x = lo + (hi - lo) * i / kSteps;
    if (p(x) < best) {
      best = p(x);
      best_x = x;
    }
  }
  return best_x;
}

TEST(InterpolatingPolynomial, RecoversTheCubicOfTwoHermiteSamples) {
  const Poly p{{2.0, -3.0, 0.5, 1.0}};
  const std::vector<double> c = InterpolatingPolynomial({p.At(0.0), p.At(1.5)});
  ASSERT_EQ(c.size(), 4u);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(c[j], p.c[j], 1e-13) << j;
}

TEST(InterpolatingPolynomial, ValuesOnlyBesidesTheDerivativeAtZeroGiveAQuadratic) {
  const Poly p{{1.0, -2.0, 3.0}};
  const std::vector<double> c = InterpolatingPolynomial({p.At(0.0), ValueOnly(0.7, p(0.7))});
  ASSERT_EQ(c.size(), 3u);
  for (int j = 0; j < 3; ++j) EXPECT_NEAR(c[j], p.c[j], 1e-13) << j;
  // Its minimizer, 1/3, inside the interval; an interval beside it: the end
  // nearer to it.
  EXPECT_NEAR(MinimizeInterpolatingPolynomial({p.At(0.0), ValueOnly(0.7, p(0.7))}, 0.1, 0.6), 1.0 / 3.0, 1e-14);
  EXPECT_EQ(MinimizeInterpolatingPolynomial({p.At(0.0), ValueOnly(0.7, p(0.7))}, 0.4, 0.6), 0.4);
}

// p' = -(x - r1)(x - r2) with r1 = 1e-6, r2 = 1e6: the local minimum at r1
// is a root the textbook formula loses to cancellation (-b + sqrt(b^2 - 4ac)
// with b ~ 1e6 leaves an absolute error near 1e-10, 1e-4 of the root); from
// the product of the roots it is exact to rounding.
TEST(InterpolatingPolynomial, SmallRootOfAWidelySpreadQuadraticIsAccurate) {
  const double r1 = 1e-6, r2 = 1e6;
  const Poly p{{5.0, -r1 * r2, 0.5 * (r1 + r2), -1.0 / 3.0}};
  const double x = MinimizeInterpolatingPolynomial({p.At(0.0), p.At(1.0)}, 0.0, 0.5);
  EXPECT_NEAR(x, r1, 1e-15);
}

// A quintic from three Hermite samples (its derivative a quartic: the
// companion matrix path) with critical points at 0.2, 0.4, 0.6, 0.8: the
// lowest point of each interval, be it a local minimum or an end (the local
// maximum at 0.6 inside [0.5, 0.7] is not taken).
TEST(InterpolatingPolynomial, QuinticFromThreeSamplesFindsTheLowestPointOfEachInterval) {
  const double r[4] = {0.2, 0.4, 0.6, 0.8};
  const Poly p = QuinticWithCriticalPoints(r);
  const std::vector<LineSample> samples = {p.At(0.0), p.At(1.0), p.At(0.5)};
  const std::vector<double> c = InterpolatingPolynomial(samples);
  ASSERT_EQ(c.size(), 6u);
  for (int j = 0; j < 6; ++j) EXPECT_NEAR(c[j], p.c[j], 1e-12) << j;
  for (const auto& interval : {std::make_pair(0.1, 0.9), std::make_pair(0.3, 0.9), std::make_pair(0.5, 0.7)}) {
    EXPECT_NEAR(MinimizeInterpolatingPolynomial(samples, interval.first, interval.second),
                GridMinimizer(p, interval.first, interval.second), 1e-6)
        << interval.first << " " << interval.second;
  }
}

// The quartic p' of a quintic whose coefficients span ten orders of
// magnitude: the balanced companion matrix still gives the critical point at
// 1e-3 to a millionth of itself.
TEST(InterpolatingPolynomial, BadlyScaledQuinticKeepsItsCriticalPoints) {
  // p' = (x - 1e-4)(x - 1e-3)(x - 1e-2)(x - 1e-1), integrated: p has a local
  // minimum at 1e-3 (p' goes from - to +) and at 1e-1.
  const double r[4] = {1e-4, 1e-3, 1e-2, 1e-1};
  const Poly p = QuinticWithCriticalPoints(r);
  const std::vector<LineSample> samples = {p.At(0.0), p.At(0.2), p.At(0.05)};
  EXPECT_NEAR(MinimizeInterpolatingPolynomial(samples, 5e-4, 5e-3), 1e-3, 1e-9);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
