#include "ceres_sqrtba/internal/sqrt_iterative_schur_solver.h"

#include <algorithm>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
SqrtIterativeSchurSolver<Scalar>::SqrtIterativeSchurSolver(
    const ProblemStructure& s, const LandmarkBlockLayout& layout,
    const WorkPartition& partition, ParallelContext* context,
    const SqrtIterativeSchurOptions& options)
    : s_(s),
      layout_(layout),
      partition_(partition),
      context_(context),
      options_(options),
      blocks_(s, layout),
      system_(s, layout, partition, &blocks_, context),
      pcg_(s.num_camera_parameters),
      camera_gram_(s, partition),
      back_substitution_(s, layout, partition) {
  if (options.preconditioner == ceres::SCHUR_JACOBI || options.preconditioner == ceres::JACOBI) {
    preconditioner_ = std::make_unique<BlockJacobiPreconditioner<Scalar>>(
        s, partition, options.preconditioner == ceres::SCHUR_JACOBI);
  }
  damping_squared_.resize(s.num_camera_parameters);
  damping_squared_double_.resize(s.num_camera_parameters);
  rhs_.resize(s.num_camera_parameters);
  solution_.resize(s.num_camera_parameters);
  chunk_scratch_stride_ = layout.max_obs_rows + 2 * layout.max_cols;
  chunk_scratch_.resize(static_cast<size_t>(partition.num_chunks()) * chunk_scratch_stride_);
}

template <typename Scalar>
JacobianWriter* SqrtIterativeSchurSolver<Scalar>::writer() {
  marginalized_ = false;
  damped_ = false;
  camera_gram_valid_ = false;
  blocks_.ClearOutOfRange();
  return &blocks_;
}

template <typename Scalar>
void SqrtIterativeSchurSolver<Scalar>::SquaredColumnNorms(double* norms) {
  // Q is orthogonal, so the column norms over the observation rows are the
  // same before and after marginalization; only damping changes them.
  if (damped_) UndoDamping();
  std::fill(norms, norms + s_.num_effective_parameters, 0.0);
  const int num_groups = blocks_.num_groups();
  context_->For(num_groups, 256, [&](int gb, int ge) {
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      if (group.landmark < 0) continue;
      LandmarkBlock<Scalar> b = blocks_.block(g);
      const int d = group.landmark_size;
      double* out = norms + s_.parameter_blocks[group.landmark].tangent_offset;
      for (int r = 0; r < b.obs_rows(); ++r) {
        for (int k = 0; k < d; ++k) {
          const double v = b(r, b.camera_columns() + k);
          out[k] += v * v;
        }
      }
    }
  });
  // Camera columns: the diagonals of the camera Gram matrices, which the
  // preconditioner needs anyway.
  if (!camera_gram_valid_) {
    camera_gram_.Compute(&blocks_, layout_, !marginalized_, context_);
    camera_gram_valid_ = true;
  }
  for (size_t c = 0; c < s_.cameras.size(); ++c) {
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
    const double* g = camera_gram_.block(static_cast<int>(c));
    for (int i = 0; i < pb.tangent_size; ++i) norms[pb.tangent_offset + i] = g[i * pb.tangent_size + i];
  }
}

template <typename Scalar>
void SqrtIterativeSchurSolver<Scalar>::ScaleColumns(const double* scale) {
  if (damped_) UndoDamping();
  scale_.assign(scale, scale + s_.num_effective_parameters);
  if (camera_gram_valid_) camera_gram_.Scale(scale);
  blocks_.SetColumnScale(scale_.data());
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* col_scale = chunk_scratch_.data() + static_cast<size_t>(chunk) * chunk_scratch_stride_;
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
void SqrtIterativeSchurSolver<Scalar>::Marginalize() {
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* scratch = chunk_scratch_.data() + static_cast<size_t>(chunk) * chunk_scratch_stride_;
    for (int g = gb; g < ge; ++g) blocks_.block(g).Marginalize(scratch);
  });
  marginalized_ = true;
  damped_ = false;
}

template <typename Scalar>
void SqrtIterativeSchurSolver<Scalar>::UndoDamping() {
  context_->ForChunks(partition_, [&](int, int gb, int ge) {
    for (int g = gb; g < ge; ++g) {
      if (s_.groups[g].landmark_size > 0) blocks_.block(g).UndoDamping(blocks_.rotations(g));
    }
  });
  damped_ = false;
}

template <typename Scalar>
void SqrtIterativeSchurSolver<Scalar>::ApplyDamping(const double* d) {
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* dl = chunk_scratch_.data() + static_cast<size_t>(chunk) * chunk_scratch_stride_;
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      if (group.landmark_size == 0) continue;
      const double* src = d + s_.parameter_blocks[group.landmark].tangent_offset;
      for (int k = 0; k < group.landmark_size; ++k) dl[k] = static_cast<Scalar>(src[k]);
      blocks_.block(g).ApplyDamping(dl, blocks_.rotations(g));
    }
  });
  const double* dp = d + s_.camera_tangent_begin;
  for (int i = 0; i < s_.num_camera_parameters; ++i) {
    damping_squared_double_[i] = dp[i] * dp[i];
    damping_squared_[i] = static_cast<Scalar>(damping_squared_double_[i]);
  }
  damped_ = true;
}

template <typename Scalar>
LinearSolverSummary SqrtIterativeSchurSolver<Scalar>::Solve(const double* d, double eta,
                                                            double* y,
                                                            double* jy_squared_norm) {
  if (damped_) UndoDamping();
  if (!camera_gram_valid_) {
    camera_gram_.Compute(&blocks_, layout_, !marginalized_, context_);
    camera_gram_valid_ = true;
  }
  if (!marginalized_) Marginalize();
  ApplyDamping(d);
  system_.SetDamping(damping_squared_.data());
  if (preconditioner_ != nullptr) {
    preconditioner_->Compute(&blocks_, camera_gram_, damping_squared_double_.data(), context_);
  }
  system_.Rhs(rhs_.data());
  PcgOptions pcg_options;
  pcg_options.min_num_iterations = options_.min_num_iterations;
  pcg_options.max_num_iterations = options_.max_num_iterations;
  pcg_options.q_tolerance = eta;
  pcg_options.r_tolerance = -1.0;
  LinearSolverSummary summary =
      pcg_.Solve(&system_, preconditioner_.get(), rhs_.data(), solution_.data(), pcg_options);
  if (summary.termination == LinearSolverTermination::kFailure ||
      summary.termination == LinearSolverTermination::kFatalError) {
    return summary;
  }

  // Back substitution and the model's |J y|^2, block by block.
  double* y_cameras = y + s_.camera_tangent_begin;
  for (int i = 0; i < s_.num_camera_parameters; ++i) y_cameras[i] = solution_[i];
  *jy_squared_norm = back_substitution_.Run(&blocks_, d, y, context_);
  return summary;
}

template class SqrtIterativeSchurSolver<float>;
template class SqrtIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
