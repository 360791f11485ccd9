#include "ceres_sqrtba/internal/block_jacobi_preconditioner.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>

namespace ceres_sqrtba {
namespace internal {
namespace {

std::vector<int> SquareBlockOffsets(const ProblemStructure& s) {
  std::vector<int> offset(s.cameras.size() + 1, 0);
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    const int n = s.parameter_blocks[s.cameras[c]].tangent_size;
    offset[c + 1] = offset[c] + n * n;
  }
  return offset;
}

}  // namespace

CameraGram::CameraGram(const ProblemStructure& s) : s_(s), offset_(SquareBlockOffsets(s)) {
  data_.resize(std::max(1, offset_.back()));
}

template <typename Scalar>
void CameraGram::Compute(LandmarkBlocks<Scalar>* blocks, const LandmarkBlockLayout& layout,
                         bool raw, ParallelContext* context) {
  const int num_cameras = static_cast<int>(s_.cameras.size());
  context->For(num_cameras, 16, [&](int cb, int ce) {
    for (int c = cb; c < ce; ++c) {
      const int n = s_.parameter_blocks[s_.cameras[c]].tangent_size;
      double* g = block(c);
      std::fill(g, g + n * n, 0.0);
      for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
        LandmarkBlock<Scalar> b = blocks->block(s_.camera_groups[k]);
        if (!raw) {
          b.AddColumnGram(s_.camera_group_column[k], n, 0, b.obs_rows(), g);
          continue;
        }
        const int entry = s_.camera_group_entry[k];
        for (int r = layout.camera_row_begin[entry]; r < layout.camera_row_begin[entry + 1]; ++r) {
          const auto& seg = layout.camera_rows[r];
          b.AddColumnGram(s_.camera_group_column[k], n, seg.first, seg.first + seg.second, g);
        }
      }
    }
  });
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
                                                             bool schur)
    : s_(s), schur_(schur), offset_(SquareBlockOffsets(s)) {
  inverse_.resize(std::max(1, offset_.back()));
}

template <typename Scalar>
void BlockJacobiPreconditioner<Scalar>::Compute(LandmarkBlocks<Scalar>* blocks,
                                                const CameraGram& gram,
                                                const double* damping_squared,
                                                ParallelContext* context) {
  using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int num_cameras = static_cast<int>(s_.cameras.size());
  context->For(num_cameras, 16, [&](int cb, int ce) {
    Mat m, top;
    for (int c = cb; c < ce; ++c) {
      const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
      const int n = pb.tangent_size;
      m = Eigen::Map<const Mat>(gram.block(c), n, n);
      if (schur_) {
        top.setZero(n, n);
        for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
          LandmarkBlock<Scalar> b = blocks->block(s_.camera_groups[k]);
          b.AddColumnGram(s_.camera_group_column[k], n, 0, b.landmark_size(), top.data());
        }
        m -= top;
      }
      const double* dsq = damping_squared + (pb.tangent_offset - s_.camera_tangent_begin);
      for (int i = 0; i < n; ++i) m(i, i) += dsq[i];
      Eigen::LLT<Mat> llt(m);
      Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> out(
          inverse_.data() + offset_[c], n, n);
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
    const Scalar* m = inverse_.data() + offset_[c];
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
