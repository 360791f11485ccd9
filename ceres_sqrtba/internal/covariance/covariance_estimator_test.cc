// CovarianceEstimator (covariance/covariance_estimator.h), phase by phase, on
// small linear scenes whose covariance is computed densely here from the
// Jacobian that Ceres' Problem::Evaluate gives: Read (the landmarks and the
// structure; problems without landmarks or with invalid values), Compute's
// exact inverse H^-1 for every kind of block (camera and landmark, near and
// far in the reduced camera matrix, with and without the loss), its
// statistics, the gauge (SPARSE_QR semantics fail naming the rank, DENSE_SVD
// semantics give the pseudo-inverse H^+), landmarks their residuals do not
// determine (refused by name, or skipped), weak landmarks, the memory limit,
// a failing cost function, and results independent of the thread count.
//
// Tolerances. Blocks are compared in Frobenius norm relative to
// sqrt(|Sigma_aa| |Sigma_bb|) (which bounds every entry of Sigma_ab by
// Cauchy-Schwarz). The scenes' Jacobians are random Gaussian blocks with
// about 1.5 times as many rows as columns, so H = J^T J has a condition
// number of at most a few thousand; the estimator (QR, Cholesky, selected
// inversion) and the dense reference (Eigen's LLT or eigensolver) are both
// backward stable, so they agree to about 1e-16 x cond(H) < 1e-12: 1e-8
// leaves four orders of margin without depending on how anything rounds.
#include "ceres_sqrtba/internal/covariance/covariance_estimator.h"

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "Eigen/Dense"
#include "ceres/ceres.h"
#include "gtest/gtest.h"
#include "linear_cost_function.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using Matrix = Eigen::MatrixXd;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr double kTolerance = 1e-8;

// The cost functions fail once the first parameter's first value exceeds this.
constexpr double kFailAbove = 100.0;

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

enum class Gauge {
  kNone,         // random A_c c + A_l l + b: full rank
  kScaled,       // A (l - D c) + b, D = diag(2, 1, 0.5): l + t, c + D^-1 t is free
  kTranslation,  // A (l - c) + b: l + t, c + t is free, the all-ones vector among them
};

// A chain of cameras, `per_pair` points seen by each pair of neighbouring
// cameras (c, c + 1): the reduced camera matrix is block tridiagonal, so
// cameras two apart are far (their block of G comes from solves). With 3
// points per pair every camera sees more points (at least 3) than a point
// sees cameras (2), so that the points are the landmarks Ceres' ordering
// picks. Residuals of 4 rows per observation, `gauge` saying which (cameras
// of size 3 with a gauge: a 3-dimensional null space).
struct Scene {
  Scene(int num_cameras, int camera_size, int per_pair, Gauge gauge, unsigned seed,
        ceres::LossFunction* loss = nullptr)
      : rng(seed), cameras(num_cameras, std::vector<double>(camera_size)) {
    problem = std::make_unique<ceres::Problem>();
    std::normal_distribution<double> n(0.0, 1.0);
    for (auto& c : cameras) {
      for (double& x : c) x = n(rng);
    }
    points.reserve(100);
    for (int c = 0; c + 1 < num_cameras; ++c) {
      for (int k = 0; k < per_pair; ++k) {
        points.push_back({n(rng), n(rng), n(rng)});
        for (int side = 0; side < 2; ++side) {
          Matrix a_camera = Random(4, camera_size), a_point = Random(4, 3);
          if (gauge == Gauge::kScaled) a_camera = -a_point * Eigen::Vector3d(2.0, 1.0, 0.5).asDiagonal();
          if (gauge == Gauge::kTranslation) a_camera = -a_point;
          auto* cost = new testing::LinearCostFunction({a_camera, a_point}, Random(4, 1), kFailAbove);
          ids.push_back(problem->AddResidualBlock(cost, loss, cameras[c + side].data(), points.back().data()));
        }
      }
    }
  }
  Matrix Random(int rows, int cols) {
    std::normal_distribution<double> n(0.0, 1.0);
    Matrix m(rows, cols);
    for (int i = 0; i < m.size(); ++i) m.data()[i] = n(rng);
    return m;
  }
  // A point seen by camera c only, through `rows` residuals scaled by `scale`.
  ceres::ResidualBlockId AddPoint(int c, int rows, double scale) {
    points.push_back({0.5, 0.5, 0.5});
    const int camera_size = static_cast<int>(cameras[c].size());
    ids.push_back(problem->AddResidualBlock(
        new testing::LinearCostFunction({scale * Random(rows, camera_size), scale * Random(rows, 3)}, Random(rows, 1),
                                        kFailAbove),
        nullptr, cameras[c].data(), points.back().data()));
    return ids.back();
  }
  // The variable blocks, points then cameras: the dense Jacobian's columns.
  std::vector<double*> Blocks(const double* except = nullptr) {
    std::vector<double*> blocks;
    for (auto& p : points) {
      if (p.data() != except) blocks.push_back(p.data());
    }
    for (auto& c : cameras) blocks.push_back(c.data());
    return blocks;
  }

