// SQRT_SPARSE_SCHUR's linear solver, on the random BA-shaped problems of
// linear_solver_fixture.h, with the dense and the sparse Cholesky:
// - the reduced camera matrix (the Gram matrix of the marginalized rows) and
//   its right-hand side are the damped Schur complement of the dense problem
//   (1e-10), and its pattern holds every nonzero block, also for COLMAP's
//   pose + intrinsics items of every size the pair kernels fix;
// - the step equals a dense solve of the damped normal equations (double
//   1e-9, float blocks 1e-4), also for a second radius on the same Jacobian
//   (a rejected step: no new evaluation);
// - one camera, and all cameras constant (nothing to factor);
// - a rank-deficient camera system is a failed step, not an abort, and more
//   damping cures it;
// - S is bit-identical for 1 and 2 threads.
#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/solvers/sqrt_sparse_schur_solver.h"
#include "gtest/gtest.h"
#include "direct_solve.h"
#include "linear_solver_checks.h"
#include "linear_solver_fixture.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using testing::LinearAlgebraConfigs;
using testing::MakeRandomProblem;
using testing::RandomDiagonal;
using testing::RandomProblemConfig;
using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;

// The solver with its own plan, constructible as the fixture constructs
// solvers (the plan is built before the solver: first base).
struct PlanHolder {
  PlanHolder(const ProblemStructure& s, ReducedCameraFactorization factorization)
      : plan(std::make_unique<CameraFactorizationPlan>(s, factorization)) {}
  std::unique_ptr<CameraFactorizationPlan> plan;
};

template <typename Scalar>
struct DirectSolver : PlanHolder, SqrtSparseSchurSolver<Scalar> {
  using Layout = ProjectedBlockLayout;
  DirectSolver(const ProblemStructure& s, const ProjectedBlockLayout& layout, const WorkPartition& partition,
               ParallelContext* context, ReducedCameraFactorization factorization)
      : PlanHolder(s, factorization), SqrtSparseSchurSolver<Scalar>(s, layout, partition, context, *plan) {}
};

template <typename Scalar>
using Fixture = testing::LinearSolverFixture<DirectSolver<Scalar>>;

std::string Name(ReducedCameraFactorization f, unsigned seed) {
  return std::string(ReducedCameraFactorizationToString(f)) + ", seed " + std::to_string(seed);
}

// S (symmetric, dense) from the upper triangle the solver formed.
template <typename Scalar>
Mat DenseS(const ReducedCameraMatrix<Scalar>& m) {
  const int n = m.pattern().num_parameters();
  Mat s = Mat::Zero(n, n);
  for (int j = 0; j < n; ++j) {
    for (int64_t k = m.col_begin()[j]; k < m.col_begin()[j + 1]; ++k) {
      EXPECT_LE(m.rows()[k], j);
      s(m.rows()[k], j) = m.values()[k];
      s(j, m.rows()[k]) = m.values()[k];
    }
  }
  return s;
}

// LinearAlgebraConfigs, and COLMAP's camera items at the sizes the pair
// kernels have fixed (pose 6 beside intrinsics of 2, 4 and 1 tangent
// columns: SIMPLE_RADIAL, OPENCV without its principal point, SIMPLE_PINHOLE;
// a pose and its intrinsics share every residual block), so that a wrong
// AddPairFixed fails the 1e-10 below.
std::vector<RandomProblemConfig> GramConfigs() {
  std::vector<RandomProblemConfig> configs = LinearAlgebraConfigs();
  RandomProblemConfig c;
  c.num_cameras = 6;
  c.intrinsics_sizes = {2, 4, 1};
  c.max_observations = 5;
  c.seed = 6;
  configs.push_back(c);
  return configs;
}

TEST(SqrtSparseSchurSolver, GramMatrixIsTheDampedSchurComplement) {
  for (const RandomProblemConfig& config : GramConfigs()) {
    for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
      auto p = MakeRandomProblem(config);
      Fixture<double> fx(p.problem.get(), f);
      const int n = fx.s.num_effective_parameters, np = fx.s.num_camera_parameters;
      const Vec d = RandomDiagonal(n, config.seed + 30);
      Vec y(n);
      double jy;
      ASSERT_EQ(fx.solver->Solve(d.data(), 0.1, y.data(), &jy).termination, LinearSolverTermination::kSuccess);
      const testing::DampedSchur dense(fx.j, fx.r, d, fx.s.camera_tangent_begin);
      const Mat s = DenseS(fx.solver->matrix());
      EXPECT_LT((s - dense.s).norm() / dense.s.norm(), 1e-10) << Name(f, config.seed);
      const Eigen::Map<const Vec> rhs(fx.solver->rhs().data(), np);
      EXPECT_LT((rhs - dense.rhs).norm() / dense.rhs.norm(), 1e-10) << Name(f, config.seed);
      // Entries outside the pattern read as zero in s, so the comparison
      // above also checks that the pattern holds every nonzero block.
    }
  }
}

// Solves for the diagonal d and checks the step against a dense solve.
template <typename Scalar>
void ExpectDenseStepFor(Fixture<Scalar>* fx, const Vec& d, double tolerance, const std::string& what) {
  Vec y(d.size());
  double jy = 0;
  const LinearSolverSummary summary = fx->solver->Solve(d.data(), 0.1, y.data(), &jy);
  ASSERT_EQ(summary.termination, LinearSolverTermination::kSuccess) << what << ": " << summary.message;
  EXPECT_EQ(summary.num_iterations, 1);
  testing::ExpectDenseStep(fx->j, fx->r, d, y, jy, tolerance, what);
}

