#include "ceres_sqrtba/internal/projected/landmark_batches.h"

#include <algorithm>
#include <tuple>

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

LandmarkBatches::LandmarkBatches(const ProjectedBlockLayout& layout, const WorkPartition& partition,
                                 int lanes_per_batch)
    : lanes(lanes_per_batch) {
  CHECK_GE(lanes, 1);
  const int num_groups = static_cast<int>(layout.rows.size());
  order.reserve(num_groups);
  batch_begin.reserve(partition.num_chunks() + 1);
  batch_begin.push_back(0);
  std::vector<std::tuple<int, int, int>> candidates;  // (d, M, group)
  std::vector<int> singles;
  for (int chunk = 0; chunk < partition.num_chunks(); ++chunk) {
    candidates.clear();
    singles.clear();
    for (int g = partition.begin(chunk); g < partition.end(chunk); ++g) {
      const int d = layout.landmark_size[g];
      const int rows = BatchRows(layout.rows[g]);
      if (lanes > 1 && d > 0 && d <= kMaxBatchLandmarkSize && rows <= kMaxBatchRows) {
        candidates.emplace_back(d, rows, g);
      } else {
        singles.push_back(g);
      }
    }
    std::sort(candidates.begin(), candidates.end());
    size_t i = 0;
    while (i < candidates.size()) {
      size_t run_end = i + 1;
      while (run_end < candidates.size() && std::get<0>(candidates[run_end]) == std::get<0>(candidates[i]) &&
             std::get<1>(candidates[run_end]) == std::get<1>(candidates[i])) {
        ++run_end;
      }
      for (size_t b = i; b < run_end; b += lanes) {
        const int count = static_cast<int>(std::min<size_t>(lanes, run_end - b));
        if (count == 1) {
          singles.push_back(std::get<2>(candidates[b]));
          continue;
        }
        Batch batch;
        batch.first = static_cast<int>(order.size());
        batch.count = count;
        batch.d = std::get<0>(candidates[b]);
        batch.rows = std::get<1>(candidates[b]);
        for (int l = 0; l < count; ++l) order.push_back(std::get<2>(candidates[b + l]));
        batches.push_back(batch);
        max_rows = std::max(max_rows, batch.rows);
        max_d = std::max(max_d, batch.d);
        batched_groups += count;
      }
      i = run_end;
    }
    std::sort(singles.begin(), singles.end());
    for (int g : singles) {
      Batch batch;
      batch.first = static_cast<int>(order.size());
      batch.count = 1;
      order.push_back(g);
      batches.push_back(batch);
    }
    batch_begin.push_back(static_cast<int>(batches.size()));
  }
  DCHECK_EQ(static_cast<int>(order.size()), num_groups);
}

}  // namespace internal
}  // namespace ceres_sqrtba