  std::mt19937 rng;
  std::vector<std::vector<double>> cameras, points;  // points: reserved, never reallocated
  std::unique_ptr<ceres::Problem> problem;
  std::vector<ceres::ResidualBlockId> ids;
};

// The dense Jacobian by Ceres over `blocks` (their columns in that order),
// and each block's first column.
struct Dense {
  Matrix j;
  std::map<const double*, int> offset, size;
};

Dense DenseJacobian(ceres::Problem* problem, const std::vector<double*>& blocks, bool apply_loss,
                    const std::vector<ceres::ResidualBlockId>& residuals = {}) {
  ceres::Problem::EvaluateOptions options;
  options.parameter_blocks = blocks;
  options.residual_blocks = residuals;
  options.apply_loss_function = apply_loss;
  ceres::CRSMatrix crs;
  EXPECT_TRUE(problem->Evaluate(options, nullptr, nullptr, nullptr, &crs));
  Dense d;
  d.j.setZero(crs.num_rows, crs.num_cols);
  for (int r = 0; r < crs.num_rows; ++r) {
    for (int k = crs.rows[r]; k < crs.rows[r + 1]; ++k) d.j(r, crs.cols[k]) = crs.values[k];
  }
  int column = 0;
  for (double* b : blocks) {
    d.offset[b] = column;
    d.size[b] = problem->ParameterBlockTangentSize(b);
    column += d.size[b];
  }
  return d;
}

// H^-1 (full rank), or H^+ with the `drop` smallest eigenvalues' directions
// removed.
Matrix DenseCovariance(const Matrix& j, int drop = 0) {
  const Matrix h = j.transpose() * j;
  if (drop == 0) return h.llt().solve(Matrix::Identity(h.rows(), h.cols()));
  Eigen::SelfAdjointEigenSolver<Matrix> eigen(h);
  const Matrix u = eigen.eigenvectors().rightCols(h.rows() - drop);
  return u * eigen.eigenvalues().tail(h.rows() - drop).cwiseInverse().asDiagonal() * u.transpose();
}

// The estimator run on `scene` for the requested pairs of user blocks.
struct Estimated {
  bool ok = false;
  std::string error;
  std::vector<double> values;
  std::vector<int64_t> offsets;
  CovarianceStatistics statistics;
  std::vector<int> undetermined;
  std::vector<std::pair<int, int>> requests;
};

// `estimator` reads the problem, then computes the pairs of user blocks.
Estimated Estimate(CovarianceEstimator* estimator, const ceres::Problem& problem,
                   const std::vector<std::pair<const double*, const double*>>& pairs) {
  Estimated run;
  std::string error;
  EXPECT_EQ(estimator->Read(problem, &error), StructureStatus::kOk) << error;
  const ProblemStructure& s = estimator->structure();
  for (const auto& pair : pairs) {
    run.requests.emplace_back(s.index_of.at(pair.first), s.index_of.at(pair.second));
  }
  run.ok = estimator->Compute(problem, run.requests, &run.values, &run.offsets, &run.error);
  run.statistics = estimator->statistics();
  run.undetermined = estimator->undetermined();
  return run;
}

