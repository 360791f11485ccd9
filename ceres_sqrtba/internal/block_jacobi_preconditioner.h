// Block-Jacobi preconditioner of the reduced camera system, one dense block
// per camera parameter block, computed from the landmark blocks.
//
// SCHUR_JACOBI: the camera's diagonal block of the damped Schur complement,
//   S_cc = sum over landmark blocks seeing c of (Q^_2^T Jp)_c^T (Q^_2^T Jp)_c
//          + lambda D_c^2,
//   read off the reduced rows of the damped, marginalized blocks (paper eq.
//   (red_H) restricted to one camera) - the same matrix Ceres' SCHUR_JACOBI
//   inverts, obtained without forming S.
// JACOBI: the camera's block of J^T J + lambda D^2, which is the Gram matrix
//   of the camera's columns over all rows of the damped block, since Q^ is
//   orthogonal and the damping rows have no camera entries.
// IDENTITY is "no preconditioner" and is handled by the caller.
#ifndef CERES_SQRTBA_INTERNAL_BLOCK_JACOBI_PRECONDITIONER_H_
#define CERES_SQRTBA_INTERNAL_BLOCK_JACOBI_PRECONDITIONER_H_

#include <vector>

#include "ceres_sqrtba/internal/landmark_blocks.h"
#include "ceres_sqrtba/internal/parallel.h"
#include "ceres_sqrtba/internal/pcg.h"
#include "ceres_sqrtba/internal/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class BlockJacobiPreconditioner : public LinearOperator<Scalar> {
 public:
  // schur: SCHUR_JACOBI (true) or JACOBI (false).
  BlockJacobiPreconditioner(const ProblemStructure& s, bool schur);

  // damping_squared: lambda D_p^2 for the reduced camera vector.
  void Compute(LandmarkBlocks<Scalar>* blocks, const Scalar* damping_squared,
               ParallelContext* context);

  int num_rows() const override { return s_.num_camera_parameters; }
  void Multiply(const Scalar* x, Scalar* y) override;

 private:
  const ProblemStructure& s_;
  bool schur_;
  std::vector<int> offset_;  // per camera into inverse_, size cameras + 1
  std::vector<Scalar> inverse_;
};

extern template class BlockJacobiPreconditioner<float>;
extern template class BlockJacobiPreconditioner<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_BLOCK_JACOBI_PRECONDITIONER_H_