template <typename Scalar>
void CheckStep(double tolerance) {
  for (const RandomProblemConfig& config : LinearAlgebraConfigs()) {
    for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
      auto p = MakeRandomProblem(config);
      Fixture<Scalar> fx(p.problem.get(), f);
      const int n = fx.s.num_effective_parameters;
      // The second diagonal on the same Jacobian is a rejected step: only
      // lambda changes.
      for (double factor : {1.0, 0.25, 1e-3}) {
        ExpectDenseStepFor(&fx, factor * RandomDiagonal(n, config.seed + 10), tolerance,
                           Name(f, config.seed) + " factor " + std::to_string(factor));
      }
    }
  }
}

TEST(SqrtSparseSchurSolver, StepEqualsDenseSolveDouble) { CheckStep<double>(1e-9); }
TEST(SqrtSparseSchurSolver, StepEqualsDenseSolveFloatBlocks) { CheckStep<float>(1e-4); }

// One camera (S is one block), and landmarks seen by it once.
TEST(SqrtSparseSchurSolver, SingleCamera) {
  RandomProblemConfig config;
  config.num_cameras = 1;
  config.min_observations = 1;
  config.max_observations = 1;
  config.camera_size = 9;
  config.num_landmarks = 12;
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    auto p = MakeRandomProblem(config);
    Fixture<double> fx(p.problem.get(), f);
    ASSERT_EQ(fx.s.cameras.size(), 1u);
    EXPECT_EQ(fx.solver->matrix().pattern().num_blocks(), 1);
    ExpectDenseStepFor(&fx, RandomDiagonal(fx.s.num_effective_parameters, 7), 1e-9, Name(f, 0));
  }
}

// All cameras constant: no reduced camera system, landmarks only.
TEST(SqrtSparseSchurSolver, AllCamerasConstant) {
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    auto p = MakeRandomProblem(RandomProblemConfig());
    for (auto& c : p.cameras) p.problem->SetParameterBlockConstant(c.data());
    Fixture<double> fx(p.problem.get(), f);
    ASSERT_EQ(fx.s.num_camera_parameters, 0);
    ExpectDenseStepFor(&fx, RandomDiagonal(fx.s.num_effective_parameters, 8), 1e-9, Name(f, 0));
  }
}

// r = A l + b: depends on a camera block but not on its values, so that the
// camera's columns of J are zero.
class CameraBlindCost : public ceres::SizedCostFunction<2, 6, 3> {
 public:
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const double* l = parameters[1];
    residuals[0] = l[0] + 2 * l[1] - 1;
    residuals[1] = l[2] - l[0] + 3;
    if (jacobians != nullptr) {
      if (jacobians[0] != nullptr) std::fill(jacobians[0], jacobians[0] + 12, 0.0);
      if (jacobians[1] != nullptr) {
        const double j[6] = {1, 2, 0, -1, 0, 1};
        std::copy(j, j + 6, jacobians[1]);
      }
    }
    return true;
  }
};

// A camera J cannot see: without pose damping its block of S is zero. It
// "observes" every landmark, so that it is found to be a camera.
TEST(SqrtSparseSchurSolver, RankDeficientCameraSystemIsAFailedStep) {
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    RandomProblemConfig config;
    config.seed = 8;
    auto p = MakeRandomProblem(config);
    std::vector<double> blind(6, 0.5);
    for (auto& landmark : p.landmarks) {
      p.problem->AddResidualBlock(new CameraBlindCost, nullptr, blind.data(), landmark.data());
    }
    Fixture<double> fx(p.problem.get(), f);
    const int n = fx.s.num_effective_parameters;
    Vec d = RandomDiagonal(n, 3);
    d.tail(fx.s.num_camera_parameters).setZero();  // no pose damping
    Vec y(n);
    double jy = 0;
    const LinearSolverSummary failed = fx.solver->Solve(d.data(), 0.1, y.data(), &jy);
    EXPECT_EQ(failed.termination, LinearSolverTermination::kFailure) << Name(f, 8);
    EXPECT_NE(failed.message.find("not positive definite"), std::string::npos) << failed.message;
    // Damping cures it, as the trust-region loop tries next.
    ExpectDenseStepFor(&fx, RandomDiagonal(n, 3), 1e-9, Name(f, 8));
  }
}

// The reduced camera matrix and the step do not depend on the number of
// threads, bit for bit.
TEST(SqrtSparseSchurSolver, SameBitsForAnyNumberOfThreads) {
  RandomProblemConfig config = LinearAlgebraConfigs().back();  // BAL's shape
  config.num_landmarks = 300;
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    Mat s[2];
    Vec y[2];
    for (int threads : {1, 2}) {
      auto p = MakeRandomProblem(config);
      Fixture<double> fx(p.problem.get(), f, threads);
      const int n = fx.s.num_effective_parameters;
      const Vec d = RandomDiagonal(n, 5);
      y[threads - 1].resize(n);
      double jy;
      ASSERT_EQ(fx.solver->Solve(d.data(), 0.1, y[threads - 1].data(), &jy).termination,
                LinearSolverTermination::kSuccess);
      s[threads - 1] = DenseS(fx.solver->matrix());
    }
    EXPECT_TRUE(s[0] == s[1]) << ReducedCameraFactorizationToString(f);
    EXPECT_TRUE(y[0] == y[1]) << ReducedCameraFactorizationToString(f);
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
