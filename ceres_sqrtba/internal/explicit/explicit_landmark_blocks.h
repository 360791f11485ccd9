// All landmark blocks of a problem in one contiguous allocation, and the
// JacobianWriter that fills them from the evaluator.
//
// The layout (offsets, row counts, the column of every (residual block,
// parameter block) pair) is computed from the ProblemStructure before anything
// is allocated, so that the memory a solve needs is known up front
// (RequiredBytes) and checked against Solver::Options::memory_limit_in_bytes.
// A block with k two-dimensional observations of a d-dimensional landmark by
// cameras of c parameters each takes (2k + d) (c k + d + 1) scalars.
#ifndef CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_LANDMARK_BLOCKS_H_
#define CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_LANDMARK_BLOCKS_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/explicit/landmark_block.h"
#include "ceres_sqrtba/internal/linear/linear_solver.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

// Layout shared by both precisions.
struct ExplicitBlockLayout {
  explicit ExplicitBlockLayout(const ProblemStructure& s);
  int64_t AllocatedBytes() const {
    return VectorBytes(offset) + VectorBytes(obs_rows) + VectorBytes(stride) + VectorBytes(column) +
           VectorBytes(work) + VectorBytes(camera_row_begin) + VectorBytes(camera_rows);
  }
  std::vector<int64_t> offset;  // per group, in scalars; size groups + 1
  std::vector<int> obs_rows;    // per group
  std::vector<int> stride;      // per group
  // Column of each entry of ProblemStructure::residual_parameters inside its
  // group's block: camera column offset, kLandmark, or kConstant.
  std::vector<int> column;
  std::vector<int64_t> work;  // per group, for load balancing
  // Rows of the (unmarginalized) block where each camera has entries: for
  // entry i of ProblemStructure::group_cameras, the row segments
  // [camera_row_begin[i], camera_row_begin[i + 1]) of camera_rows, each a
  // (first row, number of rows) pair.
  std::vector<int> camera_row_begin;
  std::vector<std::pair<int, int>> camera_rows;
  int max_obs_rows = 0;
  int max_cols = 0;
  int64_t total_scalars = 0;
  int64_t rotation_scalars = 0;
  static constexpr int kLandmark = -2;
  static constexpr int kConstant = -1;
};

template <typename Scalar>
class ExplicitLandmarkBlocks : public JacobianWriter {
 public:
  ExplicitLandmarkBlocks(const ProblemStructure& s, const ExplicitBlockLayout& layout);

  // Bytes of the blocks and of the damping rotations of one precision.
  static int64_t RequiredBytes(const ExplicitBlockLayout& layout) {
    return (layout.total_scalars + layout.rotation_scalars) *
           static_cast<int64_t>(sizeof(Scalar));
  }

  LandmarkBlock<Scalar> block(int g) {
    return LandmarkBlock<Scalar>(data_.get() + layout_.offset[g], layout_.obs_rows[g],
                                 s_.groups[g].landmark_size, s_.groups[g].camera_columns,
                                 layout_.stride[g]);
  }
  Scalar* rotations(int g) { return rotations_.data() + rotation_offset_[g]; }
  int num_groups() const { return static_cast<int>(s_.groups.size()); }

  // Column scale applied to every Jacobian written from now on (tangent
  // space, size num_effective_parameters); nullptr: no scaling.
  void SetColumnScale(const double* scale) { scale_ = scale; }

  void Write(int group, int position, int row, int residual,
             const double* residuals, const double* const* jacobians) override;
  bool KeepsFloatJacobians() const override { return std::is_same<Scalar, float>::value; }

  // True when a value written since the last ClearOutOfRange() cannot be used
  // safely in Scalar: not finite, or so large that products of two such
  // values overflow (|v| > sqrt(max) / 16). Only single precision checks.
  bool out_of_range() const { return out_of_range_.load(std::memory_order_relaxed); }
  void ClearOutOfRange() { out_of_range_.store(false, std::memory_order_relaxed); }
  // Flags values of block g beyond kMaxMagnitude (after scaling).
  void CheckRange(int g);
  static constexpr double kMaxMagnitude = kMaxStorableMagnitude<Scalar>;  // linear_solver.h

 private:
  const ProblemStructure& s_;
  const ExplicitBlockLayout& layout_;
  // Not value-initialized: every block is cleared by the first residual block
  // written into it, by the thread that evaluates it, so the pages are first
  // touched in parallel and not zeroed twice. Huge pages where available
  // (AllocateLarge).
  std::unique_ptr<Scalar[], FreeDeleter> data_;
  std::vector<Scalar> rotations_;
  std::vector<int64_t> rotation_offset_;
  const double* scale_ = nullptr;
  std::atomic<bool> out_of_range_{false};
};

extern template class ExplicitLandmarkBlocks<float>;
extern template class ExplicitLandmarkBlocks<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_LANDMARK_BLOCKS_H_
