// CameraGram (camera_gram.h) on random BA-shaped linear problems: the
// per-camera blocks filled through ComputeWith, from the lower triangles a
// storage would add per landmark block, against the dense camera blocks
// Jc^T Jc of the problem's Jacobian (routing, summation over the blocks,
// symmetrization); the same bits for 1 and 2 threads (block-major sums,
// camera_block_sum.h); Scale as diag(s) G diag(s).
#include "ceres_sqrtba/internal/cameras/camera_gram.h"

#include <Eigen/Core>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "dense_jacobian_writer.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

struct GramProblem {
  testing::RandomProblem problem;
  ProblemStructure s;
  WorkPartition partition;
  std::unique_ptr<testing::DenseJacobianWriter> dense;
};

void Build(const testing::RandomProblemConfig& config, GramProblem* out) {
  out->problem = testing::MakeRandomProblem(config);
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*out->problem.problem, nullptr, &out->s, &error), StructureStatus::kOk) << error;
  // Several chunks, so that two threads split the blocks.
  out->partition = WorkPartition(static_cast<int>(out->s.groups.size()), {}, 8, 1);
  ASSERT_GT(out->partition.num_chunks(), 2);
  ParallelContext context(1);
  Evaluator evaluator(out->s, out->partition, &context);
  out->dense = std::make_unique<testing::DenseJacobianWriter>(out->s);
  const std::vector<double> x = StateFromUser(out->s);
  std::vector<double> gradient(out->s.num_effective_parameters);
  double cost;
  ASSERT_TRUE(evaluator.EvaluateJacobian(x.data(), true, &cost, gradient.data(), out->dense.get()));
}

// Cameras of two sizes (poses and shared intrinsics), a camera seeing a
// landmark twice, a landmark seen once.
std::vector<testing::RandomProblemConfig> Configs() {
  std::vector<testing::RandomProblemConfig> configs;
  testing::RandomProblemConfig c;
  c.num_cameras = 5;
  c.num_landmarks = 30;
  c.intrinsics_size = 3;
  c.seed = 11;
  configs.push_back(c);
  c = testing::RandomProblemConfig();
  c.num_landmarks = 25;
  c.repeat_camera = true;
  c.single_observation = true;
  c.residual_size = 3;
  c.camera_size = 9;
  c.seed = 12;
  configs.push_back(c);
  return configs;
}

// What a storage adds for (group g, camera entry e): the lower triangle of
// the camera's Gram matrix over the group's rows of the dense Jacobian.
// Counts calls whose column is not the camera's column in its group.
struct AddDenseLower {
  const ProblemStructure& s;
  const testing::DenseJacobianWriter& dense;
  std::atomic<int>* wrong_columns;
  void operator()(int g, int e, int column, int n, double* acc) const {
    const Group& group = s.groups[g];
    int expected_column = 0;
    for (int k = group.camera_begin; k < e; ++k) expected_column += s.parameter_blocks[s.group_cameras[k]].tangent_size;
    if (column != expected_column) ++*wrong_columns;
    const ParameterBlockInfo& pb = s.parameter_blocks[s.group_cameras[e]];
    if (pb.tangent_size != n) ++*wrong_columns;
    const Eigen::MatrixXd jc = dense.j.block(dense.group_row(g), pb.tangent_offset, group.num_rows, n);
    const Eigen::MatrixXd gram = jc.transpose() * jc;
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k <= i; ++k) acc[i * n + k] += gram(i, k);
    }
  }
};

std::vector<double> Blocks(const ProblemStructure& s, const CameraGram& gram) {
  std::vector<double> out;
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    const int n = s.parameter_blocks[s.cameras[c]].tangent_size;
    const double* b = gram.block(static_cast<int>(c));
    out.insert(out.end(), b, b + n * n);
  }
  return out;
}

