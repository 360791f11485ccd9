// Which landmarks of the projected landmark blocks (projected_landmark_blocks.h)
// run their per-solve work side by side, one per SIMD lane
// (batched_thin_qr.h): the batches of every chunk of the work partition.
//
// A batch holds up to `lanes` groups of one chunk with the same landmark size
// d and the same batch row count M = BatchRows(m) of their observation rows
// m: a group with fewer rows than M is padded with zero rows, which change
// none of its results (batched_thin_qr.h) as long as m >= d: the reflectors'
// pivot rows are then the landmark's own rows. BatchRows pads only m > 16,
// and batched landmarks have d <= kMaxBatchLandmarkSize = 8. Rounding m up to M (at most 1/8
// more rows, none below 17 rows) lets landmarks with nearly equal track
// lengths share a batch, so that batches stay full where tracks are long and
// varied (a chunk of 300 landmarks seen 100 to 300 times each has ~400
// distinct row counts but ~100 batch row counts).
//
// What is not batched runs one group at a time as before: groups without a
// landmark, groups with more than kMaxBatchRows rows or landmarks larger
// than kMaxBatchLandmarkSize (their own loops are long enough; a batch's
// scratch would be large), and a row count that only one group of the chunk
// has.
//
// Why per chunk. A chunk is the unit of the deterministic reductions (its
// camera sums are added in chunk order), and chunks do not depend on the
// number of threads, so neither do the batches: results stay bit-identical
// for any thread count. Within a chunk the batches run in a fixed order
// (by d, then M, then group index), the single groups after them.
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

  // Rows of the batch a group of m observation rows joins: m up to 16, then
  // m rounded up to a multiple of 2^(floor(log2 m) - 3).
  static int BatchRows(int m);

  LandmarkBatches(const ProjectedBlockLayout& layout, const WorkPartition& partition, int lanes);

  struct Batch {
    int first = 0;  // its groups: order[first, first + count)
    int count = 0;  // 1: a group run on its own (rows, d unused)
    int rows = 0;   // M
    int d = 0;
  };
  int lanes = 0;
  std::vector<int> order;        // every group once, chunk by chunk
  std::vector<Batch> batches;    // chunk c: batches[batch_begin[c], batch_begin[c + 1])
  std::vector<int> batch_begin;  // per chunk + 1
  int max_rows = 0;              // largest M of a batch of two or more
  int max_d = 0;                 // largest d of such a batch
  int64_t batched_groups = 0;    // groups in batches of two or more

  int64_t AllocatedBytes() const { return VectorBytes(order) + VectorBytes(batches) + VectorBytes(batch_begin); }
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_LANDMARK_BATCHES_H_
