// null_space.h on small linear scenes (a chain of cameras, points seen by
// neighbouring cameras), against the dense H = J^T J of the Jacobian Ceres'
// Problem::Evaluate gives:
// - LargestEigenvalue with the estimator's 30 iterations is a Rayleigh
//   quotient (never above lambda_max) a few per cent low at worst, also for
//   a translation gauge (residuals A (l - c) + b: J maps the all-ones vector
//   to zero), its estimates do not decrease with more iterations, and it is
//   0 for a zero Jacobian;
// - FindNearNullSpace on the translation gauge: the 3 null directions come
//   out with Ritz values at rounding level, their camera parts are the
//   translations (every camera block the same vector), orthonormal in the
//   full space, and the next Ritz value bounds H's 4th smallest eigenvalue
//   from above;
// - AddLandmarkMetric is v + K^T K v with K = H_ll^-1 H_lc from the dense H.
//
// Tolerances. Exact arithmetic keeps a Rayleigh quotient at or below
// lambda_max; 1e-12 relative covers its rounding. The header promises "a
// few per cent low at worst" after the estimator's 30 iterations: 5 per
// cent. The null directions' ||J f||^2 is at the level eps^2 lambda_max
// (1e-32) for vectors accurate to eps: 1e-20 lambda_max leaves twelve
// orders for the subspace iteration's error. Vectors and K^T K products
// are compared to 1e-8 relative: the Jacobians are random Gaussian blocks
// with more rows than columns (condition numbers of H in the thousands
// outside the gauge), the computations backward stable, so they agree to
// about 1e-16 x cond.
#include "ceres_sqrtba/internal/covariance/null_space.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Eigen/Dense"
#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/covariance/landmark_factorization.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"
#include "gtest/gtest.h"
#include "linear_cost_function.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using Matrix = Eigen::MatrixXd;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

enum class Kind {
  kRandom,       // A_c c + A_l l + b: full rank
  kTranslation,  // A (l - c) + b: (l + t, c + t) is free, the all-ones vector among them
  kZero,         // every Jacobian zero
};

// A chain of cameras of size 3, three points seen by each neighbouring pair
// (c, c + 1), 4 residuals per observation: each camera sees at least 3
// points and each point 2 cameras, so the points are the landmarks. The
// structure, the landmark factorization, and the dense Jacobian with its
// columns in the tangent order of the structure (landmarks, then cameras).
struct Scene {
  Scene(int num_cameras, Kind kind, unsigned seed) : rng(seed), context(1) {
    std::normal_distribution<double> n(0.0, 1.0);
    cameras.assign(num_cameras, std::vector<double>(3));
    for (auto& c : cameras) {
      for (double& x : c) x = n(rng);
    }
    points.reserve(3 * num_cameras);
    for (int c = 0; c + 1 < num_cameras; ++c) {
      for (int k = 0; k < 3; ++k) {
        points.push_back({n(rng), n(rng), n(rng)});
        for (int side = 0; side < 2; ++side) {
          Matrix a_camera = Random(4, 3), a_point = Random(4, 3);
          if (kind == Kind::kTranslation) a_camera = -a_point;
          if (kind == Kind::kZero) a_camera = a_point = Matrix::Zero(4, 3);
          problem.AddResidualBlock(new testing::LinearCostFunction({a_camera, a_point}, Random(4, 1)), nullptr,
                                   cameras[c + side].data(), points.back().data());
        }
      }
    }
    std::string error;
    EXPECT_EQ(BuildProblemStructure(problem, nullptr, &s, &error), StructureStatus::kOk) << error;
    EXPECT_EQ(s.landmarks.size(), points.size());
    f = std::make_unique<LandmarkFactorization>(s, &context);
    EXPECT_TRUE(f->Compute(&problem, &error)) << error;

    ceres::Problem::EvaluateOptions options;
    for (int b : s.variable_blocks) options.parameter_blocks.push_back(s.parameter_blocks[b].user_values);
    ceres::CRSMatrix crs;
    EXPECT_TRUE(problem.Evaluate(options, nullptr, nullptr, nullptr, &crs));
    j.setZero(crs.num_rows, crs.num_cols);
    for (int r = 0; r < crs.num_rows; ++r) {
      for (int k = crs.rows[r]; k < crs.rows[r + 1]; ++k) j(r, crs.cols[k]) = crs.values[k];
    }
    h = j.transpose() * j;
    eigenvalues = Eigen::SelfAdjointEigenSolver<Matrix>(h).eigenvalues();  // increasing
  }
  Matrix Random(int rows, int cols) {
    std::normal_distribution<double> n(0.0, 1.0);
    Matrix m(rows, cols);
    for (int i = 0; i < m.size(); ++i) m.data()[i] = n(rng);
    return m;
  }
  double LambdaMax() const { return eigenvalues[eigenvalues.size() - 1]; }

