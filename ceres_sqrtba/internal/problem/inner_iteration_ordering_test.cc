// Ceres' checks of a given inner-iteration ordering: independent groups
// pass, the lowest failing group id is named in Ceres' message, vertices in
// no group are ignored, and the message for a block outside the problem.
#include "ceres_sqrtba/internal/problem/inner_iteration_ordering.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Vertices 0..4; residual blocks {0, 1}, {1, 2, 3}, {3, 4}.
const std::vector<int> kEdgeBegin = {0, 2, 5, 7};
const std::vector<int> kEdgeVertices = {0, 1, 1, 2, 3, 3, 4};

TEST(InnerIterationOrdering, IndependentGroupsPass) {
  // {0, 2, 4} share no residual block; {1, 3} do, but 3 is in no group here.
  const std::vector<int> group_of = {7, 3, 7, -1, 7};
  std::string error;
  EXPECT_TRUE(InnerIterationGroupsAreIndependent(kEdgeBegin, kEdgeVertices, group_of, &error));
  EXPECT_TRUE(error.empty());
}

TEST(InnerIterationOrdering, NamesTheLowestDependentGroup) {
  // Group 2 holds 3 and 4, which share the residual block {3, 4}.
  const std::vector<int> group_of = {9, 5, 9, 2, 2};
  std::string error;
  EXPECT_FALSE(InnerIterationGroupsAreIndependent(kEdgeBegin, kEdgeVertices, group_of, &error));
  EXPECT_EQ(error,
            "The user-provided parameter_blocks_for_inner_iterations does not form an independent set. "
            "Group Id: 2");
  const std::vector<int> two_failing = {4, 4, 1, 1, -1};  // {0, 1} in 4, {2, 3} in 1
  EXPECT_FALSE(InnerIterationGroupsAreIndependent(kEdgeBegin, kEdgeVertices, two_failing, &error));
  EXPECT_NE(error.find("Group Id: 1"), std::string::npos) << error;
}

TEST(InnerIterationOrdering, NoResidualBlocks) {
  std::string error;
  EXPECT_TRUE(InnerIterationGroupsAreIndependent({}, {}, {0, 0}, &error));
}

TEST(InnerIterationOrdering, BlockNotInProblemMessage) {
  double block[1];
  const std::string message = InnerIterationBlockNotInProblem(block);
  EXPECT_EQ(message.find("Solver::Options::inner_iteration_ordering contains a parameter block ("), 0u);
  EXPECT_NE(message.find(") that is not in the problem."), std::string::npos);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
