// LandmarkBlock (landmark_block.h) on random dense blocks [Jp | Jl | r]: the
// QR marginalization and the Givens damping against the dense Schur
// complement and reduced right-hand side of the normal equations, compared
// through invariants that do not depend on the QR's sign conventions
// (B^T B, B^T r^, R^T R, |Q1^T r|^2); UndoDamping restoring the block; the
// reduced-row products; the column Gram kernel; back substitution against
// the landmark update of the dense normal equations.
//
// Tolerances. Householder QR and Givens rotations are backward stable: the
// blocks' Gram matrices are within a few (rows + d) eps |A|^2 of exact. The
// references solve with Jl^T Jl (+ D^2) and so lose its condition number,
// which the tests assert below 1e3 on these Gaussian blocks: 1e3 eps
// kappa |A|^2 covers both with an order of magnitude to spare (~2e-10).
#include "ceres_sqrtba/internal/explicit/landmark_block.h"

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "rounding_jitter.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// A block's data, its dense parts and the LM diagonal of its landmark.
struct DenseBlock {
  DenseBlock(int m, int d, int nc, unsigned seed) : m(m), d(d), nc(nc) {
    std::mt19937 rng(seed);
    testing::NormalDistribution normal;
    testing::UniformRealDistribution u(0.1, 2.0);
    jp.resize(m, nc);
    jl.resize(m, d);
    r.resize(m);
    dl.resize(d);
    for (int i = 0; i < jp.size(); ++i) jp.data()[i] = normal(rng);
    for (int i = 0; i < jl.size(); ++i) jl.data()[i] = normal(rng);
    for (int i = 0; i < m; ++i) r[i] = normal(rng);
    for (int i = 0; i < d; ++i) dl[i] = u(rng);
    obs_rows = LandmarkBlock<double>::ObservationRows(m, d);
    data.assign(LandmarkBlock<double>::Size(obs_rows, d, nc), std::numeric_limits<double>::quiet_NaN());
    rotations.resize(2 * LandmarkBlock<double>::NumRotations(d));
  }
  LandmarkBlock<double> Block() {
    return LandmarkBlock<double>(data.data(), obs_rows, d, nc, LandmarkBlock<double>::Stride(nc, d));
  }
  // Writes [Jp | Jl | r] on the observation rows, zeros elsewhere.
  LandmarkBlock<double> Filled() {
    LandmarkBlock<double> b = Block();
    b.SetZero();
    for (int i = 0; i < m; ++i) {
      for (int c = 0; c < nc; ++c) b(i, c) = jp(i, c);
      for (int k = 0; k < d; ++k) b(i, nc + k) = jl(i, k);
      b(i, b.residual_column()) = r[i];
    }
    return b;
  }
  // H_ll = Jl^T Jl + lambda D^2, and its condition number.
  Eigen::MatrixXd Hll(double lambda) const {
    return jl.transpose() * jl + lambda * Eigen::MatrixXd(dl.cwiseAbs2().asDiagonal());
  }
  double Condition(double lambda) const {
    const Eigen::VectorXd e = Hll(lambda).selfadjointView<Eigen::Lower>().eigenvalues();
    return e.maxCoeff() / e.minCoeff();
  }
  // Schur complement and reduced right-hand side of the normal equations.
  Eigen::MatrixXd Schur(double lambda) const {
    return jp.transpose() * jp - jp.transpose() * jl * Hll(lambda).ldlt().solve(jl.transpose() * jp);
  }
  Eigen::VectorXd ReducedRhs(double lambda) const {
    return jp.transpose() * r - jp.transpose() * jl * Hll(lambda).ldlt().solve(jl.transpose() * r);
  }
  // |A|^2 of the whole block (the scale of every Gram entry).
  double Scale() const { return jp.squaredNorm() + jl.squaredNorm() + r.squaredNorm(); }
  double Tolerance(double lambda) const {
    const double kappa = Condition(lambda);
    EXPECT_LT(kappa, 1e3);
    return 1e3 * kEps * kappa * Scale();
  }

  int m, d, nc, obs_rows;
  Eigen::MatrixXd jp, jl;
  Eigen::VectorXd r, dl;
  std::vector<double> data;
  std::vector<double> rotations;
};

// Rows [begin, begin + count) of the block, columns [c0, c0 + n).
Eigen::MatrixXd Rows(const LandmarkBlock<double>& b, int begin, int count, int c0, int n) {
  Eigen::MatrixXd out(count, n);
  for (int i = 0; i < count; ++i) {
    for (int c = 0; c < n; ++c) out(i, c) = b(begin + i, c0 + c);
  }
  return out;
}

