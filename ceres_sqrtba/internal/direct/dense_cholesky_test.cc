// DenseCameraCholesky (dense_cholesky.h): S given by the values of its
// upper-triangle CSC pattern (reduced_camera_pattern.h) is factored and
// solved as Eigen's LLT of the dense S does, on a dense pattern and on a
// sparse one (the entries outside the pattern are zeros); new values on the
// same object; b and x aliased; an indefinite S (positive diagonal) is a
// failed step (kFailure, "not positive definite") after which Solve refuses
// and a good S factors again; Solve before any factorization is a fatal
// error; the memory figure and the statistics line.
//
// Tolerance: S = M^T M + n I with M's entries in [-1, 1] has a condition
// number below 3, so two backward-stable Cholesky solves in double agree to
// about n x cond x eps ~ 1e-14 relative; 1e-12 leaves a margin without
// depending on how the blocked and the unblocked factorizations round.
#include "ceres_sqrtba/internal/direct/dense_cholesky.h"

#include <Eigen/Dense>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "gtest/gtest.h"
#include "sum_cost_function.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Cameras of the given sizes, landmark l (size 3) seen by tracks[l]; its
// reduced camera pattern and scalar CSC arrays.
struct Scene {
  Scene(const std::vector<int>& camera_sizes, const std::vector<std::vector<int>>& tracks) {
    for (int size : camera_sizes) cameras.emplace_back(size, 0.5);
    points.assign(tracks.size(), std::vector<double>(3, 1.0));
    for (size_t l = 0; l < tracks.size(); ++l) {
      for (int c : tracks[l]) {
        problem.AddResidualBlock(new testing::SumCostFunction({camera_sizes[c], 3}), nullptr, cameras[c].data(), points[l].data());
      }
    }
    for (auto& p : points) ordering.AddElementToGroup(p.data(), 0);
    for (auto& c : cameras) ordering.AddElementToGroup(c.data(), 1);
    std::string error;
    EXPECT_EQ(BuildProblemStructure(problem, &ordering, &s, &error), StructureStatus::kOk) << error;
    pattern = std::make_unique<ReducedCameraPattern>(s);
    pattern->ScalarPattern(&col_begin, &rows);
  }
  int n() const { return pattern->num_parameters(); }
  // The pattern's values of a dense symmetric matrix (its upper triangle).
  std::vector<double> Values(const Eigen::MatrixXd& dense) const {
    std::vector<double> values(rows.size());
    for (int j = 0; j < n(); ++j) {
      for (int64_t k = col_begin[j]; k < col_begin[j + 1]; ++k) values[k] = dense(rows[k], j);
    }
    return values;
  }
  // Zero outside the pattern.
  Eigen::MatrixXd Mask(const Eigen::MatrixXd& dense) const {
    Eigen::MatrixXd masked = Eigen::MatrixXd::Zero(n(), n());
    for (int j = 0; j < n(); ++j) {
      for (int64_t k = col_begin[j]; k < col_begin[j + 1]; ++k) {
        masked(rows[k], j) = masked(j, rows[k]) = dense(rows[k], j);
      }
    }
    return masked;
  }

  std::vector<std::vector<double>> cameras, points;
  ceres::Problem problem;
  ceres::ParameterBlockOrdering ordering;
  ProblemStructure s;
  std::unique_ptr<ReducedCameraPattern> pattern;
  std::vector<int64_t> col_begin, rows;
};

// M^T M + n I, M's entries uniform in [-1, 1]: eigenvalues between n and
// about n + 4n / 3 (the largest of M^T M), a condition number below 3.
Eigen::MatrixXd RandomSpd(int n, unsigned seed) {
  std::mt19937 rng(seed);
  Eigen::MatrixXd m(n, n);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = static_cast<double>(rng() >> 8) / 8388608.0 - 1.0;
  return m.transpose() * m + n * Eigen::MatrixXd::Identity(n, n);
}

Eigen::VectorXd Rhs(int n) { return Eigen::VectorXd::LinSpaced(n, -2.0, 3.0); }

double RelativeError(const Eigen::VectorXd& x, const Eigen::VectorXd& expected) {
  return (x - expected).norm() / expected.norm();
}

TEST(DenseCameraCholesky, SolvesAsEigensLltOnADensePattern) {
  Scene scene({3, 6, 3, 3}, {{0, 1, 2, 3}});  // every camera shares the landmark: S dense
  ASSERT_EQ(scene.pattern->num_nonzeros(), 15 * 16 / 2);
  const Eigen::MatrixXd s = RandomSpd(15, 1);
  DenseCameraCholesky cholesky(*scene.pattern, scene.col_begin.data(), scene.rows.data());
  const std::vector<double> values = scene.Values(s);
  const LinearSolverSummary f = cholesky.Factorize(values.data());
  ASSERT_EQ(f.termination, LinearSolverTermination::kSuccess) << f.message;
  const Eigen::VectorXd b = Rhs(15);
  Eigen::VectorXd x(15);
  const LinearSolverSummary solved = cholesky.Solve(b.data(), x.data());
  ASSERT_EQ(solved.termination, LinearSolverTermination::kSuccess) << solved.message;
  EXPECT_LT(RelativeError(x, s.llt().solve(b)), 1e-12);
  EXPECT_LT((s * x - b).norm() / b.norm(), 1e-12);
}

