#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"

#include <algorithm>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

ReducedCameraPattern::ReducedCameraPattern(const ProblemStructure& s) : ReducedCameraPattern(s, nullptr) {}

ReducedCameraPattern::ReducedCameraPattern(const ProblemStructure& s, const std::function<bool(int, int)>& keep) {
  const int num_cameras = static_cast<int>(s.cameras.size());
  camera_offset_.assign(num_cameras + 1, 0);
  for (int c = 0; c < num_cameras; ++c) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.cameras[c]];
    // The reduced camera vector holds the cameras in camera_index order.
    DCHECK_EQ(pb.tangent_offset - s.camera_tangent_begin, camera_offset_[c]);
    camera_offset_[c + 1] = camera_offset_[c] + pb.tangent_size;
    max_camera_size_ = std::max(max_camera_size_, pb.tangent_size);
  }
  DCHECK_EQ(camera_offset_.back(), s.num_camera_parameters);

  // Block column c: the cameras c' <= c that share a group with c.
  block_col_begin_.assign(num_cameras + 1, 0);
  std::vector<int> seen(num_cameras, -1);
  std::vector<int> rows;
  for (int c = 0; c < num_cameras; ++c) {
    rows.clear();
    seen[c] = c;
    for (int slot = s.camera_group_begin[c]; slot < s.camera_group_begin[c + 1]; ++slot) {
      const Group& group = s.groups[s.camera_groups[slot]];
      for (int e = group.camera_begin; e < group.camera_end; ++e) {
        const int other = s.parameter_blocks[s.group_cameras[e]].camera_index;
        if (other < c && seen[other] != c) {
          seen[other] = c;
          if (!keep || keep(other, c)) rows.push_back(other);
        }
      }
    }
    AppendColumn(c, &rows);
  }
}

void ReducedCameraPattern::AppendColumn(int c, std::vector<int>* rows) {
  std::sort(rows->begin(), rows->end());
  rows->push_back(c);
  int position = 0;
  for (int r : *rows) {
    block_row_.push_back(r);
    position_.push_back(position);
    position += camera_size(r);
  }
  const int n = camera_size(c);
  const int off_diagonal = position - n;
  num_nonzeros_ += static_cast<int64_t>(n) * off_diagonal + static_cast<int64_t>(n) * (n + 1) / 2;
  block_col_begin_[c + 1] = static_cast<int64_t>(block_row_.size());
}

ReducedCameraPattern ReducedCameraPattern::Union(const ProblemStructure& s, const ProcessGroup& processes,
                                                 const std::function<bool(int, int)>& keep) {
  ReducedCameraPattern local(s, keep);
  std::vector<uint64_t> mine;
  for (int c = 0; c < local.num_cameras(); ++c) {
    for (int64_t k = local.block_begin(c); k + 1 < local.block_end(c); ++k) {
      mine.push_back((static_cast<uint64_t>(local.block_row(k)) << 32) | static_cast<uint64_t>(c));
    }
  }
  const std::vector<std::vector<uint64_t>> to(static_cast<size_t>(processes.size()), mine);
  std::vector<uint64_t> all;
  std::vector<int> from;
  processes.Exchange(to, &all, &from);
  std::vector<std::vector<int>> rows(static_cast<size_t>(local.num_cameras()));
  for (uint64_t pair : all) rows[pair & 0xffffffffu].push_back(static_cast<int>(pair >> 32));
  ReducedCameraPattern merged = std::move(local);
  merged.block_row_.clear();
  merged.position_.clear();
  merged.num_nonzeros_ = 0;
  std::fill(merged.block_col_begin_.begin(), merged.block_col_begin_.end(), 0);
  for (int c = 0; c < merged.num_cameras(); ++c) {
    std::vector<int>& r = rows[c];
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    merged.AppendColumn(c, &r);
  }
  return merged;
}

int64_t ReducedCameraPattern::FindBlock(int row_camera, int column_camera) const {
  const auto begin = block_row_.begin() + block_col_begin_[column_camera];
  const auto end = block_row_.begin() + block_col_begin_[column_camera + 1];
  const auto it = std::lower_bound(begin, end, row_camera);
  if (it == end || *it != row_camera) return -1;
  return static_cast<int64_t>(it - block_row_.begin());
}

int64_t ReducedCameraPattern::ScalarBytes() const {
  const int64_t columns = static_cast<int64_t>(num_parameters()) + 1;
  return columns * static_cast<int64_t>(sizeof(int64_t)) +
         num_nonzeros_ * static_cast<int64_t>(sizeof(int64_t) + sizeof(double));
}

void ReducedCameraPattern::ScalarPattern(std::vector<int64_t>* col_begin,
                                         std::vector<int64_t>* rows) const {
  col_begin->assign(static_cast<size_t>(num_parameters()) + 1, 0);
  rows->resize(static_cast<size_t>(num_nonzeros_));
  int64_t at = 0;
  for (int c = 0; c < num_cameras(); ++c) {
    for (int a = 0; a < camera_size(c); ++a) {
      (*col_begin)[camera_offset(c) + a] = at;
      for (int64_t k = block_begin(c); k < block_end(c); ++k) {
        const int r = block_row(k);
        // The diagonal block: its upper triangle only.
        const int count = r == c ? a + 1 : camera_size(r);
        for (int i = 0; i < count; ++i) (*rows)[at++] = camera_offset(r) + i;
      }
    }
  }
  DCHECK_EQ(at, num_nonzeros_);
  (*col_begin)[num_parameters()] = at;
}

}  // namespace internal
}  // namespace ceres_sqrtba