  std::mt19937 rng;
  std::vector<std::vector<double>> cameras, points;  // points: reserved, never reallocated
  ceres::Problem problem;
  ParallelContext context;
  ProblemStructure s;
  std::unique_ptr<LandmarkFactorization> f;
  Matrix j, h;
  Eigen::VectorXd eigenvalues;
};

constexpr int kEstimatorIterations = 30;  // covariance_estimator.cc's

TEST(LargestEigenvalue, ARayleighQuotientAFewPerCentLowAtWorst) {
  for (unsigned seed : {1u, 2u, 3u}) {
    for (const Kind kind : {Kind::kRandom, Kind::kTranslation}) {
      Scene scene(5, kind, seed);
      const double lambda_max = scene.LambdaMax();
      const double lambda = LargestEigenvalue(*scene.f, kEstimatorIterations);
      const std::string what = std::string(kind == Kind::kRandom ? "random" : "translation") + ", seed " +
                               std::to_string(seed);
      EXPECT_LE(lambda, lambda_max * (1.0 + 1e-12)) << what;
      EXPECT_GE(lambda, 0.95 * lambda_max) << what;
    }
  }
}

// The gauge is real: J maps the all-ones vector to zero, so a power
// iteration started there would report 0; H's three smallest eigenvalues
// are at rounding level, the fourth is not.
TEST(LargestEigenvalue, TranslationGaugeIsNotMistakenForZero) {
  Scene scene(5, Kind::kTranslation, 4);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(scene.j.cols());
  EXPECT_LT((scene.j * ones).norm(), 1e-12 * scene.j.norm());
  EXPECT_LT(scene.eigenvalues[2], 1e-12 * scene.LambdaMax());
  EXPECT_GT(scene.eigenvalues[3], 1e-6 * scene.LambdaMax());
  const double lambda = LargestEigenvalue(*scene.f, kEstimatorIterations);
  EXPECT_GE(lambda, 0.95 * scene.LambdaMax());
  EXPECT_LE(lambda, scene.LambdaMax() * (1.0 + 1e-12));
}

// For a positive semi-definite H the Rayleigh quotients of the power
// iterates never decrease; many iterations converge to lambda_max.
TEST(LargestEigenvalue, MoreIterationsNeverWorse) {
  Scene scene(4, Kind::kRandom, 5);
  double previous = 0.0;
  for (int iterations = 1; iterations <= kEstimatorIterations; ++iterations) {
    const double lambda = LargestEigenvalue(*scene.f, iterations);
    EXPECT_GE(lambda, previous * (1.0 - 1e-12)) << iterations << " iterations";
    EXPECT_GT(lambda, 0.0);
    previous = lambda;
  }
  const double gap = scene.eigenvalues[scene.eigenvalues.size() - 2] / scene.LambdaMax();
  ASSERT_LT(gap, 0.95) << "the test needs a gap below lambda_max to converge";
  EXPECT_NEAR(LargestEigenvalue(*scene.f, 2000), scene.LambdaMax(), 1e-10 * scene.LambdaMax());
}

TEST(LargestEigenvalue, ZeroJacobianIsZero) {
  Scene scene(3, Kind::kZero, 6);
  ASSERT_EQ(scene.LambdaMax(), 0.0);
  EXPECT_EQ(LargestEigenvalue(*scene.f, kEstimatorIterations), 0.0);
}

