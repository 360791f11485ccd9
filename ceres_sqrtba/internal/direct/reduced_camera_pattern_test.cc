// ReducedCameraPattern (reduced_camera_pattern.h) of small scenes built by
// hand: the off-diagonal blocks are exactly the camera pairs that share a
// landmark (or a landmark-free residual block), every diagonal block is
// there, constant cameras are not; the block columns' order, positions and
// FindBlock; the camera offsets; the scalar count, bytes and CSC pattern of
// the upper triangle against a dense mask; and the `keep` filter.
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ceres/ceres.h"
#include "gtest/gtest.h"
#include "sum_cost_function.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Cameras of the given sizes; landmark l (size 3) observed by the cameras
// tracks[l], one residual block per observation; a residual block without a
// landmark on each list of `landmark_free`. The landmarks are group 0 of the
// ordering, so they are the landmarks whatever their degrees.
struct Scene {
  Scene(const std::vector<int>& camera_sizes, const std::vector<std::vector<int>>& tracks,
        const std::vector<std::vector<int>>& landmark_free = {}, const std::vector<int>& constant = {}) {
    for (int size : camera_sizes) cameras.emplace_back(size, 0.5);
    points.assign(tracks.size(), std::vector<double>(3, 1.0));
    for (size_t l = 0; l < tracks.size(); ++l) {
      for (int c : tracks[l]) {
        problem.AddResidualBlock(new testing::SumCostFunction({camera_sizes[c], 3}), nullptr, cameras[c].data(), points[l].data());
      }
    }
    for (const std::vector<int>& list : landmark_free) {
      std::vector<int> sizes;
      std::vector<double*> blocks;
      for (int c : list) {
        sizes.push_back(camera_sizes[c]);
        blocks.push_back(cameras[c].data());
      }
      problem.AddResidualBlock(new testing::SumCostFunction(sizes), nullptr, blocks);
    }
    for (int c : constant) problem.SetParameterBlockConstant(cameras[c].data());
    for (auto& p : points) ordering.AddElementToGroup(p.data(), 0);
    for (auto& c : cameras) ordering.AddElementToGroup(c.data(), 1);
    std::string error;
    EXPECT_EQ(BuildProblemStructure(problem, &ordering, &s, &error), StructureStatus::kOk) << error;
  }
  // The camera_index of user camera i (-1 when constant).
  int Index(int i) const { return s.parameter_blocks[s.index_of.at(cameras[i].data())].camera_index; }
  // The block pairs (row, column), row <= column, of user camera pairs.
  std::set<std::pair<int, int>> Pairs(const std::vector<std::pair<int, int>>& user_pairs) const {
    std::set<std::pair<int, int>> out;
    for (const auto& p : user_pairs) out.insert({std::min(Index(p.first), Index(p.second)),
                                                 std::max(Index(p.first), Index(p.second))});
    return out;
  }

  std::vector<std::vector<double>> cameras, points;
  ceres::Problem problem;
  ceres::ParameterBlockOrdering ordering;
  ProblemStructure s;
};

std::set<std::pair<int, int>> Blocks(const ReducedCameraPattern& pattern) {
  std::set<std::pair<int, int>> blocks;
  for (int c = 0; c < pattern.num_cameras(); ++c) {
    for (int64_t k = pattern.block_begin(c); k < pattern.block_end(c); ++k) {
      blocks.insert({pattern.block_row(k), c});
    }
  }
  return blocks;
}

// Cameras 0..4 (sizes 3, 3, 3, 6, 3) and a constant camera 5: landmark 0
// seen by 0, 1, 2; landmark 1 by 1, 3 and the constant 5; landmark 2 by 4
// alone, landmark 3 by 3 alone; a landmark-free residual block on 2 and 4.
// Sharing pairs: (0,1), (0,2), (1,2), (1,3), (2,4).
Scene MakeScene() {
  return Scene({3, 3, 3, 6, 3, 3}, {{0, 1, 2}, {1, 3, 5}, {4}, {3}}, {{2, 4}}, {5});
}

const std::vector<std::pair<int, int>> kSharing = {{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 4}};
const std::vector<std::pair<int, int>> kDiagonal = {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}};

TEST(ReducedCameraPattern, BlocksAreTheCameraPairsThatShareALandmark) {
  Scene scene = MakeScene();
  ASSERT_EQ(scene.Index(5), -1) << "the constant camera is not a camera of S";
  const ReducedCameraPattern pattern(scene.s);
  ASSERT_EQ(pattern.num_cameras(), 5);
  std::vector<std::pair<int, int>> expected = kSharing;
  expected.insert(expected.end(), kDiagonal.begin(), kDiagonal.end());
  EXPECT_EQ(Blocks(pattern), scene.Pairs(expected));
  EXPECT_EQ(pattern.num_blocks(), 10);
  // Pairs that share nothing are not in the pattern.
  for (const auto& p : std::vector<std::pair<int, int>>{{0, 3}, {0, 4}, {1, 4}, {3, 4}, {2, 3}}) {
    const int a = std::min(scene.Index(p.first), scene.Index(p.second));
    const int b = std::max(scene.Index(p.first), scene.Index(p.second));
    EXPECT_EQ(pattern.FindBlock(a, b), -1) << p.first << ", " << p.second;
  }
}

