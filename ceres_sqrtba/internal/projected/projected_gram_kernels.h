// The SCHUR_JACOBI preconditioner's share of the projected landmark blocks
// (projected_landmark_blocks.h), once per solve: per camera of a landmark the
// diagonal block Jc^T (I - Q1 Q1^T) Jc of B^T B, and the camera Gram matrix
// Jc^T Jc (also the direct solver's diagonal blocks of S,
// direct/reduced_camera_kernels.h).
//
// Why a header of their own. The reduced Gram matrix comes in two versions: a
// fixed-size one for a camera with one residual block in a uniform group
// (projected_block_layout.h, at the sizes of common/fixed_size_dispatch.h),
// and a dynamic one for every other case. The entry point
// AddReducedGramLowerGroup chooses per group and camera, through
// DispatchBlockSizes on layout.uniform_sizes, and nothing else picks a size.
// Both versions are visible here so that projected_kernels_test.cc can check
// one against the other.
//
// Group g's hot rows h: layout.rows[g] rows of layout.hot_stride(g) scalars,
// [ compact camera Jacobian (camera_width) | Q1 row (d) ].
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_GRAM_KERNELS_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_GRAM_KERNELS_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

// Camera Gram matrices, lower triangles (i >= k) of n x n row-major double
// matrices; camera entry e (an index into ProblemStructure::group_cameras)
// of group g, n its tangent size.

// acc += Jc^T Jc (Jc: the camera's columns of the raw Jacobian).
template <typename Scalar>
void AddCameraGramLower(const ProjectedBlockLayout& layout, int g, int e, int n, const Scalar* h,
                        double* acc) {
  const int hs = layout.hot_stride(g);
  for (int ii = layout.entry_item_begin[e]; ii < layout.entry_item_begin[e + 1]; ++ii) {
    const ProjectedBlockLayout::Item& item = layout.items[layout.entry_items[ii]];
    DCHECK_EQ(item.size, n);
    for (int r = item.row; r < item.row + item.rows; ++r) {
      const Scalar* row = h + static_cast<int64_t>(r) * hs + item.column;
      for (int i = 0; i < n; ++i) {
        const double vi = row[i];
        for (int k = 0; k <= i; ++k) acc[i * n + k] += vi * static_cast<double>(row[k]);
      }
    }
  }
}

// acc += Jc^T Jc - W^T W, W = Q1^T Jc (d x n) over the camera's rows in the
// group: any group, any number of residual blocks of the camera. Computed in
// double; a float accumulator gets the landmark's whole term at once (the
// difference is formed in double, not in the float sums).
template <typename Scalar>
void AddReducedGramLowerDynamic(const ProjectedBlockLayout& layout, int g, int e, int n,
                                const Scalar* h, double* acc) {
  AddCameraGramLower(layout, g, e, n, h, acc);
  const int d = layout.landmark_size[g];
  if (d == 0) return;
  const int cw = layout.camera_width[g];
  const int hs = cw + d;
  std::array<double, 256> small;
  std::vector<double> large;
  double* w = small.data();
  if (d * n > static_cast<int>(small.size())) {
    large.resize(static_cast<size_t>(d) * n);
    w = large.data();
  }
  for (int i = 0; i < d * n; ++i) w[i] = 0.0;
  for (int ii = layout.entry_item_begin[e]; ii < layout.entry_item_begin[e + 1]; ++ii) {
    const ProjectedBlockLayout::Item& item = layout.items[layout.entry_items[ii]];
    for (int r = item.row; r < item.row + item.rows; ++r) {
      const Scalar* row = h + static_cast<int64_t>(r) * hs;
      const Scalar* jc = row + item.column;
      for (int a = 0; a < d; ++a) {
        const double q = row[cw + a];
        for (int k = 0; k < n; ++k) w[a * n + k] += q * static_cast<double>(jc[k]);
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k <= i; ++k) {
      double v = 0.0;
      for (int a = 0; a < d; ++a) v += w[a * n + i] * w[a * n + k];
      acc[i * n + k] -= v;
    }
  }
}

// The same term added to a float accumulator.
template <typename Scalar>
void AddReducedGramLowerDynamic(const ProjectedBlockLayout& layout, int g, int e, int n,
                                const Scalar* h, float* acc) {
  std::array<double, 256> small;
  std::vector<double> large;
  double* term = small.data();
  if (n * n > static_cast<int>(small.size())) {
    large.resize(static_cast<size_t>(n) * n);
    term = large.data();
  }
  for (int i = 0; i < n * n; ++i) term[i] = 0.0;
  AddReducedGramLowerDynamic(layout, g, e, n, h, term);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k <= i; ++k) acc[i * n + k] += static_cast<float>(term[i * n + k]);
  }
}

