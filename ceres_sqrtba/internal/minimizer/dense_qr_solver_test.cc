// DenseQrSolver, the linear solver of an inner-iteration sub-solve: the
// damped least-squares step against the normal equations solved by Eigen,
// |J y|^2 and r^T J y against their definitions, the column norms and the
// scaling on exactly representable values, and a singular damped Jacobian.
#include "ceres_sqrtba/internal/minimizer/dense_qr_solver.h"

#include <Eigen/Dense>
#include <vector>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

TEST(DenseQrSolver, SolvesTheDampedProblem) {
  // A well-conditioned 5 x 3 problem (condition number of J^T J + D^2 about
  // 40): Householder QR and an LDLT of the normal equations agree to a few
  // hundred ulps; 1e-12 relative leaves room for any rounding.
  RowMajor J(5, 3);
  J << 2, -1, 0.5, 1, 3, -2, 0, 1, 4, -1.5, 0.25, 1, 0.5, -0.5, 2;
  Eigen::VectorXd r(5);
  r << 1, -2, 0.5, 3, -1;
  const Eigen::Vector3d d(0.5, 1.0, 2.0);
  DenseQrSolver solver(8, 4);  // larger than the problem: Bind picks the size
  solver.Bind(5, 3, J.data(), r.data());
  Eigen::Vector3d y;
  double jy2 = 0.0;
  const LinearSolverSummary summary = solver.Solve(d.data(), 0.1, y.data(), &jy2);
  ASSERT_EQ(summary.termination, LinearSolverTermination::kSuccess);
  const Eigen::Matrix3d normal = J.transpose() * J + Eigen::Matrix3d(d.cwiseAbs2().asDiagonal());
  const Eigen::Vector3d expected = normal.ldlt().solve(J.transpose() * r);
  EXPECT_LT((y - expected).norm(), 1e-12 * expected.norm());
  const Eigen::VectorXd jy = J * y;
  EXPECT_NEAR(jy2, jy.squaredNorm(), 1e-12 * jy.squaredNorm());
  EXPECT_NEAR(solver.ResidualDotJy(), r.dot(jy), 1e-12 * r.norm() * jy.norm());
}

TEST(DenseQrSolver, ColumnNormsAndScaling) {
  // Small integers and powers of two: every product and sum is exact.
  RowMajor J(3, 2);
  J << 1, 2, -2, 0, 2, 4;
  const Eigen::VectorXd r = Eigen::VectorXd::Zero(3);
  DenseQrSolver solver(3, 2);
  solver.Bind(3, 2, J.data(), r.data());
  double norms[2];
  solver.SquaredColumnNorms(norms);
  EXPECT_EQ(norms[0], 9.0);
  EXPECT_EQ(norms[1], 20.0);
  const double scale[2] = {0.5, 0.25};
  solver.ScaleColumns(scale);
  RowMajor expected(3, 2);
  expected << 0.5, 0.5, -1, 0, 1, 1;
  EXPECT_EQ(J, expected);  // the caller's Jacobian, scaled in place
}

TEST(DenseQrSolver, SingularDampedJacobianFails) {
  // An empty column and no damping: the second reflection meets a zero
  // column exactly (the first leaves zeros as they are).
  RowMajor J(3, 2);
  J << 1, 0, 2, 0, 3, 0;
  Eigen::VectorXd r(3);
  r << 1, 2, 3;
  DenseQrSolver solver(3, 2);
  solver.Bind(3, 2, J.data(), r.data());
  const double d[2] = {0.0, 0.0};
  double y[2], jy2 = 0.0;
  EXPECT_EQ(solver.Solve(d, 0.1, y, &jy2).termination, LinearSolverTermination::kFailure);
  // Damping makes it regular.
  const double damped[2] = {1.0, 1.0};
  EXPECT_EQ(solver.Solve(damped, 0.1, y, &jy2).termination, LinearSolverTermination::kSuccess);
}

TEST(DenseQrSolver, HasNoWriter) {
  DenseQrSolver solver(1, 1);
  EXPECT_EQ(solver.writer(), nullptr);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
