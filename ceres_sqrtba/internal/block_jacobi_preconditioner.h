// Block-Jacobi preconditioner of the reduced camera system, one dense block
// per camera parameter block, computed from the landmark blocks.
//
// SCHUR_JACOBI: the camera's diagonal block of the damped Schur complement,
//   S_cc = sum over landmark blocks b seeing c of (Q^_2^T Jp)_c^T (Q^_2^T Jp)_c
//          + lambda D_c^2                                  (paper eq. (red_H))
// the same matrix Ceres' SCHUR_JACOBI inverts, obtained without forming S.
// Because Q^ is orthogonal and [Jp; 0] has no entries on the damping rows,
//   (Q^_2^T Jp)_c^T (Q^_2^T Jp)_c = Jc^T Jc - (Q^_1^T Jp)_c^T (Q^_1^T Jp)_c,
// so S_cc is the camera Gram matrix Jc^T Jc, computed once per Jacobian,
// minus the Gram matrix of the d top rows of each damped block. That reads d
// rows per block and solve instead of all reduced rows, and is accumulated
// in double, so that the preconditioner is accurate even when the landmark
// blocks are single precision.
// JACOBI: the camera's block of J^T J + lambda D^2, i.e. Jc^T Jc + lambda D_c^2.
// IDENTITY is "no preconditioner" and is handled by the caller.
#ifndef CERES_SQRTBA_INTERNAL_BLOCK_JACOBI_PRECONDITIONER_H_
#define CERES_SQRTBA_INTERNAL_BLOCK_JACOBI_PRECONDITIONER_H_

#include <vector>

#include "ceres_sqrtba/internal/camera_block_sum.h"
#include "ceres_sqrtba/internal/landmark_blocks.h"
#include "ceres_sqrtba/internal/parallel.h"
#include "ceres_sqrtba/internal/pcg.h"
#include "ceres_sqrtba/internal/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

// Per camera the Gram matrix Jc^T Jc of its columns (row-major n x n blocks,
// double), computed from undamped landmark blocks.
class CameraGram {
 public:
  CameraGram(const ProblemStructure& s, const WorkPartition& partition);
  // raw: the blocks are not marginalized yet, so a camera's columns are
  // non-zero only on the rows of its own residual blocks (layout's
  // camera_rows), k times fewer than all observation rows.
  template <typename Scalar>
  void Compute(LandmarkBlocks<Scalar>* blocks, const LandmarkBlockLayout& layout, bool raw,
               ParallelContext* context);
  // The same from any storage of the Jacobian: fn(g, entry, column, n, acc)
  // adds the lower triangle of the Gram of camera entry `entry` of group g.
  template <typename Fn>
  void ComputeWith(ParallelContext* context, const Fn& fn) {
    sum_.Run(context, data_.data(), fn);
    Symmetrize();
  }
  // G <- diag(scale) G diag(scale), scale in the full tangent layout.
  void Scale(const double* scale);
  const double* block(int camera) const { return data_.data() + sum_.offset(camera); }
  double* block(int camera) { return data_.data() + sum_.offset(camera); }

 private:
  // The Gram of camera entry `entry`'s columns from the rows of its own
  // residual blocks (the other rows are zero there before the QR).
  template <typename Scalar>
  static void AddOwnRows(const LandmarkBlock<Scalar>& block, const LandmarkBlockLayout& layout,
                         int entry, int column, int n, double* acc) {
    for (int r = layout.camera_row_begin[entry]; r < layout.camera_row_begin[entry + 1]; ++r) {
      const auto& seg = layout.camera_rows[r];
      block.AddColumnGramLower(column, n, seg.first, seg.first + seg.second, acc);
    }
  }
  void Symmetrize();

  const ProblemStructure& s_;
  CameraBlockSum sum_;
  std::vector<double> data_;
};

template <typename Scalar>
class BlockJacobiPreconditioner : public LinearOperator<Scalar> {
 public:
  // schur: SCHUR_JACOBI (true) or JACOBI (false).
  BlockJacobiPreconditioner(const ProblemStructure& s, const WorkPartition& partition, bool schur);

  // damping_squared: lambda D_p^2 for the reduced camera vector. The blocks
  // must be marginalized and damped. top_rows_visited: the top-row Gram
  // matrices were accumulated by BeginChunk/AddTopRows while the blocks were
  // damped (only when CanVisit()); otherwise Compute reads the top rows itself.
  void Compute(LandmarkBlocks<Scalar>* blocks, const CameraGram& gram,
               const double* damping_squared, ParallelContext* context,
               bool top_rows_visited = false);

  // SCHUR_JACOBI from any storage of the marginalized blocks, without the
  // camera Gram matrices: reduced(g, entry, column, n, acc) adds to the lower
  // triangle of acc landmark block g's whole contribution (B_g)_c^T (B_g)_c
  // to camera entry `entry`'s diagonal block of the reduced system. Either in
  // one call (Run over the blocks), or in the caller's own chunk loop when
  // CanVisit(): BeginChunk, AddGroup for each block of the chunk, then
  // FinishReduced.
  // JACOBI (not SCHUR_JACOBI) from the camera Gram matrices alone.
  void ComputeJacobi(const CameraGram& gram, const double* damping_squared,
                     ParallelContext* context) {
    Invert(&gram, damping_squared, context);
  }
  template <typename Fn>
  void ComputeReduced(const double* damping_squared, ParallelContext* context, const Fn& reduced) {
    sum_.Run(context, top_.data(), reduced);
    Invert(nullptr, damping_squared, context);
  }
  template <typename Fn>
  void AddGroup(int chunk, int group, const Fn& reduced) {
    sum_.AddGroup(group, sum_.ChunkSums(chunk), reduced);
  }
  void FinishReduced(const double* damping_squared, ParallelContext* context) {
    sum_.Reduce(context, top_.data());
    Invert(nullptr, damping_squared, context);
  }

  // The top-row Gram in the damping pass (see DampedBlockVisitor): possible
  // for SCHUR_JACOBI when the per-camera sums are kept per chunk.
  bool CanVisit() const { return schur_ && sum_.chunked(); }
  void BeginChunk(int chunk) { sum_.BeginChunk(chunk); }
  void AddTopRows(int chunk, int group, const LandmarkBlock<Scalar>& block) {
    sum_.AddGroup(group, sum_.ChunkSums(chunk), [&](int, int, int column, int n, double* acc) {
      block.AddColumnGramLower(column, n, 0, block.landmark_size(), acc);
    });
  }

  int num_rows() const override { return s_.num_camera_parameters; }
  void Multiply(const Scalar* x, Scalar* y) override;

 private:
  // inverse_ <- (gram - top_ (SCHUR_JACOBI) + damping)^-1, per camera;
  // without gram (SCHUR_JACOBI only): (top_ + damping)^-1.
  void Invert(const CameraGram* gram, const double* damping_squared, ParallelContext* context);

  const ProblemStructure& s_;
  bool schur_;
  CameraBlockSum sum_;
  std::vector<double> top_;  // per camera: Gram matrix of the blocks' top rows
  std::vector<Scalar> inverse_;
};

extern template class BlockJacobiPreconditioner<float>;
extern template class BlockJacobiPreconditioner<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_BLOCK_JACOBI_PRECONDITIONER_H_
