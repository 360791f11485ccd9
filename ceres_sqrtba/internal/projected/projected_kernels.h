// The per-landmark kernels of the projected landmark blocks
// (projected_landmark_blocks.h) that run most often: the reduced camera
// system's product B^T B x (every PCG iteration) and the SCHUR_JACOBI
// preconditioner's share Jc^T (I - Q1 Q1^T) Jc (every solve), with the row
// helpers that the damping and back-substitution passes share.
//
// Why a header of their own. Both kernels come in two versions: a fixed-size
// one for uniform groups (projected_block_layout.h) at the sizes listed in
// fixed_size_dispatch.h, and a dynamic one for every other group. The entry
// points MultiplyNormalGroup and AddReducedGramLowerGroup choose per group,
// through DispatchBlockSizes on layout.uniform_sizes, and nothing else picks
// a size. Both versions are visible here so that projected_kernels_test.cc
// can check one against the other.
//
// Group g's hot rows h: layout.rows[g] rows of layout.hot_stride(g) scalars,
// [ compact camera Jacobian (camera_width) | Q1 row (d) ].
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_KERNELS_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_KERNELS_H_

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include <Eigen/Core>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

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

// ---------------------------------------------------------------------------
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

// y_c += sum_a J_a^T w_a over the R rows J_a (F camera entries each, kStride
// apart) of one observation, as one Eigen expression: the sum is evaluated
// left to right per coefficient.
template <int F, int kStride, typename Scalar, int... A>
inline void AddRowsTransposeTimes(const Scalar* r, const Scalar* w, Scalar* y_c,
                                  std::integer_sequence<int, A...>) {
  using VF = Eigen::Matrix<Scalar, F, 1>;
  Eigen::Map<VF>(y_c) += (... + (Eigen::Map<const VF>(r + A * kStride) * w[A]));
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

#if defined(__SSE2__)
namespace sse {
// [sum(a), sum(b), ., .] of two packets (lanes 0 + 2 and 1 + 3 first).
inline __m128 SumPair(__m128 a, __m128 b) {
  const __m128 s = _mm_add_ps(_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));
  return _mm_add_ps(s, _mm_movehl_ps(s, s));
}
// [J_a . x, J_b . x, ., .] for BAL's observation rows r (two hot rows of 12
// floats: [J0..J3 | J4..J7 | J8 q0 q1 q2]) and its camera's 9 entries x.
inline __m128 ObservationTimesCamera(const float* r, const float* x) {
  const __m128 x0 = _mm_loadu_ps(x), x1 = _mm_loadu_ps(x + 4);
  const __m128 x2 = _mm_load_ss(x + 8);  // [x8 0 0 0]
  const __m128 pa = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_loadu_ps(r), x0), _mm_mul_ps(_mm_loadu_ps(r + 4), x1)),
                               _mm_mul_ps(_mm_loadu_ps(r + 8), x2));
  const __m128 pb = _mm_add_ps(_mm_add_ps(_mm_mul_ps(_mm_loadu_ps(r + 12), x0), _mm_mul_ps(_mm_loadu_ps(r + 16), x1)),
                               _mm_mul_ps(_mm_loadu_ps(r + 20), x2));
  return SumPair(pa, pb);
}
// The first eight camera entries of J_a^T w_a + J_b^T w_b for BAL's two hot
// rows r (as above), wa and wb the weights broadcast: entries 0-3 in *v0,
// 4-7 in *v1 (entry 8 is lane 0 of the rows' third packets).
inline void ObservationTransposeTimes(const float* r, __m128 wa, __m128 wb, __m128* v0, __m128* v1) {
  *v0 = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(r), wa), _mm_mul_ps(_mm_loadu_ps(r + 12), wb));
  *v1 = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(r + 4), wa), _mm_mul_ps(_mm_loadu_ps(r + 16), wb));
}
}  // namespace sse

