// Which landmarks of the projected landmark blocks (projected_landmark_blocks.h)
// run their per-solve work side by side, one per SIMD lane
// (batched_thin_qr.h): the batches of every chunk of the work partition.
//
// Shapes. A group's batch shape is its landmark size d and its batch row
// count M = BatchRows(m) of its m observation rows; groups of one shape can
// share a batch. A group with fewer rows than M is padded with zero rows,
// which change none of its results (batched_thin_qr.h) as long as m >= d:
// the reflectors' pivot rows are then the landmark's own rows. BatchRows
// pads only m > 16, and batched landmarks have d <= kMaxBatchLandmarkSize = 8.
// Rounding m up to M (at most 1/8 more rows, none below 17 rows) lets
// landmarks with nearly equal track lengths share a batch, so that batches
// stay full where tracks are long and varied (a chunk of 300 landmarks seen
// 100 to 300 times each has ~400 distinct row counts but ~100 batch row
// counts). Groups without a landmark, with more than kMaxBatchRows rows or
// with landmarks larger than kMaxBatchLandmarkSize are not batched (their own
// loops are long enough; a batch's scratch would be large): ShapeKey puts
// them after every batchable shape.
//
// Storage order. The layout stores the groups of each chunk sorted by shape
// (ProjectedBlockLayout::PlaceInShapeOrder, stable: by group index within a
// shape), so a batch is `lanes` neighbouring groups in storage: its rows are
// read as one stream. The group indices, and so the evaluator's order of
// residual blocks (the user's cost functions and parameter blocks in their
// memory order), do not change. The order does not depend on the lane count,
// so the float and the double blocks of one layout share it.
//
// Batches. Along a chunk's storage order, each run of groups of one
// batchable shape is cut into batches of `lanes` groups; a run's last group,
// if it is alone, and every group that is not batchable runs on its own (a
// batch of one). Chunks do not depend on the number of threads and a chunk
// is the unit of the deterministic reductions (its camera sums are added in
// chunk order), so neither the batches nor the results depend on the number
// of threads.
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_LANDMARK_BATCHES_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_LANDMARK_BATCHES_H_

#include <cstdint>
#include <vector>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"

namespace ceres_sqrtba {
namespace internal {

struct LandmarkBatches {
  static constexpr int kMaxBatchRows = 1024;
  static constexpr int kMaxBatchLandmarkSize = 8;
  // ShapeKey's values: [0, kNumShapeKeys).
  static constexpr int kNumShapeKeys = (kMaxBatchLandmarkSize + 1) * (kMaxBatchRows + 1) + 1;

  // Rows of the batch a group of m observation rows joins: m up to 16, then
  // m rounded up to a multiple of 2^(floor(log2 m) - 3).
  static int BatchRows(int m);
  // Group g's shape as a sort key: equal keys, equal (d, M); by d, then M;
  // kNumShapeKeys - 1 for a group that is not batchable.
  static int ShapeKey(const ProjectedBlockLayout& layout, int g);

  // Batches of at most `lanes` groups (1: every group alone) along the
  // layout's storage order (layout.order), chunk by chunk.
  LandmarkBatches(const ProjectedBlockLayout& layout, const WorkPartition& partition, int lanes);

  struct Batch {
    int first = 0;  // its groups: layout.order[first, first + count)
    int count = 0;  // 1: a group run on its own (rows, d unused)
    int rows = 0;   // M
    int d = 0;
  };
  int lanes = 0;
  std::vector<Batch> batches;    // chunk c: batches[batch_begin[c], batch_begin[c + 1])
  std::vector<int> batch_begin;  // per chunk + 1
  int max_rows = 0;              // largest M of a batch of two or more
  int max_d = 0;                 // largest d of such a batch
  int64_t batched_groups = 0;    // groups in batches of two or more

  int64_t AllocatedBytes() const { return VectorBytes(batches) + VectorBytes(batch_begin); }
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_LANDMARK_BATCHES_H_
