#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ceres_sqrtba/internal/common/finite.h"
#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/linear/linear_solver.h"
#include "ceres_sqrtba/internal/projected/projected_gram_kernels.h"
#include "ceres_sqrtba/internal/projected/projected_product_kernels.h"
#include "ceres_sqrtba/internal/projected/projected_row_kernels.h"
#include "ceres_sqrtba/internal/projected/thin_qr.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

namespace {

// Beyond this a value cannot be used safely in Scalar: the bound of every
// storage (linear_solver.h), infinite in double.
template <typename Scalar>
constexpr double kMaxMagnitude = kMaxStorableMagnitude<Scalar>;

template <typename Scalar>
Scalar* AllocateScalars(int64_t n) {
  Scalar* p = static_cast<Scalar*>(AllocateLarge(std::max<int64_t>(1, n) * static_cast<int64_t>(sizeof(Scalar))));
  return p;
}

// Scratch doubles per chunk (ProjectedLandmarkBlocks::scratch).
int ScratchSize(const ProjectedBlockLayout& layout) {
  const int m = layout.max_rows, d = layout.max_landmark_size;
  return ThinQrScratchSize(m, d) + m * d + m + 2 * d;
}

// Lane vectors of DampBatch's scratch for batches of at most `rows` rows and
// landmark size d: the QR's work space, R^, t, the right-hand side's rows and
// their weights.
int LaneScratchSize(int rows, int d) {
  return rows == 0 ? 0 : BatchedThinQrWorkSize(rows, d) + d * d + d + 2 * rows;
}

}  // namespace

template <typename Scalar>
int64_t ProjectedLandmarkBlocks<Scalar>::BatchBytes(const ProjectedBlockLayout& layout,
                                                    const WorkPartition& partition) {
  // An upper bound of what the constructor allocates, without sorting: the
  // largest batch that the batchable groups could form, per chunk.
  int rows = 0, d = 0;
  for (size_t g = 0; g < layout.rows.size(); ++g) {
    const int dg = layout.landmark_size[g];
    const int mg = LandmarkBatches::BatchRows(layout.rows[g]);
    if (dg > 0 && dg <= LandmarkBatches::kMaxBatchLandmarkSize && mg <= LandmarkBatches::kMaxBatchRows) {
      rows = std::max(rows, mg);
      d = std::max(d, dg);
    }
  }
  const int64_t groups = static_cast<int64_t>(layout.rows.size());
  return groups * static_cast<int64_t>(sizeof(int) + sizeof(LandmarkBatches::Batch)) +
         static_cast<int64_t>(partition.num_chunks()) * LaneScratchSize(rows, d) *
             static_cast<int64_t>(sizeof(LaneVector<Scalar>));
}

template <typename Scalar>
ProjectedLandmarkBlocks<Scalar>::ProjectedLandmarkBlocks(const ProblemStructure& s,
                                                         const ProjectedBlockLayout& layout,
                                                         const WorkPartition& partition,
                                                         ParallelContext* context, LandmarkQr qr)
    : s_(s),
      layout_(layout),
      partition_(partition),
      context_(context),
      hot_(AllocateScalars<Scalar>(layout.hot_scalars)),
      cold_(AllocateScalars<Scalar>(layout.cold_scalars)),
      r_(AllocateScalars<double>(layout.r_scalars)),
      chunk_rhs_(partition.num_chunks(), std::max(1, s.num_camera_parameters)),
      qr_scratch_(partition.num_chunks(), ScratchSize(layout)),
      chunk_sums_(partition.num_chunks()),
      camera_step_(std::is_same<Scalar, float>::value ? s.num_camera_parameters : 0),
      qr_in_double_(qr == LandmarkQr::kBatchedInDouble && !std::is_same<Scalar, double>::value),
      batches_(layout, partition,
               qr == LandmarkQr::kOneAtATime ? 1 : (qr_in_double_ ? kBatchLanes<double> : kBatchLanes<Scalar>)) {
  // A lane vector is two SIMD registers whatever its Scalar, so that
  // BatchBytes counts either kind.
  static_assert(sizeof(LaneVector<Scalar>) == sizeof(LaneVector<double>), "lane vectors of one size");
  if (batches_.batched_groups > 0) {
    const int size = LaneScratchSize(batches_.max_rows, batches_.max_d);
    if (qr_in_double_) {
      lane_scratch_double_.resize(partition.num_chunks());
      for (auto& buffer : lane_scratch_double_) buffer.resize(size);
    } else {
      lane_scratch_.resize(partition.num_chunks());
      for (auto& buffer : lane_scratch_) buffer.resize(size);
    }
  }
}

