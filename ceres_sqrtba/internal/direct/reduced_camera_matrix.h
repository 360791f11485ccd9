// The damped reduced camera matrix of SQRT_SPARSE_SCHUR, formed as the Gram
// matrix of the marginalized rows (paper eqs. (red_H), (reduced), with the
// landmark damping of eq. (damped_qr)):
//
//   S = sum_b B^_b^T B^_b + lambda D_p^2,   B^_b = Q^_2^T [Jp; 0] of block b,
//
// accumulated in double into the block-sparse pattern of
// reduced_camera_pattern.h. Never as U - W V^-1 W^T: nothing inverts
// Jl^T Jl, and S is positive semi-definite by construction up to double
// rounding of its own sums — also from float blocks, because the products
// below are taken in double from the Jacobian as stored and from Q1 as the
// thin QR computed it, in double.
//
// From the projected storage (projected_landmark_blocks.h). Q^ is orthogonal,
// so Q^_2 Q^_2^T = I - Q^_1 Q^_1^T, and [Jp; 0] vanishes on the damping rows:
//
//   B^_b^T B^_b = Jp^T (I - Q1 Q1^T) Jp = Jp^T Jp - W_b^T W_b,   W_b = Q1^T Jp,
//
// with Q1 the observation rows of the thin factor (m x d). Per pair of cameras
// (c', c) of the block, the block of S gains
//
//   Jp_c'^T Jp_c - W_c'^T W_c       (d x f' times d x f: d f' f flops),
//
// where Jp_c'^T Jp_c is nonzero only for cameras sharing a residual block (the
// diagonal, in BA). W_b (d x the block's camera columns, double) is computed
// in the thin QR's pass while the rows are in cache (VisitGroup, from the
// visitor of ProjectedLandmarkBlocks::Damp); Accumulate then forms S.
//
// Why the projected storage and not the explicit blocks. The explicit blocks
// hold B^_b itself ((m - d) x the camera columns, m = 2k rows for a landmark
// seen k times), so B^_b^T B^_b costs (2k - 3) f' f flops per pair of cameras
// against d f' f = 3 f' f here, and the blocks are 18k scalars per
// observation against 24: the same matrix for less (docs/design.md).
//
// Why two passes. The diagonal blocks (one per camera and landmark) are
// summed block-major, as the SCHUR_JACOBI preconditioner's
// (camera_block_sum.h: per-chunk copies of the per-camera matrices, added in
// chunk order), in the thin QR's pass while the rows are in cache when the
// copies fit (VisitGroup), otherwise in a pass of their own. The
// off-diagonal blocks, one per pair of cameras of a landmark, cannot have
// per-chunk copies (S itself can be large); there each task owns one block
// column of S (camera c: the blocks (c', c), c' < c, contiguous in the CSC
// values) and visits the landmark blocks that see camera c in block order.
// Either way every entry is summed in an order fixed by the problem: the
// same bits for any number of threads.
//
// The block-column pass reads the landmark blocks at random, so it reads as
// little as it can: a schedule built once holds, per visit, where the
// block's W is and, per pair, where W_c' is and where block (c', c) starts
// (no structure lookups, no search for the block), and the W of the visit
// after next is prefetched. Measured (synthetic, 100 cameras, 10^5
// observations, one thread, per pair of cameras): 203 ns with lookups and a
// binary search per pair, 125 ns with the prefetch, 64 ns with the schedule
// (an Eigen 9x3-by-3x9 product per pair instead of the loops of
// reduced_camera_kernels.h: 102 ns). Before, with the diagonal blocks in the
// block-column pass too, their random reads of the camera rows took half of
// it.
//
// COLMAP's problems (a pose and shared intrinsics per observation, two
// camera items per residual block) read more at random: the shared pairs'
// camera rows. Measured (synthetic-100k of docs/colmap.md, 143 poses beside
// 3 intrinsics, float, 2 threads, the least of 28 steps per run, three
// interleaved runs each): 86-90 ms per step with a search for the shared
// residual blocks per pair and pass, W's products in scalar loops and the
// dynamic kernels for the diagonal blocks and W of two-item groups; 62-68 ms
// with the shared residual blocks listed in the schedule, their rows
// prefetched with W, the products on SIMD packets and fixed sizes for the
// items of two-item groups.
//
// Jp^T Jp does not depend on lambda and could be kept from one Jacobian to
// the next radius; it is recomputed, because only a rejected step would gain
// and the gain is small: ladybug-49, one thread, 0.5 of 11 ms per S (the
// thin-QR pass with W and the diagonal, plus the pairs), with 6 rejected
// steps in 50.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_MATRIX_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_MATRIX_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ceres_sqrtba/internal/cameras/camera_block_sum.h"
#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_kernels.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class ReducedCameraMatrix {
 public:
  ReducedCameraMatrix(const ProblemStructure& s, const ProjectedBlockLayout& layout,
                      const ReducedCameraPattern& pattern, const WorkPartition& partition);

  // Bytes this object allocates: W of every block, S's values and scalar
  // pattern, the per-camera diagonal sums and their per-chunk copies.
  static int64_t RequiredBytes(const ProblemStructure& s, const ReducedCameraPattern& pattern,
                               const WorkPartition& partition);

  // The thin QR's pass (ProjectedLandmarkBlocks::Damp's visitor): BeginChunk
  // once per chunk, then VisitGroup for each of its groups in order, with
  // the group's thin Q1 in double (rows x d, row-major; nullptr without a
  // landmark) and its hot rows. Computes W_g = Q1^T Jp and, when the
  // per-chunk copies fit, adds the group's diagonal blocks.
  void BeginChunk(int chunk);
  void VisitGroup(int chunk, int g, const double* q1, const Scalar* hot);
  // That pass's visitor, for ProjectedLandmarkBlocks::Damp.
  class RowsVisitor : public ProjectedLandmarkBlocks<Scalar>::Visitor {
   public:
    RowsVisitor(const ProjectedLandmarkBlocks<Scalar>& blocks, ReducedCameraMatrix* matrix)
        : blocks_(blocks), matrix_(matrix) {}
    void BeginChunk(int chunk) override { matrix_->BeginChunk(chunk); }
    void Visit(int chunk, int group, const double* q1) override {
      matrix_->VisitGroup(chunk, group, q1, blocks_.hot_rows(group));
    }

   private:
    const ProjectedLandmarkBlocks<Scalar>& blocks_;
    ReducedCameraMatrix* matrix_;
  };

  // S from the last pass's W and diagonal sums, the camera Jacobian in
  // `blocks` and the pose damping D_p (reduced camera vector). False when an
  // entry is not finite. Spread over processes (context->processes()): S
  // summed over them, the same bits on every process, and the same answer.
  bool Accumulate(const ProjectedLandmarkBlocks<Scalar>& blocks, const double* pose_damping,
                  ParallelContext* context);

  const ReducedCameraPattern& pattern() const { return pattern_; }
  // The upper triangle in CSC form (reduced_camera_pattern.h).
  const int64_t* col_begin() const { return col_begin_.data(); }
  const int64_t* rows() const { return rows_.data(); }
  const double* values() const { return values_.data(); }

 private:
  // Group g's share of camera entry e's diagonal block added to acc (n x n,
  // CameraBlockSum's accumulator of that camera).
  void AddDiagonalBlock(int g, int e, int n, const Scalar* hot, double* acc) const;
  void AccumulateColumn(int c, const ProjectedLandmarkBlocks<Scalar>& blocks, const double* pose_damping);

  // The off-diagonal blocks' schedule, built once: per camera c (block
  // column), the landmark blocks that see c and another camera c' < c, and
  // per visit its pairs (c', c), with everything the kernel needs, so that a
  // visit reads W and the schedule only (no structure lookups at random).
  struct Visit {
    int64_t w = 0;        // the block's W
    int w_size = 0;       // its doubles
    int w_col = 0;        // camera c's d x f part, from w
    int group = 0;
    int entry = 0;        // camera c's entry in the group
    int64_t pair_begin = 0;  // its pairs: [pair_begin, next visit's pair_begin)
    int d = 0;            // the group's landmark size
    // The group's hot rows its shared pairs read (none: empty), prefetched
    // with W.
    int shared_row_begin = 0;
    int shared_row_end = 0;
  };
  // A pair whose cameras share no residual block (always, when each
  // residual block has one camera; COLMAP's pose and intrinsics share every
  // one of theirs, two poses none) adds only -W'^T W; a shared one also
  // Jp'^T Jp over its common residual blocks, listed once in shared_ with
  // the rows and columns the kernel reads (no search per pass). Both at
  // fixed sizes when d = 3 and f', f are COLMAP's or BAL's camera sizes
  // (AddPairFixed); the others take AddPairDynamic.
  struct Pair {
    int w_row;     // camera c''s d x f' part, from the visit's w
    int position;  // of block (c', c) in its block column
    int size;      // f'
    int shared_begin;  // the residual blocks with both cameras:
    int shared_end;    // shared_[shared_begin, shared_end)
  };
  void BuildSchedule();
  // Appends to shared_ the residual blocks of the group that have both
  // camera entries.
  void AddSharedItems(int e_row, int e_col);
  const ProblemStructure& s_;
  const ProjectedBlockLayout& layout_;
  const ReducedCameraPattern& pattern_;
  std::vector<int> entry_column_;   // per ProblemStructure::group_cameras entry
  std::vector<int64_t> w_offset_;   // per group + 1, doubles
  std::unique_ptr<double[], FreeDeleter> w_;  // W_g: per camera entry e, d x f_e row-major at d * column(e)
  CameraBlockSum<double> diagonal_sum_;
  std::vector<double> diagonal_;    // per camera, n x n lower triangle (camera_block_sum.h)
  std::vector<int64_t> col_begin_;
  std::vector<int64_t> rows_;
  std::vector<double> values_;
  std::vector<char> column_finite_;  // per camera
  std::vector<int64_t> visit_begin_;  // per camera + 1
  std::vector<Visit> visits_;         // and a sentinel
  std::vector<Pair> pairs_;
  std::vector<SharedItems> shared_;
};

extern template class ReducedCameraMatrix<float>;
extern template class ReducedCameraMatrix<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_MATRIX_H_
