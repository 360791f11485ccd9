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
// Two camera items. COLMAP's residual blocks have two variable camera
// blocks, the pose and the intrinsics its images share (BlockSizes::f2). The
// product, which runs every PCG iteration, has fixed-size versions for the
// shapes COLMAP's bundle adjuster builds (DispatchProductSizes); the kernels
// that run once per iteration or per solve take their dynamic versions for
// them (DispatchBlockSizes never matches f2 > 0).
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
// f2: the tangent size of a residual block's second camera item, 0 when it
// has one (COLMAP's residuals have two: the pose, then the shared
// intrinsics; f is then the first item's size, and the row holds f + f2
// camera columns).
struct BlockSizes {
  int row = kDynamic;
  int e = kDynamic;
  int f = kDynamic;
  int f2 = 0;
};

inline bool operator==(const BlockSizes& a, const BlockSizes& b) {
  return a.row == b.row && a.e == b.e && a.f == b.f && a.f2 == b.f2;
}

// Compile-time sizes. A kDynamic component of a listed entry matches any
// runtime size (the camera-only list); kFixed is false only for the fallback.
// kF2 (the second camera item, 0: none) always matches exactly, so a group
// with two camera items per residual block never takes a one-item kernel.
template <int kRowSize, int kESize, int kFSize, int kF2Size = 0>
struct FixedSizes {
  static constexpr int kRow = kRowSize;
  static constexpr int kE = kESize;
  static constexpr int kF = kFSize;
  static constexpr int kF2 = kF2Size;
  static constexpr bool kFixed = kRow != kDynamic || kE != kDynamic || kF != kDynamic;
  static constexpr bool Matches(const BlockSizes& s) {
    return (kRow == kDynamic || kRow == s.row) && (kE == kDynamic || kE == s.e) &&
           (kF == kDynamic || kF == s.f) && kF2 == s.f2;
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
// The product kernels (projected_product_kernels.h), which run every PCG
// iteration, also take residual blocks with two camera items: COLMAP's pose
// (6 tangent columns) and the shared intrinsics as its bundle adjuster
// refines them by default (principal point held), f2 the largest among a
// landmark's observations: 1 = SIMPLE_PINHOLE, 2 = SIMPLE_RADIAL (COLMAP's
// default model) or PINHOLE, 3 = RADIAL, 4 = SIMPLE_RADIAL or PINHOLE with
// the principal point refined, 6 = OPENCV or OPENCV_FISHEYE.
using FixedTwoCameraSizesList = SizesList<FixedSizes<2, 3, 6, 2>, FixedSizes<2, 3, 6, 6>, FixedSizes<2, 3, 6, 1>,
                                          FixedSizes<2, 3, 6, 3>, FixedSizes<2, 3, 6, 4>>;
// Kernels over camera columns alone (f): the one-item shapes above and
// 3-parameter blocks (a shared intrinsics block f, k1, k2).
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

template <typename... A, typename... B>
SizesList<A..., B...> Concatenate(SizesList<A...>, SizesList<B...>);

}  // namespace fixed_size_dispatch

// fn(FixedSizes<row, e, f>()) for a listed (row, e, f), fn(DynamicSizes())
// otherwise (kDynamic components never match a fixed entry).
template <typename Fn>
decltype(auto) DispatchBlockSizes(const BlockSizes& sizes, Fn&& fn) {
  return fixed_size_dispatch::Dispatch(FixedBlockSizesList(), sizes, fn);
}

// The product's list: both of the above.
using FixedProductSizesList =
    decltype(fixed_size_dispatch::Concatenate(FixedBlockSizesList(), FixedTwoCameraSizesList()));

// fn(FixedSizes<row, e, f, f2>()) for a shape of FixedProductSizesList (f2 >
// 0: two camera items), fn(DynamicSizes()) otherwise. The product kernels
// only: every other kernel dispatches with DispatchBlockSizes.
template <typename Fn>
decltype(auto) DispatchProductSizes(const BlockSizes& sizes, Fn&& fn) {
  return fixed_size_dispatch::Dispatch(FixedProductSizesList(), sizes, fn);
}

// fn(FixedSizes<kDynamic, kDynamic, f>()) for a listed camera size f,
// fn(DynamicSizes()) otherwise.
template <typename Fn>
decltype(auto) DispatchCameraSize(int f, Fn&& fn) {
  return fixed_size_dispatch::Dispatch(FixedCameraSizesList(), BlockSizes{kDynamic, kDynamic, f}, fn);
}

// The reduced camera matrix's pair kernels (reduced_camera_kernels.h) take
// two cameras of a landmark, each of a listed size in any pairing: the
// camera sizes above and COLMAP's intrinsics of 1, 2 and 4 tangent columns
// (SIMPLE_PINHOLE, SIMPLE_RADIAL, RADIAL or OPENCV's focal lengths and two
// more), whose pairs with the pose share residual blocks.
using FixedPairCameraSizesList = decltype(fixed_size_dispatch::Concatenate(
    FixedCameraSizesList(), SizesList<FixedSizes<kDynamic, kDynamic, 1>, FixedSizes<kDynamic, kDynamic, 2>,
                                      FixedSizes<kDynamic, kDynamic, 4>>()));

// fn(FixedSizes<kDynamic, kDynamic, f>()) for a camera size f of
// FixedPairCameraSizesList, fn(DynamicSizes()) otherwise.
template <typename Fn>
decltype(auto) DispatchPairCameraSize(int f, Fn&& fn) {
  return fixed_size_dispatch::Dispatch(FixedPairCameraSizesList(), BlockSizes{kDynamic, kDynamic, f}, fn);
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