Estimated Estimate(const CovarianceEstimatorOptions& options, const ceres::Problem& problem,
                   const std::vector<std::pair<const double*, const double*>>& pairs) {
  CovarianceEstimator estimator(options);
  return Estimate(&estimator, problem, pairs);
}

// The largest relative error of the requested blocks against `reference`.
double WorstError(const Estimated& run, const std::vector<std::pair<const double*, const double*>>& pairs,
                  const Dense& d, const Matrix& reference) {
  double worst = 0.0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const double* a = pairs[i].first;
    const double* b = pairs[i].second;
    const int oa = d.offset.at(a), ob = d.offset.at(b), na = d.size.at(a), nb = d.size.at(b);
    EXPECT_EQ(run.offsets[i + 1] - run.offsets[i], na * nb) << i;
    const Eigen::Map<const RowMatrix> block(run.values.data() + run.offsets[i], na, nb);
    const Matrix expected = reference.block(oa, ob, na, nb);
    const double scale =
        std::sqrt(reference.block(oa, oa, na, na).norm() * reference.block(ob, ob, nb, nb).norm());
    const double error = (block - expected).norm() / scale;
    EXPECT_LT(error, kTolerance) << "request " << i;
    worst = std::max(worst, error);
  }
  return worst;
}

using Pairs = std::vector<std::pair<const double*, const double*>>;

// Every kind of block on a chain of 6 cameras with 3 points per pair: own
// blocks, camera-camera near (neighbours) and far (0 and 5), landmark-camera
// near and far, landmark-landmark on the same cameras, near and far.
Pairs AllKinds(Scene* s) {
  auto c = [s](int i) { return s->cameras[i].data(); };
  auto p = [s](int pair, int k) { return s->points[3 * pair + k].data(); };  // sees cameras pair, pair + 1
  return {{c(0), c(0)},       {c(3), c(3)},       {p(0, 0), p(0, 0)}, {p(3, 1), p(3, 1)}, {c(0), c(1)},
          {c(0), c(5)},       {c(5), c(0)},       {p(0, 0), c(1)},    {p(0, 0), c(5)},    {c(4), p(0, 1)},
          {p(0, 0), p(0, 1)}, {p(0, 0), p(1, 0)}, {p(0, 0), p(4, 2)}, {p(4, 2), p(0, 0)}};
}

TEST(CovarianceEstimator, ReadFindsThePointsAsLandmarks) {
  Scene scene(6, 6, 3, Gauge::kNone, 1);
  CovarianceEstimator estimator(CovarianceEstimatorOptions{});
  std::string error;
  ASSERT_EQ(estimator.Read(*scene.problem, &error), StructureStatus::kOk) << error;
  const ProblemStructure& s = estimator.structure();
  EXPECT_EQ(s.landmarks.size(), scene.points.size());
  EXPECT_EQ(s.cameras.size(), scene.cameras.size());
  for (auto& p : scene.points) EXPECT_TRUE(s.parameter_blocks[s.index_of.at(p.data())].is_landmark);
  for (auto& c : scene.cameras) EXPECT_FALSE(s.parameter_blocks[s.index_of.at(c.data())].is_landmark);
  EXPECT_EQ(s.num_camera_parameters, 36);
}

