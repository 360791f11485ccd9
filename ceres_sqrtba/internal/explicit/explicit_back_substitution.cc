#include "ceres_sqrtba/internal/explicit/explicit_back_substitution.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
ExplicitBackSubstitution<Scalar>::ExplicitBackSubstitution(const ProblemStructure& s,
                                                           const ExplicitBlockLayout& layout,
                                                           const WorkPartition& partition)
    : s_(s), partition_(partition), max_cols_(layout.max_cols), max_obs_rows_(layout.max_obs_rows),
      scratch_(partition.num_chunks(), max_obs_rows_ + 2 * max_cols_) {
  chunk_sums_.resize(partition.num_chunks());
}

template <typename Scalar>
double ExplicitBackSubstitution<Scalar>::Run(ExplicitLandmarkBlocks<Scalar>* blocks, const double* d,
                                             double* y, ParallelContext* context) {
  context->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* yb = scratch_[chunk];
    Scalar* t = yb + max_cols_;
    Scalar* yl = t + max_obs_rows_;
    double sum = 0.0;
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      LandmarkBlock<Scalar> b = blocks->block(g);
      // Gather y_p to the block's camera columns.
      int col = 0;
      for (int c = group.camera_begin; c < group.camera_end; ++c) {
        const ParameterBlockInfo& pb = s_.parameter_blocks[s_.group_cameras[c]];
        const double* src = y + pb.tangent_offset;
        for (int k = 0; k < pb.tangent_size; ++k) yb[col + k] = static_cast<Scalar>(src[k]);
        col += pb.tangent_size;
      }
      b.MultiplyReduced(yb, t);
      for (int r = 0; r < b.num_reduced_rows(); ++r) sum += static_cast<double>(t[r]) * t[r];
      if (group.landmark_size == 0) continue;
      double top = 0.0;
      b.BackSubstitute(yb, yl, &top);
      const ParameterBlockInfo& pb = s_.parameter_blocks[group.landmark];
      const double* dl = d + pb.tangent_offset;
      double damping = 0.0;
      for (int k = 0; k < group.landmark_size; ++k) {
        y[pb.tangent_offset + k] = yl[k];
        const double v = dl[k] * static_cast<double>(yl[k]);
        damping += v * v;
      }
      sum += top - damping;
    }
    chunk_sums_[chunk] = sum;
  });
  double jy = 0.0;
  for (double v : chunk_sums_) jy += v;
  return jy;
}

template class ExplicitBackSubstitution<float>;
template class ExplicitBackSubstitution<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
