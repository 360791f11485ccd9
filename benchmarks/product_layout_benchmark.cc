// An experiment: does the projected product B^T B x pay for a
// storage that runs landmarks side by side, one per SIMD lane, as the
// batched thin QR does (projected/batched_thin_qr.h)?
//
//   build/benchmarks/product_layout_benchmark [--benchmark_filter=...]
//
// Both variants compute y += sum_l Jp_l^T (u_l - Q1_l t_l), u_l = Jp_l x,
// t_l = Q1_l^T u_l, on BAL's shape (2-d observations, 9-d cameras, 3-d
// points), in float and double, on the same random data:
//
//   per_landmark      the storage and kernel the solver uses
//                     (MultiplyNormalFixed of projected_product_kernels.h): per
//                     observation two rows [J (9) | Q1 row (3)], one
//                     landmark after the other;
//   lane_interleaved  landmarks in batches of kBatchLanes<Scalar> (8 floats
//                     / 4 doubles portable, 16 / 8 with CERES_SQRTBA_NATIVE
//                     on an AVX2 CPU),
//                     every scalar of a batch's rows stored as a vector of
//                     its lanes (structure of arrays), so that all the
//                     arithmetic runs one landmark per lane; the cameras'
//                     entries of x are gathered into lanes and the lanes'
//                     results scattered back to y per observation, because
//                     the landmarks of a batch see different cameras.
//
// Best case for the lanes: every landmark has the same number of
// observations (no padding, every batch full). Cameras are drawn at random.
// Arguments: landmarks, observations per landmark, cameras. Before timing,
// both variants' y are compared (relative to the largest |y|: up to 1e-3 in
// float and 1e-10 in double, the rounding of sums in a different order over
// the 600-1 000 observations of a camera); a larger difference ends the program
// with exit code 1, so that the smoke test fails with a wrong kernel. The
// counter max_difference reports it.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <vector>

#include "ceres_sqrtba/internal/projected/batched_thin_qr.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "ceres_sqrtba/internal/projected/projected_product_kernels.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

constexpr int kR = 2, kE = 3, kF = 9, kStride = kF + kE;

template <typename Scalar>
struct ProductData {
  int landmarks = 0, k = 0, cameras = 0;
  // per_landmark: landmark l's rows from hot[l * k * kR * kStride].
  std::vector<Scalar> hot;
  std::vector<int> items;  // per observation: its camera's offset in x
  // lane_interleaved: batch b, observation s, row a, column c, lane i at
  // lanes[((b * k + s) * kR + a) * kStride + c][i]; camera offsets
  // offsets[(b * k + s) * L + i] (a lane past the last landmark: zero rows,
  // camera 0).
  std::vector<LaneVector<Scalar>> lanes;
  std::vector<int> offsets;
  std::vector<Scalar> x;
  std::vector<Scalar> u;                      // per_landmark's scratch
  std::vector<LaneVector<Scalar>> lane_u;     // lane_interleaved's: k * kR

  ProductData(int num_landmarks, int observations, int num_cameras)
      : landmarks(num_landmarks), k(observations), cameras(num_cameras) {
    constexpr int L = kBatchLanes<Scalar>;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    std::uniform_int_distribution<int> camera(0, cameras - 1);
    hot.resize(static_cast<size_t>(landmarks) * k * kR * kStride);
    for (Scalar& v : hot) v = static_cast<Scalar>(value(rng));
    items.resize(static_cast<size_t>(landmarks) * k);
    for (size_t o = 0; o < items.size(); ++o) {
      items[o] = camera(rng) * kF;
    }
    const int batches = (landmarks + L - 1) / L;
    lanes.assign(static_cast<size_t>(batches) * k * kR * kStride, LaneVector<Scalar>::Zero());
    offsets.assign(static_cast<size_t>(batches) * k * L, 0);
    for (int l = 0; l < landmarks; ++l) {
      const int b = l / L, i = l % L;
      for (int s = 0; s < k; ++s) {
        offsets[(static_cast<size_t>(b) * k + s) * L + i] = items[static_cast<size_t>(l) * k + s];
        for (int a = 0; a < kR; ++a) {
          for (int c = 0; c < kStride; ++c) {
            lanes[((static_cast<size_t>(b) * k + s) * kR + a) * kStride + c][i] =
                hot[((static_cast<size_t>(l) * k + s) * kR + a) * kStride + c];
          }
        }
      }
    }
    x.resize(static_cast<size_t>(cameras) * kF);
    for (Scalar& v : x) v = static_cast<Scalar>(value(rng));
    u.resize(static_cast<size_t>(k) * kR + kE);
    lane_u.resize(static_cast<size_t>(k) * kR);
  }

  void PerLandmark(Scalar* y) {
    for (int l = 0; l < landmarks; ++l) {
      MultiplyNormalFixed<kR, kE, kF>(hot.data() + static_cast<size_t>(l) * k * kR * kStride, k,
                                      items.data() + static_cast<size_t>(l) * k, x.data(), y, u.data());
    }
  }

