#include "ceres_sqrtba/internal/block_jacobi_preconditioner.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>

namespace ceres_sqrtba {
namespace internal {

CameraGram::CameraGram(const ProblemStructure& s, const WorkPartition& partition)
    : s_(s), sum_(s, partition) {
  data_.resize(std::max(1, sum_.size()));
}

template <typename Scalar>
void CameraGram::Compute(LandmarkBlocks<Scalar>* blocks, const LandmarkBlockLayout& layout,
                         bool raw, ParallelContext* context) {
  sum_.Run(context, data_.data(), [&](int g, int entry, int column, int n, double* acc) {
    LandmarkBlock<Scalar> b = blocks->block(g);
    if (raw) {
      AddOwnRows(b, layout, entry, column, n, acc);
    } else {
      b.AddColumnGramLower(column, n, 0, b.obs_rows(), acc);
    }
  });
  Symmetrize();
}

// The blocks added their lower triangles; mirror them once per camera.
void CameraGram::Symmetrize() {
  for (size_t c = 0; c < s_.cameras.size(); ++c) {
    const int n = s_.parameter_blocks[s_.cameras[c]].tangent_size;
    double* g = block(static_cast<int>(c));
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < i; ++k) g[k * n + i] = g[i * n + k];
    }
  }
}

void CameraGram::Scale(const double* scale) {
  for (size_t c = 0; c < s_.cameras.size(); ++c) {
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
    const int n = pb.tangent_size;
    const double* sc = scale + pb.tangent_offset;
    double* g = block(static_cast<int>(c));
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < n; ++k) g[i * n + k] *= sc[i] * sc[k];
    }
  }
}

template void CameraGram::Compute<float>(LandmarkBlocks<float>*, const LandmarkBlockLayout&, bool,
                                         ParallelContext*);
template void CameraGram::Compute<double>(LandmarkBlocks<double>*, const LandmarkBlockLayout&, bool,
                                          ParallelContext*);

template <typename Scalar>
BlockJacobiPreconditioner<Scalar>::BlockJacobiPreconditioner(const ProblemStructure& s,
                                                             const WorkPartition& partition,
                                                             bool schur)
    : s_(s), schur_(schur), sum_(s, partition) {
  inverse_.resize(std::max(1, sum_.size()));
  if (schur) top_.resize(std::max(1, sum_.size()));
}

template <typename Scalar>
void BlockJacobiPreconditioner<Scalar>::Compute(LandmarkBlocks<Scalar>* blocks,
                                                const CameraGram& gram,
                                                const double* damping_squared,
                                                ParallelContext* context,
                                                bool top_rows_visited) {
  if (schur_ && top_rows_visited) {
    sum_.Reduce(context, top_.data());
  } else if (schur_) {
    sum_.Run(context, top_.data(), [&](int g, int, int column, int n, double* acc) {
      LandmarkBlock<Scalar> b = blocks->block(g);
      b.AddColumnGramLower(column, n, 0, b.landmark_size(), acc);
    });
  }
  Invert(&gram, damping_squared, context);
}

template <typename Scalar>
void BlockJacobiPreconditioner<Scalar>::Invert(const CameraGram* gram,
                                               const double* damping_squared,
                                               ParallelContext* context) {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int num_cameras = static_cast<int>(s_.cameras.size());
  context->For(num_cameras, 8, [&](int cb, int ce) {
    Mat m;
    for (int c = cb; c < ce; ++c) {
      const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
      const int n = pb.tangent_size;
      if (gram == nullptr) {
        m = Eigen::Map<const Mat>(top_.data() + sum_.offset(c), n, n);
      } else {
        m = Eigen::Map<const Mat>(gram->block(c), n, n);
        if (schur_) m -= Eigen::Map<const Mat>(top_.data() + sum_.offset(c), n, n);
      }
      const double* dsq = damping_squared + (pb.tangent_offset - s_.camera_tangent_begin);
      for (int i = 0; i < n; ++i) m(i, i) += dsq[i];
      // top_ holds lower triangles only (AddColumnGramLower); LLT reads
      // nothing else.
      Eigen::LLT<Mat, Eigen::Lower> llt(m);
      Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> out(
          inverse_.data() + sum_.offset(c), n, n);
      if (llt.info() == Eigen::Success) {
        out = llt.solve(Mat::Identity(n, n)).template cast<Scalar>();
      } else {
        // Not numerically positive definite: fall back to the inverse of the
        // diagonal, which keeps the preconditioner positive.
        out.setZero();
        for (int i = 0; i < n; ++i) {
          const double v = m(i, i);
          out(i, i) = static_cast<Scalar>(v > 0.0 ? 1.0 / v : 1.0);
        }
      }
    }
  });
}

template <typename Scalar>
void BlockJacobiPreconditioner<Scalar>::Multiply(const Scalar* x, Scalar* y) {
  for (size_t c = 0; c < s_.cameras.size(); ++c) {
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
    const int n = pb.tangent_size;
    const int off = pb.tangent_offset - s_.camera_tangent_begin;
    const Scalar* m = inverse_.data() + sum_.offset(static_cast<int>(c));
    for (int i = 0; i < n; ++i) {
      Scalar v = 0;
      for (int k = 0; k < n; ++k) v += m[i * n + k] * x[off + k];
      y[off + i] = v;
    }
  }
}

template class BlockJacobiPreconditioner<float>;
template class BlockJacobiPreconditioner<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