TEST(CovarianceEstimator, ReadWithoutLandmarksOrWithInvalidValues) {
  {
    // Nothing variable: the caller hands the problem to ceres::Covariance.
    Scene scene(2, 6, 1, Gauge::kNone, 2);
    for (auto& c : scene.cameras) scene.problem->SetParameterBlockConstant(c.data());
    for (auto& p : scene.points) scene.problem->SetParameterBlockConstant(p.data());
    CovarianceEstimator estimator(CovarianceEstimatorOptions{});
    std::string error;
    EXPECT_EQ(estimator.Read(*scene.problem, &error), StructureStatus::kNoLandmarks);
    EXPECT_TRUE(Contains(error, "The problem has no landmarks")) << error;
  }
  {
    Scene scene(3, 6, 1, Gauge::kNone, 3);
    scene.points[0][1] = std::numeric_limits<double>::quiet_NaN();
    CovarianceEstimator estimator(CovarianceEstimatorOptions{});
    std::string error;
    EXPECT_EQ(estimator.Read(*scene.problem, &error), StructureStatus::kInvalid);
    // Ceres' words, naming the block.
    std::ostringstream address;
    address << static_cast<const void*>(scene.points[0].data());
    EXPECT_TRUE(
        Contains(error, "ParameterBlock: " + address.str() + " with size 3 has at least one invalid value"))
        << error;
  }
}

// H^-1 for every kind of block, against the dense inverse.
TEST(CovarianceEstimator, ExactInverseForEveryKindOfBlock) {
  Scene scene(6, 6, 3, Gauge::kNone, 4);
  const Pairs pairs = AllKinds(&scene);
  const Estimated run = Estimate(CovarianceEstimatorOptions{}, *scene.problem, pairs);
  ASSERT_TRUE(run.ok) << run.error;
  const Dense d = DenseJacobian(scene.problem.get(), scene.Blocks(), true);
  WorstError(run, pairs, d, DenseCovariance(d.j));
  EXPECT_EQ(run.statistics.null_space_dimension, 0);
  EXPECT_EQ(run.statistics.weak_landmarks, 0);
  EXPECT_TRUE(run.undetermined.empty());
  // A block and its mirror are transposes.
  const Eigen::Map<const RowMatrix> ab(run.values.data() + run.offsets[5], 6, 6);
  const Eigen::Map<const RowMatrix> ba(run.values.data() + run.offsets[6], 6, 6);
  EXPECT_LT((ab - ba.transpose()).norm(), kTolerance * ab.norm());
}

// The columns of G that far requests need: only the far cameras', counted
// in the statistics; requests on S's pattern need none.
TEST(CovarianceEstimator, FarRequestsNeedColumnsOfTheInverse) {
  Scene scene(6, 6, 3, Gauge::kNone, 5);
  auto c = [&](int i) { return scene.cameras[i].data(); };
  auto p = [&](int i) { return scene.points[3 * i].data(); };  // the first point of pair i
  const Dense d = DenseJacobian(scene.problem.get(), scene.Blocks(), true);
  const Matrix reference = DenseCovariance(d.j);
  struct Case {
    Pairs pairs;
    int columns;
  };
  const std::vector<Case> cases = {
      {{{c(0), c(0)}, {c(2), c(3)}, {p(0), c(1)}, {p(0), scene.points[1].data()}}, 0},  // on S's pattern
      {{{c(0), c(5)}}, 1},                                                              // camera 5's column
      {{{p(0), c(5)}}, 1},                              // the same, from a landmark
      {{{c(5), p(0)}}, 2},                              // cameras 0 and 1 (point 0's)
      {{{c(0), c(5)}, {c(1), c(5)}, {c(0), c(4)}}, 2},  // cameras 5 and 4
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Estimated run = Estimate(CovarianceEstimatorOptions{}, *scene.problem, cases[i].pairs);
    ASSERT_TRUE(run.ok) << run.error;
    EXPECT_EQ(run.statistics.cameras_with_columns, cases[i].columns) << "case " << i;
    WorstError(run, cases[i].pairs, d, reference);
  }
}