  // One batch: the per-landmark kernel's operations, each on a vector of
  // lanes; x gathered and y scattered per observation through a transposed
  // scratch (F x L), row a's products summed as MultiplyNormalFixed sums
  // them.
  void LaneInterleaved(Scalar* y) {
    constexpr int L = kBatchLanes<Scalar>;
    using V = LaneVector<Scalar>;
    const int batches = (landmarks + L - 1) / L;
    V* us = lane_u.data();  // allocated once, as the per-landmark scratch
    alignas(64) Scalar gathered[kF][L];
    for (int b = 0; b < batches; ++b) {
      const V* h = lanes.data() + static_cast<size_t>(b) * k * kR * kStride;
      const int* off = offsets.data() + static_cast<size_t>(b) * k * L;
      V t[kE];
      for (int c = 0; c < kE; ++c) t[c] = V::Zero();
      for (int s = 0; s < k; ++s) {
        for (int i = 0; i < L; ++i) {
          const Scalar* xc = x.data() + off[s * L + i];
          for (int c = 0; c < kF; ++c) gathered[c][i] = xc[c];
        }
        const V* r = h + s * kR * kStride;
        for (int a = 0; a < kR; ++a) {
          V v = r[a * kStride] * Eigen::Map<const V>(gathered[0]);
          for (int c = 1; c < kF; ++c) v += r[a * kStride + c] * Eigen::Map<const V>(gathered[c]);
          us[s * kR + a] = v;
        }
        for (int c = 0; c < kE; ++c) {
          V v = r[kF + c] * us[s * kR];
          for (int a = 1; a < kR; ++a) v += r[a * kStride + kF + c] * us[s * kR + a];
          t[c] += v;
        }
      }
      for (int s = 0; s < k; ++s) {
        const V* r = h + s * kR * kStride;
        V w[kR];
        for (int a = 0; a < kR; ++a) {
          V p = r[a * kStride + kF] * t[0];
          for (int c = 1; c < kE; ++c) p += r[a * kStride + kF + c] * t[c];
          w[a] = us[s * kR + a] - p;
        }
        for (int c = 0; c < kF; ++c) {
          V v = r[c] * w[0];
          for (int a = 1; a < kR; ++a) v += r[a * kStride + c] * w[a];
          Eigen::Map<V> out(gathered[c]);
          out = v;
        }
        for (int i = 0; i < L; ++i) {
          Scalar* yc = y + off[s * L + i];
          for (int c = 0; c < kF; ++c) yc[c] += gathered[c][i];
        }
      }
    }
  }

  double MaxDifference() {
    std::vector<Scalar> a(x.size(), Scalar(0)), b(x.size(), Scalar(0));
    PerLandmark(a.data());
    LaneInterleaved(b.data());
    double difference = 0.0, scale = 0.0;
    for (size_t i = 0; i < a.size(); ++i) {
      difference = std::max(difference, std::abs(static_cast<double>(a[i]) - b[i]));
      scale = std::max(scale, std::abs(static_cast<double>(a[i])));
    }
    return difference / std::max(scale, 1e-300);
  }
};

template <typename Scalar, bool kLanes>
void BM_ProductLayout(benchmark::State& state) {
  ProductData<Scalar> data(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                           static_cast<int>(state.range(2)));
  const double difference = data.MaxDifference();
  if (!(difference <= (std::is_same<Scalar, float>::value ? 1e-3 : 1e-10))) {
    std::fprintf(stderr, "product_layout_benchmark: the two products differ by %g (relative)\n", difference);
    std::exit(1);
  }
  std::vector<Scalar> y(data.x.size(), Scalar(0));
  for (auto _ : state) {
    if (kLanes) {
      data.LaneInterleaved(y.data());
    } else {
      data.PerLandmark(y.data());
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  const double observations = static_cast<double>(state.range(0)) * state.range(1);
  // Seconds per (observation x 1e-9): ns per observation.
  state.counters["ns/obs"] = benchmark::Counter(observations * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                                                                         benchmark::Counter::kInvert);
  state.counters["lanes"] = kBatchLanes<Scalar>;
  state.counters["max_difference"] = difference;
}

// Landmarks x observations x cameras: ladybug-49's size with its mean track
// (7 776 x 4, 49 cameras), short and long tracks, and 40 000 landmarks
// (19 MB of rows in float, 38 MB in double).
#define PRODUCT_LAYOUT_ARGS \
  ->Args({7776, 4, 49})->Args({7776, 2, 49})->Args({2000, 16, 200})->Args({40000, 5, 200})->Unit(benchmark::kMicrosecond)
BENCHMARK_TEMPLATE(BM_ProductLayout, float, false) PRODUCT_LAYOUT_ARGS;
BENCHMARK_TEMPLATE(BM_ProductLayout, float, true) PRODUCT_LAYOUT_ARGS;
BENCHMARK_TEMPLATE(BM_ProductLayout, double, false) PRODUCT_LAYOUT_ARGS;
BENCHMARK_TEMPLATE(BM_ProductLayout, double, true) PRODUCT_LAYOUT_ARGS;

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba

BENCHMARK_MAIN();
