// The Cholesky factorizations of the reduced camera matrix
// (camera_cholesky.h), on the block patterns of random BA-shaped problems
// with diagonally dominant values:
// - dense and sparse solve S x = b as a dense LDLT does (1e-12), again after
//   new values on the same pattern (no new analysis);
// - an indefinite S is a failed step (kFailure), then a good one factors;
// - the planned size of CHOLMOD's factor bounds the one it allocates;
// - CHOLMOD running out of memory at any allocation (analysis, numeric
//   factorization, solve) is a fatal error with CHOLMOD's message, never an
//   abort, and the factorization recovers when memory is back;
// - the reduced camera pattern's blocks are the camera pairs of the groups.
#include <Eigen/Dense>
#include <memory>
#include <random>
#include <set>
#include <string>

#include "ceres_sqrtba/internal/direct/camera_factorization_plan.h"
#include "ceres_sqrtba/internal/direct/dense_cholesky.h"
#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"
#include "gtest/gtest.h"
#include "limited_suitesparse_memory.h"
#include "linear_solver_fixture.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// A problem's structure, its reduced camera pattern and scalar CSC arrays,
// and values: off-diagonal entries in [-1, 1], diagonal n + 1 (so S is
// positive definite).
struct PatternCase {
  explicit PatternCase(const testing::RandomProblemConfig& config) : p(testing::MakeRandomProblem(config)) {
    std::string error;
    EXPECT_EQ(BuildProblemStructure(*p.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
    pattern = std::make_unique<ReducedCameraPattern>(s);
    pattern->ScalarPattern(&col_begin, &rows);
    const int n = pattern->num_parameters();
    std::mt19937 rng(config.seed);
    ::ceres_sqrtba::testing::UniformRealDistribution u(-1.0, 1.0);
    values.resize(rows.size());
    dense = Eigen::MatrixXd::Zero(n, n);
    for (int j = 0; j < n; ++j) {
      for (int64_t k = col_begin[j]; k < col_begin[j + 1]; ++k) {
        values[k] = rows[k] == j ? n + 1.0 : u(rng);
        dense(rows[k], j) = dense(j, rows[k]) = values[k];
      }
    }
  }
  testing::RandomProblem p;
  ProblemStructure s;
  std::unique_ptr<ReducedCameraPattern> pattern;
  std::vector<int64_t> col_begin, rows;
  std::vector<double> values;
  Eigen::MatrixXd dense;
};

std::vector<testing::RandomProblemConfig> Configs() {
  std::vector<testing::RandomProblemConfig> configs = testing::LinearAlgebraConfigs();
  testing::RandomProblemConfig sparse;  // many cameras, short tracks: a sparse S
  sparse.num_cameras = 60;
  sparse.num_landmarks = 80;
  sparse.camera_size = 9;
  sparse.seed = 11;
  configs.push_back(sparse);
  return configs;
}

void ExpectSolves(CameraCholesky* cholesky, const PatternCase& c, const std::string& what) {
  const int n = c.pattern->num_parameters();
  std::vector<double> values = c.values;
  Eigen::MatrixXd dense = c.dense;
  for (int round = 0; round < 2; ++round) {
    const LinearSolverSummary f = cholesky->Factorize(values.data());
    ASSERT_EQ(f.termination, LinearSolverTermination::kSuccess) << what << ": " << f.message;
    const Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(n, -1.0, 2.0);
    Eigen::VectorXd x(n);
    ASSERT_EQ(cholesky->Solve(b.data(), x.data()).termination, LinearSolverTermination::kSuccess) << what;
    const Eigen::VectorXd expected = dense.ldlt().solve(b);
    EXPECT_LT((x - expected).norm() / expected.norm(), 1e-12) << what << ", round " << round;
    // New values on the same pattern, as for the next radius.
    for (int j = 0; j < n; ++j) {
      for (int64_t k = c.col_begin[j]; k < c.col_begin[j + 1]; ++k) {
        if (c.rows[k] == j) {
          values[k] *= 2.0;
          dense(j, j) = values[k];
        }
      }
    }
  }
}

TEST(CameraCholesky, DenseAndSparseSolve) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    PatternCase c(config);
    DenseCameraCholesky dense(*c.pattern, c.col_begin.data(), c.rows.data());
    ExpectSolves(&dense, c, "dense, seed " + std::to_string(config.seed));
    const SparseCholeskyPlan plan = PlanSparseCholesky(*c.pattern);
    ASSERT_TRUE(plan.error.empty()) << plan.error;
    SparseCameraCholesky sparse(*c.pattern, plan, c.col_begin.data(), c.rows.data());
    ExpectSolves(&sparse, c, "sparse, seed " + std::to_string(config.seed));
  }
}

