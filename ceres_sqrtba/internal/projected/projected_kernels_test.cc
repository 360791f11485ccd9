// The fixed-size kernels of the projected blocks (projected_product_kernels.h,
// projected_row_kernels.h, projected_gram_kernels.h, and for BAL's shape in
// float projected_kernels_sse2.h) against their dynamic versions, for every shape of fixed_size_dispatch.h's list, in
// float and double; and the dispatch: which shapes take a fixed kernel, which
// groups the layout calls uniform, and which kernel the per-group entry points
// run.
//
// Tolerances. The two versions of a kernel compute the same sums in
// different orders, so they differ by rounding only. Each is within
// gamma_N * b of the exact value, componentwise (Higham, "Accuracy and
// Stability of Numerical Algorithms", sec. 3.1: a sum of n products computed
// in any order has an error of at most gamma_n = n u / (1 - n u) times the sum
// of the absolute values of its terms), where b is the same computation on
// absolute values and N bounds the length of the longest chain of roundings
// (sums of F, E, m and R terms, each rounding once more when it is
// accumulated). Two such results differ by at most 2 gamma_N b. That is a few
// dozen units in the last place of each entry's own scale: tight enough that
// any wrong index, sign or term of a kernel fails, as it moves entries by
// about b itself.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "ceres_sqrtba/internal/projected/projected_gram_kernels.h"
#include "ceres_sqrtba/internal/projected/projected_product_kernels.h"
#include "ceres_sqrtba/internal/projected/projected_row_kernels.h"
#include "fused_multiply_add.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Which sizes a dispatch hands to its callback.
BlockSizes Dispatched(const BlockSizes& sizes, bool* fixed) {
  return DispatchBlockSizes(sizes, [&](auto s) {
    using S = decltype(s);
    *fixed = S::kFixed;
    return BlockSizes{S::kRow, S::kE, S::kF, S::kF2};
  });
}
BlockSizes DispatchedToProduct(const BlockSizes& sizes, bool* fixed) {
  return DispatchProductSizes(sizes, [&](auto s) {
    using S = decltype(s);
    *fixed = S::kFixed;
    return BlockSizes{S::kRow, S::kE, S::kF, S::kF2};
  });
}

TEST(FixedSizeDispatch, ListedBlockSizesTakeTheFixedKernel) {
  for (const BlockSizes& sizes : {BlockSizes{2, 3, 9}, BlockSizes{2, 3, 6}, BlockSizes{2, 3, 7}}) {
    bool fixed = false;
    EXPECT_TRUE(Dispatched(sizes, &fixed) == sizes);
    EXPECT_TRUE(fixed) << sizes.row << "," << sizes.e << "," << sizes.f;
  }
}

TEST(FixedSizeDispatch, OtherBlockSizesTakeTheDynamicKernel) {
  const BlockSizes dynamic{kDynamic, kDynamic, kDynamic};
  for (const BlockSizes& sizes : {BlockSizes{2, 3, 8}, BlockSizes{3, 3, 9}, BlockSizes{2, 4, 9},
                                  BlockSizes{1, 3, 6}, BlockSizes{2, 0, 9}, BlockSizes{2, 3, 3},
                                  BlockSizes()}) {
    bool fixed = true;
    EXPECT_TRUE(Dispatched(sizes, &fixed) == dynamic);
    EXPECT_FALSE(fixed) << sizes.row << "," << sizes.e << "," << sizes.f;
  }
}

// Two camera items per residual block (COLMAP's pose and intrinsics): the
// product's list has them, the other kernels' does not; the product takes
// every one-item shape the others take.
TEST(FixedSizeDispatch, TwoCameraItemsTakeTheFixedProductOnly) {
  const BlockSizes dynamic{kDynamic, kDynamic, kDynamic};
  for (const BlockSizes& sizes : {BlockSizes{2, 3, 6, 1}, BlockSizes{2, 3, 6, 2}, BlockSizes{2, 3, 6, 3},
                                  BlockSizes{2, 3, 6, 4}, BlockSizes{2, 3, 6, 6}}) {
    bool fixed = false;
    EXPECT_TRUE(DispatchedToProduct(sizes, &fixed) == sizes);
    EXPECT_TRUE(fixed) << sizes.f << "+" << sizes.f2;
    EXPECT_TRUE(Dispatched(sizes, &fixed) == dynamic);
    EXPECT_FALSE(fixed) << sizes.f << "+" << sizes.f2;
  }
  for (const BlockSizes& sizes : {BlockSizes{2, 3, 6, 5}, BlockSizes{2, 3, 9, 2}, BlockSizes{2, 4, 6, 2},
                                  BlockSizes{3, 3, 6, 2}}) {
    bool fixed = true;
    EXPECT_TRUE(DispatchedToProduct(sizes, &fixed) == dynamic);
    EXPECT_FALSE(fixed) << sizes.row << "," << sizes.e << "," << sizes.f << "+" << sizes.f2;
  }
  for (const BlockSizes& sizes : {BlockSizes{2, 3, 9}, BlockSizes{2, 3, 6}, BlockSizes{2, 3, 7}}) {
    bool fixed = false;
    EXPECT_TRUE(DispatchedToProduct(sizes, &fixed) == sizes);
    EXPECT_TRUE(fixed);
  }
}

