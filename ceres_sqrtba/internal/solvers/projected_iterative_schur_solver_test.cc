// Numerical claims of the projected storage of SQRT_ITERATIVE_SCHUR
// (projected_landmark_blocks.h), each against a dense computation in double
// or against the explicit landmark blocks:
// - the thin QR factors the damped landmark columns and stays orthonormal for
//   badly conditioned columns;
// - Jp^T (I - Q1 Q1^T) Jp and Jp^T (I - Q1 Q1^T) r equal the damped Schur
//   complement and its right-hand side;
// - the preconditioner inverts the Schur complement's camera blocks;
// - the step equals a dense solve, for a new radius too (rejected step);
// - results do not depend on the number of threads;
// - whole solves end where the explicit blocks end.
#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>

#include "ceres_sqrtba/internal/solvers/projected_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/projected/thin_qr.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "linear_solver_checks.h"
#include "linear_solver_fixture.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using testing::MakeRandomProblem;
using testing::RandomDiagonal;
using testing::RandomProblemConfig;
using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;
using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename Scalar>
struct Fixture : testing::LinearSolverFixture<ProjectedIterativeSchurSolver<Scalar>> {
  explicit Fixture(ceres::Problem* problem, int num_threads = 1)
      : Fixture(problem, Options(), num_threads) {}
  Fixture(ceres::Problem* problem, const IterativeSchurOptions& options, int num_threads = 1)
      : testing::LinearSolverFixture<ProjectedIterativeSchurSolver<Scalar>>(problem, options,
                                                                             num_threads) {}
  static IterativeSchurOptions Options() {
    IterativeSchurOptions o;
    o.max_num_iterations = 1000;
    return o;
  }
};

// Runs ThinQr on jl (m x d) with damping s; returns Q1 (m x d) and R (d x d).
void RunThinQr(const RowMat& jl, const Vec& s, Mat* q1, Mat* r) {
  const int m = static_cast<int>(jl.rows()), d = static_cast<int>(jl.cols());
  std::vector<double> scratch(ThinQrScratchSize(m, d));
  RowMat rr(d, d);
  q1->resize(m, d);
  ThinQr(m, d, jl.data(), d, s.data(), scratch.data(), rr.data(),
         [&](int i, int k, double v) { (*q1)(i, k) = v; });
  *r = rr;
}

TEST(ThinQr, FactorsDampedColumns) {
  std::mt19937 rng(3);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  for (int m : {1, 2, 7, 40}) {
    for (int d : {1, 3, 4}) {
      RowMat jl(m, d);
      for (int i = 0; i < m; ++i) for (int k = 0; k < d; ++k) jl(i, k) = n(rng);
      Vec s(d);
      for (int k = 0; k < d; ++k) s[k] = 0.1 + std::abs(n(rng));
      Mat q1, r;
      RunThinQr(jl, s, &q1, &r);
      // [Jl; S] = Q^_1 R^: the observation rows give Jl = Q1 R^, and R^ is
      // the Cholesky factor of Jl^T Jl + S^2 (up to signs).
      EXPECT_LT((Mat(jl) - q1 * r).norm() / jl.norm(), 1e-14) << m << " x " << d;
      const Mat g = Mat(jl).transpose() * jl + Mat(s.cwiseAbs2().asDiagonal());
      EXPECT_LT((r.transpose() * r - g).norm() / g.norm(), 1e-14) << m << " x " << d;
      EXPECT_LT(r.triangularView<Eigen::StrictlyLower>().toDenseMatrix().norm(), 1e-300);
    }
  }
}

// Two nearly parallel columns (condition number ~1e10) and no damping: Q1
// from R^-1 (or Cholesky QR) would lose all orthogonality; Householder keeps
// Q1^T Q1 = I to rounding.
TEST(ThinQr, OrthonormalForBadlyConditionedColumns) {
  std::mt19937 rng(5);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  const int m = 10, d = 3;
  RowMat jl(m, d);
  for (int i = 0; i < m; ++i) {
    jl(i, 0) = n(rng);
    jl(i, 1) = jl(i, 0) + 1e-10 * n(rng);
    jl(i, 2) = n(rng);
  }
  Mat q1, r;
  RunThinQr(jl, Vec::Zero(d), &q1, &r);
  EXPECT_LT((q1.transpose() * q1 - Mat::Identity(d, d)).norm(), 1e-14);
  EXPECT_LT((Mat(jl) - q1 * r).norm() / jl.norm(), 1e-14);
  // A zero column without damping: R^ gets a zero pivot, nothing is NaN.
  jl.col(1).setZero();
  RunThinQr(jl, Vec::Zero(d), &q1, &r);
  EXPECT_TRUE(q1.allFinite());
  EXPECT_TRUE(r.allFinite());
  EXPECT_EQ(r(1, 1), 0.0);
}

// Paper eqs. (red_H)/(red_b), applied through the projector.
TEST(ProjectedBlocks, ReducedSystemEqualsDampedSchurComplement) {
  testing::CheckReducedSystemEqualsDampedSchurComplement<Fixture<double>>();
}

// SCHUR_JACOBI from Jc^T (I - Q1 Q1^T) Jc per block, JACOBI from Jc^T Jc.
TEST(ProjectedBlocks, PreconditionerInvertsDiagonalBlocks) {
  testing::CheckPreconditionerInvertsDiagonalBlocks<Fixture<double>>(true);
  testing::CheckPreconditionerInvertsDiagonalBlocks<Fixture<double>>(false);
}

