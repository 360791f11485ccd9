// The step size a line search tries next: the minimizer, on an interval, of
// the polynomial that interpolates what is known along the search direction
// (function values, and directional derivatives where they were evaluated).
// With a value and a derivative at 0 and at the current trial this is the
// cubic Hermite interpolant; with a previous trial as well, a quintic. The
// candidates are the interval's midpoint and ends, the real parts of the
// roots of the derivative inside the interval, and the sample points inside
// it; the one where the polynomial is lowest wins (as Ceres' line search
// chooses, so that bounded problems follow Ceres' steps). The roots are found
// as Ceres finds them (closed form up to degree 2, else the eigenvalues of
// the balanced companion matrix) and the fit solves the same system: trials
// that differ from Ceres' in the last bits can change how many a search takes.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_INTERPOLATING_POLYNOMIAL_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_INTERPOLATING_POLYNOMIAL_H_

#include <vector>

namespace ceres_sqrtba {
namespace internal {

struct LineSample {
  double x = 0.0;
  double value = 0.0;
  double gradient = 0.0;  // directional derivative
  bool value_is_valid = false;
  bool gradient_is_valid = false;
};

// Coefficients in increasing powers, of the lowest degree that fits every
// valid value and derivative of the samples.
std::vector<double> InterpolatingPolynomial(const std::vector<LineSample>& samples);
double EvaluatePolynomial(const std::vector<double>& coefficients, double x);

// The minimizing x in [x_min, x_max] as described above.
double MinimizeInterpolatingPolynomial(const std::vector<LineSample>& samples, double x_min, double x_max);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_INTERPOLATING_POLYNOMIAL_H_
