#include "ceres_sqrtba/internal/projected/landmark_batches.h"

#include <algorithm>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

// BatchRows pads only m > 16, so a padded landmark has m >= d (batched_thin_qr.h).
static_assert(LandmarkBatches::kMaxBatchLandmarkSize <= 16, "a padded landmark must have m >= d");

int LandmarkBatches::BatchRows(int m) {
  if (m <= 16) return m;
  int power = 16;
  while (power <= m / 2) power *= 2;  // the largest power of two <= m
  const int step = power / 8;
  return (m + step - 1) / step * step;
}

int LandmarkBatches::ShapeKey(const ProjectedBlockLayout& layout, int g) {
  const int d = layout.landmark_size[g];
  const int m = layout.rows[g];
  if (d <= 0 || d > kMaxBatchLandmarkSize || m > kMaxBatchRows) return kNumShapeKeys - 1;
  const int rows = BatchRows(m);
  if (rows > kMaxBatchRows) return kNumShapeKeys - 1;
  return d * (kMaxBatchRows + 1) + rows;
}

LandmarkBatches::LandmarkBatches(const ProjectedBlockLayout& layout, const WorkPartition& partition,
                                 int lanes_per_batch)
    : lanes(lanes_per_batch) {
  CHECK_GE(lanes, 1);
  const int num_groups = static_cast<int>(layout.rows.size());
  CHECK_EQ(static_cast<int>(layout.order.size()), num_groups);
  batches.reserve(num_groups);
  batch_begin.reserve(partition.num_chunks() + 1);
  batch_begin.push_back(0);
  auto single = [&](int position) {
    Batch batch;
    batch.first = position;
    batch.count = 1;
    batches.push_back(batch);
  };
  for (int chunk = 0; chunk < partition.num_chunks(); ++chunk) {
    const int end = partition.end(chunk);
    int p = partition.begin(chunk);
    while (p < end) {
      const int key = ShapeKey(layout, layout.order[p]);
      int run_end = p + 1;
      while (run_end < end && ShapeKey(layout, layout.order[run_end]) == key) ++run_end;
      if (lanes == 1 || key == kNumShapeKeys - 1) {
        for (; p < run_end; ++p) single(p);
        continue;
      }
      const int g0 = layout.order[p];
      for (int b = p; b < run_end; b += lanes) {
        const int count = std::min(lanes, run_end - b);
        if (count == 1) {
          single(b);
          continue;
        }
        Batch batch;
        batch.first = b;
        batch.count = count;
        batch.d = layout.landmark_size[g0];
        batch.rows = BatchRows(layout.rows[g0]);
        batches.push_back(batch);
        max_rows = std::max(max_rows, batch.rows);
        max_d = std::max(max_d, batch.d);
        batched_groups += count;
      }
      p = run_end;
    }
    batch_begin.push_back(static_cast<int>(batches.size()));
  }
}

}  // namespace internal
}  // namespace ceres_sqrtba