TEST(FixedSizeDispatch, CameraSizes) {
  for (int f = -1; f <= 12; ++f) {
    const bool listed = f == 3 || f == 6 || f == 7 || f == 9;
    DispatchCameraSize(f, [&](auto s) {
      using S = decltype(s);
      EXPECT_EQ(S::kFixed, listed) << f;
      EXPECT_EQ(S::kF, listed ? f : kDynamic) << f;
      EXPECT_EQ(S::kRow, kDynamic);
      EXPECT_EQ(S::kE, kDynamic);
    });
  }
}

// The reduced camera matrix's pair kernels take the camera sizes above and
// COLMAP's intrinsics of 1, 2 and 4 tangent columns.
TEST(FixedSizeDispatch, PairCameraSizes) {
  for (int f = -1; f <= 12; ++f) {
    const bool listed = f == 1 || f == 2 || f == 3 || f == 4 || f == 6 || f == 7 || f == 9;
    DispatchPairCameraSize(f, [&](auto s) {
      using S = decltype(s);
      EXPECT_EQ(S::kFixed, listed) << f;
      EXPECT_EQ(S::kF, listed ? f : kDynamic) << f;
      EXPECT_EQ(S::kRow, kDynamic);
      EXPECT_EQ(S::kE, kDynamic);
    });
  }
}