TEST(CameraCholesky, IndefiniteIsAFailedStep) {
  PatternCase c(Configs().back());
  std::vector<double> indefinite = c.values;
  indefinite[c.col_begin[5 + 1] - 1] = -1.0;  // S(5, 5) < 0
  const SparseCholeskyPlan plan = PlanSparseCholesky(*c.pattern);
  DenseCameraCholesky dense(*c.pattern, c.col_begin.data(), c.rows.data());
  SparseCameraCholesky sparse(*c.pattern, plan, c.col_begin.data(), c.rows.data());
  for (CameraCholesky* cholesky : {static_cast<CameraCholesky*>(&dense), static_cast<CameraCholesky*>(&sparse)}) {
    const LinearSolverSummary failed = cholesky->Factorize(indefinite.data());
    EXPECT_EQ(failed.termination, LinearSolverTermination::kFailure) << cholesky->Statistics();
    EXPECT_NE(failed.message.find("not positive definite"), std::string::npos) << failed.message;
    EXPECT_EQ(cholesky->Factorize(c.values.data()).termination, LinearSolverTermination::kSuccess);
  }
}

TEST(CameraCholesky, PlannedFactorSizeBoundsCholmods) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    PatternCase c(config);
    const SparseCholeskyPlan plan = PlanSparseCholesky(*c.pattern);
    SparseCameraCholesky sparse(*c.pattern, plan, c.col_begin.data(), c.rows.data());
    EXPECT_EQ(sparse.factor_size(), -1);
    ASSERT_EQ(sparse.Factorize(c.values.data()).termination, LinearSolverTermination::kSuccess);
    EXPECT_LE(sparse.factor_size(), plan.factor_size * 5 / 4) << "seed " << config.seed;
    EXPECT_GE(sparse.factor_size(), plan.factor_size) << "seed " << config.seed;
    EXPECT_GE(plan.RequiredBytes(*c.pattern), sparse.factor_size() * static_cast<int64_t>(sizeof(double)));
  }
}

TEST(CameraCholesky, CholmodOutOfMemoryIsAFatalErrorNotAnAbort) {
  PatternCase c(Configs().back());
  const SparseCholeskyPlan plan = PlanSparseCholesky(*c.pattern);
  const int n = c.pattern->num_parameters();
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(n);
  const Eigen::VectorXd expected = c.dense.ldlt().solve(b);
  std::set<std::string> failed_steps;
  bool solved = false;
  for (int allowed = 0; allowed < 200 && !solved; ++allowed) {
    SparseCameraCholesky sparse(*c.pattern, plan, c.col_begin.data(), c.rows.data());
    Eigen::VectorXd x(n);
    LinearSolverSummary summary;
    {
      testing::LimitedSuiteSparseMemory limit(allowed);
      summary = sparse.Factorize(c.values.data());
      if (summary.termination == LinearSolverTermination::kSuccess) summary = sparse.Solve(b.data(), x.data());
    }
    if (summary.termination == LinearSolverTermination::kSuccess) {
      solved = true;
      EXPECT_LT((x - expected).norm() / expected.norm(), 1e-12);
      break;
    }
    ASSERT_EQ(summary.termination, LinearSolverTermination::kFatalError) << "allowed " << allowed;
    EXPECT_NE(summary.message.find("out of memory"), std::string::npos) << summary.message;
    failed_steps.insert(summary.message.substr(0, summary.message.find(" failed")));
    // With memory back, the same object recovers.
    ASSERT_EQ(sparse.Factorize(c.values.data()).termination, LinearSolverTermination::kSuccess);
    ASSERT_EQ(sparse.Solve(b.data(), x.data()).termination, LinearSolverTermination::kSuccess);
    EXPECT_LT((x - expected).norm() / expected.norm(), 1e-12);
  }
  EXPECT_TRUE(solved);
  EXPECT_EQ(failed_steps, (std::set<std::string>{"CHOLMOD symbolic analysis", "CHOLMOD numeric factorization",
                                                 "CHOLMOD solve"}));
}