// The Cholesky factor of S (36 x 36, block tridiagonal) holds at least the
// lower triangles of its 6 diagonal blocks and its 5 subdiagonal blocks, at
// most a dense n x n.
TEST(CovarianceEstimator, FactorStatistics) {
  Scene scene(6, 6, 3, Gauge::kNone, 6);
  const Estimated run = Estimate(CovarianceEstimatorOptions{}, *scene.problem,
                                 {{scene.cameras[0].data(), scene.cameras[0].data()}});
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_GE(run.statistics.factor_values, 6 * 21 + 5 * 36);
  EXPECT_LE(run.statistics.factor_values, 36 * 36);
  EXPECT_GE(run.statistics.seconds_jacobian, 0.0);
  EXPECT_GE(run.statistics.seconds_blocks, 0.0);
}

// With a loss, the Jacobian is corrected as Ceres corrects it; without,
// the loss is ignored.
TEST(CovarianceEstimator, LossAppliedOrNot) {
  for (bool apply : {true, false}) {
    Scene scene(6, 6, 3, Gauge::kNone, 7, new ceres::CauchyLoss(0.5));
    const Pairs pairs = AllKinds(&scene);
    CovarianceEstimatorOptions options;
    options.apply_loss_function = apply;
    const Estimated run = Estimate(options, *scene.problem, pairs);
    ASSERT_TRUE(run.ok) << run.error;
    const Dense d = DenseJacobian(scene.problem.get(), scene.Blocks(), apply);
    WorstError(run, pairs, d, DenseCovariance(d.j));
    // The loss changes the covariance by far more than the tolerance: the
    // other setting's reference does not match.
    const Dense other = DenseJacobian(scene.problem.get(), scene.Blocks(), !apply);
    const Matrix other_reference = DenseCovariance(other.j);
    const Eigen::Map<const RowMatrix> block(run.values.data() + run.offsets[0], 6, 6);
    const int o = d.offset.at(scene.cameras[0].data());
    EXPECT_GT((block - other_reference.block(o, o, 6, 6)).norm(), 1e-3 * block.norm()) << apply;
  }
}

// The same bits whatever the number of threads.
TEST(CovarianceEstimator, ResultDoesNotDependOnThreads) {
  Scene scene(6, 6, 3, Gauge::kNone, 8);
  const Pairs pairs = AllKinds(&scene);
  CovarianceEstimatorOptions options;
  const Estimated one = Estimate(options, *scene.problem, pairs);
  options.num_threads = 3;
  const Estimated three = Estimate(options, *scene.problem, pairs);
  ASSERT_TRUE(one.ok && three.ok) << one.error << three.error;
  EXPECT_EQ(one.offsets, three.offsets);
  EXPECT_EQ(one.values, three.values);
}

// A free gauge (3 directions), SPARSE_QR semantics: fails with the rank.
TEST(CovarianceEstimator, GaugeFreeFailsWithTheRank) {
  Scene scene(6, 3, 3, Gauge::kScaled, 9);
  const Estimated run = Estimate(CovarianceEstimatorOptions{}, *scene.problem, AllKinds(&scene));
  EXPECT_FALSE(run.ok);
  // 15 points and 6 cameras of 3 parameters each: 63 columns, rank 60.
  EXPECT_TRUE(Contains(run.error, "Jacobian matrix is rank deficient. Number of columns: 63 rank: 60 "))
      << run.error;
}

// DENSE_SVD semantics: the pseudo-inverse, the null space found (rank -1)
// or given (rank 3).
TEST(CovarianceEstimator, GaugeFreePseudoInverse) {
  Scene scene(6, 3, 3, Gauge::kScaled, 10);
  const Pairs pairs = AllKinds(&scene);
  const Dense d = DenseJacobian(scene.problem.get(), scene.Blocks(), true);
  const Matrix reference = DenseCovariance(d.j, 3);
  for (int rank : {-1, 3}) {
    CovarianceEstimatorOptions options;
    options.pseudo_inverse = true;
    options.null_space_rank = rank;
    const Estimated run = Estimate(options, *scene.problem, pairs);
    ASSERT_TRUE(run.ok) << run.error;
    EXPECT_EQ(run.statistics.null_space_dimension, 3) << rank;
    WorstError(run, pairs, d, reference);
  }
}

