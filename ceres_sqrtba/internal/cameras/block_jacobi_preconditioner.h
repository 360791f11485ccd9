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
// storage, which reads d rows per block instead of all reduced rows).
// Where the per-chunk sums run (BlockSums): in double for the top-row Gram
// matrices, which are subtracted from the camera Gram matrix and would lose
// digits to cancellation in float; in the storage's Scalar for whole blocks,
// whose terms are positive semidefinite, so that float adds each term to a
// relative 2^-24 (the preconditioner only steers PCG; the solution's accuracy
// is set by the system's product and PCG's stopping rule). The chunks' sums
// are added, the damping added and the blocks inverted in double either way.
// JACOBI: the camera's block of J^T J + lambda D^2, i.e. Jc^T Jc + lambda D_c^2.
// IDENTITY is "no preconditioner" and is handled by the caller.
//
// The per-camera sums are the block-major ones of camera_block_sum.h, either
// in one call (SumBlocks) or filled by the storage's own pass over its blocks
// while they are in cache (CanVisit: BeginChunk, AddGroup, FinishSums).
#ifndef CERES_SQRTBA_INTERNAL_CAMERAS_BLOCK_JACOBI_PRECONDITIONER_H_
#define CERES_SQRTBA_INTERNAL_CAMERAS_BLOCK_JACOBI_PRECONDITIONER_H_

#include <memory>
#include <type_traits>
#include <vector>

#include "ceres_sqrtba/internal/cameras/camera_block_sum.h"
#include "ceres_sqrtba/internal/cameras/camera_gram.h"
#include "ceres_sqrtba/internal/cameras/linear_operator.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

// Where the SCHUR_JACOBI per-chunk sums are added.
enum class BlockSums {
  kInDouble,  // for terms that are later subtracted (the explicit storage)
  kInScalar,  // for positive semidefinite terms (the projected storage)
};

template <typename Scalar>
class BlockJacobiPreconditioner : public LinearOperator<Scalar> {
 public:
  // schur: SCHUR_JACOBI (true) or JACOBI (false).
  BlockJacobiPreconditioner(const ProblemStructure& s, const WorkPartition& partition, bool schur,
                            BlockSums sums = BlockSums::kInDouble);

  bool schur() const { return schur_; }

  // The per-block sums (SCHUR_JACOBI only): fn(g, entry, column, n, acc) adds
  // block g's contribution to the lower triangle of camera entry `entry`'s
  // n x n block (see CameraBlockSum::Run). acc is a double* or a Scalar*, as
  // the constructor's BlockSums says (checked).
  template <typename Fn>
  void SumBlocks(ParallelContext* context, const Fn& fn) {
    Sum<AccOf<Fn>>().Run(context, sums_.data(), fn);
  }
  // The same sums from the caller's own chunk loop, when CanVisit(): one
  // BeginChunk per chunk, AddGroup for each of its blocks in order, then
  // FinishSums.
  bool CanVisit() const { return schur_ && chunked_; }
  void BeginChunk(int chunk) {
    if (scalar_sum_ != nullptr) scalar_sum_->BeginChunk(chunk);
    else double_sum_->BeginChunk(chunk);
  }
  template <typename Fn>
  void AddGroup(int chunk, int group, const Fn& fn) {
    CameraBlockSum<AccOf<Fn>>& sum = Sum<AccOf<Fn>>();
    sum.AddGroup(group, sum.ChunkSums(chunk), fn);
  }
  void FinishSums(ParallelContext* context) {
    if (scalar_sum_ != nullptr) scalar_sum_->Reduce(context, sums_.data());
    else double_sum_->Reduce(context, sums_.data());
  }

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
  // The accumulator a callback takes: double if it accepts a double*.
  template <typename Fn>
  using AccOf = std::conditional_t<std::is_invocable_v<const Fn&, int, int, int, int, double*>, double, float>;
  template <typename Acc>
  CameraBlockSum<Acc>& Sum() {
    if constexpr (std::is_same_v<Acc, double>) {
      CHECK(double_sum_ != nullptr) << "the preconditioner's sums run in Scalar: give a Scalar accumulator";
      return *double_sum_;
    } else {
      static_assert(std::is_same_v<Acc, Scalar>, "a float accumulator needs Scalar = float");
      CHECK(scalar_sum_ != nullptr) << "the preconditioner's sums run in double: give a double accumulator";
      return *scalar_sum_;
    }
  }
  int offset(int camera) const { return offset_[camera]; }

  const ProblemStructure& s_;
  bool schur_;
  bool chunked_ = false;
  std::vector<int> offset_;  // per camera: its n x n block in sums_ and inverse_
  // One of the two per-chunk sums (SCHUR_JACOBI only); in double when
  // Scalar is double.
  std::unique_ptr<CameraBlockSum<double>> double_sum_;
  std::unique_ptr<CameraBlockSum<float>> scalar_sum_;
  std::vector<double> sums_;  // per camera: the SCHUR_JACOBI block sums
  std::vector<Scalar> inverse_;
};

extern template class BlockJacobiPreconditioner<float>;
extern template class BlockJacobiPreconditioner<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERAS_BLOCK_JACOBI_PRECONDITIONER_H_