// The most common shape, BAL's (2, 3, 9), in float, with SSE's four-float
// registers laid on the hot rows themselves: a row is 12 floats, exactly
// three registers [J0..J3 | J4..J7 | J8 q0 q1 q2]. What the generic kernel
// does in scalar arithmetic, identical in float and double, runs here in
// packets:
//   - u_a = J_a . x: three products summed lanewise (the third against
//     [x8 0 0 0]), and the two rows' lane sums reduced together, four
//     shuffles and adds for both instead of four each;
//   - t = Q1^T u: kept as a register [. t0 t1 t2] over the third packets,
//     t += P2_0 u_0 + P2_1 u_1 (its lane 0 collects J8 u and is masked off);
//   - w_a = u_a - q_a . t: the two rows' products reduced together;
//   - y_c += J_0 w_0 + J_1 w_1: two packets, and the third ones' lane 0.
// The order of every sum is fixed by the code (not by alignment or data),
// so results are deterministic; they differ from the generic kernel's in
// rounding only (ProjectedKernels.FixedProductEqualsDynamic).
template <>
inline void MultiplyNormalFixed<2, 3, 9, float>(const float* __restrict h, int k, const int* __restrict offsets,
                                                 const float* __restrict x, float* __restrict y,
                                                 float* __restrict u) {
  const __m128 lanes123 = _mm_castsi128_ps(_mm_set_epi32(-1, -1, -1, 0));
  __m128 t = _mm_setzero_ps();
  for (int s = 0; s < k; ++s) {
    const float* r = h + 24 * s;
    const __m128 a2 = _mm_loadu_ps(r + 8), b2 = _mm_loadu_ps(r + 20);
    const __m128 uu = sse::ObservationTimesCamera(r, x + offsets[s]);  // [u_a, u_b, ., .]
    _mm_storel_pi(reinterpret_cast<__m64*>(u + 2 * s), uu);
    t = _mm_add_ps(t, _mm_add_ps(_mm_mul_ps(a2, _mm_shuffle_ps(uu, uu, 0x00)),
                                 _mm_mul_ps(b2, _mm_shuffle_ps(uu, uu, 0x55))));
  }
  t = _mm_and_ps(t, lanes123);
  for (int s = 0; s < k; ++s) {
    const float* r = h + 24 * s;
    const __m128 a2 = _mm_loadu_ps(r + 8), b2 = _mm_loadu_ps(r + 20);
    const __m128 qt = sse::SumPair(_mm_mul_ps(a2, t), _mm_mul_ps(b2, t));  // [q_a . t, q_b . t, ., .]
    const __m128 uu = _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(u + 2 * s));
    const __m128 ww = _mm_sub_ps(uu, qt);
    const __m128 wa = _mm_shuffle_ps(ww, ww, 0x00), wb = _mm_shuffle_ps(ww, ww, 0x55);
    float* yc = y + offsets[s];
    __m128 v0, v1;
    sse::ObservationTransposeTimes(r, wa, wb, &v0, &v1);
    _mm_storeu_ps(yc, _mm_add_ps(_mm_loadu_ps(yc), v0));
    _mm_storeu_ps(yc + 4, _mm_add_ps(_mm_loadu_ps(yc + 4), v1));
    // Lane 0 of the third packets: yc[8] += J8_a w_a + J8_b w_b.
    _mm_store_ss(yc + 8, _mm_add_ss(_mm_load_ss(yc + 8), _mm_add_ss(_mm_mul_ss(a2, wa), _mm_mul_ss(b2, wb))));
  }
}
#endif  // defined(__SSE2__)

// Squared column norms of a uniform group of sizes (R, E, F) with k
// observations (ProjectedLandmarkBlocks::SquaredColumnNorms, float): per
// observation the squares of its R rows summed in Scalar (one rounding per
// row for R = 2), then converted and added in double, to camera_sums at each
// observation's camera offset and, over the observations in order, to the
// landmark's E entries. Hot rows as in MultiplyNormalFixed, cold rows
// [Jl (E) | r].
template <int R, int E, int F, typename Scalar>
inline void AddSquaredColumnNormsFixed(const Scalar* __restrict h, const Scalar* __restrict cold, int k,
                                       const ProjectedBlockLayout::Item* __restrict items,
                                       double* __restrict landmark, double* __restrict camera_sums) {
  static_assert(R > 0 && E > 0 && F > 0, "a fixed-size kernel needs positive sizes");
  using CameraRow = Eigen::Array<Scalar, F, 1>;
  using LandmarkRow = Eigen::Array<Scalar, E, 1>;
  constexpr int kStride = F + E;
  Eigen::Array<double, E, 1> landmark_sum = Eigen::Array<double, E, 1>::Zero();
  for (int s = 0; s < k; ++s) {
    const Scalar* r = h + R * kStride * s;
    const Scalar* c = cold + R * (E + 1) * s;
    CameraRow camera = Eigen::Map<const CameraRow>(r).square();
    LandmarkRow point = Eigen::Map<const LandmarkRow>(c).square();
    for (int a = 1; a < R; ++a) {
      camera += Eigen::Map<const CameraRow>(r + a * kStride).square();
      point += Eigen::Map<const LandmarkRow>(c + a * (E + 1)).square();
    }
    Eigen::Map<Eigen::Array<double, F, 1>>(camera_sums + items[s].offset) += camera.template cast<double>();
    landmark_sum += point.template cast<double>();
  }
  Eigen::Map<Eigen::Array<double, E, 1>>(landmark) += landmark_sum;
}

