// The 3-d Euclidean manifold written out as a ceres::Manifold (Ceres'
// EuclideanManifold is final): the identity everywhere, for tests that
// derive from it and make PlusJacobian misbehave (fail, or leave its output
// unwritten) at chosen points.
#ifndef CERES_SQRTBA_TESTS_EUCLIDEAN3_MANIFOLD_H_
#define CERES_SQRTBA_TESTS_EUCLIDEAN3_MANIFOLD_H_

#include "ceres/manifold.h"

namespace ceres_sqrtba {
namespace testing {

class Euclidean3Manifold : public ceres::Manifold {
 public:
  int AmbientSize() const override { return 3; }
  int TangentSize() const override { return 3; }
  bool Plus(const double* x, const double* delta, double* x_plus_delta) const override {
    for (int k = 0; k < 3; ++k) x_plus_delta[k] = x[k] + delta[k];
    return true;
  }
  bool PlusJacobian(const double*, double* jacobian) const override { return Identity(jacobian); }
  bool Minus(const double* y, const double* x, double* y_minus_x) const override {
    for (int k = 0; k < 3; ++k) y_minus_x[k] = y[k] - x[k];
    return true;
  }
  bool MinusJacobian(const double*, double* jacobian) const override { return Identity(jacobian); }

 private:
  static bool Identity(double* jacobian) {
    for (int k = 0; k < 9; ++k) jacobian[k] = k % 4 == 0 ? 1.0 : 0.0;
    return true;
  }
};

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_EUCLIDEAN3_MANIFOLD_H_
