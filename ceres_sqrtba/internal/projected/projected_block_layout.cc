#include "ceres_sqrtba/internal/projected/projected_block_layout.h"

#include <algorithm>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

ProjectedBlockLayout::ProjectedBlockLayout(const ProblemStructure& s) {
  const int n = static_cast<int>(s.groups.size());
  rows.resize(n);
  camera_width.resize(n);
  landmark_size.resize(n);
  hot_offset.resize(n + 1);
  cold_offset.resize(n + 1);
  r_offset.resize(n + 1);
  segment_begin.resize(n + 1);
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
      if (seg.item_end - seg.item_begin != 1) {
        uniform = false;
      } else if (k == group.residual_begin) {
        sizes.row = seg.rows;
        sizes.f = items[seg.item_begin].size;
      } else {
        uniform = uniform && seg.rows == sizes.row && items[seg.item_begin].size == sizes.f;
      }
      segments.push_back(seg);
      width = std::max(width, col);
      row += rb.num_residuals;
    }
    DCHECK_EQ(row, group.num_rows);
    rows[g] = row;
    camera_width[g] = width;
    landmark_size[g] = d;
    uniform_sizes[g] = uniform ? sizes : BlockSizes();
    DCHECK(!uniform || width == sizes.f);
    hot_offset[g] = hot;
    cold_offset[g] = cold;
    r_offset[g] = rr;
    hot += static_cast<int64_t>(row) * (width + d);
    cold += static_cast<int64_t>(row) * (d + 1);
    rr += static_cast<int64_t>(d) * d;
    work[g] = static_cast<int64_t>(row) * (width + d + 1) + 1;
    max_rows = std::max(max_rows, row);
    max_landmark_size = std::max(max_landmark_size, d);
    max_camera_width = std::max(max_camera_width, width);
  }
  segment_begin[n] = static_cast<int>(segments.size());
  hot_offset[n] = hot;
  cold_offset[n] = cold;
  r_offset[n] = rr;
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
  for (int g = 0; g < n; ++g) {
    DCHECK_LE(hot_offset[g], hot_offset[g + 1]);
    DCHECK_LE(cold_offset[g], cold_offset[g + 1]);
    DCHECK_LE(r_offset[g], r_offset[g + 1]);
    DCHECK_LT(segment_begin[g], segment_begin[g + 1]);
  }
}

}  // namespace internal
}  // namespace ceres_sqrtba
