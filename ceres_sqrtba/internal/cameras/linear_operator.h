// A square operator y = A x on the reduced camera vector, in Scalar: what PCG
// multiplies by (the reduced camera system of either storage) and what it
// preconditions with (the block-Jacobi inverse).
#ifndef CERES_SQRTBA_INTERNAL_CAMERAS_LINEAR_OPERATOR_H_
#define CERES_SQRTBA_INTERNAL_CAMERAS_LINEAR_OPERATOR_H_

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class LinearOperator {
 public:
  virtual ~LinearOperator() = default;
  virtual int num_rows() const = 0;
  // y = A x (overwrites y).
  virtual void Multiply(const Scalar* x, Scalar* y) = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERAS_LINEAR_OPERATOR_H_