// (m, d, camera columns): a landmark seen 4 times by 6-d cameras, mixed
// sizes, and one seen once (m = 2 < d = 3: zero padding rows).
struct Shape {
  int m, d, nc;
};
const Shape kShapes[] = {{8, 3, 24}, {9, 2, 15}, {12, 4, 18}, {2, 3, 6}};

TEST(LandmarkBlock, SizesAndStride) {
  EXPECT_EQ(LandmarkBlock<double>::ObservationRows(8, 3), 8);
  EXPECT_EQ(LandmarkBlock<double>::ObservationRows(2, 3), 3);
  EXPECT_EQ(LandmarkBlock<double>::NumRotations(3), 6);
  const int stride = LandmarkBlock<double>::Stride(18, 3);
  EXPECT_GE(stride, 18 + 3 + 1);
  EXPECT_EQ(LandmarkBlock<double>::Size(8, 3, 18), static_cast<int64_t>(8 + 3) * stride);
  std::vector<double> data(LandmarkBlock<double>::Size(8, 3, 18));
  LandmarkBlock<double> b(data.data(), 8, 3, 18, stride);
  EXPECT_EQ(b.rows(), 11);
  EXPECT_EQ(b.cols(), 22);
  EXPECT_EQ(b.residual_column(), 21);
  EXPECT_EQ(b.first_reduced_row(), 3);
  EXPECT_EQ(b.num_reduced_rows(), 8);
}

// Undamped: R1^T R1 = Jl^T Jl, the reduced rows' B^T B and B^T r^ are the
// Schur complement and reduced right-hand side, the landmark columns are
// zero below R1, and the whole block keeps its Gram matrix (Q orthogonal).
TEST(LandmarkBlock, MarginalizeLeavesTheSchurComplementRows) {
  for (const Shape& shape : kShapes) {
    if (shape.m < shape.d) continue;  // Jl^T Jl singular: only damped (below)
    DenseBlock db(shape.m, shape.d, shape.nc, 100 + shape.m);
    LandmarkBlock<double> b = db.Filled();
    const Eigen::MatrixXd before = Rows(b, 0, db.obs_rows, 0, b.cols());
    std::vector<double> scratch(b.obs_rows() + b.cols());
    b.Marginalize(scratch.data());
    const double tolerance = db.Tolerance(0.0);
    const int d = shape.d, nc = shape.nc;
    const Eigen::MatrixXd r1 = Rows(b, 0, d, nc, d);
    EXPECT_TRUE(r1.isUpperTriangular(0.0)) << "zeros below the diagonal, exactly";
    EXPECT_LT((r1.transpose() * r1 - db.Hll(0.0)).norm(), tolerance);
    // Landmark columns on the reduced rows: exactly zero.
    EXPECT_EQ(Rows(b, d, db.obs_rows - d, nc, d).norm(), 0.0);
    const Eigen::MatrixXd bb = Rows(b, d, db.obs_rows - d, 0, nc);
    const Eigen::VectorXd rr = Rows(b, d, db.obs_rows - d, b.residual_column(), 1);
    EXPECT_LT((bb.transpose() * bb - db.Schur(0.0)).norm(), tolerance) << shape.m << "x" << d;
    EXPECT_LT((bb.transpose() * rr - db.ReducedRhs(0.0)).norm(), tolerance) << shape.m << "x" << d;
    const Eigen::MatrixXd after = Rows(b, 0, db.obs_rows, 0, b.cols());
    EXPECT_LT((after.transpose() * after - before.transpose() * before).norm(), tolerance);
    // The damping rows are untouched (zero).
    EXPECT_EQ(Rows(b, db.obs_rows, d, 0, b.cols()).norm(), 0.0);
  }
}

