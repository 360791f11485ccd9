#include "ceres_sqrtba/internal/explicit/marginalized_landmark_blocks.h"

#include <algorithm>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
MarginalizedLandmarkBlocks<Scalar>::MarginalizedLandmarkBlocks(const ProblemStructure& s,
                                                               const ExplicitBlockLayout& layout,
                                                               const WorkPartition& partition,
                                                               ParallelContext* context)
    : s_(s),
      layout_(layout),
      partition_(partition),
      context_(context),
      blocks_(s, layout),
      camera_gram_(s, partition),
      scratch_(partition.num_chunks(), layout.max_obs_rows + 2 * layout.max_cols) {}

template <typename Scalar>
JacobianWriter* MarginalizedLandmarkBlocks<Scalar>::writer() {
  marginalized_ = false;
  damped_ = false;
  camera_gram_valid_ = false;
  blocks_.ClearOutOfRange();
  return &blocks_;
}

template <typename Scalar>
void MarginalizedLandmarkBlocks<Scalar>::EnsureCameraGram() {
  if (camera_gram_valid_) return;
  // From the cameras' own rows while the blocks are raw (cheaper), from all
  // observation rows once marginalized: Q is orthogonal, both give Jc^T Jc.
  const bool raw = !marginalized_;
  camera_gram_.ComputeWith(context_, [&](int g, int entry, int column, int n, double* acc) {
    const LandmarkBlock<Scalar> b = blocks_.block(g);
    if (!raw) return b.AddColumnGramLower(column, n, 0, b.obs_rows(), acc);
    // Before the QR a camera's columns are non-zero only on the rows of its
    // own residual blocks, k times fewer than all observation rows.
    for (int r = layout_.camera_row_begin[entry]; r < layout_.camera_row_begin[entry + 1]; ++r) {
      const std::pair<int, int>& rows = layout_.camera_rows[r];
      b.AddColumnGramLower(column, n, rows.first, rows.first + rows.second, acc);
    }
  });
  camera_gram_valid_ = true;
}

template <typename Scalar>
void MarginalizedLandmarkBlocks<Scalar>::SquaredColumnNorms(double* norms) {
  // Q is orthogonal, so the column norms over the observation rows are the
  // same before and after marginalization; only damping changes them.
  if (damped_) UndoDamping();
  std::fill(norms, norms + s_.num_effective_parameters, 0.0);
  context_->For(blocks_.num_groups(), 256, [&](int gb, int ge) {
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      if (group.landmark < 0) continue;
      blocks_.block(g).AddLandmarkColumnNorms(norms + s_.parameter_blocks[group.landmark].tangent_offset);
    }
  });
  // Camera columns: the diagonals of the camera Gram matrices.
  EnsureCameraGram();
  for (size_t c = 0; c < s_.cameras.size(); ++c) {
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
    const double* g = camera_gram_.block(static_cast<int>(c));
    for (int i = 0; i < pb.tangent_size; ++i) norms[pb.tangent_offset + i] = g[i * pb.tangent_size + i];
  }
}

template <typename Scalar>
void MarginalizedLandmarkBlocks<Scalar>::ScaleColumns(const double* scale) {
  if (damped_) UndoDamping();
  scale_.assign(scale, scale + s_.num_effective_parameters);
  if (camera_gram_valid_) camera_gram_.Scale(scale);
  blocks_.SetColumnScale(scale_.data());
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* col_scale = scratch_[chunk];
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      int col = 0;
      for (int c = group.camera_begin; c < group.camera_end; ++c) {
        const ParameterBlockInfo& pb = s_.parameter_blocks[s_.group_cameras[c]];
        for (int k = 0; k < pb.tangent_size; ++k) col_scale[col++] = static_cast<Scalar>(scale[pb.tangent_offset + k]);
      }
      if (group.landmark >= 0) {
        const ParameterBlockInfo& pb = s_.parameter_blocks[group.landmark];
        for (int k = 0; k < pb.tangent_size; ++k) col_scale[col++] = static_cast<Scalar>(scale[pb.tangent_offset + k]);
      }
      blocks_.block(g).ScaleColumns(col_scale);
      blocks_.CheckRange(g);
    }
  });
}

template <typename Scalar>
void MarginalizedLandmarkBlocks<Scalar>::UndoDamping() {
  context_->ForChunks(partition_, [&](int, int gb, int ge) {
    for (int g = gb; g < ge; ++g) {
      if (s_.groups[g].landmark_size > 0) blocks_.block(g).UndoDamping(blocks_.rotations(g));
    }
  });
  damped_ = false;
}

template <typename Scalar>
void MarginalizedLandmarkBlocks<Scalar>::MarginalizeAndDamp(const double* d,
                                                            DampedBlockVisitor<Scalar>* visitor) {
  // From the raw blocks, before the QR (see EnsureCameraGram).
  EnsureCameraGram();
  const bool undo = damped_;
  const bool qr = !marginalized_;
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* work = scratch_[chunk];
    if (visitor != nullptr) visitor->BeginChunk(chunk);
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      LandmarkBlock<Scalar> b = blocks_.block(g);
      if (group.landmark_size > 0) {
        if (undo) b.UndoDamping(blocks_.rotations(g));
        if (qr) b.Marginalize(work);
        const double* src = d + s_.parameter_blocks[group.landmark].tangent_offset;
        for (int k = 0; k < group.landmark_size; ++k) work[k] = static_cast<Scalar>(src[k]);
        b.ApplyDamping(work, blocks_.rotations(g));
      }
      if (visitor != nullptr) visitor->Visit(chunk, g, b);
    }
  });
  marginalized_ = true;
  damped_ = true;
}

template class MarginalizedLandmarkBlocks<float>;
template class MarginalizedLandmarkBlocks<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
