#include "ceres_sqrtba/internal/projected/projected_block_layout.h"

#include <algorithm>
#include <numeric>

#include "ceres_sqrtba/internal/projected/landmark_batches.h"

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// The offsets of `layout`'s groups, placed in layout.order.
void PlaceInOrder(ProjectedBlockLayout* layout) {
  ProjectedBlockLayout& l = *layout;
  const int n = static_cast<int>(l.order.size());
  int64_t hot = 0, cold = 0, rr = 0;
  for (int p = 0; p < n; ++p) {
    const int g = l.order[p];
    const int d = l.landmark_size[g];
    l.hot_offset[g] = hot;
    l.cold_offset[g] = cold;
    l.r_offset[g] = rr;
    hot += static_cast<int64_t>(l.rows[g]) * (l.camera_width[g] + d);
    cold += static_cast<int64_t>(l.rows[g]) * (d + 1);
    rr += static_cast<int64_t>(d) * d;
  }
  l.hot_offset[n] = hot;
  l.cold_offset[n] = cold;
  l.r_offset[n] = rr;
  DCHECK_EQ(hot, l.hot_scalars);
  DCHECK_EQ(cold, l.cold_scalars);
  DCHECK_EQ(rr, l.r_scalars);
}

}  // namespace

void ProjectedBlockLayout::FindRuns() {
  ProjectedBlockLayout& l = *this;
  const int n = static_cast<int>(l.order.size());
  l.item_offset.resize(l.items.size());
  l.item_size.resize(l.items.size());
  for (size_t i = 0; i < l.items.size(); ++i) {
    l.item_offset[i] = l.items[i].offset;
    l.item_size[i] = l.items[i].size;
  }
  l.position_observations.resize(n);
  l.run_length.assign(n, 0);
  // A group that may join a run: uniform with sizes the product lists, with
  // cameras.
  auto listed = [&](int g) {
    bool fixed = false;
    DispatchProductSizes(l.uniform_sizes[g], [&](auto f) { fixed = decltype(f)::kFixed; });
    return fixed && l.camera_width[g] > 0;
  };
  for (int p = n - 1; p >= 0; --p) {
    const int g = l.order[p];
    l.position_observations[p] = l.segment_end[g] - l.segment_begin[g];
    if (!listed(g)) continue;
    const bool joins = p + 1 < n && l.run_length[p + 1] > 0 && l.uniform_sizes[l.order[p + 1]] == l.uniform_sizes[g];
    l.run_length[p] = joins ? l.run_length[p + 1] + 1 : 1;
    // Neighbours in storage: the next group's rows and items follow.
    DCHECK(!joins || l.hot_offset[l.order[p + 1]] ==
                         l.hot_offset[g] + static_cast<int64_t>(l.rows[g]) * l.hot_stride(g));
    DCHECK(!joins || l.segment_begin[l.order[p + 1]] == l.segment_end[g]);
  }
}

ProjectedBlockLayout::ProjectedBlockLayout(const ProblemStructure& s) {
  const int n = static_cast<int>(s.groups.size());
  rows.resize(n);
  camera_width.resize(n);
  landmark_size.resize(n);
  hot_offset.resize(n + 1);
  cold_offset.resize(n + 1);
  r_offset.resize(n + 1);
  segment_begin.resize(n);
  segment_end.resize(n);
  uniform_sizes.resize(n);
  work.resize(n);
  column.assign(s.residual_parameters.size(), kConstant);
  // At most one segment per residual block and one item per (residual
  // block, parameter block) pair: no reallocation while they are filled.
  segments.reserve(s.group_residuals.size());
  items.reserve(s.residual_parameters.size());
  std::vector<int> entry_of(s.parameter_blocks.size(), -1);
  int64_t hot = 0, cold = 0, rr = 0;
  for (int g = 0; g < n; ++g) {
    const Group& group = s.groups[g];
    const int d = group.landmark_size;
    for (int e = group.camera_begin; e < group.camera_end; ++e) entry_of[s.group_cameras[e]] = e;
    segment_begin[g] = static_cast<int>(segments.size());
    int row = 0;
    int width = 0;
    // Uniform so far, with the sizes of the first residual block.
    bool uniform = true;
    BlockSizes sizes{kDynamic, d, kDynamic};
    for (int k = group.residual_begin; k < group.residual_end; ++k) {
      const ResidualBlockInfo& rb = s.residual_blocks[s.group_residuals[k]];
      Segment seg;
      seg.row = row;
      seg.rows = rb.num_residuals;
      seg.item_begin = static_cast<int>(items.size());
      int col = 0;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const int idx = rb.parameter_begin + i;
        const int p = s.residual_parameters[idx];
        const ParameterBlockInfo& pb = s.parameter_blocks[p];
        if (pb.is_constant) {
          column[idx] = kConstant;
        } else if (pb.is_landmark) {
          column[idx] = kLandmark;
        } else {
          column[idx] = col;
          Item item;
          item.offset = pb.tangent_offset - s.camera_tangent_begin;
          item.size = pb.tangent_size;
          item.column = col;
          item.entry = entry_of[p];
          item.row = row;
          item.rows = rb.num_residuals;
          DCHECK_GE(item.entry, group.camera_begin);
          DCHECK_LT(item.entry, group.camera_end);
          items.push_back(item);
          col += pb.tangent_size;
        }
      }
      seg.item_end = static_cast<int>(items.size());
      // Uniform: one camera item per residual block, all of one size; or
      // two, the first all of one size, the second of any (f2 is their
      // largest: header comment).
      const int num_items = seg.item_end - seg.item_begin;
      if ((num_items != 1 && num_items != 2) ||
          (num_items == 2 && items[seg.item_begin + 1].size == 0)) {  // f2 = 0 means one item
        uniform = false;
      } else {
        const int f = items[seg.item_begin].size;
        const int f2 = num_items == 2 ? items[seg.item_begin + 1].size : 0;
        if (k == group.residual_begin) {
          sizes.row = seg.rows;
          sizes.f = f;
          sizes.f2 = f2;
        } else {
          uniform = uniform && seg.rows == sizes.row && f == sizes.f && (f2 > 0) == (sizes.f2 > 0);
          sizes.f2 = std::max(sizes.f2, f2);
        }
      }
      segments.push_back(seg);
      width = std::max(width, col);
      row += rb.num_residuals;
    }
    DCHECK_EQ(row, group.num_rows);
    segment_end[g] = static_cast<int>(segments.size());
    rows[g] = row;
    camera_width[g] = width;
    landmark_size[g] = d;
    uniform_sizes[g] = uniform ? sizes : BlockSizes();
    DCHECK(!uniform || width == sizes.f + sizes.f2);
    hot += static_cast<int64_t>(row) * (width + d);
    cold += static_cast<int64_t>(row) * (d + 1);
    rr += static_cast<int64_t>(d) * d;
    work[g] = static_cast<int64_t>(row) * (width + d + 1) + 1;
    max_rows = std::max(max_rows, row);
    max_landmark_size = std::max(max_landmark_size, d);
    max_camera_width = std::max(max_camera_width, width);
  }
  hot_scalars = hot;
  cold_scalars = cold;
  r_scalars = rr;
  entry_item_begin.assign(s.group_cameras.size() + 1, 0);
  for (const Item& item : items) ++entry_item_begin[item.entry + 1];
  for (size_t e = 0; e < s.group_cameras.size(); ++e) entry_item_begin[e + 1] += entry_item_begin[e];
  entry_items.resize(items.size());
  std::vector<int> fill(entry_item_begin.begin(), entry_item_begin.end() - 1);
  for (size_t i = 0; i < items.size(); ++i) entry_items[fill[items[i].entry]++] = static_cast<int>(i);
  DCHECK_EQ(entry_item_begin.back(), static_cast<int>(items.size()));
  for (int g = 0; g < n; ++g) DCHECK_LT(segment_begin[g], segment_end[g]);
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  PlaceInOrder(this);
  FindRuns();
}