// A random linear problem (test_problems.h) with its structure and layout.
struct KernelProblem {
  explicit KernelProblem(const testing::RandomProblemConfig& config) : problem(MakeRandomProblem(config)) {
    std::string error;
    EXPECT_EQ(BuildProblemStructure(*problem.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
    layout = std::make_unique<ProjectedBlockLayout>(s);
  }
  testing::RandomProblem problem;
  ProblemStructure s;
  std::unique_ptr<ProjectedBlockLayout> layout;
};

// Residual blocks of `row` rows, each on one camera of size f and one
// landmark of size e; landmark 1 is seen twice by one camera (a camera with
// two residual blocks in a group), landmark 0 once.
testing::RandomProblemConfig UniformConfig(int row, int e, int f, unsigned seed) {
  testing::RandomProblemConfig c;
  c.num_cameras = 8;
  c.camera_size = f;
  c.num_landmarks = 30;
  c.landmark_sizes = {e};
  c.residual_size = row;
  c.min_observations = 2;
  c.max_observations = 6;
  c.repeat_camera = true;
  c.single_observation = true;
  c.seed = seed;
  return c;
}

TEST(ProjectedBlockLayout, UniformSizes) {
  for (const BlockSizes& sizes : {BlockSizes{2, 3, 9}, BlockSizes{2, 3, 6}, BlockSizes{3, 3, 8}}) {
    KernelProblem problem(UniformConfig(sizes.row, sizes.e, sizes.f, 7));
    for (const BlockSizes& u : problem.layout->uniform_sizes) EXPECT_TRUE(u == sizes);
  }
  // Two cameras (pose, shared intrinsics) per residual block: uniform with
  // the second item's size; and not uniform when some residual blocks have
  // one (a constant pose) and the others two.
  testing::RandomProblemConfig c = UniformConfig(2, 3, 6, 8);
  c.intrinsics_size = 3;
  KernelProblem two_cameras(c);
  for (const BlockSizes& u : two_cameras.layout->uniform_sizes) EXPECT_TRUE((u == BlockSizes{2, 3, 6, 3}));
  two_cameras.problem.problem->SetParameterBlockConstant(two_cameras.problem.cameras[0].data());
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*two_cameras.problem.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  const ProjectedBlockLayout mixed(s);
  int uniform = 0, other = 0;
  for (const BlockSizes& u : mixed.uniform_sizes) {
    EXPECT_TRUE(u == BlockSizes() || (u == BlockSizes{2, 3, 6, 3}));
    ++(u == BlockSizes() ? other : uniform);
  }
  EXPECT_GT(uniform, 0);
  EXPECT_GT(other, 0);
  // Intrinsics of sizes 2 and 6 (SIMPLE_RADIAL and OPENCV cameras): uniform
  // with the largest second item of each group.
  c = UniformConfig(2, 3, 6, 10);
  c.intrinsics_sizes = {2, 6};
  KernelProblem sizes_2_6(c);
  int with_6 = 0;
  for (size_t g = 0; g < sizes_2_6.s.groups.size(); ++g) {
    int largest = 0;
    for (int sg = sizes_2_6.layout->segment_begin[g]; sg < sizes_2_6.layout->segment_end[g]; ++sg) {
      largest = std::max(largest, sizes_2_6.layout->items[sizes_2_6.layout->segments[sg].item_begin + 1].size);
    }
    EXPECT_TRUE((sizes_2_6.layout->uniform_sizes[g] == BlockSizes{2, 3, 6, largest})) << g;
    with_6 += largest == 6;
  }
  EXPECT_GT(with_6, 0);
  // Each group has its own landmark size.
  c = UniformConfig(2, 3, 9, 9);
  c.landmark_sizes = {1, 2, 3, 4};
  KernelProblem landmarks(c);
  for (size_t g = 0; g < landmarks.s.groups.size(); ++g) {
    EXPECT_TRUE((landmarks.layout->uniform_sizes[g] == BlockSizes{2, landmarks.s.groups[g].landmark_size, 9}));
  }
}

// gamma_n of Scalar's unit roundoff.
template <typename Scalar>
double Gamma(int n) {
  const double u = std::numeric_limits<Scalar>::epsilon() / 2;
  return n * u / (1 - n * u);
}

template <typename Scalar>
std::vector<Scalar> RandomValues(int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  ::ceres_sqrtba::testing::UniformRealDistribution dist(-1.0, 1.0);
  std::vector<Scalar> v(static_cast<size_t>(n));
  for (Scalar& x : v) x = static_cast<Scalar>(dist(rng));
  return v;
}

// What a kernel adds to `size` zeros.
template <typename T, typename Kernel>
std::vector<T> AddedToZero(int size, const Kernel& kernel) {
  std::vector<T> out(size, T(0));
  kernel(out.data());
  return out;
}

// Random hot rows (camera Jacobians and Q1 rows; the kernels' identities hold
// for any Q1, orthonormal or not), a random camera vector, and each kernel's
// result on group g (camera entry e) added to zeros.
template <typename Scalar>
struct RandomRows {
  RandomRows(const KernelProblem& problem, unsigned seed)
      : layout(*problem.layout),
        num_camera_parameters(problem.s.num_camera_parameters),
        hot(RandomValues<Scalar>(layout.hot_scalars, seed)),
        x(RandomValues<Scalar>(num_camera_parameters, seed + 1)),
        u(layout.max_rows + layout.max_landmark_size) {}
  const Scalar* h(int g) const { return hot.data() + layout.hot_offset[g]; }

  template <typename S>
  std::vector<Scalar> FixedProduct(int g) {
    const int sb = layout.segment_begin[g], k = layout.segment_end[g] - sb;
    const int first = layout.segments[sb].item_begin;
    return AddedToZero<Scalar>(num_camera_parameters, [&](Scalar* y) {
      MultiplyNormalShape<S>(h(g), k, layout.item_offset.data() + first, layout.item_size.data() + first, x.data(),
                             y, u.data());
    });
  }
  std::vector<Scalar> DynamicProduct(int g) {
    return AddedToZero<Scalar>(num_camera_parameters,
                               [&](Scalar* y) { MultiplyNormalDynamic(layout, g, h(g), x.data(), y, u.data()); });
  }
  std::vector<Scalar> GroupProduct(int g) {
    return AddedToZero<Scalar>(num_camera_parameters,
                               [&](Scalar* y) { MultiplyNormalGroup(layout, g, h(g), x.data(), y, u.data()); });
  }
  // n x n, lower triangles (the fixed kernel also writes entries above the
  // diagonal), in the accumulator the solver gives them: Scalar
  // (block_jacobi_preconditioner.h), returned in double.
  template <typename S>
  std::vector<double> FixedGram(int g, int e) {
    const int row = layout.items[layout.entry_items[layout.entry_item_begin[e]]].row;
    return InDouble(AddedToZero<Scalar>(S::kF * S::kF, [&](Scalar* acc) {
      AddReducedGramLowerFixed<S::kRow, S::kE, S::kF>(h(g) + row * layout.hot_stride(g), acc);
    }));
  }
  std::vector<double> DynamicGram(int g, int e, int n) {
    return InDouble(
        AddedToZero<Scalar>(n * n, [&](Scalar* acc) { AddReducedGramLowerDynamic(layout, g, e, n, h(g), acc); }));
  }
  std::vector<double> GroupGram(int g, int e, int n) {
    return InDouble(
        AddedToZero<Scalar>(n * n, [&](Scalar* acc) { AddReducedGramLowerGroup(layout, g, e, n, h(g), acc); }));
  }
  static std::vector<double> InDouble(const std::vector<Scalar>& v) { return std::vector<double>(v.begin(), v.end()); }

  const ProjectedBlockLayout& layout;
  const int num_camera_parameters;
  std::vector<Scalar> hot;
  std::vector<Scalar> x;
  std::vector<Scalar> u;  // the product's scratch
};

// The product on absolute values, |J|^T (|J||x| + |Q1| |Q1|^T |J||x|), per
// entry of the reduced camera vector (the b of the header comment).
template <typename Scalar>
std::vector<double> ProductMagnitude(const ProjectedBlockLayout& layout, int g, const Scalar* h,
                                     const Scalar* x, int num_camera_parameters) {
  const int hs = layout.hot_stride(g), cw = layout.camera_width[g], d = layout.landmark_size[g];
  const int m = layout.rows[g];
  std::vector<double> u(m, 0.0), t(d, 0.0), b(num_camera_parameters, 0.0);
  for (int sg = layout.segment_begin[g]; sg < layout.segment_end[g]; ++sg) {
    const ProjectedBlockLayout::Segment& seg = layout.segments[sg];
    for (int i = seg.row; i < seg.row + seg.rows; ++i) {
      for (int it = seg.item_begin; it < seg.item_end; ++it) {
        const ProjectedBlockLayout::Item& item = layout.items[it];
        for (int k = 0; k < item.size; ++k) {
          u[i] += std::abs(double(h[i * hs + item.column + k])) * std::abs(double(x[item.offset + k]));
        }
      }
      for (int c = 0; c < d; ++c) t[c] += std::abs(double(h[i * hs + cw + c])) * u[i];
    }
  }
  for (int sg = layout.segment_begin[g]; sg < layout.segment_end[g]; ++sg) {
    const ProjectedBlockLayout::Segment& seg = layout.segments[sg];
    for (int i = seg.row; i < seg.row + seg.rows; ++i) {
      double w = u[i];
      for (int c = 0; c < d; ++c) w += std::abs(double(h[i * hs + cw + c])) * t[c];
      for (int it = seg.item_begin; it < seg.item_end; ++it) {
        const ProjectedBlockLayout::Item& item = layout.items[it];
        for (int k = 0; k < item.size; ++k) b[item.offset + k] += std::abs(double(h[i * hs + item.column + k])) * w;
      }
    }
  }
  return b;
}

// |Jc|^T |Jc| + |W|^T |W| with |W| = |Q1|^T |Jc|: camera entry e's Gram block
// on absolute values.
template <typename Scalar>
std::vector<double> GramMagnitude(const ProjectedBlockLayout& layout, int g, int e, int n, const Scalar* h) {
  const int hs = layout.hot_stride(g), cw = layout.camera_width[g], d = layout.landmark_size[g];
  std::vector<double> b(n * n, 0.0), w(d * n, 0.0);
  for (int ii = layout.entry_item_begin[e]; ii < layout.entry_item_begin[e + 1]; ++ii) {
    const ProjectedBlockLayout::Item& item = layout.items[layout.entry_items[ii]];
    for (int r = item.row; r < item.row + item.rows; ++r) {
      const Scalar* jc = h + r * hs + item.column;
      for (int i = 0; i < n; ++i) {
        for (int k = 0; k < n; ++k) b[i * n + k] += std::abs(double(jc[i])) * std::abs(double(jc[k]));
        for (int c = 0; c < d; ++c) w[c * n + i] += std::abs(double(h[r * hs + cw + c])) * std::abs(double(jc[i]));
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < n; ++k) {
      for (int c = 0; c < d; ++c) b[i * n + k] += w[c * n + i] * w[c * n + k];
    }
  }
  return b;
}

// The residual blocks of camera entry e in its group.
int NumItems(const ProjectedBlockLayout& layout, int e) {
  return layout.entry_item_begin[e + 1] - layout.entry_item_begin[e];
}

template <typename Scalar>
class ProjectedKernels : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ProjectedKernels, Scalars);

// Calls fn(S(), problem, data) for every listed (row, e, f, f2) shape S, with
// a problem of uniform groups of that shape and random rows on it (f2 > 0: a
// shared intrinsics block of size f2 as each residual block's second camera
// item): a shape added to the list is tested here without a change.
template <typename Scalar, typename Fn, typename... Entries>
void ForEachListedShape(SizesList<Entries...>, unsigned seed, const Fn& fn) {
  auto run = [&](auto shape) {
    using S = decltype(shape);
    testing::RandomProblemConfig config = UniformConfig(S::kRow, S::kE, S::kF, seed);
    config.intrinsics_size = S::kF2;
    KernelProblem problem(config);
    RandomRows<Scalar> data(problem, seed + 1);
    fn(shape, problem, data);
  };
  (run(Entries()), ...);
}

// "r,e,f" of a listed shape, for messages.
template <typename S>
std::string Name() {
  return std::to_string(S::kRow) + "," + std::to_string(S::kE) + "," + std::to_string(S::kF) +
         (S::kF2 > 0 ? "+" + std::to_string(S::kF2) : "");
}

TYPED_TEST(ProjectedKernels, FixedProductEqualsDynamic) {
  ForEachListedShape<TypeParam>(FixedProductSizesList(), 11, [](auto shape, const KernelProblem&,
                                                                 RandomRows<TypeParam>& data) {
    using S = decltype(shape);
    const ProjectedBlockLayout& layout = data.layout;
    int compared = 0;
    for (int g = 0; g < static_cast<int>(layout.rows.size()); ++g) {
      ASSERT_TRUE((layout.uniform_sizes[g] == BlockSizes{S::kRow, S::kE, S::kF, S::kF2})) << Name<S>();
      const std::vector<TypeParam> fixed = data.template FixedProduct<S>(g);
      const std::vector<TypeParam> dynamic = data.DynamicProduct(g);
      const std::vector<double> b =
          ProductMagnitude(layout, g, data.h(g), data.x.data(), data.num_camera_parameters);
      const double tolerance = 2 * Gamma<TypeParam>(2 * (S::kF + S::kF2 + S::kE + layout.rows[g]) + 4);
      for (int i = 0; i < data.num_camera_parameters; ++i) {
        EXPECT_LE(std::abs(double(fixed[i]) - double(dynamic[i])), tolerance * b[i])
            << Name<S>() << " group " << g << " entry " << i << ": " << fixed[i] << " vs " << dynamic[i];
        compared += b[i] > 0;
      }
    }
    EXPECT_GT(compared, 0) << Name<S>();
  });
}

// Two camera items whose second item's size varies within a landmark's
// observations (intrinsics of sizes 2 and 6, and 1 and 3): the product's
// fixed kernel at the largest size, zero-padded, within the same bound of the
// dynamic one, and the dispatch takes it for every group.
TYPED_TEST(ProjectedKernels, FixedProductOfMixedIntrinsicsEqualsDynamic) {
  for (const std::vector<int>& intrinsics : {std::vector<int>{2, 6}, std::vector<int>{1, 3}}) {
    testing::RandomProblemConfig c = UniformConfig(2, 3, 6, 12);
    c.intrinsics_sizes = intrinsics;
    c.max_observations = 8;
    KernelProblem problem(c);
    RandomRows<TypeParam> data(problem, 13);
    const ProjectedBlockLayout& layout = data.layout;
    int mixed = 0;
    for (int g = 0; g < static_cast<int>(layout.rows.size()); ++g) {
      bool fixed = false;
      DispatchedToProduct(layout.uniform_sizes[g], &fixed);
      const BlockSizes& u = layout.uniform_sizes[g];
      ASSERT_TRUE(fixed) << g << ": " << u.row << "," << u.e << "," << u.f << "," << u.f2;
      int smallest = 99;
      for (int sg = layout.segment_begin[g]; sg < layout.segment_end[g]; ++sg) {
        smallest = std::min(smallest, layout.items[layout.segments[sg].item_begin + 1].size);
      }
      mixed += smallest < layout.uniform_sizes[g].f2;
      const std::vector<TypeParam> fixed_product = data.GroupProduct(g);
      const std::vector<TypeParam> dynamic = data.DynamicProduct(g);
      const std::vector<double> b = ProductMagnitude(layout, g, data.h(g), data.x.data(), data.num_camera_parameters);
      const double tolerance = 2 * Gamma<TypeParam>(2 * (layout.hot_stride(g) + layout.rows[g]) + 4);
      for (int i = 0; i < data.num_camera_parameters; ++i) {
        EXPECT_LE(std::abs(double(fixed_product[i]) - double(dynamic[i])), tolerance * b[i])
            << "group " << g << " entry " << i << ": " << fixed_product[i] << " vs " << dynamic[i];
        // Nothing outside the group's cameras.
        if (b[i] == 0) EXPECT_EQ(fixed_product[i], TypeParam(0)) << "group " << g << " entry " << i;
      }
    }
    EXPECT_GT(mixed, 0) << intrinsics[0] << "," << intrinsics[1];
  }
}

TYPED_TEST(ProjectedKernels, FixedGramEqualsDynamic) {
  ForEachListedShape<TypeParam>(FixedBlockSizesList(), 13, [](auto shape, const KernelProblem& problem,
                                                               RandomRows<TypeParam>& data) {
    using S = decltype(shape);
    // In double both kernels compute in double. In float the fixed kernel
    // computes in float (M, M J, J^T M J: sums of at most E + 1 and R terms,
    // and the conversions), the dynamic one in double and rounds its term to
    // float once: the bound of a float computation of J^T M J on absolute
    // values.
    const double tolerance = 2 * Gamma<TypeParam>(2 * (S::kRow + S::kE + S::kRow) + 4);
    int compared = 0;
    for (int g = 0; g < static_cast<int>(problem.s.groups.size()); ++g) {
      const Group& group = problem.s.groups[g];
      for (int e = group.camera_begin; e < group.camera_end; ++e) {
        if (NumItems(data.layout, e) != 1) continue;  // the fixed kernel's case
        const std::vector<double> fixed = data.template FixedGram<S>(g, e);
        const std::vector<double> dynamic = data.DynamicGram(g, e, S::kF);
        const std::vector<double> b = GramMagnitude(data.layout, g, e, S::kF, data.h(g));
        for (int i = 0; i < S::kF; ++i) {
          for (int k = 0; k <= i; ++k) {
            const int at = i * S::kF + k;
            EXPECT_LE(std::abs(fixed[at] - dynamic[at]), tolerance * b[at])
                << Name<S>() << " group " << g << " camera entry " << e << " (" << i << "," << k << ")";
          }
        }
        ++compared;
      }
    }
    EXPECT_GT(compared, 0) << Name<S>();
  });
}

// Two camera Gram blocks (lower triangles, n x n) of group g's camera entry
// e: the same bits, or with fused multiply-adds (fused_multiply_add.h), where
// the same kernel inlined in two places may fuse different operations, equal
// to the rounding of sums of up to 64 terms of their magnitude.
template <typename Scalar>
void ExpectSameGram(const std::vector<double>& got, const std::vector<double>& want, const ProjectedBlockLayout& layout,
                    int g, int e, int n, const Scalar* h) {
  if (!testing::kFusedMultiplyAdd) {
    EXPECT_EQ(got, want);
    return;
  }
  const std::vector<double> b = GramMagnitude(layout, g, e, n, h);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k <= i; ++k) {
      EXPECT_LE(std::abs(got[i * n + k] - want[i * n + k]), Gamma<double>(64) * b[i * n + k]) << "(" << i << "," << k << ")";
    }
  }
}

