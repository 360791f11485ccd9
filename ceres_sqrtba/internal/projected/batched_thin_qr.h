// The thin Householder QR of thin_qr.h run on a batch of landmarks at once,
// one landmark per SIMD lane (landmark_batches.h says which landmarks share a
// batch):
//
//   A_l = [Jl_l; diag(s_l)] = Q^_1,l R^_l   for the lanes l of the batch,
//
// (paper eq. (damped_qr), thin form), in the storage's Scalar.
//
// Why lanes. One landmark's QR is a chain of short dot products and axpys of
// length m + d (a few rows for most landmarks), whose instruction count does
// not depend on the precision: per landmark it cannot use a SIMD register's
// width. Across landmarks of the same size the operations are identical, so
// a batch runs them once for kLanes landmarks, each scalar of thin_qr.h
// becoming a vector of kLanes scalars (Eigen fixed-size arrays: SSE packets
// of 4 floats / 2 doubles in the portable build, AVX's 8 / 4 with
// CERES_SQRTBA_NATIVE). Float then does twice the landmarks per instruction
// that double does, which is where single precision gains in the setup
// (the paper's √BA-32 runs the per-landmark QR in float too).
//
// Same results. Lane l performs the operations of ThinQrOfSize on landmark l
// in the same order (the same dot products summed over the same rows in the
// same order, the same sqrt and division): in double the results equal
// ThinQrOfSize's bit for bit. Rows of zeros between a landmark's m
// observation rows and its damping rows (a landmark with fewer rows than the
// batch's, padded) only add exact zeros as long as m >= d, so that no
// reflector pivots on a padding row: padding then changes none of the lane's
// results, and its padded rows of Q1 are exactly zero (landmark_batches.h
// pads only such landmarks). A lane whose column is zero (an unused lane, a
// landmark not observed) takes the zero-norm branch of thin_qr.h, by a
// per-lane selection instead of a jump.
//
// Layout: column-major over the n = rows + d rows of A, each entry a vector
// of lanes: a[c * n + i][l] is A_l(i, c).
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_BATCHED_THIN_QR_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_BATCHED_THIN_QR_H_

#include <Eigen/Core>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"

namespace ceres_sqrtba {
namespace internal {

// Landmarks per batch: two SIMD packets of Scalar (two independent chains
// per operation, so that the latency of one packet's add hides behind the
// other's).
template <typename Scalar>
constexpr int kBatchLanes = 2 * Eigen::internal::packet_traits<Scalar>::size;

template <typename Scalar>
using LaneVector = Eigen::Array<Scalar, kBatchLanes<Scalar>, 1>;

// Lane vectors BatchedThinQr needs in `work` (A and Q, column-major, and the
// reflectors' betas).
inline int BatchedThinQrWorkSize(int rows, int d) { return 2 * (rows + d) * d + d; }

// a: A (n x d, n = rows + d, column-major lane vectors as above), destroyed.
// q: Q^_1 (n x d, column-major), of which the first `rows` rows are Q1.
// r: R^ (d x d, row-major), upper triangle written, strict lower zeroed.
// kD: d when known at compile time, kDynamic otherwise (as ThinQrOfSize).
template <int kD, typename V>
void BatchedThinQrOfSize(int rows, int runtime_d, V* a, V* q, V* beta, V* r) {
  using Scalar = typename V::Scalar;
  const int d = kD == kDynamic ? runtime_d : kD;
  const int n = rows + d;
  const V zero = V::Zero();
  for (int j = 0; j < d; ++j) {
    V* v = a + j * n;  // rows j..n-1 of column j: the reflector
    V norm2 = v[j] * v[j];
    for (int i = j + 1; i < n; ++i) norm2 += v[i] * v[i];
    const V norm = norm2.sqrt();
    const auto nonzero = norm != zero;
    // Reflect onto -sign(v_j) |v| e_j (thin_qr.h).
    const V alpha = (v[j] >= zero).select(-norm, norm);
    const V vj = v[j] - alpha;
    const V vnorm2 = norm2 - v[j] * v[j] + vj * vj;
    // Zero-norm lanes: beta 0 (the reflection is the identity), R(j, j) 0,
    // column j left as it was (all zero), as thin_qr.h's early continue.
    v[j] = nonzero.select(vj, v[j]);
    beta[j] = nonzero.select(Scalar(2) / vnorm2, zero);
    r[j * d + j] = nonzero.select(alpha, zero);
    for (int c = j + 1; c < d; ++c) {
      V* col = a + c * n;
      V dot = v[j] * col[j];
      for (int i = j + 1; i < n; ++i) dot += v[i] * col[i];
      dot *= beta[j];
      for (int i = j; i < n; ++i) col[i] -= dot * v[i];
    }
  }
  for (int i = 0; i < d; ++i) {
    for (int c = 0; c < d; ++c) {
      if (c > i) r[i * d + c] = a[c * n + i];
      if (c < i) r[i * d + c] = zero;
    }
  }
  // Q^_1 = H_0 H_1 ... H_{d-1} [I_d; 0], applied from the last reflector,
  // to columns j..d-1 only: columns c < j are e_c, zero on H_j's rows, and
  // would stay exactly as they are (thin_qr.h).
  for (int c = 0; c < d; ++c) {
    V* col = q + c * n;
    for (int i = 0; i < n; ++i) col[i] = zero;
    col[c] = V::Constant(Scalar(1));
  }
  for (int j = d - 1; j >= 0; --j) {
    const V* v = a + j * n;
    for (int c = j; c < d; ++c) {
      V* col = q + c * n;
      V dot = v[j] * col[j];
      for (int i = j + 1; i < n; ++i) dot += v[i] * col[i];
      dot *= beta[j];
      for (int i = j; i < n; ++i) col[i] -= dot * v[i];
    }
  }
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_BATCHED_THIN_QR_H_