// Back substitution's two passes over a uniform group of sizes (R, E, F)
// with k observations (projected_back_substitution.cc, float): hot rows as
// in MultiplyNormalFixed, cold rows [Jl (E) | r] back to back.
//   StepRowsFixed: u = Jp y_p per row and t = Q1^T (r - u), the
//     observation's R terms summed first;
//   SquaredStepRowsFixed: jy + sum over the rows of (u_i + Jl_i y_l)^2,
//     each square added in double, in row order.
template <int R, int E, int F, typename Scalar>
inline void StepRowsFixed(const Scalar* __restrict h, int k, const ProjectedBlockLayout::Item* __restrict items,
                          const Scalar* __restrict yp, const Scalar* __restrict cold, Scalar* __restrict u,
                          Scalar* __restrict t) {
  static_assert(R > 0 && E > 0 && F > 0, "a fixed-size kernel needs positive sizes");
  using VF = Eigen::Matrix<Scalar, F, 1>;
  using VE = Eigen::Matrix<Scalar, E, 1>;
  constexpr int kStride = F + E;
  VE sum = VE::Zero();
  for (int s = 0; s < k; ++s) {
    const Scalar* r = h + R * kStride * s;
    const Eigen::Map<const VF> x(yp + items[s].offset);
    VE observation = VE::Zero();
    for (int a = 0; a < R; ++a) {
      const int i = R * s + a;
      u[i] = Eigen::Map<const VF>(r + a * kStride).dot(x);
      observation += Eigen::Map<const VE>(r + a * kStride + F) * (cold[i * (E + 1) + E] - u[i]);
    }
    sum += observation;
  }
  for (int c = 0; c < E; ++c) t[c] = sum[c];
}

template <int E, typename Scalar>
inline double SquaredStepRowsFixed(const Scalar* __restrict cold, int m, const Scalar* __restrict u,
                                   const Scalar* __restrict yl, double jy) {
  using VE = Eigen::Matrix<Scalar, E, 1>;
  const Eigen::Map<const VE> y(yl);
  for (int i = 0; i < m; ++i) {
    const double v = static_cast<double>(u[i] + Eigen::Map<const VE>(cold + i * (E + 1)).dot(y));
    jy += v * v;
  }
  return jy;
}

#if defined(__SSE2__)
// BAL's shape in float, in SSE registers: a cold row [Jl0 Jl1 Jl2 r] is one
// register, a hot row three as in the product; t is kept as [. t0 t1 t2]
// over the Q1 rows' registers.
template <>
inline void StepRowsFixed<2, 3, 9, float>(const float* __restrict h, int k,
                                          const ProjectedBlockLayout::Item* __restrict items,
                                          const float* __restrict yp, const float* __restrict cold,
                                          float* __restrict u, float* __restrict t) {
  __m128 sum = _mm_setzero_ps();
  for (int s = 0; s < k; ++s) {
    const float* r = h + 24 * s;
    const __m128 uu = sse::ObservationTimesCamera(r, yp + items[s].offset);  // [u_a, u_b, ., .]
    _mm_storel_pi(reinterpret_cast<__m64*>(u + 2 * s), uu);
    // [r_a, r_a, r_b, r_b] - [u_a, u_a, u_b, u_b]
    const __m128 rr = _mm_shuffle_ps(_mm_loadu_ps(cold + 8 * s), _mm_loadu_ps(cold + 8 * s + 4), 0xff);
    const __m128 w = _mm_sub_ps(rr, _mm_unpacklo_ps(uu, uu));
    sum = _mm_add_ps(sum, _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(r + 8), _mm_shuffle_ps(w, w, 0x00)),
                                     _mm_mul_ps(_mm_loadu_ps(r + 20), _mm_shuffle_ps(w, w, 0xaa))));
  }
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, sum);
  t[0] = lanes[1];
  t[1] = lanes[2];
  t[2] = lanes[3];
}

