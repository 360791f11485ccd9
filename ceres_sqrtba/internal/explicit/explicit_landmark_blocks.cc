#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"

#include <algorithm>
#include <new>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {

ExplicitBlockLayout::ExplicitBlockLayout(const ProblemStructure& s) {
  const int n = static_cast<int>(s.groups.size());
  offset.resize(n + 1);
  obs_rows.resize(n);
  stride.resize(n);
  work.resize(n);
  column.assign(s.residual_parameters.size(), kConstant);
  std::vector<int> camera_column(s.parameter_blocks.size(), -1);
  std::vector<int> camera_entry(s.parameter_blocks.size(), -1);
  // (group camera entry, (row, count)) in group order, then bucketed.
  std::vector<std::pair<int, std::pair<int, int>>> segments;
  int64_t total = 0;
  for (int g = 0; g < n; ++g) {
    const Group& group = s.groups[g];
    const int d = group.landmark_size;
    obs_rows[g] = LandmarkBlock<double>::ObservationRows(group.num_rows, d);
    stride[g] = LandmarkBlock<double>::Stride(group.camera_columns, d);
    offset[g] = total;
    total += static_cast<int64_t>(obs_rows[g] + d) * stride[g];
    rotation_scalars += 2 * LandmarkBlock<double>::NumRotations(d);
    work[g] = static_cast<int64_t>(obs_rows[g] + d) * (group.camera_columns + d + 1);
    max_obs_rows = std::max(max_obs_rows, obs_rows[g]);
    max_cols = std::max(max_cols, group.camera_columns + d + 1);
    int col = 0;
    for (int c = group.camera_begin; c < group.camera_end; ++c) {
      const int p = s.group_cameras[c];
      camera_column[p] = col;
      camera_entry[p] = c;
      col += s.parameter_blocks[p].tangent_size;
    }
    auto camera_entry_of = [&](int p) { return camera_entry[p]; };
    int row = 0;
    for (int k = group.residual_begin; k < group.residual_end; ++k) {
      const ResidualBlockInfo& rb = s.residual_blocks[s.group_residuals[k]];
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const int p = s.residual_parameters[rb.parameter_begin + i];
        if (!s.parameter_blocks[p].is_constant && !s.parameter_blocks[p].is_landmark) {
          segments.push_back({camera_entry_of(p), {row, rb.num_residuals}});
        }
      }
      row += rb.num_residuals;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const int idx = rb.parameter_begin + i;
        const ParameterBlockInfo& pb = s.parameter_blocks[s.residual_parameters[idx]];
        if (pb.is_constant) {
          column[idx] = kConstant;
        } else if (pb.is_landmark) {
          column[idx] = kLandmark;
        } else {
          column[idx] = camera_column[s.residual_parameters[idx]];
        }
      }
    }
  }
  offset[n] = total;
  total_scalars = total;
  camera_row_begin.assign(s.group_cameras.size() + 1, 0);
  for (const auto& seg : segments) ++camera_row_begin[seg.first + 1];
  for (size_t i = 0; i < s.group_cameras.size(); ++i) camera_row_begin[i + 1] += camera_row_begin[i];
  camera_rows.resize(segments.size());
  std::vector<int> fill(camera_row_begin.begin(), camera_row_begin.end() - 1);
  for (const auto& seg : segments) camera_rows[fill[seg.first]++] = seg.second;
}

template <typename Scalar>
ExplicitLandmarkBlocks<Scalar>::ExplicitLandmarkBlocks(const ProblemStructure& s,
                                       const ExplicitBlockLayout& layout)
    : s_(s), layout_(layout) {
  data_.reset(static_cast<Scalar*>(
      AllocateLarge(std::max<int64_t>(1, layout.total_scalars) * static_cast<int64_t>(sizeof(Scalar)))));
  rotations_.resize(std::max<int64_t>(1, layout.rotation_scalars));
  rotation_offset_.resize(s.groups.size());
  int64_t r = 0;
  for (size_t g = 0; g < s.groups.size(); ++g) {
    rotation_offset_[g] = r;
    r += 2 * LandmarkBlock<Scalar>::NumRotations(s.groups[g].landmark_size);
  }
}

template <typename Scalar>
void ExplicitLandmarkBlocks<Scalar>::Write(int group, int position, int row, int residual,
                                   const double* residuals,
                                   const double* const* jacobians) {
  LandmarkBlock<Scalar> b = block(group);
  // The first residual block of a group starts a new linearization: clear the
  // whole block (camera columns of other rows, padding and damping rows).
  if (position == 0) b.SetZero();
  const ResidualBlockInfo& rb = s_.residual_blocks[residual];
  const int m = rb.num_residuals;
  const int rc = b.residual_column();
  // Before the column scale is known (the first Jacobian) only values that do
  // not fit at all are flagged; ScaleColumns checks the scaled values.
  const double limit = scale_ != nullptr ? kMaxMagnitude : static_cast<double>(std::numeric_limits<Scalar>::max());
  bool out_of_range = false;
  for (int i = 0; i < m; ++i) {
    out_of_range |= !(std::abs(residuals[i]) <= limit);
    b(row + i, rc) = static_cast<Scalar>(residuals[i]);
  }
  for (int i = 0; i < rb.num_parameter_blocks; ++i) {
    if (jacobians[i] == nullptr) continue;
    const int idx = rb.parameter_begin + i;
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.residual_parameters[idx]];
    const int col0 = layout_.column[idx] == ExplicitBlockLayout::kLandmark
                         ? b.camera_columns()
                         : layout_.column[idx];
    const int ts = pb.tangent_size;
    const double* j = jacobians[i];
    const double* scale = scale_ != nullptr ? scale_ + pb.tangent_offset : nullptr;
    for (int rr = 0; rr < m; ++rr) {
      Scalar* out = b.row(row + rr) + col0;
      const double* in = j + rr * ts;
      for (int c = 0; c < ts; ++c) {
        const double v = scale != nullptr ? in[c] * scale[c] : in[c];
        out_of_range |= !(std::abs(v) <= limit);
        out[c] = static_cast<Scalar>(v);
      }
    }
  }
  if (out_of_range) out_of_range_.store(true, std::memory_order_relaxed);
}

template <typename Scalar>
void ExplicitLandmarkBlocks<Scalar>::CheckRange(int g) {
  if (!(kMaxMagnitude < std::numeric_limits<double>::infinity())) return;
  const Scalar* begin = data_.get() + layout_.offset[g];
  const Scalar* end = data_.get() + layout_.offset[g + 1];
  for (const Scalar* v = begin; v != end; ++v) {
    if (!(std::abs(static_cast<double>(*v)) <= kMaxMagnitude)) {
      out_of_range_.store(true, std::memory_order_relaxed);
      return;
    }
  }
}

template class ExplicitLandmarkBlocks<float>;
template class ExplicitLandmarkBlocks<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
