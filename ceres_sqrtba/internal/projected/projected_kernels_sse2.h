// Hand-written SSE2 versions of four projected kernels at the most common
// shape, BAL's (R, E, F) = (2, 3, 9), in float: the product
// (MultiplyNormalFixed, projected_product_kernels.h) and three row passes
// (StepRowsFixed, SquaredStepRowsFixed, AddObservationTransposeTimesInDouble,
// projected_row_kernels.h). SSE's four-float registers lie on the hot rows
// themselves: a hot row [camera (9) | Q1 (3)] is 12 floats, exactly three
// registers [J0..J3 | J4..J7 | J8 q0 q1 q2], and a cold row [Jl (3) | r] one.
//
// A second dispatch, by instruction set, beside the one by size
// (common/fixed_size_dispatch.h): the size dispatch picks the fixed-size
// kernel <2, 3, 9>, and where the compiler targets SSE2 (__SSE2__: every
// x86-64 build) its float instantiation is the explicit specialization here;
// elsewhere the generic fixed-size kernel runs. The order of every sum is
// fixed by the code (not by alignment or data), so results are
// deterministic; they differ from the generic kernels' in rounding only
// (ProjectedKernels.FixedProductEqualsDynamic and the row-pass tests).
//
// The generic kernels' templates are declared here and defined in their own
// headers, which include this one first: whoever can call a kernel sees its
// specialization, so no unit can instantiate the generic kernel at this shape
// by mistake (an explicit specialization must be declared before its first
// use).
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_KERNELS_SSE2_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_KERNELS_SSE2_H_

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ceres_sqrtba/internal/projected/projected_block_layout.h"

#if defined(__SSE2__)
namespace ceres_sqrtba {
namespace internal {

// The generic templates (projected_product_kernels.h, projected_row_kernels.h).
template <int R, int E, int F, typename Scalar>
inline void MultiplyNormalFixed(const Scalar* __restrict h, int k, const int* __restrict offsets,
                                const Scalar* __restrict x, Scalar* __restrict y,
                                Scalar* __restrict u);
template <int R, int E, int F, typename Scalar>
inline void StepRowsFixed(const Scalar* __restrict h, int k,
                          const ProjectedBlockLayout::Item* __restrict items,
                          const Scalar* __restrict yp, const Scalar* __restrict cold,
                          Scalar* __restrict u, Scalar* __restrict t);
template <int E, typename Scalar>
inline double SquaredStepRowsFixed(const Scalar* __restrict cold, int m, const Scalar* __restrict u,
                                   const Scalar* __restrict yl, double jy);
template <int R, int F, int kStride, typename Scalar>
inline void AddObservationTransposeTimesInDouble(const Scalar* __restrict r,
                                                 const Scalar* __restrict w,
                                                 double* __restrict y);

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

// ---------------------------------------------------------------------------
// The product y += B^T B x (MultiplyNormalFixed).

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

// ---------------------------------------------------------------------------
// Back substitution's row passes (StepRowsFixed, SquaredStepRowsFixed).

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

// ---------------------------------------------------------------------------
// The damping pass's right-hand side (AddObservationTransposeTimesInDouble).

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

}  // namespace internal
}  // namespace ceres_sqrtba
#endif  // defined(__SSE2__)

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_KERNELS_SSE2_H_
