#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <new>

#include <Eigen/Core>

#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/projected/thin_qr.h"

namespace ceres_sqrtba {
namespace internal {

ProjectedBlockLayout::ProjectedBlockLayout(const ProblemStructure& s) {
  const int n = static_cast<int>(s.groups.size());
  rows.resize(n);
  camera_width.resize(n);
  hot_offset.resize(n + 1);
  cold_offset.resize(n + 1);
  r_offset.resize(n + 1);
  segment_begin.resize(n + 1);
  bal_shaped.resize(n);
  work.resize(n);
  column.assign(s.residual_parameters.size(), kConstant);
  std::vector<int> entry_of(s.parameter_blocks.size(), -1);
  int64_t hot = 0, cold = 0, rr = 0;
  for (int g = 0; g < n; ++g) {
    const Group& group = s.groups[g];
    const int d = group.landmark_size;
    for (int e = group.camera_begin; e < group.camera_end; ++e) entry_of[s.group_cameras[e]] = e;
    segment_begin[g] = static_cast<int>(segments.size());
    int row = 0;
    int width = 0;
    bool bal = d == 3;
    for (int k = group.residual_begin; k < group.residual_end; ++k) {
      const ResidualBlockInfo& rb = s.residual_blocks[s.group_residuals[k]];
      Segment seg;
      seg.row = row;
      seg.rows = rb.num_residuals;
      seg.item_begin = static_cast<int>(items.size());
      int col = 0;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const int idx = rb.parameter_begin + i;
        const int p = s.residual_parameters[idx];
        const ParameterBlockInfo& pb = s.parameter_blocks[p];
        if (pb.is_constant) {
          column[idx] = kConstant;
        } else if (pb.is_landmark) {
          column[idx] = kLandmark;
        } else {
          column[idx] = col;
          Item item;
          item.offset = pb.tangent_offset - s.camera_tangent_begin;
          item.size = pb.tangent_size;
          item.column = col;
          item.entry = entry_of[p];
          item.row = row;
          item.rows = rb.num_residuals;
          items.push_back(item);
          col += pb.tangent_size;
        }
      }
      seg.item_end = static_cast<int>(items.size());
      bal = bal && seg.rows == 2 && seg.item_end - seg.item_begin == 1 &&
            items[seg.item_begin].size == 9;
      segments.push_back(seg);
      width = std::max(width, col);
      row += rb.num_residuals;
    }
    rows[g] = row;
    camera_width[g] = width;
    bal_shaped[g] = bal && width == 9;
    hot_offset[g] = hot;
    cold_offset[g] = cold;
    r_offset[g] = rr;
    hot += static_cast<int64_t>(row) * (width + d);
    cold += static_cast<int64_t>(row) * (d + 1);
    rr += static_cast<int64_t>(d) * d;
    work[g] = static_cast<int64_t>(row) * (width + d + 1) + 1;
    max_rows = std::max(max_rows, row);
    max_landmark_size = std::max(max_landmark_size, d);
    max_camera_width = std::max(max_camera_width, width);
  }
  segment_begin[n] = static_cast<int>(segments.size());
  hot_offset[n] = hot;
  cold_offset[n] = cold;
  r_offset[n] = rr;
  hot_scalars = hot;
  cold_scalars = cold;
  r_scalars = rr;
  entry_item_begin.assign(s.group_cameras.size() + 1, 0);
  for (const Item& item : items) ++entry_item_begin[item.entry + 1];
  for (size_t e = 0; e < s.group_cameras.size(); ++e) entry_item_begin[e + 1] += entry_item_begin[e];
  entry_items.resize(items.size());
  std::vector<int> fill(entry_item_begin.begin(), entry_item_begin.end() - 1);
  for (size_t i = 0; i < items.size(); ++i) entry_items[fill[items[i].entry]++] = static_cast<int>(i);
}

namespace {

// Beyond this a value cannot be used safely in Scalar: the bound of the
// explicit blocks (landmark_blocks.h), infinite in double.
template <typename Scalar>
constexpr double kMaxMagnitude = ExplicitLandmarkBlocks<Scalar>::kMaxMagnitude;

// One observation row of Jp times the camera vector x, over the cameras of
// its residual block (items), accumulated in Acc.
template <typename Acc, typename Scalar, typename X>
inline Acc RowTimesCameras(const Scalar* row, const ProjectedBlockLayout::Item* begin,
                           const ProjectedBlockLayout::Item* end, const X* x) {
  Acc v = 0;
  for (const ProjectedBlockLayout::Item* item = begin; item != end; ++item) {
    for (int k = 0; k < item->size; ++k) v += static_cast<Acc>(row[item->column + k]) * x[item->offset + k];
  }
  return v;
}

// y (camera vector) += row^T w over the cameras of the row's residual block.
template <typename Scalar, typename Y>
inline void AddRowTransposeTimes(const Scalar* row, const ProjectedBlockLayout::Item* begin,
                                 const ProjectedBlockLayout::Item* end, Y w, Y* y) {
  for (const ProjectedBlockLayout::Item* item = begin; item != end; ++item) {
    for (int k = 0; k < item->size; ++k) y[item->offset + k] += static_cast<Y>(row[item->column + k]) * w;
  }
}

template <typename Scalar>
Scalar* AllocateScalars(int64_t n) {
  Scalar* p = static_cast<Scalar*>(AllocateLarge(std::max<int64_t>(1, n) * static_cast<int64_t>(sizeof(Scalar))));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Scratch doubles per chunk: the thin QR, Q1 in double (m x d), the damping
// values (d), Q1^T r (d) and the back substitution's J_p y_p rows (m).
int ScratchSize(const ProjectedBlockLayout& layout) {
  const int m = layout.max_rows, d = layout.max_landmark_size;
  return ThinQrScratchSize(m, d) + m * d + 2 * d + m;
}

}  // namespace

template <typename Scalar>
ProjectedLandmarkBlocks<Scalar>::ProjectedLandmarkBlocks(const ProblemStructure& s,
                                                         const ProjectedBlockLayout& layout,
                                                         const WorkPartition& partition,
                                                         ParallelContext* context)
    : s_(s),
      layout_(layout),
      partition_(partition),
      context_(context),
      hot_(AllocateScalars<Scalar>(layout.hot_scalars)),
      cold_(AllocateScalars<Scalar>(layout.cold_scalars)),
      r_(std::max<int64_t>(1, layout.r_scalars)),
      chunk_rhs_(partition.num_chunks(), std::max(1, s.num_camera_parameters)),
      qr_scratch_(partition.num_chunks(), ScratchSize(layout)),
      chunk_sums_(partition.num_chunks()) {}

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
  Scalar* h = hot(group) + static_cast<int64_t>(row) * hs;
  Scalar* c = cold(group) + static_cast<int64_t>(row) * (d + 1);
  // Every row of the residual block is written whole (padding included), so
  // nothing of the previous Jacobian survives; the Q1 columns are written by
  // Damp.
  for (int i = 0; i < m; ++i) {
    std::fill(h + i * hs, h + i * hs + cw, Scalar(0));
    std::fill(c + i * (d + 1), c + i * (d + 1) + d, Scalar(0));
  }
  const double limit = !scale_.empty() ? kMaxMagnitude<Scalar>
                                       : static_cast<double>(std::numeric_limits<Scalar>::max());
  bool out_of_range = false;
  for (int i = 0; i < m; ++i) {
    out_of_range |= !(std::abs(residuals[i]) <= limit);
    c[i * (d + 1) + d] = static_cast<Scalar>(residuals[i]);
  }
  for (int i = 0; i < rb.num_parameter_blocks; ++i) {
    if (jacobians[i] == nullptr) continue;
    const int idx = rb.parameter_begin + i;
    const int col = layout_.column[idx];
    if (col == ProjectedBlockLayout::kConstant) continue;
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.residual_parameters[idx]];
    const int ts = pb.tangent_size;
    const double* scale = scale_.empty() ? nullptr : scale_.data() + pb.tangent_offset;
    Scalar* out0 = col == ProjectedBlockLayout::kLandmark ? c : h + col;
    const int out_stride = col == ProjectedBlockLayout::kLandmark ? d + 1 : hs;
    for (int rr = 0; rr < m; ++rr) {
      Scalar* out = out0 + rr * out_stride;
      const double* in = jacobians[i] + rr * ts;
      for (int k = 0; k < ts; ++k) {
        const double v = scale != nullptr ? in[k] * scale[k] : in[k];
        out_of_range |= !(std::abs(v) <= limit);
        out[k] = static_cast<Scalar>(v);
      }
    }
  }
  if (out_of_range) out_of_range_.store(true, std::memory_order_relaxed);
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
    for (int g = gb; g < ge; ++g) {
      const Group& grp = s_.groups[g];
      const int d = grp.landmark_size;
      const int hs = layout_.camera_width[g] + d;
      Scalar* h = hot(g);
      for (int sg = layout_.segment_begin[g]; sg < layout_.segment_begin[g + 1]; ++sg) {
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
void ProjectedLandmarkBlocks<Scalar>::AddLandmarkColumnNorms(double* norms) const {
  // One landmark per group: groups write disjoint entries.
  context_->For(static_cast<int>(s_.groups.size()), 256, [&](int gb, int ge) {
    for (int g = gb; g < ge; ++g) {
      const Group& grp = s_.groups[g];
      const int d = grp.landmark_size;
      if (d == 0) continue;
      double* out = norms + s_.parameter_blocks[grp.landmark].tangent_offset;
      const Scalar* c = cold(g);
      for (int i = 0; i < layout_.rows[g]; ++i) {
        for (int k = 0; k < d; ++k) {
          const double v = c[i * (d + 1) + k];
          out[k] += v * v;
        }
      }
    }
  });
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::CameraColumnNorms(double* norms) {
  const int ncp = s_.num_camera_parameters;
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    double* acc = chunk_rhs_[chunk];
    std::fill(acc, acc + ncp, 0.0);
    for (int g = gb; g < ge; ++g) {
      const int hs = layout_.camera_width[g] + s_.groups[g].landmark_size;
      const Scalar* h = hot(g);
      for (int sg = layout_.segment_begin[g]; sg < layout_.segment_begin[g + 1]; ++sg) {
        const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
        for (int it = seg.item_begin; it < seg.item_end; ++it) {
          const ProjectedBlockLayout::Item& item = layout_.items[it];
          for (int i = seg.row; i < seg.row + seg.rows; ++i) {
            const Scalar* row = h + static_cast<int64_t>(i) * hs + item.column;
            for (int k = 0; k < item.size; ++k) {
              const double v = row[k];
              acc[item.offset + k] += v * v;
            }
          }
        }
      }
    }
  });
  chunk_rhs_.SumInto(context_, ncp, norms);
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::Damp(const double* dvec, double* rhs, Visitor* visitor) {
  const int ncp = s_.num_camera_parameters;
  const int max_m = layout_.max_rows, max_d = layout_.max_landmark_size;
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    double* acc = chunk_rhs_[chunk];
    std::fill(acc, acc + ncp, 0.0);
    double* qr = qr_scratch_[chunk];
    double* q1 = qr + ThinQrScratchSize(max_m, max_d);  // m x d, row-major
    double* sl = q1 + max_m * max_d;
    double* t = sl + max_d;
    if (visitor != nullptr) visitor->BeginChunk(chunk);
    for (int g = gb; g < ge; ++g) {
      const Group& grp = s_.groups[g];
      const int d = grp.landmark_size;
      const int m = layout_.rows[g];
      const int cw = layout_.camera_width[g];
      const int hs = cw + d;
      Scalar* h = hot(g);
      const Scalar* c = cold(g);
      if (d > 0) {
        const double* src = dvec + s_.parameter_blocks[grp.landmark].tangent_offset;
        for (int k = 0; k < d; ++k) sl[k] = src[k];
        auto store = [&](int i, int k, double v) {
          q1[i * d + k] = v;
          h[static_cast<int64_t>(i) * hs + cw + k] = static_cast<Scalar>(v);
        };
        ThinQr(m, d, c, d + 1, sl, qr, r_.data() + layout_.r_offset[g], store);
        // t = Q1^T r.
        std::fill(t, t + d, 0.0);
        for (int i = 0; i < m; ++i) {
          const double ri = c[i * (d + 1) + d];
          for (int k = 0; k < d; ++k) t[k] += q1[i * d + k] * ri;
        }
      }
      if (visitor != nullptr) visitor->Visit(chunk, g);
      if (cw == 0) continue;
      // B^T r^ = Jp^T (r - Q1 Q1^T r) (eq. (1) of the header).
      for (int sg = layout_.segment_begin[g]; sg < layout_.segment_begin[g + 1]; ++sg) {
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
  chunk_rhs_.SumInto(context_, ncp, rhs);
}

namespace {

// BAL's shape: per observation two rows [J (9) | Q1 (3)], 24 scalars back to
// back, one camera. Two sweeps over the landmark's rows (the second from L1):
// u = Jp x and t = Q1^T u, then y_c += J_c^T (u - Q1 t).
//
// The 9-vectors go through Eigen's fixed-size kernels, which use SIMD
// packets (four floats or two doubles per SSE register) with a summation
// order fixed by the sizes alone, so results stay deterministic; a plain loop
// is one serial chain of 9 dependent additions per row, as slow in float as
// in double (measured: 15 vs 18 ns per observation, now 10 vs 15).
template <typename Scalar>
inline void MultiplyBalShaped(const Scalar* __restrict h, int k,
                              const ProjectedBlockLayout::Item* __restrict items,
                              const Scalar* __restrict x, Scalar* __restrict y,
                              Scalar* __restrict u) {
  using V9 = Eigen::Matrix<Scalar, 9, 1>;
  Scalar t0 = 0, t1 = 0, t2 = 0;
  for (int s = 0; s < k; ++s) {
    const Scalar* r = h + 24 * s;
    const Eigen::Map<const V9> xc(x + items[s].offset);
    const Scalar u0 = Eigen::Map<const V9>(r).dot(xc);
    const Scalar u1 = Eigen::Map<const V9>(r + 12).dot(xc);
    u[2 * s] = u0;
    u[2 * s + 1] = u1;
    t0 += r[9] * u0 + r[21] * u1;
    t1 += r[10] * u0 + r[22] * u1;
    t2 += r[11] * u0 + r[23] * u1;
  }
  for (int s = 0; s < k; ++s) {
    const Scalar* r = h + 24 * s;
    const Scalar w0 = u[2 * s] - (r[9] * t0 + r[10] * t1 + r[11] * t2);
    const Scalar w1 = u[2 * s + 1] - (r[21] * t0 + r[22] * t1 + r[23] * t2);
    Eigen::Map<V9>(y + items[s].offset) += Eigen::Map<const V9>(r) * w0 + Eigen::Map<const V9>(r + 12) * w1;
  }
}

}  // namespace

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::MultiplyNormal(int gb, int ge, const Scalar* x,
                                                     Scalar* y, Scalar* u) const {
  for (int g = gb; g < ge; ++g) {
    const int cw = layout_.camera_width[g];
    if (cw == 0) continue;
    const int d = s_.groups[g].landmark_size;
    const Scalar* h = hot(g);
    const int sb = layout_.segment_begin[g], se = layout_.segment_begin[g + 1];
    if (layout_.bal_shaped[g]) {
      // One item per segment, in segment order.
      const ProjectedBlockLayout::Item* first = layout_.items.data() + layout_.segments[sb].item_begin;
      MultiplyBalShaped(h, se - sb, first, x, y, u);
      continue;
    }
    const int hs = cw + d;
    const int m = layout_.rows[g];
    Scalar* t = u + m;
    for (int sg = sb; sg < se; ++sg) {
      const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
      for (int i = seg.row; i < seg.row + seg.rows; ++i) {
        u[i] = RowTimesCameras<Scalar>(h + static_cast<int64_t>(i) * hs, layout_.items.data() + seg.item_begin,
                                       layout_.items.data() + seg.item_end, x);
      }
    }
    for (int k = 0; k < d; ++k) t[k] = 0;
    for (int i = 0; i < m; ++i) {
      const Scalar* q = h + static_cast<int64_t>(i) * hs + cw;
      for (int k = 0; k < d; ++k) t[k] += q[k] * u[i];
    }
    for (int sg = sb; sg < se; ++sg) {
      const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
      for (int i = seg.row; i < seg.row + seg.rows; ++i) {
        const Scalar* row = h + static_cast<int64_t>(i) * hs;
        Scalar w = u[i];
        for (int k = 0; k < d; ++k) w -= row[cw + k] * t[k];
        AddRowTransposeTimes(row, layout_.items.data() + seg.item_begin, layout_.items.data() + seg.item_end, w, y);
      }
    }
  }
}

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::AddCameraGramLower(int g, int e, int n, double* acc) const {
  const int hs = layout_.camera_width[g] + s_.groups[g].landmark_size;
  const Scalar* h = hot(g);
  for (int ii = layout_.entry_item_begin[e]; ii < layout_.entry_item_begin[e + 1]; ++ii) {
    const ProjectedBlockLayout::Item& item = layout_.items[layout_.entry_items[ii]];
    for (int r = item.row; r < item.row + item.rows; ++r) {
      const Scalar* row = h + static_cast<int64_t>(r) * hs + item.column;
      for (int i = 0; i < n; ++i) {
        const double vi = row[i];
        for (int k = 0; k <= i; ++k) acc[i * n + k] += vi * static_cast<double>(row[k]);
      }
    }
  }
}

namespace {

// Lower triangle of W^T W into acc with sign -1, W = Q1^T Jc (d x n) over the
// camera's rows of one block (w: d x n scratch).
template <typename Scalar>
inline void SubtractEliminatedGramLower(const Scalar* h, int hs, int cw,
                                        const ProjectedBlockLayout& layout, int e, int d, int n,
                                        double* w, double* acc) {
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

// BAL's shape: rows j0, j1 (9 each) followed by their Q1 rows q0, q1 (3
// each), 12 scalars apart. acc += lower(J^T M J), M = I - [q0; q1][q0; q1]^T.
template <typename Scalar>
inline void AddProjectedGramLower9(const Scalar* r, double* acc) {
  const Scalar* q0 = r + 9;
  const Scalar* q1 = r + 21;
  double m00 = 1.0, m01 = 0.0, m11 = 1.0;
  for (int a = 0; a < 3; ++a) {
    m00 -= static_cast<double>(q0[a]) * q0[a];
    m01 -= static_cast<double>(q0[a]) * q1[a];
    m11 -= static_cast<double>(q1[a]) * q1[a];
  }
  double j0[9], j1[9], z0[9], z1[9];
  for (int k = 0; k < 9; ++k) {
    j0[k] = r[k];
    j1[k] = r[12 + k];
    z0[k] = m00 * j0[k] + m01 * j1[k];
    z1[k] = m01 * j0[k] + m11 * j1[k];
  }
  for (int i = 0; i < 9; ++i) {
    for (int k = 0; k <= i; ++k) acc[i * 9 + k] += j0[i] * z0[k] + j1[i] * z1[k];
  }
}

}  // namespace

template <typename Scalar>
void ProjectedLandmarkBlocks<Scalar>::AddReducedGramLower(int g, int e, int n, double* acc) const {
  const int d = s_.groups[g].landmark_size;
  const int cw = layout_.camera_width[g];
  const int hs = cw + d;
  const Scalar* h = hot(g);
  const int ib = layout_.entry_item_begin[e], ie = layout_.entry_item_begin[e + 1];
  if (layout_.bal_shaped[g] && ie - ib == 1) {
    const ProjectedBlockLayout::Item& item = layout_.items[layout_.entry_items[ib]];
    AddProjectedGramLower9(h + static_cast<int64_t>(item.row) * hs, acc);
    return;
  }
  AddCameraGramLower(g, e, n, acc);
  if (d == 0) return;
  std::array<double, 256> small;
  std::vector<double> large;
  double* w = small.data();
  if (d * n > static_cast<int>(small.size())) {
    large.resize(static_cast<size_t>(d) * n);
    w = large.data();
  }
  SubtractEliminatedGramLower(h, hs, cw, layout_, e, d, n, w, acc);
}

template <typename Scalar>
double ProjectedLandmarkBlocks<Scalar>::BackSubstitute(double* y) {
  const double* yp = y + s_.camera_tangent_begin;
  const int max_m = layout_.max_rows, max_d = layout_.max_landmark_size;
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    double* u = qr_scratch_[chunk] + ThinQrScratchSize(max_m, max_d) + max_m * max_d;
    double* t = u + max_m;
    double* yl = t + max_d;
    double sum = 0.0;
    for (int g = gb; g < ge; ++g) {
      const Group& grp = s_.groups[g];
      const int d = grp.landmark_size;
      const int m = layout_.rows[g];
      const int cw = layout_.camera_width[g];
      const int hs = cw + d;
      const Scalar* h = hot(g);
      const Scalar* c = cold(g);
      for (int sg = layout_.segment_begin[g]; sg < layout_.segment_begin[g + 1]; ++sg) {
        const ProjectedBlockLayout::Segment& seg = layout_.segments[sg];
        for (int i = seg.row; i < seg.row + seg.rows; ++i) {
          u[i] = RowTimesCameras<double>(h + static_cast<int64_t>(i) * hs, layout_.items.data() + seg.item_begin,
                                         layout_.items.data() + seg.item_end, yp);
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
        const double* r = r_.data() + layout_.r_offset[g];
        for (int k = d - 1; k >= 0; --k) {
          double v = t[k];
          for (int j = k + 1; j < d; ++j) v -= r[k * d + j] * yl[j];
          yl[k] = r[k * d + k] != 0.0 ? v / r[k * d + k] : 0.0;
        }
        double* out = y + s_.parameter_blocks[grp.landmark].tangent_offset;
        for (int k = 0; k < d; ++k) out[k] = yl[k];
      }
      // |J_b y|^2 over the observation rows, directly.
      for (int i = 0; i < m; ++i) {
        double v = u[i];
        for (int k = 0; k < d; ++k) v += static_cast<double>(c[i * (d + 1) + k]) * yl[k];
        sum += v * v;
      }
    }
    chunk_sums_[chunk] = sum;
  });
  double jy = 0.0;
  for (double v : chunk_sums_) jy += v;
  return jy;
}

template class ProjectedLandmarkBlocks<float>;
template class ProjectedLandmarkBlocks<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