TEST(CameraGram, BlocksAreTheDenseCameraGramMatrices) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    GramProblem p;
    Build(config, &p);
    const ProblemStructure& s = p.s;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << "seed " << config.seed << ", " << threads << " threads");
      ParallelContext context(threads);
      CameraGram gram(s, p.partition);
      std::atomic<int> wrong_columns{0};
      gram.ComputeWith(&context, AddDenseLower{s, *p.dense, &wrong_columns});
      EXPECT_EQ(wrong_columns.load(), 0) << "a callback got the wrong column or size";
      const Eigen::MatrixXd& j = p.dense->j;
      const Eigen::MatrixXd jtj = j.transpose() * j;
      const Eigen::MatrixXd abs_jtj = j.cwiseAbs().transpose() * j.cwiseAbs();
      // Each entry is a sum of products over the Jacobian's rows, computed in
      // another order here: both are within gamma_m |Jc|^T |Jc| of the exact
      // value (Higham, sec. 3.1), m = rows, so they differ by at most twice that.
      const double gamma = (j.rows() + 2) * std::numeric_limits<double>::epsilon();
      for (size_t c = 0; c < s.cameras.size(); ++c) {
        const ParameterBlockInfo& pb = s.parameter_blocks[s.cameras[c]];
        const int n = pb.tangent_size, o = pb.tangent_offset;
        const double* b = gram.block(static_cast<int>(c));
        for (int i = 0; i < n; ++i) {
          for (int k = 0; k < n; ++k) {
            EXPECT_NEAR(b[i * n + k], jtj(o + i, o + k), 2 * gamma * abs_jtj(o + i, o + k))
                << "camera " << c << " entry (" << i << ", " << k << ")";
            // Symmetrized from the lower triangle: the upper one is a copy.
            EXPECT_EQ(b[i * n + k], b[k * n + i]) << "camera " << c;
          }
        }
        // The diagonal is the squared column norms (LM's damping).
        EXPECT_GT(b[0], 0.0);
      }
    }
  }
}

TEST(CameraGram, SameBitsForOneAndTwoThreadsAndRepeatedRuns) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    GramProblem p;
    Build(config, &p);
    std::atomic<int> wrong_columns{0};
    std::vector<double> reference;
    for (int threads : {1, 2}) {
      ParallelContext context(threads);
      CameraGram gram(p.s, p.partition);
      for (int repeat = 0; repeat < 2; ++repeat) {
        // A second ComputeWith replaces the blocks (no accumulation).
        gram.ComputeWith(&context, AddDenseLower{p.s, *p.dense, &wrong_columns});
        const std::vector<double> blocks = Blocks(p.s, gram);
        if (reference.empty()) {
          reference = blocks;
          continue;
        }
        ASSERT_EQ(blocks.size(), reference.size());
        EXPECT_EQ(std::memcmp(blocks.data(), reference.data(), blocks.size() * sizeof(double)), 0)
            << "seed " << config.seed << ", " << threads << " threads, run " << repeat;
      }
    }
    EXPECT_EQ(wrong_columns.load(), 0);
  }
}

TEST(CameraGram, ScaleIsDiagonalScalingOnBothSides) {
  GramProblem p;
  Build(Configs()[0], &p);
  const ProblemStructure& s = p.s;
  ParallelContext context(1);
  CameraGram gram(s, p.partition);
  std::atomic<int> wrong_columns{0};
  gram.ComputeWith(&context, AddDenseLower{s, *p.dense, &wrong_columns});
  const std::vector<double> before = Blocks(s, gram);
  // Powers of two: every product below is exact, so the scaled blocks are
  // compared exactly. The landmark entries must not be read (NaN).
  std::vector<double> scale(s.num_effective_parameters, std::numeric_limits<double>::quiet_NaN());
  for (int i = s.camera_tangent_begin; i < s.num_effective_parameters; ++i) {
    scale[i] = std::ldexp(1.0, (i * 7) % 5 - 2);
  }
  gram.Scale(scale.data());
  size_t k = 0;
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.cameras[c]];
    const int n = pb.tangent_size;
    const double* b = gram.block(static_cast<int>(c));
    for (int i = 0; i < n; ++i) {
      for (int l = 0; l < n; ++l, ++k) {
        const double expected = before[k] * scale[pb.tangent_offset + i] * scale[pb.tangent_offset + l];
        EXPECT_EQ(b[i * n + l], expected) << "camera " << c << " entry (" << i << ", " << l << ")";
      }
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
