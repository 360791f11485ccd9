// The camera clusters of the visibility-based preconditioners on scenes whose
// clusters and cluster forest are known by construction.
#include "ceres_sqrtba/internal/cameras/visibility_clustering.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Landmarks [begin, begin + n).
std::vector<int> Range(int begin, int n) {
  std::vector<int> r;
  for (int i = 0; i < n; ++i) r.push_back(begin + i);
  return r;
}

std::vector<int> Union(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

// Groups of `per_group` cameras; the cameras of a group all see the same 20
// landmarks of their own, plus `shared[g]`: so within a group the overlap
// weight is 1, across groups at most a few shared landmarks over 20+.
std::vector<std::vector<int>> GroupedScene(int per_group, const std::vector<std::vector<int>>& shared) {
  std::vector<std::vector<int>> visibility;
  for (size_t g = 0; g < shared.size(); ++g) {
    const std::vector<int> seen = Union(Range(1000 + 20 * static_cast<int>(g), 20), shared[g]);
    for (int k = 0; k < per_group; ++k) visibility.push_back(seen);
  }
  return visibility;
}

void ExpectGroupsAreClusters(const CameraClusters& c, int groups, int per_group) {
  ASSERT_EQ(c.num_clusters, groups);
  for (int g = 0; g < groups; ++g) {
    for (int k = 0; k < per_group; ++k) {
      EXPECT_EQ(c.cluster[g * per_group + k], c.cluster[g * per_group]) << "group " << g;
      if (g > 0) EXPECT_NE(c.cluster[g * per_group], c.cluster[(g - 1) * per_group]);
    }
  }
}

TEST(VisibilityClustering, SingleLinkageJoinsCamerasThatSeeAlmostTheSame) {
  const auto visibility = GroupedScene(3, {Range(0, 2), Range(0, 2), {}});
  const CameraClusters c = ClusterCameras(visibility, ceres::SINGLE_LINKAGE, ceres::CLUSTER_JACOBI);
  ExpectGroupsAreClusters(c, 3, 3);
  // Weight 0.9 joins, just below does not: 9 of 10 landmarks shared.
  std::vector<std::vector<int>> two = {Range(0, 10), Union(Range(0, 9), {50})};
  EXPECT_EQ(ClusterCameras(two, ceres::SINGLE_LINKAGE, ceres::CLUSTER_JACOBI).num_clusters, 1);
  two = {Range(0, 10), Union(Range(0, 8), {50, 51})};
  EXPECT_EQ(ClusterCameras(two, ceres::SINGLE_LINKAGE, ceres::CLUSTER_JACOBI).num_clusters, 2);
}

TEST(VisibilityClustering, CanonicalViewsFindsOneCentrePerGroup) {
  const auto visibility = GroupedScene(4, {Range(0, 1), Range(0, 1), {}, {}});
  const CameraClusters c = ClusterCameras(visibility, ceres::CANONICAL_VIEWS, ceres::CLUSTER_JACOBI);
  ExpectGroupsAreClusters(c, 4, 4);
  // CLUSTER_JACOBI keeps the blocks within clusters only.
  EXPECT_TRUE(c.Keeps(0, 3));
  EXPECT_FALSE(c.Keeps(0, 4));
}

TEST(VisibilityClustering, CentresThatAddNothingFormNoCluster) {
  // Every camera sees the same landmarks. Canonical views takes at least
  // three centres, but the second and third are no more similar to anyone
  // than the first: every camera stays with the first, one cluster.
  const std::vector<std::vector<int>> visibility(6, Range(0, 10));
  const CameraClusters c = ClusterCameras(visibility, ceres::CANONICAL_VIEWS, ceres::CLUSTER_JACOBI);
  EXPECT_EQ(c.num_clusters, 1);
  EXPECT_EQ(c.cluster, std::vector<int>(6, 0));
}

TEST(VisibilityClustering, TridiagonalKeepsADegreeTwoMaximumSpanningForest) {
  // Clusters X, A, B, C, D; X shares 5 landmarks with A, 4 with B, 3 with C;
  // C shares 2 with D; A and B share 1. Kruskal by decreasing weight: X-A,
  // X-B (X now has two neighbours), X-C skipped (degree), C-D, A-B skipped
  // (cycle X-A-B).
  const std::vector<int> xa = Range(0, 5), xb = Range(10, 4), xc = Range(20, 3), cd = Range(30, 2), ab = {40};
  const auto visibility = GroupedScene(
      2, {Union(Union(xa, xb), xc), Union(xa, ab), Union(xb, ab), Union(xc, cd), cd});
  const CameraClusters c = ClusterCameras(visibility, ceres::SINGLE_LINKAGE, ceres::CLUSTER_TRIDIAGONAL);
  ExpectGroupsAreClusters(c, 5, 2);
  const int x = 0, a = 2, b = 4, cc = 6, d = 8;  // a camera of each
  EXPECT_TRUE(c.Keeps(x, a));
  EXPECT_TRUE(c.Keeps(a, x));
  EXPECT_TRUE(c.Keeps(x, b));
  EXPECT_FALSE(c.Keeps(x, cc));
  EXPECT_TRUE(c.Keeps(cc, d));
  EXPECT_FALSE(c.Keeps(a, b));
  EXPECT_TRUE(c.Keeps(x, x + 1));
  EXPECT_TRUE(c.Joins(x, a));
  EXPECT_FALSE(c.Joins(x, x + 1));
  // The same clusters with CLUSTER_JACOBI keep no block across clusters.
  const CameraClusters j = ClusterCameras(visibility, ceres::SINGLE_LINKAGE, ceres::CLUSTER_JACOBI);
  EXPECT_FALSE(j.Keeps(x, a));
  EXPECT_FALSE(j.Keeps(cc, d));
}

TEST(VisibilityClustering, CamerasThatSeeNoLandmark) {
  std::vector<std::vector<int>> visibility = {Range(0, 5), {}, Range(0, 5), {}};
  for (auto type : {ceres::CANONICAL_VIEWS, ceres::SINGLE_LINKAGE}) {
    const CameraClusters c = ClusterCameras(visibility, type, ceres::CLUSTER_TRIDIAGONAL);
    ASSERT_EQ(c.cluster.size(), 4u);
    for (int k : c.cluster) {
      EXPECT_GE(k, 0);
      EXPECT_LT(k, c.num_clusters);
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
