// Block-Jacobi preconditioner of the reduced camera system: one dense block
// per variable camera, inverted in double and applied in Scalar.
//
// SCHUR_JACOBI: the camera's diagonal block of the damped Schur complement,
//   S_cc = sum over landmark blocks b seeing c of (Q^_2^T Jp)_c^T (Q^_2^T Jp)_c
//          + lambda D_c^2                                  (paper eq. (red_H))
// the same matrix Ceres' SCHUR_JACOBI inverts, obtained without forming S.
// Because Q^ is orthogonal and [Jp; 0] has no entries on the damping rows,
//   (Q^_2^T Jp)_c^T (Q^_2^T Jp)_c = Jc^T Jc - (Q^_1^T Jp)_c^T (Q^_1^T Jp)_c,
// so a storage may either add each block's whole (B_b)_c^T (B_b)_c (the
// projected storage: Jc^T (I - Q1 Q1^T) Jc) or the Gram matrix of its d top
// rows, to be subtracted from the camera Gram matrix Jc^T Jc (the explicit
// storage, which reads d rows per block instead of all reduced rows). The
// sums run in double, so the preconditioner is accurate even when the
// landmark blocks are single precision.
// JACOBI: the camera's block of J^T J + lambda D^2, i.e. Jc^T Jc + lambda D_c^2.
// IDENTITY is "no preconditioner" and is handled by the caller.
//
// The per-camera sums are the block-major ones of camera_block_sum.h, either
// in one call (SumBlocks) or filled by the storage's own pass over its blocks
// while they are in cache (CanVisit: BeginChunk, AddGroup, FinishSums).
#ifndef CERES_SQRTBA_INTERNAL_CAMERAS_BLOCK_JACOBI_PRECONDITIONER_H_
#define CERES_SQRTBA_INTERNAL_CAMERAS_BLOCK_JACOBI_PRECONDITIONER_H_

#include <vector>

#include "ceres_sqrtba/internal/cameras/camera_block_sum.h"
#include "ceres_sqrtba/internal/cameras/camera_gram.h"
#include "ceres_sqrtba/internal/cameras/linear_operator.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class BlockJacobiPreconditioner : public LinearOperator<Scalar> {
 public:
  // schur: SCHUR_JACOBI (true) or JACOBI (false).
  BlockJacobiPreconditioner(const ProblemStructure& s, const WorkPartition& partition, bool schur);

  bool schur() const { return schur_; }

  // The per-block sums (SCHUR_JACOBI only): fn(g, entry, column, n, acc) adds
  // block g's contribution to the lower triangle of camera entry `entry`'s
  // n x n block (see CameraBlockSum::Run).
  template <typename Fn>
  void SumBlocks(ParallelContext* context, const Fn& fn) {
    sum_.Run(context, sums_.data(), fn);
  }
  // The same sums from the caller's own chunk loop, when CanVisit(): one
  // BeginChunk per chunk, AddGroup for each of its blocks in order, then
  // FinishSums.
  bool CanVisit() const { return schur_ && sum_.chunked(); }
  void BeginChunk(int chunk) { sum_.BeginChunk(chunk); }
  template <typename Fn>
  void AddGroup(int chunk, int group, const Fn& fn) {
    sum_.AddGroup(group, sum_.ChunkSums(chunk), fn);
  }
  void FinishSums(ParallelContext* context) { sum_.Reduce(context, sums_.data()); }

  // Inverts, per camera, with damping_squared = lambda D_p^2 (reduced camera
  // vector):
  //   gram == nullptr (SCHUR_JACOBI from whole blocks):  (sums + D)^-1;
  //   gram, SCHUR_JACOBI (sums of the top rows):        (gram - sums + D)^-1;
  //   gram, JACOBI:                                      (gram + D)^-1.
  // A block that is not numerically positive definite falls back to the
  // inverse of its diagonal, which keeps the preconditioner positive.
  void Invert(const CameraGram* gram, const double* damping_squared, ParallelContext* context);

  int num_rows() const override { return s_.num_camera_parameters; }
  void Multiply(const Scalar* x, Scalar* y) override;

 private:
  const ProblemStructure& s_;
  bool schur_;
  CameraBlockSum sum_;
  std::vector<double> sums_;  // per camera: the SCHUR_JACOBI block sums
  std::vector<Scalar> inverse_;
};

extern template class BlockJacobiPreconditioner<float>;
extern template class BlockJacobiPreconditioner<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERAS_BLOCK_JACOBI_PRECONDITIONER_H_
