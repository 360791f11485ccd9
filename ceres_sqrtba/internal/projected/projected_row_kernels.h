// The per-row kernels of the projected landmark blocks
// (projected_landmark_blocks.h) outside the product: the row helpers that the
// product, the damping pass and back substitution share (one observation row
// of Jp times a camera vector, and its transpose), the column norms of the
// Jacobian scaling, back substitution's two passes and the damping pass's
// right-hand side.
//
// Why a header of their own: the fixed-size versions (uniform groups,
// projected_block_layout.h, at the sizes of common/fixed_size_dispatch.h) are
// called from projected_landmark_blocks.cc, projected_damping.cc and
// projected_back_substitution.cc, each through its own DispatchBlockSizes,
// and projected_kernels_test.cc checks them against sums in double. BAL's
// shape in float has SSE2 versions (projected_kernels_sse2.h, included first).
//
// Group g's hot rows h: layout.rows[g] rows of layout.hot_stride(g) scalars,
// [ compact camera Jacobian (camera_width) | Q1 row (d) ]; its cold rows
// [ Jl (d) | r ].
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_ROW_KERNELS_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_ROW_KERNELS_H_

#include <cstdint>
#include <utility>

#include <Eigen/Core>

#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "ceres_sqrtba/internal/projected/projected_kernels_sse2.h"

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

// y_c += sum_a J_a^T w_a over the R rows J_a (F camera entries each, kStride
// apart) of one observation, as one Eigen expression: the sum is evaluated
// left to right per coefficient.
template <int F, int kStride, typename Scalar, int... A>
inline void AddRowsTransposeTimes(const Scalar* r, const Scalar* w, Scalar* y_c,
                                  std::integer_sequence<int, A...>) {
  using VF = Eigen::Matrix<Scalar, F, 1>;
  Eigen::Map<VF>(y_c) += (... + (Eigen::Map<const VF>(r + A * kStride) * w[A]));
}

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

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_ROW_KERNELS_H_