// A chain of cameras: S block tridiagonal; what lies outside the pattern
// is zero whatever the dense matrix the values were taken from held there.
TEST(DenseCameraCholesky, SolvesAsEigensLltOnASparsePattern) {
  Scene scene({3, 3, 3, 3, 3}, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  ASSERT_LT(scene.pattern->num_nonzeros(), 15 * 16 / 2);
  // Diagonally dominant once masked: entries in [-1, 1] off the diagonal,
  // 15 + 1 on it.
  Eigen::MatrixXd full = RandomSpd(15, 2) / 15.0;
  full.diagonal().setConstant(16.0);
  const Eigen::MatrixXd s = scene.Mask(full);
  DenseCameraCholesky cholesky(*scene.pattern, scene.col_begin.data(), scene.rows.data());
  const std::vector<double> values = scene.Values(full);
  ASSERT_EQ(cholesky.Factorize(values.data()).termination, LinearSolverTermination::kSuccess);
  const Eigen::VectorXd b = Rhs(15);
  Eigen::VectorXd x(15);
  ASSERT_EQ(cholesky.Solve(b.data(), x.data()).termination, LinearSolverTermination::kSuccess);
  EXPECT_LT(RelativeError(x, s.llt().solve(b)), 1e-12);
}

// A second factorization with other values forgets the first, also where
// the first one's factor filled in outside the pattern (a star: the hub,
// camera 0, eliminated first couples all the others); b and x may be the
// same array.
TEST(DenseCameraCholesky, RefactorsAndSolvesInPlace) {
  Scene scene({3, 3, 3, 3}, {{0, 1}, {0, 2}, {0, 3}});
  ASSERT_EQ(scene.s.parameter_blocks[scene.s.index_of.at(scene.cameras[0].data())].camera_index, 0);
  ASSERT_EQ(scene.pattern->num_nonzeros(), 4 * 6 + 3 * 9);  // no block between two spokes
  DenseCameraCholesky cholesky(*scene.pattern, scene.col_begin.data(), scene.rows.data());
  for (unsigned seed : {3u, 4u}) {
    Eigen::MatrixXd full = RandomSpd(12, seed) / 12.0;
    full.diagonal().setConstant(13.0);  // dominant: at most 11 entries of |.| <= 1 beside it
    const Eigen::MatrixXd s = scene.Mask(full);
    const std::vector<double> values = scene.Values(full);
    ASSERT_EQ(cholesky.Factorize(values.data()).termination, LinearSolverTermination::kSuccess);
    Eigen::VectorXd x = Rhs(12);
    ASSERT_EQ(cholesky.Solve(x.data(), x.data()).termination, LinearSolverTermination::kSuccess);
    EXPECT_LT(RelativeError(x, s.llt().solve(Rhs(12))), 1e-12) << "seed " << seed;
  }
}

// [[1, 2], [2, 1]] in the first camera's block (eigenvalues 3 and -1, its
// diagonal positive): not positive definite, a failed step; Solve then has
// no factorization; a good S factors again.
TEST(DenseCameraCholesky, IndefiniteIsAFailedStep) {
  Scene scene({3, 3}, {{0, 1}});
  Eigen::MatrixXd s = Eigen::MatrixXd::Identity(6, 6);
  s(0, 1) = s(1, 0) = 2.0;
  DenseCameraCholesky cholesky(*scene.pattern, scene.col_begin.data(), scene.rows.data());
  const std::vector<double> indefinite = scene.Values(s);
  const LinearSolverSummary failed = cholesky.Factorize(indefinite.data());
  EXPECT_EQ(failed.termination, LinearSolverTermination::kFailure);
  EXPECT_NE(failed.message.find("not positive definite"), std::string::npos) << failed.message;
  Eigen::VectorXd b = Rhs(6), x(6);
  EXPECT_EQ(cholesky.Solve(b.data(), x.data()).termination, LinearSolverTermination::kFatalError);

  const std::vector<double> good = scene.Values(Eigen::MatrixXd::Identity(6, 6) * 4.0);
  ASSERT_EQ(cholesky.Factorize(good.data()).termination, LinearSolverTermination::kSuccess);
  ASSERT_EQ(cholesky.Solve(b.data(), x.data()).termination, LinearSolverTermination::kSuccess);
  const Eigen::VectorXd quarter = b / 4.0;
  EXPECT_EQ(x, quarter);  // exact: L = 2 I
}

TEST(DenseCameraCholesky, SolveWithoutAFactorizationIsAFatalError) {
  Scene scene({3, 3}, {{0, 1}});
  DenseCameraCholesky cholesky(*scene.pattern, scene.col_begin.data(), scene.rows.data());
  Eigen::VectorXd b = Rhs(6), x(6);
  const LinearSolverSummary summary = cholesky.Solve(b.data(), x.data());
  EXPECT_EQ(summary.termination, LinearSolverTermination::kFatalError);
  EXPECT_NE(summary.message.find("without a factorization"), std::string::npos) << summary.message;
}

TEST(DenseCameraCholesky, MemoryAndStatistics) {
  Scene scene({3, 3, 3, 3, 3}, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
  // 5 diagonal blocks of 6 and 4 off-diagonal blocks of 9: 66 nonzeros.
  ASSERT_EQ(scene.pattern->num_nonzeros(), 66);
  EXPECT_EQ(DenseCameraCholesky::RequiredBytes(*scene.pattern), 15 * 15 * 8);
  DenseCameraCholesky cholesky(*scene.pattern, scene.col_begin.data(), scene.rows.data());
  EXPECT_EQ(cholesky.Statistics(),
            "dense LLT (Eigen) of the 15 x 15 reduced camera matrix (66 nonzeros in its upper triangle)");
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
