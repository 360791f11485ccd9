// ProjectedLandmarkBlocks::Damp (projected_landmark_blocks.h): for a new
// diagonal, every landmark's thin Householder QR of [Jl; sqrt(lambda) D_l]
// (thin_qr.h; Q1 into the hot rows, R^ for back substitution) and, while the
// rows are in cache, the reduced right-hand side B^T r^ = Jp^T (r - Q1 Q1^T r).
// Its own file because it is the one pass that runs once per trust-region
// radius (a rejected step repeats it without a new Jacobian); the storage it
// works on is defined in projected_landmark_blocks.cc.
#include <algorithm>
#include <type_traits>

#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"
#include "ceres_sqrtba/internal/projected/projected_row_kernels.h"
#include "ceres_sqrtba/internal/projected/thin_qr.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
template <typename W>
void ProjectedLandmarkBlocks<Scalar>::AddRowsTransposeTimesWeights(int g, const W& w, double* acc) const {
  // B^T r^ = Jp^T (r - Q1 Q1^T r) (eq. (1) of projected_landmark_blocks.h),
  // row by row, the rows' terms added to each camera entry in row order.
  const int hs = layout_.hot_stride(g);
  const Scalar* h = hot(g);
  const int sb = layout_.segment_begin[g], se = layout_.segment_end[g];
  DispatchBlockSizes(layout_.uniform_sizes[g], [&](auto fixed) {
    using S = decltype(fixed);
    if constexpr (S::kFixed) {
      // One observation per segment: kRow rows, its camera's kF columns
      // first in each hot row.
      const ProjectedBlockLayout::Item* items = layout_.items.data() + layout_.segments[sb].item_begin;
      if constexpr (std::is_same<Scalar, float>::value && std::is_same<std::invoke_result_t<W, int>, float>::value) {
        // Float rows and weights (the batched QR in float): each
        // observation's terms summed in float, added in double.
        constexpr int kStride = S::kF + S::kE;
        DCHECK_EQ(hs, kStride);
        for (int o = 0; o < se - sb; ++o) {
          float wo[S::kRow];
          for (int a = 0; a < S::kRow; ++a) wo[a] = w(S::kRow * o + a);
          AddObservationTransposeTimesInDouble<S::kRow, S::kF, kStride>(
              h + static_cast<int64_t>(S::kRow) * kStride * o, wo, acc + items[o].offset);
        }
        return;
      }
      for (int o = 0; o < se - sb; ++o) {
        double* y = acc + items[o].offset;
        for (int a = 0; a < S::kRow; ++a) {
          const int i = S::kRow * o + a;
          const double wi = w(i);
          const Scalar* row = h + static_cast<int64_t>(i) * hs;
          for (int k = 0; k < S::kF; ++k) y[k] += static_cast<double>(row[k]) * wi;
        }
      }
    } else {
      for (int sg = sb; sg < se; ++sg) {
        const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
        for (int i = seg.row; i < seg.row + seg.rows; ++i) {
          AddRowTransposeTimes(h + static_cast<int64_t>(i) * hs, layout_.items.data() + seg.item_begin,
                               layout_.items.data() + seg.item_end, static_cast<double>(w(i)), acc);
        }
      }
    }
  });
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::DampGroup(int chunk, int g, const double* dvec, double* acc,
                                                Visitor* visitor) {
  const Scratch work = scratch(chunk);
  double* q1 = work.q1;  // m x d, row-major
  double* sl = work.tail;
  double* t = sl + layout_.max_landmark_size;
  // A uniform group of listed sizes (projected_block_layout.h) runs the same
  // operations in the same order at compile-time sizes.
  DispatchBlockSizes(layout_.uniform_sizes[g], [&](auto fixed) {
    using S = decltype(fixed);
    constexpr int kE = S::kE;  // kDynamic unless the group is uniform
    const int m = layout_.rows[g], cw = layout_.camera_width[g];
    const int d = kE == kDynamic ? layout_.landmark_size[g] : kE;
    const int hs = layout_.hot_stride(g);
    Scalar* h = hot(g);
    const Scalar* c = cold(g);
    DCHECK_LE(m, layout_.max_rows);
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
    if (visitor != nullptr) visitor->Visit(chunk, g, d > 0 && visitor->UsesQ1() ? q1 : nullptr);
    if (cw == 0) return;
    AddRowsTransposeTimesWeights(
        g,
        [&](int i) {
          double w = c[i * (d + 1) + d];
          for (int k = 0; k < d; ++k) w -= q1[i * d + k] * t[k];
          return w;
        },
        acc);
  });
}

template <typename Scalar>
template <typename C>
void ProjectedLandmarkBlocks<Scalar>::DampBatch(int chunk, const LandmarkBatches::Batch& batch,
                                                const double* dvec, double* acc,
                                                Visitor* visitor, LaneVector<C>* scratch_lanes) {
  using Lanes = LaneVector<C>;
  const int rows = batch.rows, d = batch.d, n = rows + d;
  DCHECK_LE(batch.count, kBatchLanes<C>);
  DCHECK_LE(rows, batches_.max_rows);
  DCHECK_LE(d, batches_.max_d);
  Lanes* a = scratch_lanes;  // [Jl; diag(s)], n x d column-major
  Lanes* q = a + n * d;                    // Q^_1, n x d column-major
  Lanes* beta = q + n * d;
  Lanes* r = beta + d;  // R^, d x d row-major
  Lanes* t = r + d * d;
  Lanes* rv = t + d;    // the residual rows
  Lanes* w = rv + rows;  // their weights r - Q1 t
  const int* groups = layout_.order.data() + batch.first;
  double* q1 = scratch(chunk).q1;
  const bool uses_q1 = visitor != nullptr && visitor->UsesQ1();
  // Every loop over the landmark's columns at a compile-time d when d is 3
  // (points), so that the gathers and scatters unroll.
  auto run = [&](auto fixed_d) {
    constexpr int kD = decltype(fixed_d)::value;
    const int dd = kD == kDynamic ? d : kD;
    // Gather: lane l holds group groups[l]; rows past its own m (padding)
    // and unused lanes stay zero.
    for (int i = 0; i < n * dd; ++i) a[i] = Lanes::Zero();
    for (int i = 0; i < rows; ++i) rv[i] = Lanes::Zero();
    for (int l = 0; l < batch.count; ++l) {
      const int g = groups[l];
      const int m = layout_.rows[g];
      DCHECK_EQ(layout_.landmark_size[g], dd);
      DCHECK_LE(m, rows);
      const Scalar* c = cold(g);
      for (int i = 0; i < m; ++i) {
        const Scalar* row = c + i * (dd + 1);
        for (int k = 0; k < dd; ++k) a[k * n + i][l] = row[k];
        rv[i][l] = row[dd];
      }
      const double* sl = dvec + s_.parameter_blocks[s_.groups[g].landmark].tangent_offset;
      for (int k = 0; k < dd; ++k) a[k * n + rows + k][l] = static_cast<C>(sl[k]);
    }
    BatchedThinQrOfSize<kD>(rows, dd, a, q, beta, r);
    // t = Q1^T r, w = r - Q1 t, as DampGroup sums them.
    for (int k = 0; k < dd; ++k) {
      Lanes v = Lanes::Zero();
      for (int i = 0; i < rows; ++i) v += q[k * n + i] * rv[i];
      t[k] = v;
    }
    for (int i = 0; i < rows; ++i) {
      Lanes v = rv[i];
      for (int k = 0; k < dd; ++k) v -= q[k * n + i] * t[k];
      w[i] = v;
    }
    // Scatter, group by group: R^, Q1 into the hot rows, the visitor, B^T r^.
    for (int l = 0; l < batch.count; ++l) {
      const int g = groups[l];
      const int m = layout_.rows[g], cw = layout_.camera_width[g];
      const int hs = layout_.hot_stride(g);
      double* rg = r_.get() + layout_.r_offset[g];
      for (int k = 0; k < dd * dd; ++k) rg[k] = static_cast<double>(r[k][l]);
      Scalar* h = hot(g) + cw;
      for (int i = 0; i < m; ++i) {
        for (int k = 0; k < dd; ++k) h[static_cast<int64_t>(i) * hs + k] = static_cast<Scalar>(q[k * n + i][l]);
      }
      if (visitor != nullptr) {
        if (uses_q1) {
          for (int i = 0; i < m; ++i) {
            for (int k = 0; k < dd; ++k) q1[i * dd + k] = static_cast<double>(q[k * n + i][l]);
          }
        }
        visitor->Visit(chunk, g, uses_q1 ? q1 : nullptr);
      }
      // The weights in C: float lanes take the float kernel for listed
      // shapes (AddRowsTransposeTimesWeights).
      if (cw > 0) AddRowsTransposeTimesWeights(g, [&](int i) -> C { return w[i][l]; }, acc);
    }
  };
  if (d == 3) {
    run(std::integral_constant<int, 3>());
  } else {
    run(std::integral_constant<int, kDynamic>());
  }
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::Damp(const double* dvec, double* rhs, Visitor* visitor) {
  const int ncp = s_.num_camera_parameters;
  context_->ForChunks(partition_, [&](int chunk, int, int) {
    double* acc = chunk_rhs_[chunk];
    std::fill(acc, acc + ncp, 0.0);
    if (visitor != nullptr) visitor->BeginChunk(chunk);
    for (int b = batches_.batch_begin[chunk]; b < batches_.batch_begin[chunk + 1]; ++b) {
      const LandmarkBatches::Batch& batch = batches_.batches[b];
      if (batch.count == 1) {
        DampGroup(chunk, layout_.order[batch.first], dvec, acc, visitor);
      } else {
        if (qr_in_double_) {
          DampBatch<double>(chunk, batch, dvec, acc, visitor, lane_scratch_double_[chunk].data());
        } else {
          DampBatch<Scalar>(chunk, batch, dvec, acc, visitor, lane_scratch_[chunk].data());
        }
      }
    }
  });
  chunk_rhs_.SumInto(context_, ncp, rhs);
}

template void ProjectedLandmarkBlocks<float>::DampGroup(int, int, const double*, double*, Visitor*);
template void ProjectedLandmarkBlocks<double>::DampGroup(int, int, const double*, double*, Visitor*);
template void ProjectedLandmarkBlocks<float>::DampBatch<float>(int, const LandmarkBatches::Batch&, const double*,
                                                               double*, Visitor*, LaneVector<float>*);
template void ProjectedLandmarkBlocks<float>::DampBatch<double>(int, const LandmarkBatches::Batch&, const double*,
                                                                double*, Visitor*, LaneVector<double>*);
template void ProjectedLandmarkBlocks<double>::DampBatch<double>(int, const LandmarkBatches::Batch&, const double*,
                                                                 double*, Visitor*, LaneVector<double>*);
template void ProjectedLandmarkBlocks<float>::Damp(const double*, double*, Visitor*);
template void ProjectedLandmarkBlocks<double>::Damp(const double*, double*, Visitor*);

}  // namespace internal
}  // namespace ceres_sqrtba
