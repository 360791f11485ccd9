// The reduced camera system's product of the projected landmark blocks
// (projected_landmark_blocks.h), the kernel that runs most often (every PCG
// iteration): y += B^T B x = Jp^T (u - Q1 Q1^T u), u = Jp x, per landmark.
//
// Why a header of its own. The product comes in two versions: a fixed-size
// one for uniform groups (projected_block_layout.h) at the sizes listed in
// common/fixed_size_dispatch.h, with one camera item per residual block
// (BAL) or two (COLMAP's pose and intrinsics), and a dynamic one for every
// other group. The entry points MultiplyNormalGroup and MultiplyNormalRun
// choose per group, through DispatchProductSizes on layout.uniform_sizes, and
// nothing else picks a size. Both versions are visible here so that
// projected_kernels_test.cc
// can check one against the other. BAL's shape in float has an SSE2 version
// (projected_kernels_sse2.h, included first).
//
// Group g's hot rows h: layout.rows[g] rows of layout.hot_stride(g) scalars,
// [ compact camera Jacobian (camera_width) | Q1 row (d) ].
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_PRODUCT_KERNELS_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_PRODUCT_KERNELS_H_

#include <cstdint>
#include <utility>

#include <Eigen/Core>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "ceres_sqrtba/internal/projected/projected_kernels_sse2.h"
#include "ceres_sqrtba/internal/projected/projected_row_kernels.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

// The product: y (reduced camera vector) += B^T B x = Jp^T (u - Q1 t),
// u = Jp x, t = Q1^T u (projected_landmark_blocks.h, eq. (1)), in Scalar.
// Two sweeps over the group's rows, the second from L1.

// Any group. u: layout.rows[g] + layout.landmark_size[g] scalars.
template <typename Scalar>
void MultiplyNormalDynamic(const ProjectedBlockLayout& layout, int g, const Scalar* h, const Scalar* x,
                           Scalar* y, Scalar* u) {
  const int cw = layout.camera_width[g];
  const int d = layout.landmark_size[g];
  const int hs = cw + d;
  const int m = layout.rows[g];
  const int sb = layout.segment_begin[g], se = layout.segment_end[g];
  const ProjectedBlockLayout::Item* items = layout.items.data();
  Scalar* t = u + m;
  for (int sg = sb; sg < se; ++sg) {
    const ProjectedBlockLayout::Segment& seg = layout.segments[sg];
    for (int i = seg.row; i < seg.row + seg.rows; ++i) {
      u[i] = RowTimesCameras<Scalar>(h + static_cast<int64_t>(i) * hs, items + seg.item_begin,
                                     items + seg.item_end, x);
    }
  }
  for (int k = 0; k < d; ++k) t[k] = 0;
  for (int i = 0; i < m; ++i) {
    const Scalar* q = h + static_cast<int64_t>(i) * hs + cw;
    for (int k = 0; k < d; ++k) t[k] += q[k] * u[i];
  }
  for (int sg = sb; sg < se; ++sg) {
    const ProjectedBlockLayout::Segment& seg = layout.segments[sg];
    for (int i = seg.row; i < seg.row + seg.rows; ++i) {
      const Scalar* row = h + static_cast<int64_t>(i) * hs;
      Scalar w = u[i];
      for (int k = 0; k < d; ++k) w -= row[cw + k] * t[k];
      AddRowTransposeTimes(row, items + seg.item_begin, items + seg.item_end, w, y);
    }
  }
}

