#include "ceres_sqrtba/internal/explicit/landmark_block.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

template <typename Scalar>
using RowMatrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename Scalar>
using BlockMap = Eigen::Map<RowMatrix<Scalar>, 0, Eigen::OuterStride<>>;
template <typename Scalar>
using ConstBlockMap = Eigen::Map<const RowMatrix<Scalar>, 0, Eigen::OuterStride<>>;
template <typename Scalar>
using VectorMap = Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, 1>>;
template <typename Scalar>
using ConstVectorMap = Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>>;
template <typename Scalar>
using RowVectorMap = Eigen::Map<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>>;

}  // namespace

template <typename Scalar>
int LandmarkBlock<Scalar>::Stride(int camera_columns, int landmark_size) {
  return camera_columns + landmark_size + 1;
}

template <typename Scalar>
void LandmarkBlock<Scalar>::SetZero() {
  std::fill(data_, data_ + static_cast<int64_t>(rows()) * stride_, Scalar(0));
}

template <typename Scalar>
void LandmarkBlock<Scalar>::ScaleColumns(const Scalar* scale) {
  const int n = nc_ + d_;
  for (int r = 0; r < obs_rows_; ++r) {
    Scalar* a = row(r);
    for (int c = 0; c < n; ++c) a[c] *= scale[c];
  }
}

template <typename Scalar>
void LandmarkBlock<Scalar>::AddLandmarkColumnNorms(double* norms) const {
  for (int r = 0; r < obs_rows_; ++r) {
    const Scalar* a = row(r) + nc_;
    for (int k = 0; k < d_; ++k) norms[k] += static_cast<double>(a[k]) * a[k];
  }
}

// Householder reflection H = I - tau v v^T with v(0) = 1 that maps the landmark
// column j (rows j..obs_rows-1) onto beta e_0, applied to the whole rows. The
// reflections are applied to all columns at once as a rank-1 update of the
// trailing rows: w = v^T A, A -= tau v w.
template <typename Scalar>
void LandmarkBlock<Scalar>::Marginalize(Scalar* scratch) {
  const int ncols = cols();
  Scalar* v = scratch;
  Scalar* __restrict w = scratch + obs_rows_;
  for (int j = 0; j < d_; ++j) {
    const int col = nc_ + j;
    const int n = obs_rows_ - j;
    const Scalar alpha = (*this)(j, col);
    Scalar tail = 0;
    for (int i = 1; i < n; ++i) {
      const Scalar x = (*this)(j + i, col);
      tail += x * x;
    }
    if (tail == Scalar(0)) continue;  // already upper triangular in this column
    const Scalar norm = std::sqrt(alpha * alpha + tail);
    const Scalar beta = alpha >= Scalar(0) ? -norm : norm;
    const Scalar tau = (beta - alpha) / beta;
    const Scalar inv = Scalar(1) / (alpha - beta);
    v[0] = 1;
    for (int i = 1; i < n; ++i) v[i] = (*this)(j + i, col) * inv;
    // w = v^T A[j:, :] and A[j:, :] -= tau v w, both as row sweeps: in a
    // row-major block each is an axpy over contiguous columns, which the
    // compiler vectorizes (a generic GEMV call costs more than the work for
    // blocks this small).
    {
      const Scalar* __restrict a0 = row(j);
      for (int c = 0; c < ncols; ++c) w[c] = a0[c];
    }
    for (int i = 1; i < n; ++i) {
      const Scalar* __restrict a = row(j + i);
      const Scalar vi = v[i];
      for (int c = 0; c < ncols; ++c) w[c] += vi * a[c];
    }
    for (int i = 0; i < n; ++i) {
      Scalar* __restrict a = row(j + i);
      const Scalar f = tau * v[i];
      for (int c = 0; c < ncols; ++c) a[c] -= f * w[c];
    }
    (*this)(j, col) = beta;
    for (int i = 1; i < n; ++i) (*this)(j + i, col) = 0;
  }
}

