#include "ceres_sqrtba/internal/block_jacobi_preconditioner.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
BlockJacobiPreconditioner<Scalar>::BlockJacobiPreconditioner(const ProblemStructure& s,
                                                             bool schur)
    : s_(s), schur_(schur) {
  offset_.resize(s.cameras.size() + 1, 0);
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    const int n = s.parameter_blocks[s.cameras[c]].tangent_size;
    offset_[c + 1] = offset_[c] + n * n;
  }
  inverse_.resize(std::max(1, offset_.back()));
}

template <typename Scalar>
void BlockJacobiPreconditioner<Scalar>::Compute(LandmarkBlocks<Scalar>* blocks,
                                                const Scalar* damping_squared,
                                                ParallelContext* context) {
  using Mat = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const int num_cameras = static_cast<int>(s_.cameras.size());
  context->For(num_cameras, 16, [&](int cb, int ce) {
    for (int c = cb; c < ce; ++c) {
      const ParameterBlockInfo& pb = s_.parameter_blocks[s_.cameras[c]];
      const int n = pb.tangent_size;
      Eigen::Map<Mat> m(inverse_.data() + offset_[c], n, n);
      m.setZero();
      for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
        const int g = s_.camera_groups[k];
        LandmarkBlock<Scalar> b = blocks->block(g);
        const int row_begin = schur_ ? b.first_reduced_row() : 0;
        b.AddColumnGram(s_.camera_group_column[k], n, row_begin, m.data());
      }
      const Scalar* dsq = damping_squared + (pb.tangent_offset - s_.camera_tangent_begin);
      for (int i = 0; i < n; ++i) m(i, i) += dsq[i];
      Eigen::LLT<Mat> llt(m);
      if (llt.info() == Eigen::Success) {
        m = llt.solve(Mat::Identity(n, n));
      } else {
        // Not positive definite in this precision: fall back to the inverse
        // of the diagonal, which keeps the preconditioner positive.
        Mat inv = Mat::Zero(n, n);
        for (int i = 0; i < n; ++i) {
          const Scalar v = m(i, i);
          inv(i, i) = v > Scalar(0) ? Scalar(1) / v : Scalar(1);
        }
        m = inv;
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