// Back substitution's row passes (StepRowsFixed, SquaredStepRowsFixed)
// against the same sums in double from the same Scalar inputs: random hot
// rows, cold rows [Jl | r], camera step and landmark step. Each pass is a
// chain of at most N = F + 2 + m roundings per entry (Jp y_p, r - u, the
// products with Q1 and the sums over the rows), so the two results differ by
// at most 2 gamma_N b, b the same sums on absolute values; |J y|^2 sums
// squares of values with at most gamma_(E+1) relative error on the scale of
// their own magnitudes c_i, hence 3 gamma_(E+2) sum c_i^2 (and double's
// rounding of the sum).
TYPED_TEST(ProjectedKernels, BackSubstitutionRowsMatchDouble) {
  ForEachListedShape<TypeParam>(FixedBlockSizesList(), 17, [](auto shape, const KernelProblem&,
                                                               RandomRows<TypeParam>& data) {
    using S = decltype(shape);
    using Scalar = TypeParam;
    const ProjectedBlockLayout& layout = data.layout;
    const std::vector<Scalar> cold = RandomValues<Scalar>(layout.cold_scalars, 23);
    const std::vector<Scalar> yl = RandomValues<Scalar>(S::kE, 29);
    int compared = 0;
    for (int g = 0; g < static_cast<int>(layout.rows.size()); ++g) {
      const int sb = layout.segment_begin[g], k = layout.segment_end[g] - sb, m = layout.rows[g];
      ASSERT_EQ(m, S::kRow * k);
      const ProjectedBlockLayout::Item* items = layout.items.data() + layout.segments[sb].item_begin;
      const Scalar* h = data.h(g);
      const Scalar* c = cold.data() + layout.cold_offset[g];
      const int hs = S::kF + S::kE, cs = S::kE + 1;
      std::vector<Scalar> u(m);
      Scalar t[S::kE];
      StepRowsFixed<S::kRow, S::kE, S::kF>(h, k, items, data.x.data(), c, u.data(), t);
      std::vector<double> t_ref(S::kE, 0.0), t_abs(S::kE, 0.0);
      for (int i = 0; i < m; ++i) {
        double ui = 0.0, ub = 0.0;
        for (int j = 0; j < S::kF; ++j) {
          ui += double(h[i * hs + j]) * double(data.x[items[i / S::kRow].offset + j]);
          ub += std::abs(double(h[i * hs + j]) * double(data.x[items[i / S::kRow].offset + j]));
        }
        const double n = 2 * Gamma<Scalar>(S::kF + 2) * ub;
        EXPECT_LE(std::abs(double(u[i]) - ui), n) << Name<S>() << " group " << g << " row " << i;
        for (int e = 0; e < S::kE; ++e) {
          const double q = double(h[i * hs + S::kF + e]), r = double(c[i * cs + S::kE]);
          t_ref[e] += q * (r - ui);
          t_abs[e] += std::abs(q) * (std::abs(r) + ub);
        }
      }
      for (int e = 0; e < S::kE; ++e) {
        EXPECT_LE(std::abs(double(t[e]) - t_ref[e]), 2 * Gamma<Scalar>(S::kF + 2 + m) * t_abs[e])
            << Name<S>() << " group " << g << " t " << e;
        compared += t_abs[e] > 0;
      }
      double jy_ref = 0.0, magnitude = 0.0;
      for (int i = 0; i < m; ++i) {
        double v = double(u[i]), a = std::abs(double(u[i]));
        for (int e = 0; e < S::kE; ++e) {
          v += double(c[i * cs + e]) * double(yl[e]);
          a += std::abs(double(c[i * cs + e]) * double(yl[e]));
        }
        jy_ref += v * v;
        magnitude += a * a;
      }
      const double jy = SquaredStepRowsFixed<S::kE>(c, m, u.data(), yl.data(), 0.0);
      EXPECT_LE(std::abs(jy - jy_ref), (3 * Gamma<Scalar>(S::kE + 2) + Gamma<double>(m + 1)) * magnitude)
          << Name<S>() << " group " << g;
      // Added to what the chunk had summed before.
      EXPECT_NEAR(SquaredStepRowsFixed<S::kE>(c, m, u.data(), yl.data(), 5.0), 5.0 + jy, Gamma<double>(m + 1) * (5.0 + jy))
          << Name<S>() << " group " << g;
    }
    EXPECT_GT(compared, 0) << Name<S>();
  });
}