// Damping row j starts as sqrt(lambda) D_l(j) e_j. Rotating it against R rows
// j, j+1, ..., d-1 zeroes its landmark entries one after the other (each
// rotation fills the next entry, and the camera and residual columns).
template <typename Scalar>
void LandmarkBlock<Scalar>::ApplyDamping(const Scalar* sqrt_lambda_dl,
                                         Scalar* rotations) {
  const int ncols = cols();
  int k = 0;
  for (int j = 0; j < d_; ++j) {
    const int q = obs_rows_ + j;
    Scalar* rq = row(q);
    std::fill(rq, rq + ncols, Scalar(0));
    rq[nc_ + j] = sqrt_lambda_dl[j];
    for (int i = j; i < d_; ++i, ++k) {
      Scalar* ri = row(i);
      const Scalar a = ri[nc_ + i];
      const Scalar b = rq[nc_ + i];
      Scalar c = 1, s = 0;
      if (b != Scalar(0)) {
        const Scalar r = std::hypot(a, b);
        c = a / r;
        s = b / r;
        for (int col = 0; col < ncols; ++col) {
          const Scalar x = ri[col], y = rq[col];
          ri[col] = c * x + s * y;
          rq[col] = c * y - s * x;
        }
        ri[nc_ + i] = r;
        rq[nc_ + i] = 0;
      }
      rotations[2 * k] = c;
      rotations[2 * k + 1] = s;
    }
  }
}

template <typename Scalar>
void LandmarkBlock<Scalar>::UndoDamping(const Scalar* rotations) {
  const int ncols = cols();
  int k = NumRotations(d_);
  for (int j = d_ - 1; j >= 0; --j) {
    Scalar* rq = row(obs_rows_ + j);
    for (int i = d_ - 1; i >= j; --i) {
      --k;
      const Scalar c = rotations[2 * k], s = rotations[2 * k + 1];
      if (s == Scalar(0)) continue;
      Scalar* ri = row(i);
      for (int col = 0; col < ncols; ++col) {
        const Scalar x = ri[col], y = rq[col];
        ri[col] = c * x - s * y;
        rq[col] = s * x + c * y;
      }
    }
    std::fill(rq, rq + ncols, Scalar(0));
  }
}

template <typename Scalar>
void LandmarkBlock<Scalar>::MultiplyReduced(const Scalar* x, Scalar* t) const {
  ConstBlockMap<Scalar> b(row(d_), obs_rows_, nc_, Eigen::OuterStride<>(stride_));
  VectorMap<Scalar>(t, obs_rows_).noalias() = b * ConstVectorMap<Scalar>(x, nc_);
}

template <typename Scalar>
void LandmarkBlock<Scalar>::MultiplyReducedTransposeAdd(const Scalar* t,
                                                        Scalar* y) const {
  ConstBlockMap<Scalar> b(row(d_), obs_rows_, nc_, Eigen::OuterStride<>(stride_));
  VectorMap<Scalar>(y, nc_).noalias() += b.transpose() * ConstVectorMap<Scalar>(t, obs_rows_);
}

// y = B^T B x, one row at a time so that each row is read from memory once:
// the product with the reduced camera system is memory bound.
template <typename Scalar>
void LandmarkBlock<Scalar>::MultiplyReducedNormal(const Scalar* x, Scalar* y) const {
  // Four rows at a time: four dot products share the loads of x, and y is
  // updated once per four rows; each row is read from memory once. The first
  // group assigns y instead of adding to it.
  using Rows4 = Eigen::Map<const Eigen::Matrix<Scalar, 4, Eigen::Dynamic, Eigen::RowMajor>, 0,
                           Eigen::OuterStride<>>;
  ConstVectorMap<Scalar> xv(x, nc_);
  VectorMap<Scalar> yv(y, nc_);
  int r = 0;
  for (; r + 4 <= obs_rows_; r += 4) {
    Rows4 b(row(d_ + r), 4, nc_, Eigen::OuterStride<>(stride_));
    const Eigen::Matrix<Scalar, 4, 1> t = b * xv;
    if (r == 0) {
      yv.noalias() = b.transpose() * t;
    } else {
      yv.noalias() += b.transpose() * t;
    }
  }
  for (; r < obs_rows_; ++r) {
    ConstVectorMap<Scalar> a(row(d_ + r), nc_);
    const Scalar t = a.dot(xv);
    if (r == 0) {
      yv = t * a;
    } else {
      yv += t * a;
    }
  }
  if (obs_rows_ == 0) yv.setZero();
}

