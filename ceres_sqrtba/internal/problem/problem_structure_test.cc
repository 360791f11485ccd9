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

// r = camera[0] (1 residual): a prior on a camera, a residual block without
// a landmark.
class Prior : public ceres::SizedCostFunction<1, 3> {
 public:
  bool Evaluate(double const* const* p, double* r, double** j) const override {
    r[0] = p[0][0];
    if (j != nullptr && j[0] != nullptr) {
      j[0][0] = 1.0;
      j[0][1] = j[0][2] = 0.0;
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

// Residual blocks of two shapes and landmark-free priors, in a scrambled
// order (the renumbering is a permutation with cycles of many lengths), the
// landmarks chosen by the solver (no ordering): every residual block keeps
// its cost function, loss function, size and parameter blocks, a landmark's
// blocks are consecutive in the problem's order and the priors come last.
TEST(ProblemStructure, ScrambledResidualBlocksWithPriorsKeepTheirContents) {
  constexpr int kCameras = 5, kPoints = 40;
  std::vector<std::vector<double>> cameras(kCameras, std::vector<double>(3, 1.0));
  std::vector<std::vector<double>> points(kPoints, std::vector<double>(3, 2.0));
  Sum sum;
  Prior prior;
  ceres::HuberLoss huber(1.0);
  ceres::Problem::Options options;
  options.cost_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  options.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  ceres::Problem problem(options);
  struct Added {
    ceres::ResidualBlockId id;
    const ceres::CostFunction* cost;
    const ceres::LossFunction* loss;
    std::vector<double*> blocks;
  };
  std::vector<Added> added;
  // A fixed pseudo-random order of (camera, point) pairs and priors.
  std::vector<int> order;
  for (int i = 0; i < kCameras * kPoints + kCameras; ++i) order.push_back(i);
  for (size_t i = order.size() - 1; i > 0; --i) std::swap(order[i], order[(i * 7919 + 13) % (i + 1)]);
  for (int o : order) {
    if (o >= kCameras * kPoints) {
      double* c = cameras[o - kCameras * kPoints].data();
      added.push_back({problem.AddResidualBlock(&prior, nullptr, c), &prior, nullptr, {c}});
      continue;
    }
    const int c = o / kPoints, p = o % kPoints;
    if ((c * 3 + p) % 4 == 0) continue;  // not every camera sees every point
    const ceres::LossFunction* loss = o % 3 == 0 ? &huber : nullptr;
    added.push_back({problem.AddResidualBlock(&sum, const_cast<ceres::LossFunction*>(loss), cameras[c].data(),
                                              points[p].data()),
                     &sum, loss, {cameras[c].data(), points[p].data()}});
  }
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  ASSERT_EQ(s.residual_blocks.size(), added.size());
  std::map<ceres::ResidualBlockId, int> position;
  for (size_t i = 0; i < added.size(); ++i) position[added[i].id] = static_cast<int>(i);
  std::map<ceres::ResidualBlockId, int> seen;
  bool in_priors = false;
  for (const Group& g : s.groups) {
    int previous = -1;
    in_priors |= g.landmark < 0;
    EXPECT_EQ(g.landmark < 0, in_priors) << "the landmark-free blocks come after every landmark's";
    for (int k = g.residual_begin; k < g.residual_end; ++k) {
      ASSERT_EQ(s.group_residuals[k], k);
      const ResidualBlockInfo& rb = s.residual_blocks[k];
      ASSERT_EQ(position.count(rb.id), 1u);
      const Added& a = added[position[rb.id]];
      EXPECT_EQ(rb.cost_function, a.cost);
      EXPECT_EQ(rb.loss_function, a.loss);
      EXPECT_EQ(rb.num_residuals, a.cost->num_residuals());
      ASSERT_EQ(rb.num_parameter_blocks, static_cast<int>(a.blocks.size()));
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        EXPECT_EQ(s.parameter_blocks[s.residual_parameters[rb.parameter_begin + i]].user_values, a.blocks[i]);
      }
      if (g.landmark >= 0) {
        EXPECT_EQ(s.parameter_blocks[g.landmark].user_values, a.blocks[1]);
        EXPECT_GT(position[rb.id], previous);
        previous = position[rb.id];
      } else {
        EXPECT_EQ(g.residual_end - g.residual_begin, 1);
      }
      ++seen[rb.id];
    }
  }
  EXPECT_EQ(seen.size(), added.size());
  for (const auto& entry : seen) EXPECT_EQ(entry.second, 1);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
