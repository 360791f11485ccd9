// The reduced camera system's product of the projected landmark blocks
// (projected_landmark_blocks.h), the kernel that runs most often (every PCG
// iteration): y += B^T B x = Jp^T (u - Q1 Q1^T u), u = Jp x, per landmark.
//
// Why a header of its own. The product comes in two versions: a fixed-size
// one for uniform groups (projected_block_layout.h) at the sizes listed in
// common/fixed_size_dispatch.h, and a dynamic one for every other group. The
// entry points MultiplyNormalGroup and MultiplyNormalRun choose per group,
// through DispatchBlockSizes on layout.uniform_sizes, and nothing else picks
// a size. Both versions are visible here so that projected_kernels_test.cc
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

// A uniform group of sizes (R, E, F) with k observations (offsets: each
// observation's camera offset in x and y, in row order): per observation R
// rows [J (F) | Q1 (E)] back to back. The F-vectors go through Eigen's
// fixed-size kernels (SIMD packets, summation order fixed by F).
template <int R, int E, int F, typename Scalar>
inline void MultiplyNormalFixed(const Scalar* __restrict h, int k, const int* __restrict offsets,
                                const Scalar* __restrict x, Scalar* __restrict y,
                                Scalar* __restrict u) {
  static_assert(R > 0 && E > 0 && F > 0, "a fixed-size kernel needs positive sizes");
  using VF = Eigen::Matrix<Scalar, F, 1>;
  constexpr int kStride = F + E;            // one hot row
  constexpr int kObservation = R * kStride;  // one residual block's rows
  Scalar t[E];
  for (int c = 0; c < E; ++c) t[c] = 0;
  for (int s = 0; s < k; ++s) {
    const Scalar* r = h + kObservation * s;
    const Eigen::Map<const VF> xc(x + offsets[s]);
    Scalar us[R];
    for (int a = 0; a < R; ++a) {
      us[a] = Eigen::Map<const VF>(r + a * kStride).dot(xc);
      u[R * s + a] = us[a];
    }
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
    AddRowsTransposeTimes<F, kStride>(r, w, y + offsets[s], std::make_integer_sequence<int, R>());
  }
}

// Group g's B^T B x added to y, by the fixed-size kernel when the group is
// uniform with listed sizes. u: layout.rows[g] + layout.landmark_size[g].
template <typename Scalar>
inline void MultiplyNormalGroup(const ProjectedBlockLayout& layout, int g, const Scalar* h,
                                const Scalar* x, Scalar* y, Scalar* u) {
  DispatchBlockSizes(layout.uniform_sizes[g], [&](auto fixed) {
    using S = decltype(fixed);
    if constexpr (S::kFixed) {
      const int sb = layout.segment_begin[g], se = layout.segment_end[g];
      DCHECK_EQ(layout.camera_width[g], S::kF);
      DCHECK_EQ(layout.landmark_size[g], S::kE);
      DCHECK_EQ(layout.rows[g], S::kRow * (se - sb));
      MultiplyNormalFixed<S::kRow, S::kE, S::kF>(
          h, se - sb, layout.item_offset.data() + layout.segments[sb].item_begin, x, y, u);
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
  DispatchBlockSizes(layout.uniform_sizes[g], [&](auto fixed) {
    using S = decltype(fixed);
    if constexpr (S::kFixed) {
      constexpr int kObservation = S::kRow * (S::kF + S::kE);
      const Scalar* h = hot + layout.hot_offset[g];
      const int* offsets = layout.item_offset.data() + layout.segments[layout.segment_begin[g]].item_begin;
      const int* observations = layout.position_observations.data() + p;
      for (int l = 0; l < n; ++l) {
        const int k = observations[l];
        MultiplyNormalFixed<S::kRow, S::kE, S::kF>(h, k, offsets, x, y, u);
        h += static_cast<int64_t>(kObservation) * k;
        offsets += k;
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