TEST(ReducedCameraPattern, BlockColumnsPositionsAndOffsets) {
  Scene scene = MakeScene();
  const ReducedCameraPattern pattern(scene.s);
  const std::vector<int> user_sizes = {3, 3, 3, 6, 3};
  std::vector<int> size(5);
  for (int i = 0; i < 5; ++i) size[scene.Index(i)] = user_sizes[i];
  EXPECT_EQ(pattern.num_parameters(), 18);
  EXPECT_EQ(pattern.max_camera_size(), 6);
  int offset = 0;
  for (int c = 0; c < 5; ++c) {
    EXPECT_EQ(pattern.camera_offset(c), offset);
    EXPECT_EQ(pattern.camera_size(c), size[c]);
    offset += size[c];
  }
  for (int c = 0; c < 5; ++c) {
    ASSERT_LT(pattern.block_begin(c), pattern.block_end(c));
    EXPECT_EQ(pattern.block_row(pattern.block_end(c) - 1), c) << "the diagonal block last";
    int position = 0;
    for (int64_t k = pattern.block_begin(c); k < pattern.block_end(c); ++k) {
      if (k > pattern.block_begin(c)) EXPECT_LT(pattern.block_row(k - 1), pattern.block_row(k));
      EXPECT_EQ(pattern.position(k), position);
      EXPECT_EQ(pattern.FindBlock(pattern.block_row(k), c), k);
      position += size[pattern.block_row(k)];
    }
  }
}

// Diagonal blocks: four of size 3 (6 each in the upper triangle) and one of
// size 6 (21): 45. Off-diagonal: (0,1), (0,2), (1,2), (2,4) 9 each, (1,3)
// 3 x 6 = 18: 54. In all 99 nonzeros; bytes (18 + 1) x 8 + 99 x (8 + 8).
TEST(ReducedCameraPattern, ScalarCountAndBytes) {
  Scene scene = MakeScene();
  const ReducedCameraPattern pattern(scene.s);
  EXPECT_EQ(pattern.num_nonzeros(), 99);
  EXPECT_EQ(pattern.ScalarBytes(), 19 * 8 + 99 * 16);
}

// The scalar CSC pattern is that of a dense mask of the upper triangle:
// entry (i, j), i <= j, when the cameras of i and j form a block.
TEST(ReducedCameraPattern, ScalarPatternIsTheUpperTriangleOfTheBlocks) {
  Scene scene = MakeScene();
  const ReducedCameraPattern pattern(scene.s);
  const int n = pattern.num_parameters();
  std::vector<int> camera_of(n);
  for (int c = 0; c < pattern.num_cameras(); ++c) {
    for (int a = 0; a < pattern.camera_size(c); ++a) camera_of[pattern.camera_offset(c) + a] = c;
  }
  const std::set<std::pair<int, int>> blocks = Blocks(pattern);
  std::vector<int64_t> expected_begin = {0}, expected_rows;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i <= j; ++i) {
      if (blocks.count({camera_of[i], camera_of[j]}) > 0) expected_rows.push_back(i);
    }
    expected_begin.push_back(static_cast<int64_t>(expected_rows.size()));
  }
  std::vector<int64_t> col_begin, rows;
  pattern.ScalarPattern(&col_begin, &rows);
  EXPECT_EQ(col_begin, expected_begin);
  EXPECT_EQ(rows, expected_rows);
  EXPECT_EQ(static_cast<int64_t>(rows.size()), pattern.num_nonzeros());
  // Entry (i, a) of block k of column c at col_begin(offset(c) + a) + position(k) + i.
  for (int c = 0; c < pattern.num_cameras(); ++c) {
    for (int64_t k = pattern.block_begin(c); k < pattern.block_end(c); ++k) {
      const int r = pattern.block_row(k);
      for (int a = 0; a < pattern.camera_size(c); ++a) {
        for (int i = 0; i < (r == c ? a + 1 : pattern.camera_size(r)); ++i) {
          EXPECT_EQ(rows[col_begin[pattern.camera_offset(c) + a] + pattern.position(k) + i],
                    pattern.camera_offset(r) + i);
        }
      }
    }
  }
}

TEST(ReducedCameraPattern, KeepSelectsOffDiagonalBlocksOnly) {
  Scene scene = MakeScene();
  const ReducedCameraPattern none(scene.s, [](int, int) { return false; });
  EXPECT_EQ(Blocks(none), scene.Pairs(kDiagonal));
  EXPECT_EQ(none.num_nonzeros(), 45);
  const int a = std::min(scene.Index(1), scene.Index(3)), b = std::max(scene.Index(1), scene.Index(3));
  std::vector<std::pair<int, int>> asked;
  const ReducedCameraPattern one(scene.s, [&](int row, int column) {
    asked.push_back({row, column});
    return row == a && column == b;
  });
  std::vector<std::pair<int, int>> expected = kDiagonal;
  expected.push_back({1, 3});
  EXPECT_EQ(Blocks(one), scene.Pairs(expected));
  EXPECT_EQ(one.num_nonzeros(), 45 + 18);
  // Asked once per sharing pair, never for a diagonal block.
  std::sort(asked.begin(), asked.end());
  const std::set<std::pair<int, int>> sharing = scene.Pairs(kSharing);
  EXPECT_EQ(asked, (std::vector<std::pair<int, int>>(sharing.begin(), sharing.end())));
}

// No landmark seen by two cameras: S is block diagonal.
const std::vector<std::pair<int, int>> kDiagonal3 = {{0, 0}, {1, 1}, {2, 2}};

TEST(ReducedCameraPattern, NothingSharedIsBlockDiagonal) {
  Scene scene({3, 4, 2}, {{0}, {1}, {2}, {1}});
  const ReducedCameraPattern pattern(scene.s);
  EXPECT_EQ(Blocks(pattern), scene.Pairs(kDiagonal3));
  EXPECT_EQ(pattern.num_nonzeros(), 6 + 10 + 3);
  EXPECT_EQ(pattern.num_parameters(), 9);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