template <typename Scalar>
typename ProjectedLandmarkBlocks<Scalar>::Scratch ProjectedLandmarkBlocks<Scalar>::scratch(int chunk) {
  const int m = layout_.max_rows, d = layout_.max_landmark_size;
  double* qr = qr_scratch_[chunk];
  double* q1 = qr + ThinQrScratchSize(m, d);
  return Scratch{qr, q1, q1 + m * d};
}

namespace {

// out (rows x cols, row stride out_stride) = in .* scale (per column; null:
// 1), converted to Scalar; returns whether a value written is beyond limit
// in magnitude or not finite (!(|v| <= limit) holds for NaN as well). With
// SSE2 two values at a time: the compare, like the product and the
// conversion, is one instruction per pair, with the scalar code's results.
#if defined(__SSE2__)
inline void StorePair(__m128d v, float* out) { _mm_storel_pi(reinterpret_cast<__m64*>(out), _mm_cvtpd_ps(v)); }
inline void StorePair(__m128d v, double* out) { _mm_storeu_pd(out, v); }
#endif

template <int kRows, int kCols, typename Scalar>
inline bool WriteScaled(const double* __restrict in, int rows, int cols, const double* __restrict scale, double limit,
                        Scalar* __restrict out, int out_stride) {
  const int r_end = kRows != kDynamic ? kRows : rows;
  const int c_end = kCols != kDynamic ? kCols : cols;
  bool beyond = false;
#if defined(__SSE2__)
  const __m128d abs_mask = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffffLL));
  const __m128d bound = _mm_set1_pd(limit);
  __m128d pair_beyond = _mm_setzero_pd();
#endif
  for (int rr = 0; rr < r_end; ++rr) {
    const double* __restrict row_in = in + rr * c_end;
    Scalar* __restrict row_out = out + rr * out_stride;
    int k = 0;
#if defined(__SSE2__)
    for (; k + 2 <= c_end; k += 2) {
      __m128d v = _mm_loadu_pd(row_in + k);
      if (scale != nullptr) v = _mm_mul_pd(v, _mm_loadu_pd(scale + k));
      pair_beyond = _mm_or_pd(pair_beyond, _mm_cmpnle_pd(_mm_and_pd(v, abs_mask), bound));
      StorePair(v, row_out + k);
    }
#endif
    for (; k < c_end; ++k) {
      const double v = scale != nullptr ? row_in[k] * scale[k] : row_in[k];
      beyond |= !(std::fabs(v) <= limit);
      row_out[k] = static_cast<Scalar>(v);
    }
  }
#if defined(__SSE2__)
  beyond |= _mm_movemask_pd(pair_beyond) != 0;
