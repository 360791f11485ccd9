// The structure read from a ceres::Problem: groups, and the residual blocks
// numbered in group order whatever order the user added them in.
#include "ceres_sqrtba/internal/problem/problem_structure.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// r = camera + point (2 residuals), enough to give every block a Jacobian.
class Sum : public ceres::SizedCostFunction<2, 3, 3> {
 public:
  bool Evaluate(double const* const* p, double* r, double** j) const override {
    r[0] = p[0][0] + p[1][0];
    r[1] = p[0][1] + p[1][1];
    if (j != nullptr) {
      for (int b = 0; b < 2; ++b) {
        if (j[b] == nullptr) continue;
        for (int i = 0; i < 6; ++i) j[b][i] = (i == 0 || i == 4) ? 1.0 : 0.0;
      }
    }
    return true;
  }
};

// Observations listed camera by camera, as BAL files list them: each point's
// residual blocks lie apart in the problem's order.
struct CameraMajorProblem {
  static constexpr int kCameras = 4, kPoints = 6;
  CameraMajorProblem() : cameras(kCameras, std::vector<double>(3, 1.0)), points(kPoints, std::vector<double>(3, 2.0)) {
    ceres::Problem::Options options;
    options.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
    problem = std::make_unique<ceres::Problem>(options);
    for (int c = 0; c < kCameras; ++c) {
      for (int p = 0; p < kPoints; ++p) {
        if ((c + p) % 3 == 0) continue;  // not every camera sees every point
        ids.push_back(problem->AddResidualBlock(&cost, nullptr, cameras[c].data(), points[p].data()));
      }
    }
    // A landmark ordering, so that the points are the landmarks.
    ordering = std::make_unique<ceres::ParameterBlockOrdering>();
    for (auto& p : points) ordering->AddElementToGroup(p.data(), 0);
    for (auto& c : cameras) ordering->AddElementToGroup(c.data(), 1);
  }
  Sum cost;
  std::vector<std::vector<double>> cameras, points;
  std::unique_ptr<ceres::Problem> problem;
  std::unique_ptr<ceres::ParameterBlockOrdering> ordering;
  std::vector<ceres::ResidualBlockId> ids;
};

TEST(ProblemStructure, ResidualBlocksAreNumberedInGroupOrder) {
  CameraMajorProblem p;
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*p.problem, p.ordering.get(), &s, &error), StructureStatus::kOk) << error;
  ASSERT_EQ(s.residual_blocks.size(), p.ids.size());
  ASSERT_EQ(s.group_residuals.size(), p.ids.size());
  // The identity: a group's residual blocks are consecutive indices.
  for (size_t k = 0; k < s.group_residuals.size(); ++k) EXPECT_EQ(s.group_residuals[k], static_cast<int>(k));
  // Every block is still the user's, with the user's parameter blocks, and
  // sits in the group of its landmark; within a group in the problem's order.
  std::map<ceres::ResidualBlockId, int> seen;
  for (const Group& g : s.groups) {
    ASSERT_GE(g.landmark, 0);
    int previous = -1;
    for (int k = g.residual_begin; k < g.residual_end; ++k) {
      const ResidualBlockInfo& rb = s.residual_blocks[s.group_residuals[k]];
      std::vector<double*> blocks;
      p.problem->GetParameterBlocksForResidualBlock(rb.id, &blocks);
      ASSERT_EQ(rb.num_parameter_blocks, static_cast<int>(blocks.size()));
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        EXPECT_EQ(s.parameter_blocks[s.residual_parameters[rb.parameter_begin + i]].user_values, blocks[i]);
      }
      EXPECT_EQ(s.parameter_blocks[g.landmark].user_values, blocks[1]);
      const int position = static_cast<int>(std::find(p.ids.begin(), p.ids.end(), rb.id) - p.ids.begin());
      EXPECT_GT(position, previous);
      previous = position;
      ++seen[rb.id];
    }
  }
  EXPECT_EQ(seen.size(), p.ids.size());
  // Camera-major input: group order differs from the problem's order, so
  // the renumbering did something.
  bool reordered = false;
  for (size_t k = 0; k < p.ids.size(); ++k) reordered |= s.residual_blocks[k].id != p.ids[k];
  EXPECT_TRUE(reordered);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
