// CameraFactorizationPlan (camera_factorization_plan.h) on camera graphs
// whose Cholesky factors are known by hand:
// - DenseFlops(n) = n (n + 1) (2n + 1) / 6;
// - independent cameras (block diagonal S): the sparse plan costs the sum of
//   the cameras' own dense factorizations, so AUTOMATIC takes the dense one
//   for 2 cameras of size 3 (91 <= 4 x 28 flops) and the sparse one for 3
//   (285 > 4 x 42);
// - every camera sharing one landmark (dense S): the sparse plan costs what
//   the dense one does, one supernode, and the dense one is taken;
// - a chain of cameras (block tridiagonal S, which AMD orders without fill):
//   flops the same for every fill-free order, sparse taken;
// - DENSE_ / SPARSE_FACTORIZATION force the kind, the memory figures differ
//   by the factorizations' own, and MakeCholesky builds the kind planned;
// - a plan of a subset pattern (the preconditioner's constructor).
//
// Flop counts are sums of squares of small integers: exact in double.
#include "ceres_sqrtba/internal/direct/camera_factorization_plan.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/direct/dense_cholesky.h"
#include "gtest/gtest.h"
#include "sum_cost_function.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// num_cameras cameras of size camera_size; landmark l (size 3) observed by
// the cameras tracks[l]; landmarks are group 0 of the ordering.
struct Scene {
  Scene(int num_cameras, int camera_size, const std::vector<std::vector<int>>& tracks)
      : cameras(num_cameras, std::vector<double>(camera_size, 0.5)), points(tracks.size(), {1.0, 1.0, 1.0}) {
    for (size_t l = 0; l < tracks.size(); ++l) {
      for (int c : tracks[l]) {
        problem.AddResidualBlock(new testing::SumCostFunction({camera_size, 3}), nullptr, cameras[c].data(), points[l].data());
      }
    }
    for (auto& p : points) ordering.AddElementToGroup(p.data(), 0);
    for (auto& c : cameras) ordering.AddElementToGroup(c.data(), 1);
    std::string error;
    EXPECT_EQ(BuildProblemStructure(problem, &ordering, &s, &error), StructureStatus::kOk) << error;
  }
  std::vector<std::vector<double>> cameras, points;
  ceres::Problem problem;
  ceres::ParameterBlockOrdering ordering;
  ProblemStructure s;
};

std::vector<std::vector<int>> Independent(int num_cameras) {
  std::vector<std::vector<int>> tracks;
  for (int c = 0; c < num_cameras; ++c) tracks.push_back({c});
  return tracks;
}

std::vector<std::vector<int>> AllShare(int num_cameras) {
  std::vector<int> all(num_cameras);
  for (int c = 0; c < num_cameras; ++c) all[c] = c;
  return {all};
}

std::vector<std::vector<int>> Chain(int num_cameras) {
  std::vector<std::vector<int>> tracks;
  for (int c = 0; c + 1 < num_cameras; ++c) tracks.push_back({c, c + 1});
  return tracks;
}

void ExpectPermutation(const std::vector<int>& order, int n) {
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(n);
  for (int i = 0; i < n; ++i) identity[i] = i;
  EXPECT_EQ(sorted, identity);
}

TEST(CameraFactorizationPlan, DenseFlopsAreTheSumOfSquaredColumnCounts) {
  EXPECT_EQ(CameraFactorizationPlan::DenseFlops(0), 0.0);
  EXPECT_EQ(CameraFactorizationPlan::DenseFlops(1), 1.0);
  EXPECT_EQ(CameraFactorizationPlan::DenseFlops(3), 1.0 + 4.0 + 9.0);
  EXPECT_EQ(CameraFactorizationPlan::DenseFlops(30), 9455.0);
  EXPECT_EQ(CameraFactorizationPlan::DenseFlops(441), 28686021.0);  // ladybug-49's S
}

// Block diagonal: the sparse factorization is one 3 x 3 LLT per camera,
// 1 + 4 + 9 = 14 flops and 9 values each, no update matrix.
TEST(CameraFactorizationPlan, IndependentCamerasTwoDenseThreeSparse) {
  struct Case {
    int num_cameras;
    double dense_flops;
    bool dense;
  };
  for (const Case c : {Case{2, 91.0, true}, Case{3, 285.0, false}}) {
    Scene scene(c.num_cameras, 3, Independent(c.num_cameras));
    const CameraFactorizationPlan plan(scene.s, AUTOMATIC_FACTORIZATION);
    EXPECT_TRUE(plan.error().empty()) << plan.error();
    EXPECT_EQ(plan.pattern().num_parameters(), 3 * c.num_cameras);
    EXPECT_EQ(CameraFactorizationPlan::DenseFlops(3 * c.num_cameras), c.dense_flops);
    EXPECT_EQ(plan.sparse().flops, 14.0 * c.num_cameras);
    EXPECT_EQ(plan.sparse().factor_size, 9 * c.num_cameras);
    EXPECT_EQ(plan.sparse().update_size, 0);
    ExpectPermutation(plan.sparse().camera_order, c.num_cameras);
    EXPECT_EQ(plan.dense(), c.dense) << c.num_cameras << " cameras";
  }
}

// Dense S of 4 cameras of size 3: one supernode of 12 columns, the flops
// of a dense 12 x 12 LLT (12 x 13 x 25 / 6 = 650).
TEST(CameraFactorizationPlan, DenseCameraGraphIsFactoredDensely) {
  Scene scene(4, 3, AllShare(4));
  const CameraFactorizationPlan plan(scene.s, AUTOMATIC_FACTORIZATION);
  EXPECT_EQ(plan.sparse().flops, 650.0);
  EXPECT_EQ(plan.sparse().flops, CameraFactorizationPlan::DenseFlops(12));
  EXPECT_EQ(plan.sparse().factor_size, 12 * 12);
  EXPECT_EQ(plan.sparse().update_size, 0);
  EXPECT_TRUE(plan.dense());
}

