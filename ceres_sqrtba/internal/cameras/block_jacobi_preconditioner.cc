#include "ceres_sqrtba/internal/cameras/block_jacobi_preconditioner.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
BlockJacobiPreconditioner<Scalar>::BlockJacobiPreconditioner(const ProblemStructure& s,
                                                             const WorkPartition& partition,
                                                             bool schur, BlockSums sums)
    : s_(s), schur_(schur), offset_(s.cameras.size() + 1, 0) {
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    const int n = s.parameter_blocks[s.cameras[c]].tangent_size;
    offset_[c + 1] = offset_[c] + n * n;
  }
  const int size = std::max(1, offset_.back());
  inverse_.resize(size);
  if (schur) {
    sums_.resize(size);
    if (std::is_same_v<Scalar, float> && sums == BlockSums::kInScalar) {
      scalar_sum_ = std::make_unique<CameraBlockSum<float>>(s, partition);
      chunked_ = scalar_sum_->chunked();
    } else {
      double_sum_ = std::make_unique<CameraBlockSum<double>>(s, partition);
      chunked_ = double_sum_->chunked();
    }
  }
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
        m = Eigen::Map<const Mat>(sums_.data() + offset(c), n, n);
      } else {
        m = Eigen::Map<const Mat>(gram->block(c), n, n);
        if (schur_) m -= Eigen::Map<const Mat>(sums_.data() + offset(c), n, n);
      }
      const double* dsq = damping_squared + (pb.tangent_offset - s_.camera_tangent_begin);
      for (int i = 0; i < n; ++i) m(i, i) += dsq[i];
      // The sums hold lower triangles only; LLT reads nothing else.
      Eigen::LLT<Mat, Eigen::Lower> llt(m);
      Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> out(
          inverse_.data() + offset(c), n, n);
      if (llt.info() == Eigen::Success) {
        out = llt.solve(Mat::Identity(n, n)).template cast<Scalar>();
      } else {
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
    const Scalar* m = inverse_.data() + offset(static_cast<int>(c));
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
