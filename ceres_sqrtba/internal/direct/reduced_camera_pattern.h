// The sparsity pattern of the reduced camera matrix of SQRT_SPARSE_SCHUR,
//
//   S = sum_b B^_b^T B^_b + lambda D_p^2,   B^_b = Q^_2^T Jp of landmark b,
//
// (paper eqs. (red_H), (reduced)): block (c', c) is structurally nonzero when
// some landmark block (or landmark-free residual block) has both cameras c'
// and c, and every diagonal block is (the pose damping). It depends on the
// problem's structure only, so it is built once per solve.
//
// Storage. S is symmetric; only its upper triangle is kept, in compressed
// sparse column form (what CHOLMOD reads with stype = 1): block column c
// holds the blocks (c', c), c' <= c, in increasing c', the diagonal block
// last and only its upper triangle. Camera c's scalar columns all have the
// same block rows, so entry (i, a) of block k of block column c (row i of
// camera c', column a of camera c) lives at
//
//   col_begin(offset(c) + a) + position[k] + i,
//
// with position[k] the sizes of the block rows before k. A block column's
// values are contiguous, so one task can own a whole block column.
//
// Why a block pattern first: the scalar arrays (col_begin, rows) are counted
// against the memory limit with everything else the direct solver allocates
// (ScalarBytes), and the fill-reducing ordering runs on the blocks
// (sparse_cholesky.h), as Ceres' SPARSE_SCHUR orders its Schur complement.
//
// A solve spread over processes (process_group.h) sums S over the processes,
// each adding its own landmarks' blocks: the pattern is then the union of
// the processes' own patterns (Union), the same on every process.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_PATTERN_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_PATTERN_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "ceres_sqrtba/internal/common/process_group.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class ReducedCameraPattern {
 public:
  explicit ReducedCameraPattern(const ProblemStructure& s);
  // Only the off-diagonal blocks (c', c), c' < c, for which keep(c', c) is
  // true (the visibility-based preconditioners' subsets of S,
  // direct/visibility_based_preconditioner.h); the diagonal ones always.
  ReducedCameraPattern(const ProblemStructure& s, const std::function<bool(int, int)>& keep);

  // The union of every process's pattern (each built from its own s, whose
  // cameras are the same on every process): each process sends its
  // off-diagonal blocks to all (ProcessGroup::Exchange, 8 bytes a block).
  // keep (optional): as the constructor's, on every process alike.
  static ReducedCameraPattern Union(const ProblemStructure& s, const ProcessGroup& processes,
                                    const std::function<bool(int, int)>& keep = nullptr);

  int num_cameras() const { return static_cast<int>(camera_offset_.size()) - 1; }
  // n: rows and columns of S (the reduced camera vector).
  int num_parameters() const { return camera_offset_.back(); }
  int camera_offset(int c) const { return camera_offset_[c]; }
  int camera_size(int c) const { return camera_offset_[c + 1] - camera_offset_[c]; }
  int max_camera_size() const { return max_camera_size_; }

  // Block column c's blocks: k in [block_begin(c), block_end(c)), block row
  // block_row(k) increasing, the last one c itself.
  int64_t block_begin(int c) const { return block_col_begin_[c]; }
  int64_t block_end(int c) const { return block_col_begin_[c + 1]; }
  int block_row(int64_t k) const { return block_row_[k]; }
  int position(int64_t k) const { return position_[k]; }
  int64_t num_blocks() const { return block_col_begin_.back(); }
  // The block (row_camera, column_camera), row_camera <= column_camera, by
  // binary search in the block column; -1 when it is not in the pattern.
  int64_t FindBlock(int row_camera, int column_camera) const;
  const std::vector<int64_t>& block_col_begin() const { return block_col_begin_; }
  const std::vector<int>& block_rows() const { return block_row_; }

  // Scalar nonzeros of the upper triangle, and the bytes of its CSC arrays
  // (column starts and row indices, int64) and values (double).
  int64_t num_nonzeros() const { return num_nonzeros_; }
  int64_t ScalarBytes() const;
  // The scalar CSC pattern of the upper triangle (num_parameters() + 1 column
  // starts, num_nonzeros() sorted row indices).
  void ScalarPattern(std::vector<int64_t>* col_begin, std::vector<int64_t>* rows) const;

 private:
  // Appends block column c: the block rows `rows` (each < c, in any order,
  // no repeats), then c.
  void AppendColumn(int c, std::vector<int>* rows);

  std::vector<int> camera_offset_;       // per camera + 1
  std::vector<int64_t> block_col_begin_;  // per camera + 1
  std::vector<int> block_row_;            // per block
  std::vector<int> position_;             // per block
  int64_t num_nonzeros_ = 0;
  int max_camera_size_ = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_PATTERN_H_
