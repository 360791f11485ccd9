// y = A x with a dense A, as a LinearOperator (what PCG multiplies by), in
// Scalar; counts its products. For tests of PCG and its callers against
// dense references.
#ifndef CERES_SQRTBA_TESTS_DENSE_OPERATOR_H_
#define CERES_SQRTBA_TESTS_DENSE_OPERATOR_H_

#include <Eigen/Core>

#include "ceres_sqrtba/internal/cameras/linear_operator.h"

namespace ceres_sqrtba {
namespace testing {

template <typename Scalar>
class DenseOperator : public internal::LinearOperator<Scalar> {
 public:
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  // A in any scalar type, rounded to Scalar.
  template <typename Derived>
  explicit DenseOperator(const Eigen::MatrixBase<Derived>& a) : a_(a.template cast<Scalar>()) {}
  int num_rows() const override { return static_cast<int>(a_.rows()); }
  void Multiply(const Scalar* x, Scalar* y) override {
    ++calls;
    Eigen::Map<Vector>(y, a_.rows()) = a_ * Eigen::Map<const Vector>(x, a_.cols());
  }
  int calls = 0;

 private:
  Matrix a_;
};

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_DENSE_OPERATOR_H_