// The damping pass's right-hand side from float weights: per observation
// the R products and their sum in Scalar (gamma_R of the sum of the terms'
// absolute values), each observation's sum converted exactly and added in
// double to what the entry held (gamma_(k+1) of double, k observations). The
// reference sums the same Scalar inputs in double, where the products are
// exact. A wrong row, stride, lane or camera offset moves an entry by a whole
// term.
TYPED_TEST(ProjectedKernels, RightHandSideRowsInFloat) {
  ForEachListedShape<TypeParam>(FixedBlockSizesList(), 37, [](auto shape, const KernelProblem&,
                                                               RandomRows<TypeParam>& data) {
    using S = decltype(shape);
    using Scalar = TypeParam;
    constexpr int kStride = S::kF + S::kE;
    const ProjectedBlockLayout& layout = data.layout;
    const int n = data.num_camera_parameters;
    int compared = 0;
    for (int g = 0; g < static_cast<int>(layout.rows.size()); ++g) {
      const int sb = layout.segment_begin[g], k = layout.segment_end[g] - sb, m = layout.rows[g];
      ASSERT_EQ(m, S::kRow * k);
      const ProjectedBlockLayout::Item* items = layout.items.data() + layout.segments[sb].item_begin;
      const Scalar* h = data.h(g);
      const std::vector<Scalar> w = RandomValues<Scalar>(m, 41 + g);
      std::vector<double> acc(n), want(n), magnitude(n);
      for (int i = 0; i < n; ++i) acc[i] = want[i] = magnitude[i] = 0.25 * (i % 5) - 0.5;
      for (double& v : magnitude) v = std::abs(v);
      std::vector<double> terms(n, 0.0);
      for (int o = 0; o < k; ++o) {
        AddObservationTransposeTimesInDouble<S::kRow, S::kF, kStride>(h + S::kRow * kStride * o, w.data() + S::kRow * o,
                                                                       acc.data() + items[o].offset);
        for (int a = 0; a < S::kRow; ++a) {
          for (int j = 0; j < S::kF; ++j) {
            const double term = double(h[(S::kRow * o + a) * kStride + j]) * double(w[S::kRow * o + a]);
            want[items[o].offset + j] += term;
            terms[items[o].offset + j] += std::abs(term);
          }
        }
      }
      for (int i = 0; i < n; ++i) {
        const double bound = Gamma<Scalar>(S::kRow) * terms[i] + Gamma<double>(k + 1) * (magnitude[i] + terms[i]);
        EXPECT_LE(std::abs(acc[i] - want[i]), bound) << Name<S>() << " group " << g << " camera entry " << i;
        compared += terms[i] > 0;
      }
    }
    EXPECT_GT(compared, 0) << Name<S>();
  });
}

