// ProjectedLandmarkBlocks::Damp (projected_landmark_blocks.h): for a new
// diagonal, every landmark's thin Householder QR of [Jl; sqrt(lambda) D_l]
// (thin_qr.h; Q1 into the hot rows, R^ for back substitution) and, while the
// rows are in cache, the reduced right-hand side B^T r^ = Jp^T (r - Q1 Q1^T r).
// Its own file because it is the one pass that runs once per trust-region
// radius (a rejected step repeats it without a new Jacobian); the storage it
// works on is defined in projected_landmark_blocks.cc.
#include <algorithm>

#include "ceres_sqrtba/internal/projected/projected_kernels.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"
#include "ceres_sqrtba/internal/projected/thin_qr.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::Damp(const double* dvec, double* rhs, Visitor* visitor) {
  const int ncp = s_.num_camera_parameters;
  const int max_m = layout_.max_rows, max_d = layout_.max_landmark_size;
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    double* acc = chunk_rhs_[chunk];
    std::fill(acc, acc + ncp, 0.0);
    const Scratch work = scratch(chunk);
    double* q1 = work.q1;  // m x d, row-major
    double* sl = work.tail;
    double* t = sl + max_d;
    if (visitor != nullptr) visitor->BeginChunk(chunk);
    for (int g = gb; g < ge; ++g) {
      // A uniform group of listed sizes (projected_block_layout.h) runs the
      // same operations in the same order at compile-time sizes.
      DispatchBlockSizes(layout_.uniform_sizes[g], [&](auto fixed) {
        using S = decltype(fixed);
        constexpr int kE = S::kE;  // kDynamic unless the group is uniform
        const int m = layout_.rows[g], cw = layout_.camera_width[g];
        const int d = kE == kDynamic ? layout_.landmark_size[g] : kE;
        const int hs = layout_.hot_stride(g);
        Scalar* h = hot(g);
        const Scalar* c = cold(g);
        DCHECK_LE(m, max_m);
        DCHECK_LE(d, max_d);
        DCHECK_EQ(d, layout_.landmark_size[g]);
        if (d > 0) {
          const double* src = dvec + s_.parameter_blocks[s_.groups[g].landmark].tangent_offset;
          for (int k = 0; k < d; ++k) sl[k] = src[k];
          auto store = [&](int i, int k, double v) {
            q1[i * d + k] = v;
            h[static_cast<int64_t>(i) * hs + cw + k] = static_cast<Scalar>(v);
          };
          ThinQrOfSize<kE>(m, d, c, d + 1, sl, work.qr, r_.get() + layout_.r_offset[g], store);
          // t = Q1^T r.
          std::fill(t, t + d, 0.0);
          for (int i = 0; i < m; ++i) {
            const double ri = c[i * (d + 1) + d];
            for (int k = 0; k < d; ++k) t[k] += q1[i * d + k] * ri;
          }
        }
        if (visitor != nullptr) visitor->Visit(chunk, g, d > 0 ? q1 : nullptr);
        if (cw == 0) return;
        // B^T r^ = Jp^T (r - Q1 Q1^T r) (eq. (1) of projected_landmark_blocks.h),
        // row by row, the rows' terms added to each camera entry in row order.
        const int sb = layout_.segment_begin[g], se = layout_.segment_begin[g + 1];
        if constexpr (S::kFixed) {
          // One observation per segment: kRow rows, its camera's kF columns
          // first in each hot row.
          const ProjectedBlockLayout::Item* items = layout_.items.data() + layout_.segments[sb].item_begin;
          for (int o = 0; o < se - sb; ++o) {
            double* y = acc + items[o].offset;
            for (int a = 0; a < S::kRow; ++a) {
              const int i = S::kRow * o + a;
              double w = c[i * (d + 1) + d];
              for (int k = 0; k < d; ++k) w -= q1[i * d + k] * t[k];
              const Scalar* row = h + static_cast<int64_t>(i) * hs;
              for (int k = 0; k < S::kF; ++k) y[k] += static_cast<double>(row[k]) * w;
            }
          }
        } else {
          for (int sg = sb; sg < se; ++sg) {
            const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
            for (int i = seg.row; i < seg.row + seg.rows; ++i) {
              double w = c[i * (d + 1) + d];
              for (int k = 0; k < d; ++k) w -= q1[i * d + k] * t[k];
              AddRowTransposeTimes(h + static_cast<int64_t>(i) * hs, layout_.items.data() + seg.item_begin,
                                   layout_.items.data() + seg.item_end, w, acc);
            }
          }
        }
      });
    }
  });
  chunk_rhs_.SumInto(context_, ncp, rhs);
}

template void ProjectedLandmarkBlocks<float>::Damp(const double*, double*, Visitor*);
template void ProjectedLandmarkBlocks<double>::Damp(const double*, double*, Visitor*);

}  // namespace internal
}  // namespace ceres_sqrtba