int ProjectedBlockLayout::EntryItemAtRow(int e, int row) const {
  const int* begin = entry_items.data() + entry_item_begin[e];
  const int* end = entry_items.data() + entry_item_begin[e + 1];
  const int* it = std::lower_bound(begin, end, row, [&](int item, int r) { return items[item].row < r; });
  return it != end && items[*it].row == row ? *it : -1;
}

void ProjectedBlockLayout::PlaceInShapeOrder(const WorkPartition& partition) {
  const int n = static_cast<int>(order.size());
  CHECK_EQ(partition.num_chunks() > 0 ? partition.end(partition.num_chunks() - 1) : 0, n);
  // A counting sort per chunk (stable), over the shape keys that occur.
  std::vector<int> key(n);
  for (int g = 0; g < n; ++g) key[g] = LandmarkBatches::ShapeKey(*this, g);
  std::vector<int> count(LandmarkBatches::kNumShapeKeys + 1, 0);
  std::vector<int> used;
  for (int c = 0; c < partition.num_chunks(); ++c) {
    const int begin = partition.begin(c), end = partition.end(c);
    used.clear();
    for (int g = begin; g < end; ++g) {
      if (count[key[g] + 1]++ == 0) used.push_back(key[g]);
    }
    std::sort(used.begin(), used.end());
    // count[k + 1] -> first position of key k.
    int next = begin;
    for (int k : used) {
      const int c_k = count[k + 1];
      count[k + 1] = next;
      next += c_k;
    }
    for (int g = begin; g < end; ++g) order[count[key[g] + 1]++] = g;
    for (int k : used) count[k + 1] = 0;
  }
  PlaceInOrder(this);
  // The segments and items in storage order, each group's in its own order.
  std::vector<Segment> placed_segments;
  std::vector<Item> placed_items;
  placed_segments.reserve(segments.size());
  placed_items.reserve(items.size());
  std::vector<int> item_position(items.size());
  for (int p = 0; p < n; ++p) {
    const int g = order[p];
    const int begin = static_cast<int>(placed_segments.size());
    for (int sg = segment_begin[g]; sg < segment_end[g]; ++sg) {
      Segment seg = segments[sg];
      const int item_begin = static_cast<int>(placed_items.size());
      for (int it = seg.item_begin; it < seg.item_end; ++it) {
        item_position[it] = static_cast<int>(placed_items.size());
        placed_items.push_back(items[it]);
      }
      seg.item_begin = item_begin;
      seg.item_end = static_cast<int>(placed_items.size());
      placed_segments.push_back(seg);
    }
    segment_begin[g] = begin;
    segment_end[g] = static_cast<int>(placed_segments.size());
  }
  segments.swap(placed_segments);
  items.swap(placed_items);
  // entry_items keeps each entry's items in row order: a group's items keep
  // their relative order above.
  for (int& it : entry_items) it = item_position[it];
  FindRuns();
}

}  // namespace internal
}  // namespace ceres_sqrtba