// Runs (ProjectedBlockLayout::run_length): on a problem whose landmarks of
// size 3 give groups of a listed shape (BAL's (2, 3, 9), or COLMAP's pose and
// intrinsics (2, 3, 6, 2)) and those of size 4 groups of an unlisted one, in
// group order (runs cut by every size change) and in shape order (runs as
// long as a chunk's groups of one shape), every run is of one listed shape
// and ends where the shape changes, and MultiplyNormalRun adds what
// MultiplyNormalGroup adds group by group, bit for bit, for the whole run and
// for a run cut after its first group.
template <typename Scalar>
void ExpectRunsAddWhatGroupsAdd(int f, int f2) {
  testing::RandomProblemConfig config = UniformConfig(2, 3, f, 43);
  config.intrinsics_size = f2;
  config.num_landmarks = 60;
  config.landmark_sizes = {3, 3, 4};
  KernelProblem problem(config);
  ProjectedBlockLayout& layout = *problem.layout;
  const int n = static_cast<int>(layout.order.size());
  const WorkPartition partition(n, layout.work, 3, 1);
  for (const bool shape_order : {false, true}) {
    if (shape_order) layout.PlaceInShapeOrder(partition);
    RandomRows<Scalar> data(problem, 47);
    int runs = 0, longest = 0, outside = 0;
    for (int p = 0; p < n; ++p) {
      const int g = layout.order[p];
      bool listed = false;
      DispatchedToProduct(layout.uniform_sizes[g], &listed);
      ASSERT_EQ(layout.run_length[p] > 0, listed) << "position " << p;
      EXPECT_EQ(layout.position_observations[p], layout.segment_end[g] - layout.segment_begin[g]);
      if (!listed) {
        ++outside;
        continue;
      }
      const bool next_joins = p + 1 < n && layout.uniform_sizes[layout.order[p + 1]] == layout.uniform_sizes[g];
      EXPECT_EQ(layout.run_length[p], next_joins ? layout.run_length[p + 1] + 1 : 1) << "position " << p;
      if (p > 0 && layout.run_length[p - 1] == layout.run_length[p] + 1) continue;  // not a run's start
      ++runs;
      longest = std::max(longest, layout.run_length[p]);
      for (const int count : {1, layout.run_length[p]}) {
        std::vector<Scalar> by_run(data.num_camera_parameters, Scalar(0)), by_group = by_run;
        MultiplyNormalRun(layout, p, count, data.hot.data(), data.x.data(), by_run.data(), data.u.data());
        for (int q = p; q < p + count; ++q) {
          const int gq = layout.order[q];
          MultiplyNormalGroup(layout, gq, data.h(gq), data.x.data(), by_group.data(), data.u.data());
        }
        ASSERT_EQ(by_run, by_group) << "run at " << p << ", " << count << " groups, shape order " << shape_order;
      }
    }
    EXPECT_GT(runs, 1);
    // Group order: sizes 3, 3, 4 in turn, runs of two; shape order: longer.
    EXPECT_GE(longest, shape_order ? 10 : 2);
    EXPECT_GT(outside, 0);
    for (size_t i = 0; i < layout.items.size(); ++i) ASSERT_EQ(layout.item_offset[i], layout.items[i].offset);
  }
  // Another listed shape inside a run (the layout told so by hand) ends it.
  int p = 0;
  while (p < n && layout.run_length[p] < 4) ++p;
  ASSERT_LT(p, n);
  const int g = layout.order[p + 2];
  ASSERT_EQ(layout.uniform_sizes[g], (BlockSizes{2, 3, f, f2}));
  layout.uniform_sizes[g] = f2 > 0 ? BlockSizes{2, 3, f, 1} : BlockSizes{2, 3, 6};
  layout.FindRuns();
  EXPECT_EQ(layout.run_length[p], 2);
  EXPECT_EQ(layout.run_length[p + 2], 1);
  EXPECT_GT(layout.run_length[p + 3], 0);
}