// A uniform group of sizes (R, E, F1, F2) with k observations: per
// observation R rows [J (F1 + F2) | Q1 (E)] back to back, and its camera
// items' offsets in x and y (offsets: one per observation in row order for
// F2 = 0; two, the first item's then the second's, for F2 > 0, COLMAP's
// pose and intrinsics) and, for F2 > 0, their sizes (sizes, as offsets; the
// second item's is at most F2, its row columns past it zero). The
// (F1 + F2)-vectors go through Eigen's fixed-size kernels (SIMD packets,
// summation order fixed by the sizes); with two items x's two pieces are
// gathered into one vector first (zero past a smaller second item) and the
// row sums scattered back, which sums each entry in the same order as one
// item of F1 + F2 columns would.
template <int R, int E, int F1, int F2, typename Scalar>
inline void MultiplyNormalCamerasFixed(const Scalar* __restrict h, int k, const int* __restrict offsets,
                                       const int* __restrict sizes, const Scalar* __restrict x,
                                       Scalar* __restrict y, Scalar* __restrict u) {
  static_assert(R > 0 && E > 0 && F1 > 0 && F2 >= 0, "a fixed-size kernel needs positive sizes");
  constexpr int F = F1 + F2;
  constexpr int kItems = F2 > 0 ? 2 : 1;
  using VF = Eigen::Matrix<Scalar, F, 1>;
  constexpr int kStride = F + E;            // one hot row
  constexpr int kObservation = R * kStride;  // one residual block's rows
  Scalar t[E];
  for (int c = 0; c < E; ++c) t[c] = 0;
  for (int s = 0; s < k; ++s) {
    const Scalar* r = h + kObservation * s;
    Scalar us[R];
    if constexpr (F2 == 0) {
      const Eigen::Map<const VF> xc(x + offsets[s]);
      for (int a = 0; a < R; ++a) us[a] = Eigen::Map<const VF>(r + a * kStride).dot(xc);
    } else {
      VF xc;
      xc.template head<F1>() = Eigen::Map<const Eigen::Matrix<Scalar, F1, 1>>(x + offsets[kItems * s]);
      const Scalar* x2 = x + offsets[kItems * s + 1];
      const int n2 = sizes[kItems * s + 1];
      if (n2 == F2) {
        xc.template tail<F2>() = Eigen::Map<const Eigen::Matrix<Scalar, F2, 1>>(x2);
      } else {
        for (int j = 0; j < F2; ++j) xc[F1 + j] = j < n2 ? x2[j] : Scalar(0);
      }
      for (int a = 0; a < R; ++a) us[a] = Eigen::Map<const VF>(r + a * kStride).dot(xc);
    }
    for (int a = 0; a < R; ++a) u[R * s + a] = us[a];
    // t += Q1_s^T u_s, the observation's R terms summed first.
    for (int c = 0; c < E; ++c) {
      Scalar v = r[F + c] * us[0];
      for (int a = 1; a < R; ++a) v += r[a * kStride + F + c] * us[a];
      t[c] += v;
    }
  }
  for (int s = 0; s < k; ++s) {
    const Scalar* r = h + kObservation * s;
    Scalar w[R];
    for (int a = 0; a < R; ++a) {
      const Scalar* q = r + a * kStride + F;
      Scalar p = q[0] * t[0];
      for (int c = 1; c < E; ++c) p += q[c] * t[c];
      w[a] = u[R * s + a] - p;
    }
    if constexpr (F2 == 0) {
      AddRowsTransposeTimes<F, kStride>(r, w, y + offsets[s], std::make_integer_sequence<int, R>());
    } else {
      VF v = VF::Zero();
      AddRowsTransposeTimes<F, kStride>(r, w, v.data(), std::make_integer_sequence<int, R>());
      Eigen::Map<Eigen::Matrix<Scalar, F1, 1>>(y + offsets[kItems * s]) += v.template head<F1>();
      Scalar* y2 = y + offsets[kItems * s + 1];
      const int n2 = sizes[kItems * s + 1];
      if (n2 == F2) {
        Eigen::Map<Eigen::Matrix<Scalar, F2, 1>>(y2) += v.template tail<F2>();
      } else {
        for (int j = 0; j < n2; ++j) y2[j] += v[F1 + j];
      }
    }
  }
}

// One camera item per observation (F2 = 0), sizes (R, E, F); BAL's shape in
// float is specialized in projected_kernels_sse2.h.
template <int R, int E, int F, typename Scalar>
inline void MultiplyNormalFixed(const Scalar* __restrict h, int k, const int* __restrict offsets,
                                const Scalar* __restrict x, Scalar* __restrict y,
                                Scalar* __restrict u) {
  MultiplyNormalCamerasFixed<R, E, F, 0>(h, k, offsets, nullptr, x, y, u);
}