// A translation gauge (residuals A (l - c) + b with cameras and landmarks of
// the same size: moving every block by (1, 1, 1) changes nothing) makes the
// all-ones vector a null vector of the Jacobian; the power iteration for
// lambda_max(H) (covariance/null_space.cc) must not start there, or a
// Jacobian that is not zero would be reported as zero. The rank (SPARSE_QR)
// and the pseudo-inverse (DENSE_SVD), as with the scaled gauge above.
TEST(CovarianceEstimator, TranslationGaugeContainingTheAllOnesVector) {
  Scene scene(6, 3, 3, Gauge::kTranslation, 18);
  const Pairs pairs = AllKinds(&scene);
  const Estimated sparse_qr = Estimate(CovarianceEstimatorOptions{}, *scene.problem, pairs);
  EXPECT_FALSE(sparse_qr.ok);
  EXPECT_TRUE(Contains(sparse_qr.error, "Jacobian matrix is rank deficient. Number of columns: 63 rank: 60 "))
      << sparse_qr.error;
  CovarianceEstimatorOptions options;
  options.pseudo_inverse = true;
  options.null_space_rank = -1;
  const Estimated run = Estimate(options, *scene.problem, pairs);
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.statistics.null_space_dimension, 3);
  const Dense d = DenseJacobian(scene.problem.get(), scene.Blocks(), true);
  WorstError(run, pairs, d, DenseCovariance(d.j, 3));
}

// DENSE_SVD semantics with fewer dropped directions than the null space
// has: Ceres' message.
TEST(CovarianceEstimator, GaugeFreeWithTooSmallNullSpaceRank) {
  Scene scene(6, 3, 3, Gauge::kScaled, 11);
  for (int rank : {0, 2}) {
    CovarianceEstimatorOptions options;
    options.pseudo_inverse = true;
    options.null_space_rank = rank;
    const Estimated run = Estimate(options, *scene.problem, AllKinds(&scene));
    EXPECT_FALSE(run.ok) << rank;
    EXPECT_TRUE(Contains(run.error,
                         "Error: Covariance matrix is near rank deficient and the user did not specify a "
                         "non-zero Covariance::Options::null_space_rank"))
        << run.error;
    EXPECT_TRUE(Contains(run.error, "min_reciprocal_condition_number: 1e-14")) << run.error;
  }
}

// A full-rank problem under DENSE_SVD semantics: nothing dropped, H^-1.
TEST(CovarianceEstimator, PseudoInverseOfAFullRankProblemIsTheInverse) {
  Scene scene(6, 6, 3, Gauge::kNone, 12);
  const Pairs pairs = AllKinds(&scene);
  CovarianceEstimatorOptions options;
  options.pseudo_inverse = true;
  options.null_space_rank = -1;
  const Estimated run = Estimate(options, *scene.problem, pairs);
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.statistics.null_space_dimension, 0);
  const Dense d = DenseJacobian(scene.problem.get(), scene.Blocks(), true);
  WorstError(run, pairs, d, DenseCovariance(d.j));
}

// A point seen once through 2 residuals is not determined by them: refused
// by name in both semantics.
TEST(CovarianceEstimator, UndeterminedLandmarkIsNamed) {
  for (bool pseudo_inverse : {false, true}) {
    Scene scene(6, 6, 3, Gauge::kNone, 13);
    scene.AddPoint(2, 2, 1.0);
    CovarianceEstimatorOptions options;
    options.pseudo_inverse = pseudo_inverse;
    options.null_space_rank = -1;
    const Estimated run = Estimate(options, *scene.problem, AllKinds(&scene));
    EXPECT_FALSE(run.ok);
    EXPECT_TRUE(Contains(run.error, "Jacobian matrix is rank deficient: the landmark " +
                                        NameOf(scene.points.back().data()) +
                                        " (tangent size 3) is not determined by its 2 residuals"))
        << run.error;
  }
}

