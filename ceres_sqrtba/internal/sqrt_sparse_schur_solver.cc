#include "ceres_sqrtba/internal/sqrt_sparse_schur_solver.h"

#include <algorithm>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
SqrtSparseSchurSolver<Scalar>::SqrtSparseSchurSolver(const ProblemStructure& s,
                                                     const LandmarkBlockLayout& layout,
                                                     const WorkPartition& partition,
                                                     ParallelContext* context,
                                                     const SqrtSparseSchurOptions& options)
    : s_(s),
      partition_(partition),
      context_(context),
      blocks_(s, layout),
      matrix_(s, layout),
      qr_(options.ordering),
      back_substitution_(s, layout, partition) {
  // Marginalize needs obs_rows + cols scalars; the column scale and the
  // landmark damping fit in cols.
  chunk_scratch_stride_ = layout.max_obs_rows + layout.max_cols;
  chunk_scratch_.resize(static_cast<size_t>(partition.num_chunks()) * chunk_scratch_stride_);
}

template <typename Scalar>
JacobianWriter* SqrtSparseSchurSolver<Scalar>::writer() {
  marginalized_ = false;
  damped_ = false;
  blocks_.ClearOutOfRange();
  return &blocks_;
}

// Q is orthogonal, so the column norms over the observation rows are the same
// before and after marginalization; only the damping rows change them.
template <typename Scalar>
void SqrtSparseSchurSolver<Scalar>::SquaredColumnNorms(double* norms) {
  if (damped_) UndoDamping();
  std::fill(norms, norms + s_.num_effective_parameters, 0.0);
  // Landmark columns: each landmark lives in one block and owns its output.
  context_->For(blocks_.num_groups(), 256, [&](int gb, int ge) {
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      if (group.landmark < 0) continue;
      const LandmarkBlock<Scalar> b = blocks_.block(g);
      double* out = norms + s_.parameter_blocks[group.landmark].tangent_offset;
      for (int r = 0; r < b.obs_rows(); ++r) {
        for (int k = 0; k < group.landmark_size; ++k) {
          const double v = b(r, b.camera_columns() + k);
          out[k] += v * v;
        }
      }
    }
  });
  // Camera columns: camera-major, so that every camera owns its output and
  // the sums do not depend on the number of threads.
  context_->For(static_cast<int>(s_.cameras.size()), 1, [&](int cb, int ce) {
    for (int c = cb; c < ce; ++c) {
      const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
      double* out = norms + pb.tangent_offset;
      for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
        const LandmarkBlock<Scalar> b = blocks_.block(s_.camera_groups[k]);
        const int col = s_.camera_group_column[k];
        for (int r = 0; r < b.obs_rows(); ++r) {
          const Scalar* a = b.row(r) + col;
          for (int t = 0; t < pb.tangent_size; ++t) out[t] += static_cast<double>(a[t]) * a[t];
        }
      }
    }
  });
}

template <typename Scalar>
void SqrtSparseSchurSolver<Scalar>::ScaleColumns(const double* scale) {
  if (damped_) UndoDamping();
  // Kept: the blocks scale every later Jacobian as the evaluator writes it.
  scale_.assign(scale, scale + s_.num_effective_parameters);
  blocks_.SetColumnScale(scale_.data());
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* col_scale = chunk_scratch_.data() + static_cast<size_t>(chunk) * chunk_scratch_stride_;
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      int col = 0;
      for (int c = group.camera_begin; c < group.camera_end; ++c) {
        const ParameterBlockInfo& pb = s_.parameter_blocks[s_.group_cameras[c]];
        for (int k = 0; k < pb.tangent_size; ++k) {
          col_scale[col++] = static_cast<Scalar>(scale[pb.tangent_offset + k]);
        }
      }
      if (group.landmark >= 0) {
        const ParameterBlockInfo& pb = s_.parameter_blocks[group.landmark];
        for (int k = 0; k < pb.tangent_size; ++k) {
          col_scale[col++] = static_cast<Scalar>(scale[pb.tangent_offset + k]);
        }
      }
      blocks_.block(g).ScaleColumns(col_scale);
      blocks_.CheckRange(g);
    }
  });
}

template <typename Scalar>
void SqrtSparseSchurSolver<Scalar>::Marginalize() {
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* scratch = chunk_scratch_.data() + static_cast<size_t>(chunk) * chunk_scratch_stride_;
    for (int g = gb; g < ge; ++g) blocks_.block(g).Marginalize(scratch);
  });
  marginalized_ = true;
  damped_ = false;
}

template <typename Scalar>
void SqrtSparseSchurSolver<Scalar>::UndoDamping() {
  context_->ForChunks(partition_, [&](int, int gb, int ge) {
    for (int g = gb; g < ge; ++g) {
      if (s_.groups[g].landmark_size > 0) blocks_.block(g).UndoDamping(blocks_.rotations(g));
    }
  });
  damped_ = false;
}

// Landmark damping only: the pose damping goes straight into A's last rows.
template <typename Scalar>
void SqrtSparseSchurSolver<Scalar>::ApplyDamping(const double* d) {
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
  damped_ = true;
}

template <typename Scalar>
LinearSolverSummary SqrtSparseSchurSolver<Scalar>::Solve(const double* d, double /*eta*/,
                                                         double* y, double* jy_squared_norm) {
  if (damped_) UndoDamping();
  if (!marginalized_) Marginalize();
  ApplyDamping(d);
  if (!matrix_.Fill(&blocks_, d + s_.camera_tangent_begin, partition_, context_)) {
    LinearSolverSummary summary;
    summary.termination = LinearSolverTermination::kFailure;
    summary.message = "The reduced camera system has an entry that is not finite.";
    return summary;
  }
  // y_p = argmin |A y_p - b|, straight into the camera part of y.
  LinearSolverSummary summary =
      qr_.Solve(matrix_.matrix(), matrix_.rhs(), y + s_.camera_tangent_begin);
  if (summary.termination == LinearSolverTermination::kSuccess) {
    VLOG(logged_statistics_ ? 2 : 1) << "SQRT_SPARSE_SCHUR: A is " << matrix_.num_rows() << " x "
                                     << matrix_.num_cols() << " with " << matrix_.num_nonzeros()
                                     << " nonzeros; " << qr_.Statistics();
    logged_statistics_ = true;
  }
  if (summary.termination != LinearSolverTermination::kSuccess) return summary;
  *jy_squared_norm = back_substitution_.Run(&blocks_, d, y, context_);
  return summary;
}

template class SqrtSparseSchurSolver<float>;
template class SqrtSparseSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
