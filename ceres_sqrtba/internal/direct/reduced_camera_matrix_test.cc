// ReducedCameraMatrix (reduced_camera_matrix.h): S formed from the projected
// landmark blocks' marginalized rows (the thin QR's pass, then Accumulate)
// against the dense damped Schur complement H_pp - H_pl H_ll^-1 H_lp,
// H = J^T J + D^2, of small random problems (one and two camera items per
// residual block, mixed landmark sizes), from double and from float blocks;
// the same bits for 1 and 2 threads; a non-finite entry reported.
#include "ceres_sqrtba/internal/direct/reduced_camera_matrix.h"

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"
#include "dense_jacobian_writer.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// Everything S is made from, as the direct solver sets it up.
template <typename Scalar>
struct DirectSetup {
  DirectSetup(ceres::Problem* problem, int threads) : context(threads) {
    std::string error;
    EXPECT_EQ(BuildProblemStructure(*problem, nullptr, &s, &error), StructureStatus::kOk) << error;
    layout = std::make_unique<ProjectedBlockLayout>(s);
    partition = WorkPartition(static_cast<int>(s.groups.size()), layout->work, 4, 1);
    layout->PlaceInShapeOrder(partition);
    pattern = std::make_unique<ReducedCameraPattern>(s);
    blocks = std::make_unique<ProjectedLandmarkBlocks<Scalar>>(s, *layout, partition, &context,
                                                               LandmarkQr::kBatchedInDouble);
    matrix = std::make_unique<ReducedCameraMatrix<Scalar>>(s, *layout, *pattern, partition);
    Evaluator evaluator(s, partition, &context);
    const std::vector<double> x = StateFromUser(s);
    std::vector<double> gradient(s.num_effective_parameters);
    double cost;
    dense = std::make_unique<testing::DenseJacobianWriter>(s);
    EXPECT_TRUE(evaluator.EvaluateJacobian(x.data(), true, &cost, gradient.data(), dense.get()));
    blocks->BeginJacobian();
    EXPECT_TRUE(evaluator.EvaluateJacobian(x.data(), true, &cost, gradient.data(), blocks.get()));
  }
  // S for the diagonal d (tangent layout), dense and symmetric.
  bool Form(const Eigen::VectorXd& d, Eigen::MatrixXd* out) {
    std::vector<double> rhs(s.num_camera_parameters);
    typename ReducedCameraMatrix<Scalar>::RowsVisitor visitor(*blocks, matrix.get());
    blocks->Damp(d.data(), rhs.data(), &visitor);
    const bool ok = matrix->Accumulate(*blocks, d.data() + s.camera_tangent_begin, &context);
    const int n = s.num_camera_parameters;
    *out = Eigen::MatrixXd::Zero(n, n);
    for (int c = 0; c < n; ++c) {
      for (int64_t k = matrix->col_begin()[c]; k < matrix->col_begin()[c + 1]; ++k) {
        const int r = static_cast<int>(matrix->rows()[k]);
        EXPECT_LE(r, c) << "upper triangle only";
        (*out)(r, c) = matrix->values()[k];
        (*out)(c, r) = matrix->values()[k];
      }
    }
    return ok;
  }
  ParallelContext context;
  ProblemStructure s;
  std::unique_ptr<ProjectedBlockLayout> layout;
  WorkPartition partition;
  std::unique_ptr<ReducedCameraPattern> pattern;
  std::unique_ptr<ProjectedLandmarkBlocks<Scalar>> blocks;
  std::unique_ptr<ReducedCameraMatrix<Scalar>> matrix;
  std::unique_ptr<testing::DenseJacobianWriter> dense;
};

Eigen::VectorXd RandomDiagonal(int n, unsigned seed) {
  std::mt19937 rng(seed);
  testing::UniformRealDistribution u(0.1, 2.0);
  Eigen::VectorXd d(n);
  for (int i = 0; i < n; ++i) d[i] = u(rng);
  return d;
}

// The damped Schur complement on the cameras, by the normal equations, and
// the largest condition number of a landmark block of H_ll.
Eigen::MatrixXd DenseSchur(const ProblemStructure& s, const Eigen::MatrixXd& j, const Eigen::VectorXd& d,
                           double* landmark_condition) {
  const int nl = s.camera_tangent_begin, np = s.num_camera_parameters;
  const Eigen::MatrixXd h = j.transpose() * j + Eigen::MatrixXd(d.cwiseAbs2().asDiagonal());
  const Eigen::MatrixXd hll = h.topLeftCorner(nl, nl), hlp = h.topRightCorner(nl, np);
  *landmark_condition = 1;
  for (int l : s.landmarks) {
    const ParameterBlockInfo& pb = s.parameter_blocks[l];
    const Eigen::VectorXd e = hll.block(pb.tangent_offset, pb.tangent_offset, pb.tangent_size, pb.tangent_size)
                                  .selfadjointView<Eigen::Lower>()
                                  .eigenvalues();
    *landmark_condition = std::max(*landmark_condition, e.maxCoeff() / e.minCoeff());
  }
  return h.bottomRightCorner(np, np) - hlp.transpose() * hll.ldlt().solve(hlp);
}