// skip_undetermined_landmarks: the point and its residuals are left out,
// requests naming it hold zeros, and the rest is the covariance of the
// problem without them.
TEST(CovarianceEstimator, UndeterminedLandmarkSkipped) {
  Scene scene(6, 6, 3, Gauge::kNone, 14);
  const ceres::ResidualBlockId lone = scene.AddPoint(2, 2, 1.0);
  double* undetermined = scene.points.back().data();
  Pairs pairs = AllKinds(&scene);
  const size_t kept = pairs.size();
  pairs.push_back({undetermined, scene.cameras[2].data()});
  pairs.push_back({undetermined, undetermined});
  CovarianceEstimatorOptions options;
  options.skip_undetermined_landmarks = true;
  CovarianceEstimator estimator(options);
  const Estimated run = Estimate(&estimator, *scene.problem, pairs);
  ASSERT_TRUE(run.ok) << run.error;
  ASSERT_EQ(run.undetermined.size(), 1u);
  EXPECT_EQ(estimator.structure().parameter_blocks[run.undetermined[0]].user_values, undetermined);
  for (size_t i = kept; i < pairs.size(); ++i) {
    for (int64_t k = run.offsets[i]; k < run.offsets[i + 1]; ++k) EXPECT_EQ(run.values[k], 0.0) << i;
  }
  std::vector<ceres::ResidualBlockId> residuals;
  for (ceres::ResidualBlockId id : scene.ids) {
    if (id != lone) residuals.push_back(id);
  }
  const Dense d = DenseJacobian(scene.problem.get(), scene.Blocks(undetermined), true, residuals);
  Estimated first = run;
  first.offsets.resize(kept + 1);
  WorstError(first, Pairs(pairs.begin(), pairs.begin() + kept), d, DenseCovariance(d.j));
}

// A point whose rows are 1e-13 of the others': determined by its own rows
// (its R is well conditioned), but below the rank tolerance of the whole
// Jacobian (20 (m + n) eps max ||J_j||, about 1e-11 here): weak.
TEST(CovarianceEstimator, WeakLandmarksAreCounted) {
  Scene scene(6, 6, 3, Gauge::kNone, 15);
  scene.AddPoint(3, 6, 1e-13);
  const Estimated run = Estimate(CovarianceEstimatorOptions{}, *scene.problem,
                                 {{scene.cameras[0].data(), scene.cameras[0].data()}});
  ASSERT_TRUE(run.ok) << run.error;
  EXPECT_EQ(run.statistics.weak_landmarks, 1);
  EXPECT_TRUE(run.undetermined.empty());
}

TEST(CovarianceEstimator, MemoryLimitIsCheckedFirst) {
  Scene scene(6, 6, 3, Gauge::kNone, 16);
  CovarianceEstimatorOptions options;
  options.memory_limit_in_bytes = 1000;
  const Estimated run = Estimate(options, *scene.problem, AllKinds(&scene));
  EXPECT_FALSE(run.ok);
  EXPECT_TRUE(Contains(run.error, "The covariance's Jacobian, reduced camera matrix (36 x 36)")) << run.error;
  EXPECT_TRUE(Contains(run.error, "Covariance::Options::memory_limit_in_bytes")) << run.error;
  EXPECT_TRUE(Contains(run.error, "14 blocks")) << run.error;
}

TEST(CovarianceEstimator, FailingCostFunctionIsNamed) {
  Scene scene(6, 6, 3, Gauge::kNone, 17);
  CovarianceEstimator estimator(CovarianceEstimatorOptions{});
  std::string error;
  ASSERT_EQ(estimator.Read(*scene.problem, &error), StructureStatus::kOk) << error;
  // The first residual block's camera (its first parameter) where it fails.
  scene.cameras[0][0] = 1000.0;
  std::vector<double> values;
  std::vector<int64_t> offsets;
  const int c0 = estimator.structure().index_of.at(scene.cameras[0].data());
  EXPECT_FALSE(estimator.Compute(*scene.problem, {{c0, c0}}, &values, &offsets, &error));
  EXPECT_EQ(error, "The cost function of the " + NameOf(scene.ids[0]) + " returned false.");
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