// Damped with sqrt(lambda) D_l: rows d.. hold Q^_2^T [Jp | 0 | r] of the
// damped system, rows 0..d-1 R^ with R^^T R^ = Jl^T Jl + lambda D^2.
TEST(LandmarkBlock, DampingGivesTheDampedSchurComplementRows) {
  for (const Shape& shape : kShapes) {
    DenseBlock db(shape.m, shape.d, shape.nc, 200 + shape.m);
    LandmarkBlock<double> b = db.Filled();
    std::vector<double> scratch(b.obs_rows() + b.cols());
    b.Marginalize(scratch.data());
    for (double lambda : {0.5, 4.0}) {
      const Eigen::VectorXd sqrt_lambda_dl = std::sqrt(lambda) * db.dl;
      b.ApplyDamping(sqrt_lambda_dl.data(), db.rotations.data());
      const double tolerance = db.Tolerance(lambda);
      const int d = shape.d, nc = shape.nc;
      const Eigen::MatrixXd r1 = Rows(b, 0, d, nc, d);
      EXPECT_TRUE(r1.isUpperTriangular(0.0));
      EXPECT_LT((r1.transpose() * r1 - db.Hll(lambda)).norm(), tolerance);
      const Eigen::MatrixXd bb = Rows(b, d, db.obs_rows, 0, nc);
      const Eigen::VectorXd rr = Rows(b, d, db.obs_rows, b.residual_column(), 1);
      EXPECT_EQ(Rows(b, d, db.obs_rows, nc, d).norm(), 0.0) << "no landmark entries left";
      EXPECT_LT((bb.transpose() * bb - db.Schur(lambda)).norm(), tolerance)
          << shape.m << "x" << d << ", lambda " << lambda;
      EXPECT_LT((bb.transpose() * rr - db.ReducedRhs(lambda)).norm(), tolerance)
          << shape.m << "x" << d << ", lambda " << lambda;
      // |Q^_1^T [r; 0]|^2 = r^T Jl H_ll^-1 Jl^T r, whatever the signs.
      const Eigen::VectorXd top = Rows(b, 0, d, b.residual_column(), 1);
      const double expected = (db.jl.transpose() * db.r).dot(db.Hll(lambda).ldlt().solve(db.jl.transpose() * db.r));
      EXPECT_NEAR(top.squaredNorm(), expected, tolerance);
      b.UndoDamping(db.rotations.data());
    }
  }
}

TEST(LandmarkBlock, UndoDampingRestoresTheMarginalizedBlock) {
  for (const Shape& shape : kShapes) {
    DenseBlock db(shape.m, shape.d, shape.nc, 300 + shape.m);
    LandmarkBlock<double> b = db.Filled();
    std::vector<double> scratch(b.obs_rows() + b.cols());
    b.Marginalize(scratch.data());
    const Eigen::MatrixXd marginalized = Rows(b, 0, b.rows(), 0, b.cols());
    const Eigen::VectorXd sqrt_lambda_dl = 3.0 * db.dl;
    b.ApplyDamping(sqrt_lambda_dl.data(), db.rotations.data());
    b.UndoDamping(db.rotations.data());
    // Each entry passes through at most d rotations forth and back: a few
    // ulps of the row's scale; 1e3 eps |A| leaves ample room.
    const Eigen::MatrixXd restored = Rows(b, 0, b.rows(), 0, b.cols());
    EXPECT_LT((restored - marginalized).norm(), 1e3 * kEps * std::sqrt(db.Scale()) * (1 + 3.0 * db.dl.norm()));
    EXPECT_EQ(Rows(b, b.obs_rows(), shape.d, 0, b.cols()).norm(), 0.0) << "damping rows cleared";
  }
}

TEST(LandmarkBlock, ReducedRowProducts) {
  DenseBlock db(8, 3, 24, 400);
  LandmarkBlock<double> b = db.Filled();
  std::vector<double> scratch(b.obs_rows() + b.cols());
  b.Marginalize(scratch.data());
  const Eigen::VectorXd sqrt_lambda_dl = db.dl;
  b.ApplyDamping(sqrt_lambda_dl.data(), db.rotations.data());
  const Eigen::MatrixXd bb = Rows(b, b.first_reduced_row(), b.num_reduced_rows(), 0, db.nc);
  const Eigen::VectorXd rr = Rows(b, b.first_reduced_row(), b.num_reduced_rows(), b.residual_column(), 1);
  std::mt19937 rng(401);
  testing::NormalDistribution normal;
  Eigen::VectorXd x(db.nc), t(b.num_reduced_rows()), y0(db.nc);
  for (int i = 0; i < db.nc; ++i) x[i] = normal(rng);
  for (int i = 0; i < t.size(); ++i) t[i] = normal(rng);
  for (int i = 0; i < db.nc; ++i) y0[i] = normal(rng);
  // The same dot products as the dense ones in other orders: within a few
  // dozen eps of |B| |x| (Higham 3.1); 1e-13 relative to those norms.
  const double scale = bb.norm() * (bb.norm() * x.norm() + t.norm() + rr.norm() + 1.0);
  Eigen::VectorXd out(b.num_reduced_rows());
  b.MultiplyReduced(x.data(), out.data());
  EXPECT_LT((out - bb * x).norm(), 1e-13 * scale);
  Eigen::VectorXd y = y0;
  b.MultiplyReducedTransposeAdd(t.data(), y.data());
  EXPECT_LT((y - (y0 + bb.transpose() * t)).norm(), 1e-13 * scale);
  y = y0;
  b.AddReducedRhs(y.data());
  EXPECT_LT((y - (y0 + bb.transpose() * rr)).norm(), 1e-13 * scale);
  y.setConstant(std::numeric_limits<double>::quiet_NaN());  // overwritten
  b.MultiplyReducedNormal(x.data(), y.data());
  EXPECT_LT((y - bb.transpose() * (bb * x)).norm(), 1e-13 * scale);
}

