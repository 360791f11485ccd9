// The one place where runtime block sizes become compile-time sizes, as in
// Ceres' schur_eliminator specializations: (row, e, f) = residual rows per
// residual block, landmark tangent size, camera tangent size.
//
// Why fixed sizes. A kernel whose loop bounds are template constants lets
// Eigen and the compiler unroll the loops, keep the operands in registers and
// use SIMD packets (four floats or two doubles per SSE register); the same
// kernel with runtime bounds is one serial chain of dependent additions. For
// the projected product, which runs once per observation per PCG iteration,
// that was 15.2 -> 10.1 ns per observation in float (CHANGELOG.md, commit
// 02832b2).
//
// Why a short list. Every listed shape instantiates every kernel that
// dispatches on it, for float and double: the list is what bundle adjustment
// uses in practice, and any other shape takes the kernel's dynamic version,
// so users' builds stay fast and no problem is refused.
//
// Why results stay deterministic. A fixed-size kernel sums in an order fixed
// by the sizes alone (not by alignment, thread count or data), so the same
// problem gives the same bits on every run. The fixed and the dynamic version
// of a kernel may round differently; which one runs depends only on the
// problem's structure.
//
// A second dispatch, by instruction set. For the most common shape, BAL's
// (2, 3, 9), in float, four of the projected storage's fixed-size kernels
// (the product and three row passes) have hand-written SSE2 versions,
// explicit specializations of the fixed-size templates in
// projected/projected_kernels_sse2.h. The dispatch here picks the shape; the
// compiler then takes the SSE2 version wherever it targets SSE2 (__SSE2__:
// every x86-64 build, fixed at compile time, never detected at run time), and
// the generic fixed-size kernel elsewhere. Both sum in an order fixed by the
// code, so results stay deterministic for a given build.
//
// Use: the callback receives an empty object of a FixedSizes type; it is
// FixedSizes<kDynamic, kDynamic, kDynamic> (kFixed false) when nothing listed
// matches.
//
//   DispatchBlockSizes(sizes, [&](auto fixed) {
//     using S = decltype(fixed);
//     if constexpr (S::kFixed) KernelFixed<S::kRow, S::kE, S::kF>(...);
//     else KernelDynamic(...);
//   });
#ifndef CERES_SQRTBA_INTERNAL_COMMON_FIXED_SIZE_DISPATCH_H_
#define CERES_SQRTBA_INTERNAL_COMMON_FIXED_SIZE_DISPATCH_H_

#include <Eigen/Core>