template <>
inline double SquaredStepRowsFixed<3, float>(const float* __restrict cold, int m, const float* __restrict u,
                                             const float* __restrict yl, double jy) {
  const __m128 lanes012 = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
  const __m128 y = _mm_setr_ps(yl[0], yl[1], yl[2], 0.0f);
  int i = 0;
  for (; i + 1 < m; i += 2) {
    // [Jl_a . y_l, Jl_b . y_l], r's lane masked (0 * r would be NaN for an
    // infinite r) and u added.
    const __m128 pa = _mm_and_ps(_mm_mul_ps(_mm_loadu_ps(cold + 4 * i), y), lanes012);
    const __m128 pb = _mm_and_ps(_mm_mul_ps(_mm_loadu_ps(cold + 4 * i + 4), y), lanes012);
    const __m128 v = _mm_add_ps(sse::SumPair(pa, pb), _mm_loadl_pi(_mm_setzero_ps(), reinterpret_cast<const __m64*>(u + i)));
    const __m128d vd = _mm_cvtps_pd(v);
    const __m128d squares = _mm_mul_pd(vd, vd);
    jy += _mm_cvtsd_f64(squares);
    jy += _mm_cvtsd_f64(_mm_unpackhi_pd(squares, squares));
  }
  for (; i < m; ++i) {
    const double v = static_cast<double>(u[i] + (cold[4 * i] * yl[0] + cold[4 * i + 1] * yl[1] + cold[4 * i + 2] * yl[2]));
    jy += v * v;
  }
  return jy;
}
#endif  // defined(__SSE2__)

// The damping pass's right-hand side B^T r^ = Jp^T w (projected_damping.cc)
// for float weights: y (double) += sum_a J_a^T w_a over one observation's R
// rows (F camera entries each, kStride apart), the R products summed in
// Scalar, then converted and added in double. Against the same inputs summed
// in double every entry is within gamma_R (R roundings of u = 2^-24) of
// sum_a |J_a w_a| (ProjectedKernels.RightHandSideRowsInFloat); the float
// Jacobian and weights carry errors of the same order already.
template <int R, int F, int kStride, typename Scalar>
inline void AddObservationTransposeTimesInDouble(const Scalar* __restrict r, const Scalar* __restrict w,
                                                 double* __restrict y) {
  static_assert(R > 0 && F > 0 && kStride >= F, "a fixed-size kernel needs positive sizes");
  Eigen::Matrix<Scalar, F, 1> v = Eigen::Matrix<Scalar, F, 1>::Zero();
  AddRowsTransposeTimes<F, kStride>(r, w, v.data(), std::make_integer_sequence<int, R>());
  Eigen::Map<Eigen::Matrix<double, F, 1>>(y) += v.template cast<double>();
}

#if defined(__SSE2__)
// BAL's shape: the two rows' camera parts are two registers and a scalar
// each, as in the product; the sums are widened to double two lanes at a
// time.
template <>
inline void AddObservationTransposeTimesInDouble<2, 9, 12, float>(const float* __restrict r,
                                                                  const float* __restrict w,
                                                                  double* __restrict y) {
  __m128 v0, v1;
  sse::ObservationTransposeTimes(r, _mm_set1_ps(w[0]), _mm_set1_ps(w[1]), &v0, &v1);
  _mm_storeu_pd(y, _mm_add_pd(_mm_loadu_pd(y), _mm_cvtps_pd(v0)));
  _mm_storeu_pd(y + 2, _mm_add_pd(_mm_loadu_pd(y + 2), _mm_cvtps_pd(_mm_movehl_ps(v0, v0))));
  _mm_storeu_pd(y + 4, _mm_add_pd(_mm_loadu_pd(y + 4), _mm_cvtps_pd(v1)));
  _mm_storeu_pd(y + 6, _mm_add_pd(_mm_loadu_pd(y + 6), _mm_cvtps_pd(_mm_movehl_ps(v1, v1))));
  y[8] += static_cast<double>(r[8] * w[0] + r[20] * w[1]);
}
#endif  // defined(__SSE2__)

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

// ---------------------------------------------------------------------------
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

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_KERNELS_H_
