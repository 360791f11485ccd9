// The tangent Jacobian of a parameter block with a manifold: the cost
// function's ambient Jacobian A (m x S, row-major) times the manifold's
// PlusJacobian P (S x T, row-major), as Ceres' evaluator forms it:
//
//   J_tangent = A P,   J_tangent[r][c] = sum_k A[r][k] P[k][c]   (k = 0..S-1).
//
// Why the identity borders. The manifolds of bundle adjustment are products
// whose PlusJacobian is mostly the identity: a camera stored as
// ProductManifold<QuaternionManifold, EuclideanManifold<6>> has the 10 x 9
// matrix
//
//   P = [ Pq  0 ]     Pq: the quaternion's 4 x 3,
//       [ 0   I ]     I:  6 x 6,
//
// so 18 of its 90 entries are not structurally zero, and for a 2-d residual
// the full product spends 156 of its 2 x 90 = 180 multiply-adds on zeros and
// ones (24 on the quaternion's block).
// BorderOf finds, once per PlusJacobian, the largest identity block in the
// top-left corner (`lead`) and in the bottom-right corner (`trail`) whose
// rows and columns are zero elsewhere; the product then multiplies only the
// middle block and copies the rest.
//
// Why the result is bit-identical to the full product. Every entry of A is
// finite (the evaluator checks it first), so a skipped term A[r][k] * 0 is a
// zero, and adding a zero never changes a sum that starts at +0.0: in
// round-to-nearest the running sum is never -0.0 (x + y == 0 exactly gives
// +0.0), and s + (+-0) == s for every other s. A copied entry is the sum
// +0.0 + A[r][k] * 1 = A[r][k] + 0.0 (which turns -0.0 into +0.0, as the full
// product does). The middle block sums over k in increasing order, as the
// full product does. tangent_jacobian_test.cc checks the bits against the
// plain triple loop. Two assumptions, both true of the default build: every
// product is rounded on its own (no contraction into fused multiply-adds,
// which -march=native allows: a fused tiny product can round to -0.0) and
// tiny results are kept as subnormals (flush-to-zero off). Where they fail,
// the two products can differ only in the sign of a zero below 2.3e-308.
#ifndef CERES_SQRTBA_INTERNAL_EVALUATION_TANGENT_JACOBIAN_H_
#define CERES_SQRTBA_INTERNAL_EVALUATION_TANGENT_JACOBIAN_H_

#include <algorithm>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"

namespace ceres_sqrtba {
namespace internal {

// The identity borders of a PlusJacobian (ambient x tangent): rows and
// columns [0, lead) form an identity block with zeros beside and below it,
// and the last `trail` rows and columns an identity block with zeros beside
// and above it. lead + trail <= min(ambient, tangent). {0, 0}: a dense
// product.
struct PlusJacobianBorder {
  int lead = 0;
  int trail = 0;
};

namespace tangent_jacobian {

// Whether every entry (k, c) of row i (all columns c) and of column j (all
// rows k) of p equals expected(k, c).
template <typename Expected>
inline bool CrossMatches(const double* p, int ambient, int tangent, int i, int j, Expected&& expected) {
  for (int c = 0; c < tangent; ++c) {
    if (p[i * tangent + c] != expected(i, c)) return false;
  }
  for (int k = 0; k < ambient; ++k) {
    if (p[k * tangent + j] != expected(k, j)) return false;
  }
  return true;
}

}  // namespace tangent_jacobian

// O((ambient + tangent) * (lead + trail + 2)) comparisons: each step of a
// border adds one row and one column, and a border that holds for n + 1
// holds for n (its rows and columns are a subset).
inline PlusJacobianBorder BorderOf(const double* p, int ambient, int tangent) {
  PlusJacobianBorder border;
  const int limit = std::min(ambient, tangent);
  auto lead_value = [](int i, int j) { return i == j ? 1.0 : 0.0; };
  while (border.lead < limit &&
         tangent_jacobian::CrossMatches(p, ambient, tangent, border.lead, border.lead, lead_value)) {
    ++border.lead;
  }
  // The trailing block's diagonal: row ambient - 1 - u meets column
  // tangent - 1 - u, i.e. i - j == ambient - tangent.
  auto trail_value = [&](int i, int j) { return i - j == ambient - tangent ? 1.0 : 0.0; };
  while (border.lead + border.trail < limit &&
         tangent_jacobian::CrossMatches(p, ambient, tangent, ambient - 1 - border.trail,
                                        tangent - 1 - border.trail, trail_value)) {
    ++border.trail;
  }
  return border;
}

namespace tangent_jacobian {

// t[r][c] for the middle columns c in [lead, tangent - trail): the sum over
// the middle ambient rows k in [lead, ambient - trail), in increasing k, of
// a[r][k] * p[k][c]. kA x kT: the middle block's sizes when known.
template <int kA, int kT>
inline void Middle(int m, int ambient, int tangent, int lead, int middle_a, int middle_t,
                   const double* __restrict a, const double* __restrict p, double* __restrict t) {
  const int na = kA != kDynamic ? kA : middle_a;
  const int nt = kT != kDynamic ? kT : middle_t;
  for (int r = 0; r < m; ++r) {
    const double* __restrict ar = a + r * ambient + lead;
    double* __restrict tr = t + r * tangent + lead;
    if constexpr (kT != kDynamic) {
      double acc[kT];
      for (int c = 0; c < kT; ++c) acc[c] = 0.0;
      for (int k = 0; k < na; ++k) {
        const double w = ar[k];
        const double* __restrict pk = p + (lead + k) * tangent + lead;
        for (int c = 0; c < kT; ++c) acc[c] += w * pk[c];
      }
      for (int c = 0; c < kT; ++c) tr[c] = acc[c];
    } else {
      for (int c = 0; c < nt; ++c) {
        double v = 0.0;
        for (int k = 0; k < na; ++k) v += ar[k] * p[(lead + k) * tangent + lead + c];
        tr[c] = v;
      }
    }
  }
}

}  // namespace tangent_jacobian

// t = a * p (m x tangent, row-major), p's borders as BorderOf found them.
// Every entry of a must be finite (see the file comment).
inline void TangentJacobian(int m, int ambient, int tangent, PlusJacobianBorder border,
                            const double* __restrict a, const double* __restrict p, double* __restrict t) {
  const int lead = border.lead, trail = border.trail;
  const int middle_a = ambient - lead - trail, middle_t = tangent - lead - trail;
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < lead; ++c) t[r * tangent + c] = a[r * ambient + c] + 0.0;
    for (int u = 0; u < trail; ++u) {
      t[r * tangent + tangent - trail + u] = a[r * ambient + ambient - trail + u] + 0.0;
    }
  }
  if (middle_t == 0) return;
  // Fixed sizes for the listed manifolds: a quaternion inside a product
  // manifold (its 4 x 3 block) and dense PlusJacobians without borders.
  DispatchManifoldSizes(middle_a, middle_t, [&](auto sizes) {
    using Sizes = decltype(sizes);
    tangent_jacobian::Middle<Sizes::kAmbient, Sizes::kTangent>(m, ambient, tangent, lead, middle_a, middle_t, a, p, t);
  });
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EVALUATION_TANGENT_JACOBIAN_H_
