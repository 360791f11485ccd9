#include "ceres_sqrtba/internal/explicit/explicit_reduced_camera_system.h"

#include <algorithm>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
ExplicitReducedCameraSystem<Scalar>::ExplicitReducedCameraSystem(const ProblemStructure& s,
                                                 const ExplicitBlockLayout& layout,
                                                 const WorkPartition& partition,
                                                 ExplicitLandmarkBlocks<Scalar>* blocks,
                                                 ParallelContext* context)
    : s_(s), partition_(partition), blocks_(blocks), context_(context) {
  camera_offset_.resize(s.group_cameras.size());
  camera_size_.resize(s.group_cameras.size());
  for (size_t i = 0; i < s.group_cameras.size(); ++i) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.group_cameras[i]];
    camera_offset_[i] = pb.tangent_offset - s.camera_tangent_begin;
    camera_size_[i] = pb.tangent_size;
  }
  max_cols_ = layout.max_cols;
  accumulators_ = PerChunk<Scalar>(partition.num_chunks(), s.num_camera_parameters);
  // xb and yb; the max_obs_rows more scalars per chunk are unused, but keep
  // every chunk's xb and yb where they were: Eigen's vectorized products
  // round according to the alignment of their operands.
  scratch_ = PerChunk<Scalar>(partition.num_chunks(), 2 * max_cols_ + layout.max_obs_rows);
}

namespace {

template <bool kAdd, typename Scalar>
inline void CopyValues(const Scalar* src, int n, Scalar* dst) {
  for (int k = 0; k < n; ++k) {
    if (kAdd) {
      dst[k] += src[k];
    } else {
      dst[k] = src[k];
    }
  }
}

// dst[0..n) = src[0..n) (add: +=), unrolled for the usual camera sizes: per
// landmark block the product gathers and scatters all its camera entries, a
// cost comparable to the product itself for short tracks.
template <bool kAdd, typename Scalar>
inline void CopySegment(const Scalar* src, int n, Scalar* dst) {
  DispatchCameraSize(n, [&](auto fixed) {
    using S = decltype(fixed);
    CopyValues<kAdd>(src, S::kFixed ? S::kF : n, dst);
  });
}

}  // namespace

template <typename Scalar>
void ExplicitReducedCameraSystem<Scalar>::Gather(int group, const Scalar* x, Scalar* xb) const {
  const Group& g = s_.groups[group];
  int col = 0;
  for (int c = g.camera_begin; c < g.camera_end; ++c) {
    CopySegment<false>(x + camera_offset_[c], camera_size_[c], xb + col);
    col += camera_size_[c];
  }
}

template <typename Scalar>
void ExplicitReducedCameraSystem<Scalar>::ScatterAdd(int group, const Scalar* yb, Scalar* y) const {
  const Group& g = s_.groups[group];
  int col = 0;
  for (int c = g.camera_begin; c < g.camera_end; ++c) {
    CopySegment<true>(yb + col, camera_size_[c], y + camera_offset_[c]);
    col += camera_size_[c];
  }
}

// y = sum over blocks of B_b^T (B_b x_b) + lambda D_p^2 x: every chunk scatters
// its blocks' products into its own accumulator, summed in chunk order.
template <typename Scalar>
void ExplicitReducedCameraSystem<Scalar>::Multiply(const Scalar* x, Scalar* y) {
  const int nc = s_.num_camera_parameters;
  context_->ForChunks(partition_, [&](int chunk, int gbegin, int gend) {
    Scalar* acc = accumulators_[chunk];
    std::fill(acc, acc + nc, Scalar(0));
    Scalar* xb = scratch_[chunk];
    Scalar* yb = xb + max_cols_;
    for (int g = gbegin; g < gend; ++g) {
      if (s_.groups[g].camera_columns == 0) continue;
      const LandmarkBlock<Scalar> b = blocks_->block(g);
      Gather(g, x, xb);
      b.MultiplyReducedNormal(xb, yb);
      ScatterAdd(g, yb, acc);
    }
  });
  accumulators_.SumInto(context_, nc, y);
  if (damping_squared_ != nullptr) {
    for (int i = 0; i < nc; ++i) y[i] += damping_squared_[i] * x[i];
  }
}

template <typename Scalar>
void ExplicitReducedCameraSystem<Scalar>::Rhs(Scalar* b) {
  context_->ForChunks(partition_, [&](int chunk, int gbegin, int gend) {
    BeginRhsChunk(chunk);
    for (int g = gbegin; g < gend; ++g) AddRhs(chunk, g, blocks_->block(g));
  });
  FinishRhs(b);
}

template <typename Scalar>
void ExplicitReducedCameraSystem<Scalar>::BeginRhsChunk(int chunk) {
  std::fill(accumulators_[chunk], accumulators_[chunk] + s_.num_camera_parameters, Scalar(0));
}

template <typename Scalar>
void ExplicitReducedCameraSystem<Scalar>::AddRhs(int chunk, int group, const LandmarkBlock<Scalar>& block) {
  if (block.camera_columns() == 0) return;
  Scalar* yb = scratch_[chunk] + max_cols_;
  std::fill(yb, yb + block.camera_columns(), Scalar(0));
  block.AddReducedRhs(yb);
  ScatterAdd(group, yb, accumulators_[chunk]);
}

template <typename Scalar>
void ExplicitReducedCameraSystem<Scalar>::FinishRhs(Scalar* b) {
  accumulators_.SumInto(context_, s_.num_camera_parameters, b);
}

template class ExplicitReducedCameraSystem<float>;
template class ExplicitReducedCameraSystem<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