// The step, then again for a smaller diagonal on the same Jacobian (a
// rejected step: Q1 and R^ recomputed, nothing else). Float: the relative
// accuracy of a float PCG on these small, well conditioned systems, as for
// the explicit blocks.
TEST(ProjectedBlocks, StepEqualsDenseSolveDouble) { testing::CheckStep<Fixture<double>>(1e-8); }
TEST(ProjectedBlocks, StepEqualsDenseSolveFloat) { testing::CheckStep<Fixture<float>>(1e-3); }

// Jacobi scaling: the scaled Jacobian's step, with column norms from the
// unscaled one (what the trust-region loop does on the first Jacobian).
TEST(ProjectedBlocks, ColumnNormsAndScaling) {
  for (const RandomProblemConfig& config : testing::LinearAlgebraConfigs()) {
    auto p = MakeRandomProblem(config);
    Fixture<double> f(p.problem.get());
    const int n = f.s.num_effective_parameters;
    Vec norms(n);
    f.solver->SquaredColumnNorms(norms.data());
    EXPECT_LT((norms - f.j.colwise().squaredNorm().transpose()).norm() / norms.norm(), 1e-13);
    Vec scale(n);
    for (int i = 0; i < n; ++i) scale[i] = 1.0 / (1.0 + std::sqrt(norms[i]));
    f.solver->ScaleColumns(scale.data());
    const Mat js = f.j * scale.asDiagonal();
    const Vec d = RandomDiagonal(n, config.seed + 30);
    Vec y(n);
    double jy = 0;
    f.solver->Solve(d.data(), 1e-14, y.data(), &jy);
    testing::ExpectDenseStep(js, f.r, d, y, jy, 1e-8, "scaled, seed " + std::to_string(config.seed));
  }
}

// In float the blocks hold the Jacobian rounded to float, and uniform groups
// of listed shapes sum each observation's squares in float: every column's
// squared norm is a sum of positive terms, each within 2u (rounding of the
// value, squared) plus gamma_3 (the square, the observation's sum of two
// rows, the conversion) of its exact value, u = 2^-24, with the additions in
// double: within 6u of the exact norm relatively, per column. A wrong entry,
// column or landmark moves a column's norm by a whole term.
TEST(ProjectedBlocks, ColumnNormsInFloat) {
  const double u = std::numeric_limits<float>::epsilon() / 2;
  for (const RandomProblemConfig& config : testing::LinearAlgebraConfigs()) {
    auto p = MakeRandomProblem(config);
    Fixture<float> f(p.problem.get());
    const int n = f.s.num_effective_parameters;
    Vec norms(n);
    f.solver->SquaredColumnNorms(norms.data());
    const Vec exact = f.j.colwise().squaredNorm().transpose();
    for (int i = 0; i < n; ++i) {
      EXPECT_LE(std::abs(norms[i] - exact[i]), 6 * u * exact[i]) << "column " << i << ", seed " << config.seed;
    }
  }
}

// The fixed work partition orders every sum: one and two threads give
// bit-identical steps.
TEST(ProjectedBlocks, BitIdenticalForAnyNumberOfThreads) {
  RandomProblemConfig config;
  config.camera_size = 9;
  config.num_cameras = 12;
  config.num_landmarks = 400;
  config.max_observations = 8;
  auto p1 = MakeRandomProblem(config);
  auto p2 = MakeRandomProblem(config);
  Fixture<float> one(p1.problem.get(), 1), two(p2.problem.get(), 2);
  ASSERT_GT(one.partition.num_chunks(), 1);
  const int n = one.s.num_effective_parameters;
  const Vec d = RandomDiagonal(n, 9);
  Vec y1(n), y2(n);
  double jy1 = 0, jy2 = 0;
  one.solver->Solve(d.data(), 1e-6, y1.data(), &jy1);
  two.solver->Solve(d.data(), 1e-6, y2.data(), &jy2);
  EXPECT_EQ(jy1, jy2);
  for (int i = 0; i < n; ++i) ASSERT_EQ(y1[i], y2[i]) << i;
}

// Whole solves: the projected and the explicit storage take the same steps up
// to rounding, so they end at the same cost (double to 1e-9, float to 1e-6).
TEST(ProjectedBlocks, EndsWhereExplicitBlocksEnd) {
  const testing::SyntheticBa ba = testing::MakeSyntheticBa(10, 400, 5, 21);
  for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
    double final_cost[2];
    for (int use_explicit = 0; use_explicit < 2; ++use_explicit) {
      testing::SyntheticBa copy = ba;
      ceres::Problem problem;
      testing::AddReprojectionResiduals(&copy, &problem, new ceres::HuberLoss(1.0));
      Solver::Options o;
      o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
      o.preconditioner_type = ceres::SCHUR_JACOBI;
      o.precision = precision;
      o.use_explicit_reduced_rows = use_explicit == 1;
      o.max_num_iterations = 50;
      o.logging_type = ceres::SILENT;
      ceres::Solver::Summary summary;
      Solve(o, &problem, &summary);
      ASSERT_TRUE(summary.IsSolutionUsable()) << summary.message;
      final_cost[use_explicit] = summary.final_cost;
    }
    const double tolerance = precision == DOUBLE_PRECISION ? 1e-9 : 1e-6;
    EXPECT_NEAR(final_cost[0], final_cost[1], tolerance * final_cost[1])
        << PrecisionToString(precision);
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