// Row I of acc (F x F, row-major) += sum_a j_a(I) z_a over its first L
// entries: the lower triangle's I + 1 rounded up to whole SIMD packets of Acc
// (at most F), as one fixed-size Eigen expression, the R terms of each entry
// summed left to right. The entries past the diagonal that the rounding
// adds get the symmetric matrix's values and are never read (the sums are
// read as lower triangles); the rounding saves the scalar tails: 9 x 9 in
// float is 4 + 4 + 4 + 4 + 8 + 8 + 8 + 8 + 9 entries.
template <int F, int R, int I, typename Acc>
inline void AddRoundedLowerRow(const Eigen::Matrix<Acc, F, 1> (&j)[R], const Eigen::Matrix<Acc, F, 1> (&z)[R],
                               Acc* acc) {
  constexpr int kPacket = Eigen::internal::packet_traits<Acc>::size;
  constexpr int kRounded = (I + kPacket) / kPacket * kPacket;
  constexpr int L = kRounded < F ? kRounded : F;
  Eigen::Map<Eigen::Matrix<Acc, L, 1>> row(acc + I * F);
  if constexpr (R == 1) {
    row += j[0](I) * z[0].template head<L>();
  } else if constexpr (R == 2) {
    row += j[0](I) * z[0].template head<L>() + j[1](I) * z[1].template head<L>();
  } else {
    Eigen::Matrix<Acc, L, 1> v = j[0](I) * z[0].template head<L>();
    for (int a = 1; a < R; ++a) v += j[a](I) * z[a].template head<L>();
    row += v;
  }
}

template <int F, int R, typename Acc, int... I>
inline void AddRoundedLowerRows(const Eigen::Matrix<Acc, F, 1> (&j)[R], const Eigen::Matrix<Acc, F, 1> (&z)[R],
                                Acc* acc, std::integer_sequence<int, I...>) {
  (AddRoundedLowerRow<F, R, I>(j, z, acc), ...);
}

// A camera with one residual block in a uniform group of sizes (R, E, F):
// its R rows J_a (F) each followed by their Q1 row q_a (E), F + E scalars
// apart, from r on. acc += J^T M J, with the R x R projector
// M = I - [q_0; ...] [q_0; ...]^T formed first, all in Acc: z_a = (M J)_a as
// F-vectors, then the lower triangle row by row in SIMD packets
// (AddRoundedLowerRow; entries past the diagonal of rounded rows are
// written too). Acc is the preconditioner's accumulator: the storage's
// Scalar (block_jacobi_preconditioner.h), so float runs four entries per SSE
// instruction where a double accumulator converted every operand.
template <int R, int E, int F, typename Scalar, typename Acc>
inline void AddReducedGramLowerFixed(const Scalar* r, Acc* acc) {
  static_assert(R > 0 && E > 0 && F > 0, "a fixed-size kernel needs positive sizes");
  constexpr int kStride = F + E;
  using VF = Eigen::Matrix<Acc, F, 1>;
  Acc m[R][R];
  for (int a = 0; a < R; ++a) {
    for (int b = a; b < R; ++b) {
      const Scalar* qa = r + a * kStride + F;
      const Scalar* qb = r + b * kStride + F;
      Acc v = a == b ? Acc(1) : Acc(0);
      for (int c = 0; c < E; ++c) v -= static_cast<Acc>(qa[c]) * static_cast<Acc>(qb[c]);
      m[a][b] = v;
      m[b][a] = v;
    }
  }
  VF j[R], z[R];  // z = M J
  for (int a = 0; a < R; ++a) {
    j[a] = Eigen::Map<const Eigen::Matrix<Scalar, F, 1>>(r + a * kStride).template cast<Acc>();
  }
  for (int a = 0; a < R; ++a) {
    z[a] = m[a][0] * j[0];
    for (int b = 1; b < R; ++b) z[a] += m[a][b] * j[b];
  }
  AddRoundedLowerRows<F, R>(j, z, acc, std::make_integer_sequence<int, F>());
}

// Camera entry e's diagonal block of group g's B^T B added to acc (the
// landmark's share of the preconditioner's Schur-complement block), by the
// fixed-size kernel when the group is uniform with listed sizes and the
// camera has one residual block in it.
template <typename Scalar, typename Acc>
inline void AddReducedGramLowerGroup(const ProjectedBlockLayout& layout, int g, int e, int n,
                                     const Scalar* h, Acc* acc) {
  DispatchBlockSizes(layout.uniform_sizes[g], [&](auto fixed) {
    using S = decltype(fixed);
    if constexpr (S::kFixed) {
      const int ib = layout.entry_item_begin[e];
      if (layout.entry_item_begin[e + 1] - ib == 1) {
        DCHECK_EQ(n, S::kF);
        DCHECK_EQ(layout.hot_stride(g), S::kF + S::kE);
        const ProjectedBlockLayout::Item& item = layout.items[layout.entry_items[ib]];
        AddReducedGramLowerFixed<S::kRow, S::kE, S::kF>(
            h + static_cast<int64_t>(item.row) * (S::kF + S::kE), acc);
        return;
      }
    }
    AddReducedGramLowerDynamic(layout, g, e, n, h, acc);
  });
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_GRAM_KERNELS_H_