// AUTOMATIC_FACTORIZATION: dense when every camera pair shares landmarks
// (a dense S), sparse for many cameras with short tracks.
TEST(CameraFactorizationPlan, AutomaticChoosesByFlops) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    PatternCase c(config);
    const CameraFactorizationPlan plan(c.s, AUTOMATIC_FACTORIZATION);
    const int64_t n = c.pattern->num_parameters();
    const bool dense_s = c.pattern->num_nonzeros() == n * (n + 1) / 2;
    EXPECT_EQ(plan.dense(), CameraFactorizationPlan::DenseFlops(n) <=
                                CameraFactorizationPlan::kDenseFlopRatio * plan.sparse().flops)
        << "seed " << config.seed;
    if (dense_s) EXPECT_TRUE(plan.dense()) << "seed " << config.seed;
    EXPECT_EQ(CameraFactorizationPlan(c.s, DENSE_FACTORIZATION).dense(), true);
    EXPECT_EQ(CameraFactorizationPlan(c.s, SPARSE_FACTORIZATION).dense(), false);
  }
  EXPECT_FALSE(CameraFactorizationPlan(PatternCase(Configs().back()).s, AUTOMATIC_FACTORIZATION).dense());
}

TEST(ReducedCameraPattern, BlocksAreTheCameraPairsOfTheGroups) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    PatternCase c(config);
    const ReducedCameraPattern& pattern = *c.pattern;
    std::set<std::pair<int, int>> pairs;
    for (const Group& g : c.s.groups) {
      for (int a = g.camera_begin; a < g.camera_end; ++a) {
        for (int b = g.camera_begin; b < g.camera_end; ++b) {
          const int ca = c.s.parameter_blocks[c.s.group_cameras[a]].camera_index;
          const int cb = c.s.parameter_blocks[c.s.group_cameras[b]].camera_index;
          if (ca <= cb) pairs.insert({ca, cb});
        }
      }
    }
    for (int cam = 0; cam < pattern.num_cameras(); ++cam) pairs.insert({cam, cam});
    std::set<std::pair<int, int>> blocks;
    int64_t scalars = 0;
    for (int cam = 0; cam < pattern.num_cameras(); ++cam) {
      for (int64_t k = pattern.block_begin(cam); k < pattern.block_end(cam); ++k) {
        blocks.insert({pattern.block_row(k), cam});
        EXPECT_EQ(pattern.FindBlock(pattern.block_row(k), cam), k);
        const int64_t rows = pattern.camera_size(pattern.block_row(k));
        scalars += pattern.block_row(k) == cam ? rows * (rows + 1) / 2 : rows * pattern.camera_size(cam);
      }
    }
    EXPECT_EQ(blocks, pairs) << "seed " << config.seed;
    EXPECT_EQ(scalars, pattern.num_nonzeros());
    EXPECT_EQ(static_cast<int64_t>(c.rows.size()), pattern.num_nonzeros());
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