// A chain of 10 cameras of size 3: S is block tridiagonal, a tree, which a
// minimum degree ordering eliminates leaf by leaf without fill. Then every
// camera but the last eliminated has one neighbour left: its columns have
// 3 + 3, 2 + 3, 1 + 3 rows (36 + 25 + 16 = 77 flops), the last 14:
// 9 x 77 + 14 = 707 flops, against a dense 30 x 30 LLT's 9455 > 4 x 707.
// L's supernodes: one per camera, 3 x 6 values each, the root's 3 x 3
// (171) when the chain was eliminated from both ends, or with the last two
// cameras merged into a 6 x 6 supernode (180) when from one end.
TEST(CameraFactorizationPlan, ChainIsFactoredSparselyWithoutFill) {
  Scene scene(10, 3, Chain(10));
  const CameraFactorizationPlan plan(scene.s, AUTOMATIC_FACTORIZATION);
  EXPECT_TRUE(plan.error().empty()) << plan.error();
  EXPECT_EQ(plan.sparse().flops, 707.0);
  const int64_t factor_size = plan.sparse().factor_size;
  EXPECT_TRUE(factor_size == 171 || factor_size == 180) << factor_size;
  EXPECT_EQ(plan.sparse().update_size, 9);  // one 3 x 3 update per camera
  ExpectPermutation(plan.sparse().camera_order, 10);
  EXPECT_FALSE(plan.dense());
}

TEST(CameraFactorizationPlan, ForcedKindAndWhatItCosts) {
  Scene scene(10, 3, Chain(10));
  const CameraFactorizationPlan dense(scene.s, DENSE_FACTORIZATION);
  const CameraFactorizationPlan sparse(scene.s, SPARSE_FACTORIZATION);
  EXPECT_TRUE(dense.dense());
  EXPECT_TRUE(dense.sparse().camera_order.empty()) << "no sparse plan is made for a dense factorization";
  EXPECT_EQ(dense.sparse().flops, 0.0);
  EXPECT_FALSE(sparse.dense());
  EXPECT_TRUE(sparse.error().empty()) << sparse.error();
  EXPECT_EQ(sparse.sparse().flops, 707.0);
  // AUTOMATIC on a dense graph, forced sparse: still sparse.
  Scene all(4, 3, AllShare(4));
  EXPECT_FALSE(CameraFactorizationPlan(all.s, SPARSE_FACTORIZATION).dense());

  // The memory figures: the same reduced camera matrix, plus n^2 doubles
  // (dense) or the sparse plan's estimate.
  const WorkPartition partition(static_cast<int>(scene.s.groups.size()), {}, 1, 1);
  const ReducedCameraPattern& pattern = dense.pattern();
  EXPECT_EQ(DenseCameraCholesky::RequiredBytes(pattern), 30 * 30 * 8);
  EXPECT_EQ(dense.RequiredBytes(scene.s, partition) - sparse.RequiredBytes(scene.s, partition),
            30 * 30 * 8 - sparse.sparse().RequiredBytes(pattern));
  EXPECT_GT(sparse.sparse().RequiredBytes(pattern), sparse.sparse().factor_size * 8);
}

// MakeCholesky builds the planned kind, and both factor and solve S = I.
TEST(CameraFactorizationPlan, MakeCholeskyBuildsThePlannedKind) {
  Scene scene(5, 3, Chain(5));
  std::vector<int64_t> col_begin, rows;
  for (const auto kind : {DENSE_FACTORIZATION, SPARSE_FACTORIZATION}) {
    const CameraFactorizationPlan plan(scene.s, kind);
    plan.pattern().ScalarPattern(&col_begin, &rows);
    const std::unique_ptr<CameraCholesky> cholesky = plan.MakeCholesky(col_begin.data(), rows.data());
    ASSERT_NE(cholesky, nullptr);
    EXPECT_EQ(dynamic_cast<DenseCameraCholesky*>(cholesky.get()) != nullptr, kind == DENSE_FACTORIZATION);
    EXPECT_EQ(dynamic_cast<SparseCameraCholesky*>(cholesky.get()) != nullptr, kind == SPARSE_FACTORIZATION);
    const int n = plan.pattern().num_parameters();
    std::vector<double> identity(rows.size(), 0.0);
    for (int j = 0; j < n; ++j) identity[col_begin[j + 1] - 1] = 1.0;  // the diagonal, last in its column
    ASSERT_EQ(cholesky->Factorize(identity.data()).termination, LinearSolverTermination::kSuccess);
    std::vector<double> b(n), x(n);
    for (int i = 0; i < n; ++i) b[i] = i - 3.0;
    ASSERT_EQ(cholesky->Solve(b.data(), x.data()).termination, LinearSolverTermination::kSuccess);
    EXPECT_EQ(x, b);  // exact: L = I
  }
}

// A plan of the diagonal blocks only (a preconditioner's subset of a dense
// S): the sparse plan is that of independent cameras, and sparse is taken.
TEST(CameraFactorizationPlan, PlanOfASubsetPattern) {
  Scene scene(4, 3, AllShare(4));
  const CameraFactorizationPlan plan(ReducedCameraPattern(scene.s, [](int, int) { return false; }),
                                     AUTOMATIC_FACTORIZATION);
  EXPECT_EQ(plan.pattern().num_blocks(), 4);
  EXPECT_EQ(plan.sparse().flops, 4 * 14.0);
  EXPECT_FALSE(plan.dense());  // 650 > 4 x 56
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