std::vector<testing::RandomProblemConfig> Configs() {
  std::vector<testing::RandomProblemConfig> configs;
  testing::RandomProblemConfig c;
  c.num_cameras = 6;
  c.num_landmarks = 30;
  c.seed = 41;
  configs.push_back(c);  // one 6-d camera per residual block
  c.intrinsics_size = 3;
  c.seed = 42;
  configs.push_back(c);  // pose and shared intrinsics: pairs sharing residual blocks
  c = testing::RandomProblemConfig();
  c.num_landmarks = 25;
  c.landmark_sizes = {1, 2, 3, 4};
  c.repeat_camera = true;
  c.single_observation = true;
  c.camera_size = 9;
  c.seed = 43;
  configs.push_back(c);  // mixed landmark sizes, a camera seeing a landmark twice
  return configs;
}

// S = sum_b B^_b^T B^_b + D_p^2 is the damped Schur complement. The entries
// are sums of products of the Jacobian (a few ulps of |J|^2 each, Q1 from a
// backward-stable QR); the reference loses the landmark blocks' condition
// number (asserted below 1e3): 1e3 eps kappa relative to |S| is ~1e-10.
TEST(ReducedCameraMatrix, EqualsTheDampedSchurComplement) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    auto p = testing::MakeRandomProblem(config);
    DirectSetup<double> setup(p.problem.get(), 1);
    const Eigen::VectorXd d = RandomDiagonal(setup.s.num_effective_parameters, config.seed);
    for (double factor : {1.0, 0.1}) {  // a second radius on the same Jacobian
      const Eigen::VectorXd df = factor * d;
      Eigen::MatrixXd s;
      ASSERT_TRUE(setup.Form(df, &s));
      double kappa;
      const Eigen::MatrixXd reference = DenseSchur(setup.s, setup.dense->j, df, &kappa);
      ASSERT_LT(kappa, 1e3);
      EXPECT_LT((s - reference).norm() / reference.norm(), 1e3 * kEps * kappa)
          << "seed " << config.seed << ", factor " << factor;
    }
  }
}

// From float blocks S is formed in double from the Jacobian as stored: it is
// the Schur complement of the float-rounded Jacobian to double's accuracy
// (the tolerance above), not merely to float's.
TEST(ReducedCameraMatrix, FloatBlocksGiveTheSchurComplementOfTheStoredJacobian) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    auto p = testing::MakeRandomProblem(config);
    DirectSetup<float> setup(p.problem.get(), 1);
    const Eigen::VectorXd d = RandomDiagonal(setup.s.num_effective_parameters, config.seed + 1);
    Eigen::MatrixXd s;
    ASSERT_TRUE(setup.Form(d, &s));
    const Eigen::MatrixXd stored = setup.dense->j.cast<float>().cast<double>();
    double kappa;
    const Eigen::MatrixXd reference = DenseSchur(setup.s, stored, d, &kappa);
    ASSERT_LT(kappa, 1e3);
    EXPECT_LT((s - reference).norm() / reference.norm(), 1e3 * kEps * kappa) << "seed " << config.seed;
  }
}

TEST(ReducedCameraMatrix, SameBitsForOneAndTwoThreads) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    auto p = testing::MakeRandomProblem(config);
    DirectSetup<double> one(p.problem.get(), 1);
    DirectSetup<double> two(p.problem.get(), 2);
    const Eigen::VectorXd d = RandomDiagonal(one.s.num_effective_parameters, config.seed + 2);
    Eigen::MatrixXd s1, s2;
    ASSERT_TRUE(one.Form(d, &s1));
    ASSERT_TRUE(two.Form(d, &s2));
    ASSERT_EQ(s1.size(), s2.size());
    EXPECT_EQ(std::memcmp(s1.data(), s2.data(), sizeof(double) * s1.size()), 0) << "seed " << config.seed;
  }
}

TEST(ReducedCameraMatrix, NonFiniteEntryIsReported) {
  auto p = testing::MakeRandomProblem(Configs()[0]);
  DirectSetup<double> setup(p.problem.get(), 1);
  Eigen::VectorXd d = RandomDiagonal(setup.s.num_effective_parameters, 7);
  Eigen::MatrixXd s;
  EXPECT_TRUE(setup.Form(d, &s));
  d[setup.s.camera_tangent_begin + 2] = std::numeric_limits<double>::infinity();  // a pose damping entry
  EXPECT_FALSE(setup.Form(d, &s));
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