#endif
  return beyond;
}

}  // namespace

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::Write(int group, int /*position*/, int row, int residual,
                                            const double* residuals,
                                            const double* const* jacobians) {
  const Group& grp = s_.groups[group];
  const int d = grp.landmark_size;
  const int cw = layout_.camera_width[group];
  const int hs = cw + d;
  const ResidualBlockInfo& rb = s_.residual_blocks[residual];
  const int m = rb.num_residuals;
  DCHECK_EQ(d, layout_.landmark_size[group]);
  DCHECK_GE(row, 0);
  DCHECK_LE(row + m, layout_.rows[group]);
  Scalar* h = hot(group) + static_cast<int64_t>(row) * hs;
  Scalar* c = cold(group) + static_cast<int64_t>(row) * (d + 1);
  // Values a float cannot carry safely (beyond kMaxMagnitude once the column
  // scale is known, beyond float's range before) are flagged, and in both
  // precisions values that are not finite (the cost function's were, but a
  // loss correction or the column scale can overflow): !(|v| <= limit)
  // flags both, NaN included.
  const double limit = kMaxMagnitude<Scalar> < std::numeric_limits<double>::infinity()
                           ? (!scale_.empty() ? kMaxMagnitude<Scalar>
                                              : static_cast<double>(std::numeric_limits<Scalar>::max()))
                           : std::numeric_limits<double>::max();
  bool beyond = false;
  for (int i = 0; i < m; ++i) {
    beyond |= !(std::fabs(residuals[i]) <= limit);
    c[i * (d + 1) + d] = static_cast<Scalar>(residuals[i]);
  }
  // Every row of the residual block is written whole, so nothing of the
  // previous Jacobian survives: the camera blocks fill the compact columns
  // [0, covered) (back to back), the rest is zero padding; the landmark
  // columns are zero when the landmark is constant. The Q1 columns are
  // written by Damp.
  int covered = 0;
  bool landmark_written = false;
  for (int i = 0; i < rb.num_parameter_blocks; ++i) {
    if (jacobians[i] == nullptr) continue;
    const int idx = rb.parameter_begin + i;
    const int col = layout_.column[idx];
    if (col == ProjectedBlockLayout::kConstant) continue;
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.residual_parameters[idx]];
    const int ts = pb.tangent_size;
    const bool landmark = col == ProjectedBlockLayout::kLandmark;
    Scalar* out0 = landmark ? c : h + col;
    const int out_stride = landmark ? d + 1 : hs;
    if (landmark) {
      landmark_written = true;
    } else {
      covered = std::max(covered, col + ts);
    }
    const double* scale = scale_.empty() ? nullptr : scale_.data() + pb.tangent_offset;
    DispatchResidualBlockSize(m, ts, [&](auto sizes) {
      using Sizes = decltype(sizes);
      beyond |= WriteScaled<Sizes::kRow, Sizes::kF>(jacobians[i], m, ts, scale, limit, out0, out_stride);
    });
  }
  for (int i = 0; i < m; ++i) {
    std::fill(h + i * hs + covered, h + i * hs + cw, Scalar(0));
    if (!landmark_written) std::fill(c + i * (d + 1), c + i * (d + 1) + d, Scalar(0));
  }
  if (beyond) out_of_range_.store(true, std::memory_order_relaxed);
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::CheckRange(int g) {
  if (!(kMaxMagnitude<Scalar> < std::numeric_limits<double>::infinity())) return;
  const int d = s_.groups[g].landmark_size;
  const int cw = layout_.camera_width[g];
  const Scalar* h = hot(g);
  const Scalar* c = cold(g);
  bool bad = false;
  for (int i = 0; i < layout_.rows[g]; ++i) {
    for (int k = 0; k < cw; ++k) bad |= !(std::abs(static_cast<double>(h[i * (cw + d) + k])) <= kMaxMagnitude<Scalar>);
    for (int k = 0; k <= d; ++k) bad |= !(std::abs(static_cast<double>(c[i * (d + 1) + k])) <= kMaxMagnitude<Scalar>);
  }
  if (bad) out_of_range_.store(true, std::memory_order_relaxed);
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::ScaleColumns(const double* scale) {
  scale_.assign(scale, scale + s_.num_effective_parameters);
  const double* camera_scale = scale_.data() + s_.camera_tangent_begin;
  context_->ForChunks(partition_, [&](int, int gb, int ge) {
    for (int position = gb; position < ge; ++position) {
      const int g = layout_.order[position];
      const Group& grp = s_.groups[g];
      const int d = grp.landmark_size;
      const int hs = layout_.camera_width[g] + d;
      Scalar* h = hot(g);
      for (int sg = layout_.segment_begin[g]; sg < layout_.segment_end[g]; ++sg) {
        const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
        for (int it = seg.item_begin; it < seg.item_end; ++it) {
          const ProjectedBlockLayout::Item& item = layout_.items[it];
          for (int i = seg.row; i < seg.row + seg.rows; ++i) {
            Scalar* row = h + static_cast<int64_t>(i) * hs + item.column;
            for (int k = 0; k < item.size; ++k) row[k] = static_cast<Scalar>(row[k] * camera_scale[item.offset + k]);
          }
        }
      }
      if (d > 0) {
        const double* ls = scale_.data() + s_.parameter_blocks[grp.landmark].tangent_offset;
        Scalar* c = cold(g);
        for (int i = 0; i < layout_.rows[g]; ++i) {
          for (int k = 0; k < d; ++k) c[i * (d + 1) + k] = static_cast<Scalar>(c[i * (d + 1) + k] * ls[k]);
        }
      }
      CheckRange(g);
    }
  });
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::SquaredColumnNorms(double* norms) {
  std::fill(norms, norms + s_.num_effective_parameters, 0.0);
  const int ncp = s_.num_camera_parameters;
  // One pass over the blocks: a group's landmark columns go straight to
  // norms (one landmark per group: groups write disjoint entries), its
  // camera columns into the chunk's sums, added in chunk order below.
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    double* acc = chunk_rhs_[chunk];
    std::fill(acc, acc + ncp, 0.0);
    for (int position = gb; position < ge; ++position) {
      const int g = layout_.order[position];
      const Group& grp = s_.groups[g];
      const int d = grp.landmark_size;
      // In float, a uniform group of listed sizes sums each observation's
      // squares in float and adds them in double (projected_row_kernels.h).
      if constexpr (std::is_same<Scalar, float>::value) {
        const bool fixed = DispatchBlockSizes(layout_.uniform_sizes[g], [&](auto sizes) {
          using S = decltype(sizes);
          if constexpr (S::kFixed) {
            const int sb = layout_.segment_begin[g];
            AddSquaredColumnNormsFixed<S::kRow, S::kE, S::kF>(
                hot(g), cold(g), layout_.segment_end[g] - sb, layout_.items.data() + layout_.segments[sb].item_begin,
                norms + s_.parameter_blocks[grp.landmark].tangent_offset, acc);
          }
          return S::kFixed;
        });
        if (fixed) continue;
      }
      if (d > 0) {
        double* out = norms + s_.parameter_blocks[grp.landmark].tangent_offset;
        const Scalar* c = cold(g);
        for (int i = 0; i < layout_.rows[g]; ++i) {
          for (int k = 0; k < d; ++k) {
            const double v = c[i * (d + 1) + k];
            out[k] += v * v;
          }
        }
      }
      const int hs = layout_.camera_width[g] + d;
      const Scalar* h = hot(g);
      for (int sg = layout_.segment_begin[g]; sg < layout_.segment_end[g]; ++sg) {
        const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
        for (int it = seg.item_begin; it < seg.item_end; ++it) {
          const ProjectedBlockLayout::Item& item = layout_.items[it];
          // At a listed camera size the loop over the columns unrolls (the
          // same sums, in the same order).
          DispatchCameraSize(item.size, [&](auto fixed) {
            using S = decltype(fixed);
            const int n = S::kFixed ? S::kF : item.size;
            double* out = acc + item.offset;
            for (int i = seg.row; i < seg.row + seg.rows; ++i) {
              const Scalar* row = h + static_cast<int64_t>(i) * hs + item.column;
              for (int k = 0; k < n; ++k) {
                const double v = row[k];
                out[k] += v * v;
              }
            }
          });
        }
      }
    }
  });
  chunk_rhs_.SumInto(context_, ncp, norms + s_.camera_tangent_begin);
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::MultiplyNormal(int gb, int ge, const Scalar* x,
                                                     Scalar* y, Scalar* u) const {
  for (int position = gb; position < ge;) {
    // A run of groups of one listed shape in one call, the others one by one:
    // the same bits either way (MultiplyNormalRun).
    const int run = std::min(layout_.run_length[position], ge - position);
    if (run > 0) {
      MultiplyNormalRun(layout_, position, run, hot_.get(), x, y, u);
      position += run;
      continue;
    }
    const int g = layout_.order[position++];
    if (layout_.camera_width[g] == 0) continue;
    MultiplyNormalGroup(layout_, g, hot(g), x, y, u);
  }
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::AddCameraGramLower(int g, int e, int n, double* acc) const {
  internal::AddCameraGramLower(layout_, g, e, n, hot(g), acc);
}

template class ProjectedLandmarkBlocks<float>;
template class ProjectedLandmarkBlocks<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