TYPED_TEST(ProjectedKernels, RunsAddWhatGroupsAdd) { ExpectRunsAddWhatGroupsAdd<TypeParam>(9, 0); }
TYPED_TEST(ProjectedKernels, RunsOfTwoCameraItemsAddWhatGroupsAdd) { ExpectRunsAddWhatGroupsAdd<TypeParam>(6, 2); }

// The entry points run the fixed kernels for groups of listed shapes (the
// same bits), and the dynamic ones for the others.
TYPED_TEST(ProjectedKernels, GroupEntryPointsDispatch) {
  ForEachListedShape<TypeParam>(FixedBlockSizesList(), 15, [](auto shape, const KernelProblem& problem,
                                                               RandomRows<TypeParam>& data) {
    using S = decltype(shape);
    int repeated = 0;
    for (int g = 0; g < static_cast<int>(problem.s.groups.size()); ++g) {
      EXPECT_EQ(data.GroupProduct(g), data.template FixedProduct<S>(g)) << Name<S>();
      for (int e = problem.s.groups[g].camera_begin; e < problem.s.groups[g].camera_end; ++e) {
        // A camera with two residual blocks in the group: the dynamic kernel.
        const bool single = NumItems(data.layout, e) == 1;
        repeated += !single;
        SCOPED_TRACE(Name<S>());
        ExpectSameGram(data.GroupGram(g, e, S::kF),
                       single ? data.template FixedGram<S>(g, e) : data.DynamicGram(g, e, S::kF), data.layout, g,
                       e, S::kF, data.h(g));
      }
    }
    EXPECT_GT(repeated, 0) << Name<S>();
  });
  // Two camera items: the fixed product, the dynamic Gram (no fixed one
  // for those).
  ForEachListedShape<TypeParam>(FixedTwoCameraSizesList(), 16, [](auto shape, const KernelProblem& problem,
                                                                   RandomRows<TypeParam>& data) {
    using S = decltype(shape);
    for (int g = 0; g < static_cast<int>(problem.s.groups.size()); ++g) {
      EXPECT_EQ(data.GroupProduct(g), data.template FixedProduct<S>(g)) << Name<S>();
      for (int e = problem.s.groups[g].camera_begin; e < problem.s.groups[g].camera_end; ++e) {
        const int n = problem.s.parameter_blocks[problem.s.group_cameras[e]].tangent_size;
        ExpectSameGram(data.GroupGram(g, e, n), data.DynamicGram(g, e, n), data.layout, g, e, n, data.h(g));
      }
    }
  });
  // Uniform with unlisted sizes, and not uniform.
  testing::RandomProblemConfig two_cameras = UniformConfig(2, 3, 6, 17);
  two_cameras.intrinsics_size = 5;
  for (const testing::RandomProblemConfig& c : {UniformConfig(2, 3, 8, 18), UniformConfig(3, 3, 9, 19), two_cameras}) {
    KernelProblem problem(c);
    RandomRows<TypeParam> data(problem, 20);
    for (int g = 0; g < static_cast<int>(problem.s.groups.size()); ++g) {
      EXPECT_EQ(data.GroupProduct(g), data.DynamicProduct(g));
      for (int e = problem.s.groups[g].camera_begin; e < problem.s.groups[g].camera_end; ++e) {
        const int n = problem.s.parameter_blocks[problem.s.group_cameras[e]].tangent_size;
        ExpectSameGram(data.GroupGram(g, e, n), data.DynamicGram(g, e, n), data.layout, g, e, n, data.h(g));
      }
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
