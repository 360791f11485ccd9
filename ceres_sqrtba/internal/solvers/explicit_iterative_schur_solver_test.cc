// Numerical claims of the square-root linear solver, each against a dense
// computation in double:
// - the reduced system of nullspace marginalization equals the Schur
//   complement of the same damped problem (paper eqs. (red_H), (red_b));
// - landmark damping applied and undone restores a marginalized block;
// - the step equals a dense solve of the damped normal equations.
#include <Eigen/Dense>
#include <random>

#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/explicit/landmark_block.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/solvers/explicit_iterative_schur_solver.h"
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

// The iterative solver on the problem's Jacobian, next to a dense copy.
template <typename Scalar>
struct Fixture : testing::LinearSolverFixture<ExplicitIterativeSchurSolver<Scalar>> {
  explicit Fixture(ceres::Problem* problem, int num_threads = 1)
      : Fixture(problem, Options(), num_threads) {}
  Fixture(ceres::Problem* problem, const IterativeSchurOptions& options, int num_threads = 1)
      : testing::LinearSolverFixture<ExplicitIterativeSchurSolver<Scalar>>(problem, options,
                                                                        num_threads) {}
  static IterativeSchurOptions Options() {
    IterativeSchurOptions o;
    o.max_num_iterations = 1000;
    return o;
  }
};

// Paper eqs. (red_H)/(red_b): J^_p^T J^_p = S~ and J^_p^T r^ = b~ for the damped
// problem, with S~, b~ the Schur complement formed densely.
TEST(LinearAlgebra, ReducedSystemEqualsDampedSchurComplement) {
  testing::CheckReducedSystemEqualsDampedSchurComplement<Fixture<double>>();
}

// SCHUR_JACOBI is the inverse of the camera blocks of the damped Schur
// complement, as Ceres computes it; JACOBI of J^T J + D^2.
TEST(LinearAlgebra, PreconditionerInvertsSchurDiagonalBlocks) {
  testing::CheckPreconditionerInvertsDiagonalBlocks<Fixture<double>>(true);
  testing::CheckPreconditionerInvertsDiagonalBlocks<Fixture<double>>(false);
}

// The step solves (J^T J + D^2) y = J^T r; |J y|^2 is reported for the model.
// Two radii in a row: the second solve reuses the marginalization and swaps
// the landmark damping, as a rejected step does.
TEST(LinearAlgebra, StepEqualsDenseSolveDouble) { testing::CheckStep<Fixture<double>>(1e-8); }
TEST(LinearAlgebra, StepEqualsDenseSolveFloat) { testing::CheckStep<Fixture<float>>(1e-3); }

// Damping on, then off: the marginalized block comes back to 1e-12.
TEST(LinearAlgebra, DampingUndoRestoresBlock) {
  std::mt19937 rng(7);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  for (int d : {1, 2, 3, 4}) {
    for (int rows : {1, 2, 6, 17}) {
      const int nc = 9;
      const int obs = LandmarkBlock<double>::ObservationRows(rows, d);
      std::vector<double> data(LandmarkBlock<double>::Size(obs, d, nc), 0.0);
      LandmarkBlock<double> b(data.data(), obs, d, nc, LandmarkBlock<double>::Stride(nc, d));
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < b.cols(); ++c) b(r, c) = n(rng);
      }
      std::vector<double> scratch(obs + b.cols());
      b.Marginalize(scratch.data());
      const std::vector<double> before = data;
      std::vector<double> dl(d), rotations(2 * LandmarkBlock<double>::NumRotations(d));
      for (double& v : dl) v = std::abs(n(rng)) + 0.1;
      b.ApplyDamping(dl.data(), rotations.data());
      double changed = 0;
      for (size_t i = 0; i < data.size(); ++i) changed = std::max(changed, std::abs(data[i] - before[i]));
      EXPECT_GT(changed, 1e-3) << "damping must change the block";
      b.UndoDamping(rotations.data());
      double scale = 0, err = 0;
      for (size_t i = 0; i < data.size(); ++i) {
        scale = std::max(scale, std::abs(before[i]));
        err = std::max(err, std::abs(data[i] - before[i]));
      }
      EXPECT_LT(err, 1e-12 * scale) << "d=" << d << " rows=" << rows;
    }
  }
}

// QR keeps the column Gram matrix (Q is orthogonal) and makes the landmark
// columns upper triangular.
TEST(LinearAlgebra, MarginalizationIsOrthogonal) {
  std::mt19937 rng(9);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  const int d = 3, nc = 12, rows = 10;
  std::vector<double> data(LandmarkBlock<double>::Size(rows, d, nc), 0.0);
  LandmarkBlock<double> b(data.data(), rows, d, nc, LandmarkBlock<double>::Stride(nc, d));
  Mat a(rows, b.cols());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < b.cols(); ++c) a(r, c) = b(r, c) = n(rng);
  }
  std::vector<double> scratch(rows + b.cols());
  b.Marginalize(scratch.data());
  Mat q(rows, b.cols());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < b.cols(); ++c) q(r, c) = b(r, c);
  }
  EXPECT_LT((q.transpose() * q - a.transpose() * a).norm(), 1e-10 * (a.transpose() * a).norm());
  for (int c = 0; c < d; ++c) {
    for (int r = c + 1; r < rows; ++r) EXPECT_EQ(q(r, nc + c), 0.0);
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