namespace ceres_sqrtba {
namespace internal {

// A size known only at run time (Eigen's convention, so that a dispatched
// size can be an Eigen dimension as it is).
constexpr int kDynamic = Eigen::Dynamic;

// Runtime sizes; kDynamic where a size varies (a group that is not uniform).
struct BlockSizes {
  int row = kDynamic;
  int e = kDynamic;
  int f = kDynamic;
};

inline bool operator==(const BlockSizes& a, const BlockSizes& b) {
  return a.row == b.row && a.e == b.e && a.f == b.f;
}

// Compile-time sizes. A kDynamic component of a listed entry matches any
// runtime size (the camera-only list); kFixed is false only for the fallback.
template <int kRowSize, int kESize, int kFSize>
struct FixedSizes {
  static constexpr int kRow = kRowSize;
  static constexpr int kE = kESize;
  static constexpr int kF = kFSize;
  static constexpr bool kFixed = kRow != kDynamic || kE != kDynamic || kF != kDynamic;
  static constexpr bool Matches(const BlockSizes& s) {
    return (kRow == kDynamic || kRow == s.row) && (kE == kDynamic || kE == s.e) &&
           (kF == kDynamic || kF == s.f);
  }
};
using DynamicSizes = FixedSizes<kDynamic, kDynamic, kDynamic>;

template <typename... Entries>
struct SizesList {};

// The instantiated shapes. Landmark-block kernels (row, e, f): BAL's cameras
// (9 = angle-axis, translation, f, k1, k2), 6-parameter poses, and 7 = a
// quaternion pose in its ambient form or a pose with a focal length; all with
// 2-d image residuals and 3-d points.
using FixedBlockSizesList = SizesList<FixedSizes<2, 3, 9>, FixedSizes<2, 3, 6>, FixedSizes<2, 3, 7>>;
// Kernels over camera columns alone (f): the above and 3-parameter blocks
// (a shared intrinsics block f, k1, k2).
using FixedCameraSizesList =
    SizesList<FixedSizes<kDynamic, kDynamic, 9>, FixedSizes<kDynamic, kDynamic, 6>,
              FixedSizes<kDynamic, kDynamic, 7>, FixedSizes<kDynamic, kDynamic, 3>>;

namespace fixed_size_dispatch {

template <typename Fn>
decltype(auto) Dispatch(SizesList<>, const BlockSizes&, Fn& fn) {
  return fn(DynamicSizes());
}

template <typename First, typename... Rest, typename Fn>
decltype(auto) Dispatch(SizesList<First, Rest...>, const BlockSizes& sizes, Fn& fn) {
  if (First::Matches(sizes)) return fn(First());
  return Dispatch(SizesList<Rest...>(), sizes, fn);
}

}  // namespace fixed_size_dispatch

// fn(FixedSizes<row, e, f>()) for a listed (row, e, f), fn(DynamicSizes())
// otherwise (kDynamic components never match a fixed entry).
template <typename Fn>
decltype(auto) DispatchBlockSizes(const BlockSizes& sizes, Fn&& fn) {
  return fixed_size_dispatch::Dispatch(FixedBlockSizesList(), sizes, fn);
}

// fn(FixedSizes<kDynamic, kDynamic, f>()) for a listed camera size f,
// fn(DynamicSizes()) otherwise.
template <typename Fn>
decltype(auto) DispatchCameraSize(int f, Fn&& fn) {
  return fixed_size_dispatch::Dispatch(FixedCameraSizesList(), BlockSizes{kDynamic, kDynamic, f}, fn);
}

// One block of a residual block's Jacobian, rows x cols: fn(FixedSizes<2,
// kDynamic, f>) for the 2-row residuals of BA with a listed camera size
// (landmark sizes included: 3 is listed), fn(DynamicSizes()) otherwise. Used
// by the evaluator and the Jacobian writers for the per-block work around
// the user's cost function.
template <typename Fn>
decltype(auto) DispatchResidualBlockSize(int rows, int cols, Fn&& fn) {
  if (rows == 2) {
    return DispatchCameraSize(cols, [&](auto sizes) -> decltype(auto) {
      using Sizes = decltype(sizes);
      return fn(FixedSizes<2, kDynamic, Sizes::kF>());
    });
  }
  return fn(DynamicSizes());
}

// A manifold's (ambient, tangent) sizes, for the product of an ambient
// Jacobian with the manifold's PlusJacobian: fn(ManifoldSizes<a, t>()) for
// the quaternion (4 -> 3), a pose with a quaternion (7 -> 6) and BAL's camera
// with a quaternion (10 -> 9), fn(ManifoldSizes<kDynamic, kDynamic>())
// otherwise.
template <int kAmbientSize, int kTangentSize>
struct ManifoldSizes {
  static constexpr int kAmbient = kAmbientSize;
  static constexpr int kTangent = kTangentSize;
  static constexpr bool kFixed = kAmbient != kDynamic;
};

template <typename Fn>
decltype(auto) DispatchManifoldSizes(int ambient, int tangent, Fn&& fn) {
  if (ambient == 4 && tangent == 3) return fn(ManifoldSizes<4, 3>());
  if (ambient == 7 && tangent == 6) return fn(ManifoldSizes<7, 6>());
  if (ambient == 10 && tangent == 9) return fn(ManifoldSizes<10, 9>());
  return fn(ManifoldSizes<kDynamic, kDynamic>());
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_FIXED_SIZE_DISPATCH_H_
