// ProjectedLandmarkBlocks::BackSubstitute (projected_landmark_blocks.h): the
// landmark steps y_l = R^-1 Q1^T (r - Jp y_p) (paper eq. (backsub_nm)) and
// the model's |J y|^2 summed over the observation rows, once per solve after
// PCG. Its own file: one step of the solve (design.md, "Back substitution"),
// next to the damping pass that computes the Q1 and R^ it reads.
#include <algorithm>
#include <type_traits>

#include <Eigen/Core>

#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"
#include "ceres_sqrtba/internal/projected/projected_row_kernels.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

// In float the storage's rows (Jp, Q1, Jl and r) are float already: what a
// float computation adds to Jp y_p, Q1^T (r - Jp y_p) and J y is an error of
// the order of their own rounding, and only R^'s triangular solve, small and
// where a division could amplify, stays in double. The row passes are
// projected_row_kernels.h's StepRowsFixed and SquaredStepRowsFixed (fixed-size
// Eigen expressions, SSE2 for BAL's shape): sums in an order fixed by the
// sizes, so the same bits for any number of threads.
template <typename Scalar>
template <typename S>
void ProjectedLandmarkBlocks<Scalar>::BackSubstituteFixedInScalar(int g, const Scalar* yp, double* y, double* u,
                                                                   double* yl, double* sum) const {
  constexpr int kRow = S::kRow, kE = S::kE, kF = S::kF;
  const int m = layout_.rows[g];
  DCHECK_EQ(layout_.camera_width[g], kF);
  DCHECK_EQ(layout_.landmark_size[g], kE);
  DCHECK_EQ(m % kRow, 0);
  const Scalar* c = cold(g);
  // One observation per segment: kRow rows, its camera's kF columns first in
  // each hot row, then the row of Q1 (projected_row_kernels.h).
  const ProjectedBlockLayout::Item* items = layout_.items.data() + layout_.segments[layout_.segment_begin[g]].item_begin;
  // The chunk's scratch doubles hold m Scalars of Jp y_p here.
  Scalar* u_scalar = reinterpret_cast<Scalar*>(u);
  Scalar t[kE];
  StepRowsFixed<kRow, kE, kF>(hot(g), m / kRow, items, yp, c, u_scalar, t);
  // y_l = R^-1 t, by the reciprocals of R^'s diagonal: kE independent
  // divisions instead of a chain of them through the substitution.
  const double* r = r_.get() + layout_.r_offset[g];
  double inverse[kE];
  for (int k = 0; k < kE; ++k) inverse[k] = r[k * kE + k] != 0.0 ? 1.0 / r[k * kE + k] : 0.0;
  for (int k = kE - 1; k >= 0; --k) {
    double v = static_cast<double>(t[k]);
    for (int j = k + 1; j < kE; ++j) v -= r[k * kE + j] * yl[j];
    yl[k] = v * inverse[k];
  }
  double* out = y + s_.parameter_blocks[s_.groups[g].landmark].tangent_offset;
  Scalar yl_scalar[kE];
  for (int k = 0; k < kE; ++k) {
    out[k] = yl[k];
    yl_scalar[k] = static_cast<Scalar>(yl[k]);
  }
  // |J_b y|^2 over the observation rows.
  *sum = SquaredStepRowsFixed<kE>(c, m, u_scalar, yl_scalar, *sum);
}

template <typename Scalar>
double ProjectedLandmarkBlocks<Scalar>::BackSubstitute(double* y) {
  const double* yp = y + s_.camera_tangent_begin;
  // In float, uniform groups of listed sizes run in float
  // (BackSubstituteFixedInScalar) from a float copy of y_p.
  constexpr bool kFloatRows = std::is_same<Scalar, float>::value;
  if (kFloatRows) {
    for (int i = 0; i < s_.num_camera_parameters; ++i) camera_step_[i] = static_cast<Scalar>(yp[i]);
  }
  const Scalar* yp_scalar = camera_step_.data();
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
        if constexpr (S::kFixed && kFloatRows) {
          BackSubstituteFixedInScalar<S>(g, yp_scalar, y, u, yl, &sum);
          return;
        }
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
