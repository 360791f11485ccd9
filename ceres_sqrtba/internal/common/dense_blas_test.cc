#include "ceres_sqrtba/internal/common/dense_blas.h"

#include "Eigen/Dense"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Each wrapper against Eigen on constructed matrices: entries k / 8 with
// small integers k (exact in binary), a lower-triangular factor with a
// dominant diagonal (condition number below 10, so the inverse's rounding is
// a few units in the last place of entries of size ~1), in blocks with a
// leading dimension larger than their rows (the supernodes' layout). The
// tolerance 1e-13 is ~500 units in the last place of these magnitudes:
// any BLAS rounds within it, a wrong triangle or transpose misses it by ~0.1.
Eigen::MatrixXd Constructed(int rows, int cols, int seed) {
  Eigen::MatrixXd a(rows, cols);
  for (int j = 0; j < cols; ++j) {
    for (int i = 0; i < rows; ++i) a(i, j) = ((i * 7 + j * 13 + seed * 5) % 17 - 8) / 8.0;
  }
  return a;
}

Eigen::MatrixXd LowerFactor(int n) {
  Eigen::MatrixXd l = Constructed(n, n, 1).triangularView<Eigen::Lower>();
  for (int i = 0; i < n; ++i) l(i, i) = 2.0 * n / 8.0 + 1.0;
  return l;
}

constexpr double kTolerance = 1e-13;

TEST(DenseBlas, InvertLowerTriangularAndItsGram) {
  const int n = 37, ld = 45;
  const Eigen::MatrixXd l = LowerFactor(n);
  Eigen::MatrixXd storage = Eigen::MatrixXd::Constant(ld, n, 99.0);
  storage.topRows(n).triangularView<Eigen::Lower>() = l;
  ASSERT_TRUE(InvertLowerTriangular(n, storage.data(), ld));
  const Eigen::MatrixXd inverse = l.inverse();
  Eigen::MatrixXd got = storage.topRows(n).triangularView<Eigen::Lower>();
  EXPECT_LT((got - inverse).cwiseAbs().maxCoeff(), kTolerance);
  EXPECT_EQ(storage(n, 0), 99.0);  // rows below the block untouched
  LowerTransposeTimesLower(n, storage.data(), ld);
  const Eigen::MatrixXd gram = inverse.transpose() * inverse;  // (L L^T)^-1
  got = storage.topRows(n).triangularView<Eigen::Lower>();
  const Eigen::MatrixXd want = gram.triangularView<Eigen::Lower>();
  EXPECT_LT((got - want).cwiseAbs().maxCoeff(), kTolerance);
  EXPECT_EQ(storage(0, 1), 99.0);  // the upper triangle is neither read nor written
}

TEST(DenseBlas, ZeroPivotIsReported) {
  Eigen::MatrixXd l = LowerFactor(5);
  l(3, 3) = 0.0;
  EXPECT_FALSE(InvertLowerTriangular(5, l.data(), 5));
  EXPECT_TRUE(InvertLowerTriangular(0, nullptr, 1));
}

TEST(DenseBlas, Products) {
  const int m = 23, n = 11, k = 19;
  const Eigen::MatrixXd l = LowerFactor(n);
  Eigen::MatrixXd l_storage = Eigen::MatrixXd::Constant(n + 3, n, 99.0);  // upper part must not be read
  l_storage.topRows(n).triangularView<Eigen::Lower>() = l;
  Eigen::MatrixXd b = Constructed(m, n, 2);
  const Eigen::MatrixXd b_times_l = b * l;
  TimesLowerTriangular(m, n, l_storage.data(), n + 3, b.data(), m);
  EXPECT_LT((b - b_times_l).cwiseAbs().maxCoeff(), kTolerance);

  Eigen::MatrixXd sym = Constructed(m, m, 3);
  sym = (sym + sym.transpose()).eval();
  Eigen::MatrixXd sym_lower = sym.triangularView<Eigen::Lower>();  // the upper triangle zero: must not be read
  const Eigen::MatrixXd x = Constructed(m, n, 4);
  Eigen::MatrixXd c = Eigen::MatrixXd::Constant(m, n, 99.0);  // overwritten (beta 0)
  SymmetricTimes(m, n, -2.0, sym_lower.data(), m, x.data(), m, c.data(), m);
  EXPECT_LT((c - (-2.0) * sym * x).cwiseAbs().maxCoeff(), kTolerance * 10);

  const Eigen::MatrixXd a = Constructed(k, m, 5), y = Constructed(k, n, 6);
  Eigen::MatrixXd d = Constructed(m + 2, n, 7);
  const Eigen::MatrixXd d0 = d;
  AddTransposeTimes(m, n, k, 0.5, a.data(), k, y.data(), k, d.data(), m + 2);
  EXPECT_LT((d.topRows(m) - (d0.topRows(m) + 0.5 * a.transpose() * y)).cwiseAbs().maxCoeff(), kTolerance);
  EXPECT_EQ(d.bottomRows(2), d0.bottomRows(2));
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