// As the covariance estimator runs it: D S D + mu I factorized, D = diag(S)^-1/2.
struct Shifted {
  explicit Shifted(const Scene& scene) : pattern(scene.s) {
    plan = PlanSparseCholesky(pattern);
    EXPECT_TRUE(plan.error.empty()) << plan.error;
    pattern.ScalarPattern(&col_begin, &rows);
    std::vector<double> values(static_cast<size_t>(pattern.num_nonzeros()));
    scene.f->AssembleReducedCameraMatrix(pattern, col_begin, values.data());
    const int nc = pattern.num_parameters();
    d.resize(nc);
    for (int j = 0; j < nc; ++j) d[j] = 1.0 / std::sqrt(values[col_begin[j + 1] - 1]);
    for (int j = 0; j < nc; ++j) {
      for (int64_t k = col_begin[j]; k < col_begin[j + 1]; ++k) values[k] *= d[rows[k]] * d[j];
      values[col_begin[j + 1] - 1] += kNullSpaceShift;
    }
    cholesky = std::make_unique<SparseCameraCholesky>(pattern, plan, col_begin.data(), rows.data());
    const LinearSolverSummary factored = cholesky->Factorize(values.data());
    EXPECT_EQ(factored.termination, LinearSolverTermination::kSuccess) << factored.message;
  }
  ReducedCameraPattern pattern;
  SparseCholeskyPlan plan;
  std::vector<int64_t> col_begin, rows;
  std::vector<double> d;
  std::unique_ptr<SparseCameraCholesky> cholesky;
};

TEST(FindNearNullSpace, FindsTheTranslationGauge) {
  const int kCameras = 4;
  Scene scene(kCameras, Kind::kTranslation, 7);
  Shifted shifted(scene);
  NearNullSpace space;
  std::string error;
  const int p = 6;
  ASSERT_TRUE(FindNearNullSpace(*scene.f, shifted.cholesky.get(), shifted.d, p, &space, &error)) << error;
  ASSERT_EQ(static_cast<int>(space.theta.size()), p);
  ASSERT_EQ(space.camera.rows(), 3 * kCameras);
  ASSERT_EQ(space.camera.cols(), p);
  for (int k = 1; k < p; ++k) EXPECT_LE(space.theta[k - 1], space.theta[k]);
  const double lambda_max = scene.LambdaMax();
  for (int k = 0; k < 3; ++k) EXPECT_LE(std::abs(space.theta[k]), 1e-20 * lambda_max) << k;
  // Courant-Fischer: the 4th Ritz value is at least H's 4th smallest eigenvalue.
  EXPECT_GE(space.theta[3], scene.eigenvalues[3] * (1.0 - 1e-9));

  // The null vectors f = [t ... t] over all N blocks (points and cameras,
  // all of size 3), full-space orthonormal: the camera parts hold the same
  // t in every camera block, and C^T C = (cameras / N) I.
  const Matrix c = space.camera.leftCols(3);
  for (int k = 0; k < 3; ++k) {
    for (int cam = 1; cam < kCameras; ++cam) {
      EXPECT_LT((c.col(k).segment(3 * cam, 3) - c.col(k).head(3)).norm(), 1e-8 * c.col(k).norm()) << k;
    }
  }
  const double blocks = static_cast<double>(kCameras + scene.points.size());
  EXPECT_LT((c.transpose() * c - (kCameras / blocks) * Matrix::Identity(3, 3)).norm(), 1e-8);
}

// Without a gauge no Ritz value is at rounding level: the smallest is at
// least H's smallest eigenvalue.
TEST(FindNearNullSpace, FullRankHasNoNullDirection) {
  Scene scene(4, Kind::kRandom, 8);
  Shifted shifted(scene);
  NearNullSpace space;
  std::string error;
  ASSERT_TRUE(FindNearNullSpace(*scene.f, shifted.cholesky.get(), shifted.d, 4, &space, &error)) << error;
  ASSERT_GT(scene.eigenvalues[0], 1e-6 * scene.LambdaMax());
  EXPECT_GE(space.theta[0], scene.eigenvalues[0] * (1.0 - 1e-9));
}

// K = H_ll^-1 H_lc: H's landmark part is block diagonal (one 3 x 3 block per
// point), so K's rows per landmark are its own block's solve.
TEST(AddLandmarkMetric, IsVPlusKTransposeKV) {
  Scene scene(4, Kind::kRandom, 9);
  const int nl = scene.s.camera_tangent_begin, nc = scene.s.num_camera_parameters;
  ASSERT_EQ(nl, 3 * static_cast<int>(scene.points.size()));
  Matrix k(nl, nc);
  for (int l = 0; l < nl; l += 3) {
    k.middleRows(l, 3) = scene.h.block(l, l, 3, 3).llt().solve(scene.h.block(l, nl, 3, nc));
  }
  Matrix v(nc, 2);
  for (int i = 0; i < v.size(); ++i) v.data()[i] = std::sin(1.0 + i);
  const Matrix expected = v + k.transpose() * (k * v);
  const Matrix got = AddLandmarkMetric(*scene.f, v);
  EXPECT_LT((got - expected).norm(), 1e-8 * expected.norm());
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
