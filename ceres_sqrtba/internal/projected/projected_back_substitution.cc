// ProjectedLandmarkBlocks::BackSubstitute (projected_landmark_blocks.h): the
// landmark steps y_l = R^-1 Q1^T (r - Jp y_p) (paper eq. (backsub_nm)) and
// the model's |J y|^2 summed over the observation rows, once per solve after
// PCG. Its own file: one step of the solve (design.md, "Back substitution"),
// next to the damping pass that computes the Q1 and R^ it reads.
#include <algorithm>

#include "ceres_sqrtba/internal/projected/projected_kernels.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
double ProjectedLandmarkBlocks<Scalar>::BackSubstitute(double* y) {
  const double* yp = y + s_.camera_tangent_begin;
  const int max_m = layout_.max_rows, max_d = layout_.max_landmark_size;
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    double* u = scratch(chunk).tail;
    double* t = u + max_m;
    double* yl = t + max_d;
    double sum = 0.0;
    for (int position = gb; position < ge; ++position) {
      const int g = layout_.order[position];
      // A uniform group of listed sizes (projected_block_layout.h) runs the
      // same operations in the same order at compile-time sizes.
      DispatchBlockSizes(layout_.uniform_sizes[g], [&](auto fixed) {
        using S = decltype(fixed);
        const int m = layout_.rows[g], cw = layout_.camera_width[g];
        const int d = S::kE == kDynamic ? layout_.landmark_size[g] : S::kE;
        const int hs = layout_.hot_stride(g);
        const Scalar* h = hot(g);
        const Scalar* c = cold(g);
        DCHECK_LE(m, max_m);
        DCHECK_LE(d, max_d);
        DCHECK_EQ(d, layout_.landmark_size[g]);
        const int sb = layout_.segment_begin[g], se = layout_.segment_end[g];
        if constexpr (S::kFixed) {
          // One observation per segment: kRow rows, its camera's kF columns
          // first in each hot row.
          const ProjectedBlockLayout::Item* items = layout_.items.data() + layout_.segments[sb].item_begin;
          for (int i = 0; i < m; ++i) {
            const Scalar* row = h + static_cast<int64_t>(i) * hs;
            const double* x = yp + items[i / S::kRow].offset;
            double v = 0.0;
            for (int k = 0; k < S::kF; ++k) v += static_cast<double>(row[k]) * x[k];
            u[i] = v;
          }
        } else {
          for (int sg = sb; sg < se; ++sg) {
            const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
            for (int i = seg.row; i < seg.row + seg.rows; ++i) {
              u[i] = RowTimesCameras<double>(h + static_cast<int64_t>(i) * hs, layout_.items.data() + seg.item_begin,
                                             layout_.items.data() + seg.item_end, yp);
            }
          }
        }
        if (d > 0) {
          // y_l = R^-1 Q1^T (r - Jp y_p).
          std::fill(t, t + d, 0.0);
          for (int i = 0; i < m; ++i) {
            const double ri = static_cast<double>(c[i * (d + 1) + d]) - u[i];
            const Scalar* q = h + static_cast<int64_t>(i) * hs + cw;
            for (int k = 0; k < d; ++k) t[k] += static_cast<double>(q[k]) * ri;
          }
          const double* r = r_.get() + layout_.r_offset[g];
          for (int k = d - 1; k >= 0; --k) {
            double v = t[k];
            for (int j = k + 1; j < d; ++j) v -= r[k * d + j] * yl[j];
            yl[k] = r[k * d + k] != 0.0 ? v / r[k * d + k] : 0.0;
          }
          double* out = y + s_.parameter_blocks[s_.groups[g].landmark].tangent_offset;
          for (int k = 0; k < d; ++k) out[k] = yl[k];
        }
        // |J_b y|^2 over the observation rows, directly.
        for (int i = 0; i < m; ++i) {
          double v = u[i];
          for (int k = 0; k < d; ++k) v += static_cast<double>(c[i * (d + 1) + k]) * yl[k];
          sum += v * v;
        }
      });
    }
    chunk_sums_[chunk] = sum;
  });
  double jy = 0.0;
  for (double v : chunk_sums_) jy += v;
  return jy;
}

template double ProjectedLandmarkBlocks<float>::BackSubstitute(double*);
template double ProjectedLandmarkBlocks<double>::BackSubstitute(double*);

}  // namespace internal
}  // namespace ceres_sqrtba