TEST(LandmarkBlock, ColumnGramAddsTheLowerTriangleOnly) {
  DenseBlock db(9, 3, 18, 500);
  LandmarkBlock<double> b = db.Filled();
  for (int n : {6, 9, 5}) {  // a fixed-size kernel's size and dynamic ones
    const int c0 = 3, row_begin = 1, row_end = 8;
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> gram(n, n);
    gram.setConstant(0.5);
    const Eigen::MatrixXd a = Rows(b, row_begin, row_end - row_begin, c0, n);
    b.AddColumnGramLower(c0, n, row_begin, row_end, gram.data());
    const Eigen::MatrixXd expected = a.transpose() * a;
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < n; ++k) {
        if (k > i) {
          EXPECT_EQ(gram(i, k), 0.5) << "upper triangle untouched";
        } else {
          // Sums of 7 products: within 16 eps of the absolute sums.
          const double bound = 16 * kEps * (a.col(i).cwiseAbs().dot(a.col(k).cwiseAbs()) + 0.5);
          EXPECT_NEAR(gram(i, k), 0.5 + expected(i, k), bound) << n << ": (" << i << ", " << k << ")";
        }
      }
    }
  }
}

// y_l = R^-1 (Q1^T r - Q1^T Jp y_p) is the minimizer over y_l of
// |Jl y_l + Jp y_p - r|^2 + lambda |D y_l|^2 for the given y_p:
// H_ll y_l = Jl^T (r - Jp y_p).
TEST(LandmarkBlock, BackSubstitutionIsTheLandmarkUpdateOfTheNormalEquations) {
  for (const Shape& shape : kShapes) {
    DenseBlock db(shape.m, shape.d, shape.nc, 600 + shape.m);
    LandmarkBlock<double> b = db.Filled();
    std::vector<double> scratch(b.obs_rows() + b.cols());
    b.Marginalize(scratch.data());
    const double lambda = 2.0;
    const Eigen::VectorXd sqrt_lambda_dl = std::sqrt(lambda) * db.dl;
    b.ApplyDamping(sqrt_lambda_dl.data(), db.rotations.data());
    std::mt19937 rng(601);
    testing::NormalDistribution normal;
    Eigen::VectorXd yp(shape.nc);
    for (int i = 0; i < shape.nc; ++i) yp[i] = normal(rng);
    Eigen::VectorXd yl(shape.d);
    double top = -1;
    b.BackSubstitute(yp.data(), yl.data(), &top);
    const Eigen::VectorXd expected = db.Hll(lambda).ldlt().solve(db.jl.transpose() * (db.r - db.jp * yp));
    // kappa eps relative, with the margin of the file's tolerance.
    const double kappa = db.Condition(lambda);
    EXPECT_LT((yl - expected).norm(), 1e3 * kEps * kappa * (expected.norm() + 1.0)) << shape.m << "x" << shape.d;
    const double top_expected =
        (db.jl.transpose() * db.r).dot(db.Hll(lambda).ldlt().solve(db.jl.transpose() * db.r));
    EXPECT_NEAR(top, top_expected, db.Tolerance(lambda));
  }
}

TEST(LandmarkBlock, ScaleColumnsAndLandmarkColumnNorms) {
  DenseBlock db(8, 3, 12, 700);
  LandmarkBlock<double> b = db.Filled();
  // Powers of two: exact.
  std::vector<double> scale(15);
  for (int c = 0; c < 15; ++c) scale[c] = std::ldexp(1.0, c % 4 - 1);
  b.ScaleColumns(scale.data());
  for (int i = 0; i < 8; ++i) {
    for (int c = 0; c < 12; ++c) EXPECT_EQ(b(i, c), db.jp(i, c) * scale[c]);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(b(i, 12 + k), db.jl(i, k) * scale[12 + k]);
    EXPECT_EQ(b(i, b.residual_column()), db.r[i]) << "the residual is not scaled";
  }
  std::vector<double> norms = {1.0, 2.0, 3.0};
  b.AddLandmarkColumnNorms(norms.data());
  for (int k = 0; k < 3; ++k) {
    const double expected = (db.jl.col(k) * scale[12 + k]).squaredNorm();
    EXPECT_NEAR(norms[k], (k + 1.0) + expected, 16 * kEps * (k + 1.0 + expected));
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
