// Thin QR of one landmark's damped columns A = [Jl; diag(s)] ((m + d) x d,
// s = sqrt(lambda) D_l) by d Householder reflections, in double:
//
//   A = Q^_1 R^,   Q^_1 ((m + d) x d) with orthonormal columns, R^ upper
//   triangular (paper eq. (damped_qr), thin form).
//
// Q^_1 is formed explicitly, but only its first m rows (Q1, the observation
// rows) are returned: that is all the projected reduced system
// (projected_landmark_blocks.h) needs. Householder rather than R^-1 or
// Gram-Schmidt, so that Q1 is orthonormal to rounding even when Jl is badly
// conditioned (far landmarks, two nearly parallel rays): the projector
// I - Q1 Q1^T must stay a projector.
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_THIN_QR_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_THIN_QR_H_

#include <cmath>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"

namespace ceres_sqrtba {
namespace internal {

// Scratch doubles ThinQr needs.
inline int ThinQrScratchSize(int m, int d) { return 2 * (m + d) * d + d; }

// jl: row i, column c at jl[i * jl_stride + c] (m rows, d columns).
// q1: m x d row-major, written at q1[i * q1_stride + c] through `store`
// (store(i, c, value)), so the caller chooses the destination's precision and
// layout. r: d x d row-major, upper triangle written, strict lower zeroed.
// kD: d when it is known at compile time (the landmark size of a uniform
// group, fixed_size_dispatch.h), kDynamic otherwise: the loops over columns
// unroll; the operations and their order are the same, so are the results.
template <int kD, typename Scalar, typename Store>
void ThinQrOfSize(int m, int runtime_d, const Scalar* jl, int jl_stride, const double* s, double* scratch,
                  double* r, const Store& store) {
  const int d = kD == kDynamic ? runtime_d : kD;
  const int n = m + d;
  double* a = scratch;             // n x d, column-major
  double* q = scratch + n * d;     // n x d, column-major
  double* beta = q + n * d;        // d
  for (int c = 0; c < d; ++c) {
    double* col = a + c * n;
    for (int i = 0; i < m; ++i) col[i] = static_cast<double>(jl[i * jl_stride + c]);
    for (int i = 0; i < d; ++i) col[m + i] = i == c ? s[c] : 0.0;
  }
  for (int j = 0; j < d; ++j) {
    double* v = a + j * n;  // v occupies rows j..n-1 of column j
    double norm2 = 0.0;
    for (int i = j; i < n; ++i) norm2 += v[i] * v[i];
    const double norm = std::sqrt(norm2);
    if (norm == 0.0) {
      beta[j] = 0.0;
      r[j * d + j] = 0.0;
      continue;
    }
    // Reflect onto -sign(v_j) |v| e_j: no cancellation in v_j - alpha.
    const double alpha = v[j] >= 0.0 ? -norm : norm;
    const double vj = v[j] - alpha;
    const double vnorm2 = norm2 - v[j] * v[j] + vj * vj;
    v[j] = vj;
    beta[j] = 2.0 / vnorm2;
    r[j * d + j] = alpha;
    for (int c = j + 1; c < d; ++c) {
      double* col = a + c * n;
      double dot = 0.0;
      for (int i = j; i < n; ++i) dot += v[i] * col[i];
      dot *= beta[j];
      for (int i = j; i < n; ++i) col[i] -= dot * v[i];
    }
  }
  for (int i = 0; i < d; ++i) {
    for (int c = 0; c < d; ++c) {
      if (c > i) r[i * d + c] = a[c * n + i];
      if (c < i) r[i * d + c] = 0.0;
    }
  }
  // Q^_1 = H_0 H_1 ... H_{d-1} [I_d; 0], applied from the last reflector.
  for (int c = 0; c < d; ++c) {
    double* col = q + c * n;
    for (int i = 0; i < n; ++i) col[i] = i == c ? 1.0 : 0.0;
  }
  // Columns c < j are still e_c when H_j comes (the reflectors applied so
  // far, H_k for k > j, act on rows k..n-1, where e_c is zero), and e_c is
  // zero on H_j's rows j..n-1 too: H_j leaves them exactly as they are, so
  // it is applied to columns j..d-1 only (a third fewer operations for
  // d = 3, the same results to the bit).
  for (int j = d - 1; j >= 0; --j) {
    if (beta[j] == 0.0) continue;
    const double* v = a + j * n;
    for (int c = j; c < d; ++c) {
      double* col = q + c * n;
      double dot = 0.0;
      for (int i = j; i < n; ++i) dot += v[i] * col[i];
      dot *= beta[j];
      for (int i = j; i < n; ++i) col[i] -= dot * v[i];
    }
  }
  for (int i = 0; i < m; ++i) {
    for (int c = 0; c < d; ++c) store(i, c, q[c * n + i]);
  }
}

template <typename Scalar, typename Store>
void ThinQr(int m, int d, const Scalar* jl, int jl_stride, const double* s, double* scratch, double* r,
            const Store& store) {
  ThinQrOfSize<kDynamic>(m, d, jl, jl_stride, s, scratch, r, store);
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_THIN_QR_H_
