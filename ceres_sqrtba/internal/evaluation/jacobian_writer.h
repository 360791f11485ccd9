// Where the evaluator puts a Jacobian: the linear solver's own storage.
//
// The evaluator (evaluator.h) never keeps a Jacobian. For every residual block
// it hands the corrected residuals and the tangent-space Jacobians of its
// variable parameter blocks to a JacobianWriter, from the thread that
// evaluates that block's group, so that each storage (explicit landmark
// blocks, projected blocks) lays the values out as its kernels need them,
// in its own precision, without an intermediate sparse matrix.
#ifndef CERES_SQRTBA_INTERNAL_EVALUATION_JACOBIAN_WRITER_H_
#define CERES_SQRTBA_INTERNAL_EVALUATION_JACOBIAN_WRITER_H_

namespace ceres_sqrtba {
namespace internal {

class JacobianWriter {
 public:
  virtual ~JacobianWriter() = default;
  // Residual block `residual` (index into ProblemStructure::residual_blocks) is
  // the `position`-th block of group `group` and starts at row `row` of it.
  // jacobians[i] is the row-major (num_residuals x tangent size) Jacobian of
  // its i-th parameter block, nullptr for constant blocks.
  virtual void Write(int group, int position, int row, int residual,
                     const double* residuals, const double* const* jacobians) = 0;
  // Whether the storage keeps the Jacobian in float. The evaluator then
  // evaluates the Jacobians of the cost functions that offer it
  // (FloatJacobians, float_jacobians.h) in float: the storage would round
  // a double Jacobian to float anyway.
  virtual bool KeepsFloatJacobians() const { return false; }
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EVALUATION_JACOBIAN_WRITER_H_