// The fixed kernel of shape S (a FixedSizes of the product's list); offsets
// and sizes: the group's first items' in layout.item_offset and item_size.
template <typename S, typename Scalar>
inline void MultiplyNormalShape(const Scalar* h, int k, const int* offsets, const int* sizes, const Scalar* x,
                                Scalar* y, Scalar* u) {
  if constexpr (S::kF2 == 0) {
    MultiplyNormalFixed<S::kRow, S::kE, S::kF>(h, k, offsets, x, y, u);
  } else {
    MultiplyNormalCamerasFixed<S::kRow, S::kE, S::kF, S::kF2>(h, k, offsets, sizes, x, y, u);
  }
}

// Group g's B^T B x added to y, by the fixed-size kernel when the group is
// uniform with sizes of the product's list (DispatchProductSizes). u:
// layout.rows[g] + layout.landmark_size[g].
template <typename Scalar>
inline void MultiplyNormalGroup(const ProjectedBlockLayout& layout, int g, const Scalar* h,
                                const Scalar* x, Scalar* y, Scalar* u) {
  DispatchProductSizes(layout.uniform_sizes[g], [&](auto fixed) {
    using S = decltype(fixed);
    if constexpr (S::kFixed) {
      const int sb = layout.segment_begin[g], se = layout.segment_end[g];
      DCHECK_EQ(layout.camera_width[g], S::kF + S::kF2);
      DCHECK_EQ(layout.landmark_size[g], S::kE);
      DCHECK_EQ(layout.rows[g], S::kRow * (se - sb));
      const int first = layout.segments[sb].item_begin;
      MultiplyNormalShape<S>(h, se - sb, layout.item_offset.data() + first, layout.item_size.data() + first, x, y,
                             u);
    } else {
      MultiplyNormalDynamic(layout, g, h, x, y, u);
    }
  });
}

// The groups at storage positions [p, p + n), all in one run of a listed
// shape (ProjectedBlockLayout::run_length), added to y as MultiplyNormalGroup
// adds them one after the other, with the same bits: their hot rows and
// camera offsets follow each other in storage, so the walk needs each
// group's number of observations and nothing else of the layout. hot: the
// start of the blocks' hot rows.
template <typename Scalar>
inline void MultiplyNormalRun(const ProjectedBlockLayout& layout, int p, int n, const Scalar* hot,
                              const Scalar* x, Scalar* y, Scalar* u) {
  const int g = layout.order[p];
  DCHECK_GT(n, 0);
  DCHECK_LE(n, layout.run_length[p]);
  DispatchProductSizes(layout.uniform_sizes[g], [&](auto fixed) {
    using S = decltype(fixed);
    if constexpr (S::kFixed) {
      constexpr int kObservation = S::kRow * (S::kF + S::kF2 + S::kE);
      constexpr int kItems = S::kF2 > 0 ? 2 : 1;
      const Scalar* h = hot + layout.hot_offset[g];
      const int first = layout.segments[layout.segment_begin[g]].item_begin;
      const int* offsets = layout.item_offset.data() + first;
      const int* sizes = layout.item_size.data() + first;
      const int* observations = layout.position_observations.data() + p;
      for (int l = 0; l < n; ++l) {
        const int k = observations[l];
        MultiplyNormalShape<S>(h, k, offsets, sizes, x, y, u);
        h += static_cast<int64_t>(kObservation) * k;
        offsets += kItems * k;
        sizes += kItems * k;
      }
    } else {
      // Not a run (run_length says otherwise): group by group.
      DCHECK(false) << "a run of groups of no listed shape";
      for (int q = p; q < p + n; ++q) {
        const int gq = layout.order[q];
        MultiplyNormalGroup(layout, gq, hot + layout.hot_offset[gq], x, y, u);
      }
    }
  });
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_PRODUCT_KERNELS_H_