template <typename Scalar>
void LandmarkBlock<Scalar>::AddReducedRhs(Scalar* __restrict y) const {
  const int rc = residual_column();
  for (int r = d_; r < d_ + obs_rows_; ++r) {
    const Scalar* __restrict a = row(r);
    const Scalar res = a[rc];
    for (int c = 0; c < nc_; ++c) y[c] += res * a[c];
  }
}

namespace {

// Lower triangle (i >= k) of gram += A^T A for R rows of an N-column slice.
// The R products of one entry are summed in Scalar: their inputs carry
// Scalar's rounding already; the running sum over blocks stays double. Only
// the lower triangle: the Gram matrix is symmetric, and half the entries are
// half the loads, stores and conversions of this (call-bound) kernel.
template <int N, int R, typename Scalar>
inline void AddGramLowerRows(const Scalar* first_row, int stride, double* gram) {
  Scalar a[R][N];
  for (int r = 0; r < R; ++r) {
    for (int i = 0; i < N; ++i) a[r][i] = first_row[static_cast<int64_t>(r) * stride + i];
  }
  for (int i = 0; i < N; ++i) {
    for (int k = 0; k <= i; ++k) {
      Scalar v = a[0][i] * a[0][k];
      for (int r = 1; r < R; ++r) v += a[r][i] * a[r][k];
      gram[i * N + k] += static_cast<double>(v);
    }
  }
}

template <int N, typename Scalar>
void AddGramLowerFixed(const Scalar* first_row, int rows, int stride, double* gram) {
  int r = 0;
  for (; r + 3 <= rows; r += 3) {
    AddGramLowerRows<N, 3>(first_row + static_cast<int64_t>(r) * stride, stride, gram);
  }
  const Scalar* rest = first_row + static_cast<int64_t>(r) * stride;
  if (rows - r == 2) AddGramLowerRows<N, 2>(rest, stride, gram);
  if (rows - r == 1) AddGramLowerRows<N, 1>(rest, stride, gram);
}

template <typename Scalar>
void AddGramLowerDynamic(const Scalar* first_row, int rows, int stride, int n, double* gram) {
  for (int r = 0; r < rows; ++r) {
    const Scalar* a = first_row + static_cast<int64_t>(r) * stride;
    for (int i = 0; i < n; ++i) {
      const double ai = a[i];
      double* g = gram + i * n;
      for (int k = 0; k <= i; ++k) g[k] += ai * static_cast<double>(a[k]);
    }
  }
}

}  // namespace

template <typename Scalar>
void LandmarkBlock<Scalar>::AddColumnGramLower(int c0, int n, int row_begin, int row_end,
                                          double* gram) const {
  const int rows = row_end - row_begin;
  if (rows <= 0) return;
  DCHECK_GE(c0, 0);
  DCHECK_LE(c0 + n, nc_ + d_);
  DCHECK_GE(row_begin, 0);
  DCHECK_LE(row_end, obs_rows_ + d_);
  const Scalar* first = row(row_begin) + c0;
  DispatchCameraSize(n, [&](auto fixed) {
    using S = decltype(fixed);
    if constexpr (S::kFixed) {
      AddGramLowerFixed<S::kF>(first, rows, stride_, gram);
    } else {
      AddGramLowerDynamic(first, rows, stride_, n, gram);
    }
  });
}

template <typename Scalar>
void LandmarkBlock<Scalar>::BackSubstitute(const Scalar* y_p, Scalar* y_l,
                                           double* top_residual_squared_norm) const {
  const int rc = residual_column();
  double top = 0.0;
  for (int k = 0; k < d_; ++k) {
    const Scalar* a = row(k);
    Scalar rhs = a[rc];
    top += static_cast<double>(rhs) * rhs;
    for (int c = 0; c < nc_; ++c) rhs -= a[c] * y_p[c];
    y_l[k] = rhs;
  }
  for (int k = d_ - 1; k >= 0; --k) {
    const Scalar* a = row(k);
    Scalar v = y_l[k];
    for (int l = k + 1; l < d_; ++l) v -= a[nc_ + l] * y_l[l];
    y_l[k] = v / a[nc_ + k];
  }
  *top_residual_squared_norm = top;
}

template class LandmarkBlock<float>;
template class LandmarkBlock<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
