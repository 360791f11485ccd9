// ceres_sqrtba::Covariance against ceres::Covariance on the pipelines'
// problem shapes (tests/pipeline_shapes.h): product-manifold poses, shared
// intrinsics with a SubsetManifold, rigs, homogeneous points, dynamic cost
// functions, one-dimensional landmarks, losses applied and not, constant
// blocks; the gauge held (SPARSE_QR, the exact inverse) and free (DENSE_SVD,
// the pseudo-inverse; SPARSE_QR fails as Ceres fails).
//
// Tolerances. Each block is compared in Frobenius norm relative to the
// natural scale of a covariance block, sqrt(|Sigma_aa| |Sigma_bb|) (Cauchy-
// Schwarz bounds every entry of Sigma_ab by it; for a diagonal block it is
// the block's own norm). Both computations are backward stable on J^T J's
// scaled condition number, which on these scenes is below about 1e6: the
// inverse is exact to ~1e-10, hence the 1e-8 of the exact inverse. The
// pseudo-inverse also depends on the computed null space, itself accurate to
// about eps times the scaled condition number in both methods (Ceres' SVD, our
// inverse iteration): 1e-6.
#include "ceres_sqrtba/covariance.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ceres/ceres.h"
#include "ceres/normal_prior.h"
#include "gtest/gtest.h"
#include "pipeline_shapes.h"

namespace ceres_sqrtba {
namespace {

using testing::MakeScene;
using testing::PipelineProblem;
using testing::Values;
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Pairs = std::vector<std::pair<const double*, const double*>>;

// A pipeline problem built on its own values and solved (so that the
// covariance is taken where a pipeline takes it, at the optimum).
struct Built {
  Values values;
  std::unique_ptr<ceres::Problem> problem;
};

std::unique_ptr<Built> BuildAndSolve(const PipelineProblem& p, const std::vector<int>& extra_constant_poses = {}) {
  auto b = std::make_unique<Built>();
  b->values = p.values;
  b->problem = std::make_unique<ceres::Problem>();
  p.build(&b->values, b->problem.get());
  for (int i : extra_constant_poses) b->problem->SetParameterBlockConstant(b->values.poses[i].data());
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_SCHUR;
  options.max_num_iterations = 30;
  ceres::Solver::Summary summary;
  ceres::Solve(options, b->problem.get(), &summary);
  return b;
}

// Every variable block's own block, and pairs of every kind: camera-point,
// point-point (near and far), camera-camera (near and far), intrinsics with
// both.
Pairs Requests(const Built& b) {
  std::vector<double*> blocks;
  b.problem->GetParameterBlocks(&blocks);
  Pairs pairs;
  for (double* block : blocks) pairs.emplace_back(block, block);
  const auto& v = b.values;
  auto has = [&](const double* x) { return b.problem->HasParameterBlock(x); };
  const int np = static_cast<int>(v.points.size()), ni = static_cast<int>(v.poses.size());
  const std::vector<std::pair<const double*, const double*>> candidates = {
      {v.poses[ni - 1].data(), v.points[0].data()},       {v.points[1].data(), v.poses[ni / 2].data()},
      {v.points[0].data(), v.points[np - 1].data()},      {v.points[2].data(), v.points[3].data()},
      {v.poses[1 % ni].data(), v.poses[ni - 1].data()},   {v.poses[ni - 2].data(), v.poses[ni - 1].data()},
      {v.intrinsics.data(), v.points[np / 2].data()},     {v.poses[ni - 1].data(), v.intrinsics.data()},
  };
  for (const auto& c : candidates) {
    if (has(c.first) && has(c.second) && c.first != c.second) pairs.push_back(c);
  }
  return pairs;
}

double Norm(const Matrix& m) { return m.norm(); }

struct Comparison {
  double worst = 0.0;
  std::string where;
};

// Our blocks against Ceres' (tangent space), relative to each block's scale.
Comparison Compare(ceres::Problem* problem, const Pairs& pairs, const Covariance& ours,
                   const ceres::Covariance& ceres) {
  Comparison result;
  auto tangent = [&](const double* x) { return problem->ParameterBlockTangentSize(x); };
  auto block = [&](auto& covariance, const double* x, const double* y) {
    Matrix m(tangent(x), tangent(y));
    EXPECT_TRUE(covariance.GetCovarianceBlockInTangentSpace(x, y, m.data()));
    return m;
  };
  for (const auto& pair : pairs) {
    if (problem->IsParameterBlockConstant(const_cast<double*>(pair.first)) ||
        problem->IsParameterBlockConstant(const_cast<double*>(pair.second))) {
      continue;
    }
    const Matrix reference = block(ceres, pair.first, pair.second);
    const Matrix mine = block(ours, pair.first, pair.second);
    const double scale =
        std::sqrt(Norm(block(ceres, pair.first, pair.first)) * Norm(block(ceres, pair.second, pair.second)));
    const double error = Norm(mine - reference) / scale;
    if (!(error <= result.worst)) {
      result.worst = error;
      result.where = "block (" + std::to_string(tangent(pair.first)) + " x " + std::to_string(tangent(pair.second)) +
                     "), reference norm " + std::to_string(Norm(reference));
    }
  }
  return result;
}

// The diagonal blocks of the pairs' blocks must be requested for the scale.
Pairs WithDiagonals(Pairs pairs) {
  std::map<const double*, int> seen;
  for (const auto& p : pairs) {
    if (p.first == p.second) seen[p.first] = 1;
  }
  Pairs extra;
  for (const auto& p : pairs) {
    for (const double* x : {p.first, p.second}) {
      if (!seen[x]) {
        seen[x] = 1;
        extra.emplace_back(x, x);
      }
    }
  }
  pairs.insert(pairs.end(), extra.begin(), extra.end());
  return pairs;
}

void ExpectSameAsCeres(const PipelineProblem& p, const std::vector<int>& extra_constant_poses, bool apply_loss,
                       ceres::CovarianceAlgorithmType algorithm, double tolerance) {
  const std::unique_ptr<Built> b = BuildAndSolve(p, extra_constant_poses);
  const Pairs pairs = WithDiagonals(Requests(*b));
  ceres::Covariance::Options ceres_options;
  ceres_options.apply_loss_function = apply_loss;
  ceres_options.algorithm_type = algorithm;
  ceres_options.null_space_rank = algorithm == ceres::DENSE_SVD ? -1 : 0;
  ceres::Covariance reference(ceres_options);
  ASSERT_TRUE(reference.Compute(pairs, b->problem.get()));
  Covariance::Options options(ceres_options);
  options.num_threads = 2;
  Covariance ours(options);
  ASSERT_TRUE(ours.Compute(pairs, b->problem.get())) << ours.error();
  EXPECT_TRUE(ours.summary().square_root);
  const Comparison c = Compare(b->problem.get(), pairs, ours, reference);
  EXPECT_LE(c.worst, tolerance) << c.where;
  std::cout << "worst relative difference from ceres::Covariance: " << c.worst << " (" << pairs.size()
            << " blocks)\n";
  // Ambient blocks: the same PlusJacobian lifting as Ceres'.
  for (const auto& pair : pairs) {
    const int r = b->problem->ParameterBlockSize(pair.first), k = b->problem->ParameterBlockSize(pair.second);
    Matrix mine(r, k), theirs(r, k), a(r, r), d(k, k);
    ASSERT_TRUE(ours.GetCovarianceBlock(pair.first, pair.second, mine.data()));
    ASSERT_TRUE(reference.GetCovarianceBlock(pair.first, pair.second, theirs.data()));
    ASSERT_TRUE(reference.GetCovarianceBlock(pair.first, pair.first, a.data()));
    ASSERT_TRUE(reference.GetCovarianceBlock(pair.second, pair.second, d.data()));
    const double scale = std::sqrt(Norm(a) * Norm(d));
    if (scale > 0.0) EXPECT_LE(Norm(mine - theirs) / scale, tolerance);
  }
}

constexpr double kExact = 1e-8;
constexpr double kPseudoInverse = 1e-6;

// Gauge held: the first pose constant in every shape, a second one here.
TEST(Covariance, ColmapProductManifoldPosesSharedIntrinsicsLossApplied) {
  ExpectSameAsCeres(testing::ColmapProblem(MakeScene(8, 60, 501)), {1}, true, ceres::SPARSE_QR, kExact);
}

TEST(Covariance, ColmapLossNotApplied) {
  ExpectSameAsCeres(testing::ColmapProblem(MakeScene(8, 60, 502)), {1}, false, ceres::SPARSE_QR, kExact);
}

TEST(Covariance, ColmapSparseSequence) {
  // Tracks of 3 consecutive images of 16: far cameras are not neighbours in
  // S, so far pairs take columns of the camera covariance.
  ExpectSameAsCeres(testing::ColmapProblem(MakeScene(16, 120, 503, 3)), {1}, true, ceres::SPARSE_QR, kExact);
}

TEST(Covariance, RigsWithFourBlocksPerResidual) {
  ExpectSameAsCeres(testing::RigProblem(MakeScene(8, 60, 504)), {1}, true, ceres::SPARSE_QR, kExact);
}

TEST(Covariance, TheiaHomogeneousPoints) {
  ExpectSameAsCeres(testing::TheiaProblem(MakeScene(8, 60, 505)), {1}, true, ceres::SPARSE_QR, kExact);
}

TEST(Covariance, OpenSfmDynamicCostFunctionsConstantIntrinsics) {
  ExpectSameAsCeres(testing::OpenSfmProblem(MakeScene(8, 60, 506)), {1}, true, ceres::SPARSE_QR, kExact);
}

TEST(Covariance, GlomapOneDimensionalLandmarks) {
  ExpectSameAsCeres(testing::GlomapPositioningProblem(MakeScene(8, 40, 507), 508), {}, true, ceres::SPARSE_QR,
                    kExact);
}

TEST(Covariance, OpenMvgBrownIntrinsicsAngleAxisPoses) {
  ExpectSameAsCeres(testing::OpenMvgProblem(MakeScene(8, 60, 509)), {1}, true, ceres::SPARSE_QR, kExact);
}

// Free gauge, DENSE_SVD: the pseudo-inverse. COLMAP's shape with only the
// first pose constant leaves the scale free (one direction); Theia's too.
TEST(Covariance, FreeScalePseudoInverseAsDenseSvd) {
  ExpectSameAsCeres(testing::ColmapProblem(MakeScene(8, 40, 510)), {}, true, ceres::DENSE_SVD, kPseudoInverse);
}

TEST(Covariance, FreeScaleHomogeneousPointsPseudoInverse) {
  ExpectSameAsCeres(testing::TheiaProblem(MakeScene(8, 40, 511)), {}, true, ceres::DENSE_SVD, kPseudoInverse);
}

// A BAL-shaped problem (angle-axis pose 6, per-camera intrinsics f, k1, k2,
// point 3) with nothing constant: the similarity's 7 directions are free.
struct BalReprojection {
  explicit BalReprojection(const Eigen::Vector2d& pixel) : pixel(pixel) {}
  template <typename T>
  bool operator()(const T* pose, const T* intrinsics, const T* point, T* r) const {
    T x[3];
    ceres::AngleAxisRotatePoint(pose, point, x);
    for (int k = 0; k < 3; ++k) x[k] += pose[3 + k];
    const T u = x[0] / x[2], v = x[1] / x[2], r2 = u * u + v * v;
    const T d = T(1.0) + intrinsics[1] * r2 + intrinsics[2] * r2 * r2;
    r[0] = intrinsics[0] * d * u - T(pixel.x() - 320.0);
    r[1] = intrinsics[0] * d * v - T(pixel.y() - 240.0);
    return true;
  }
  Eigen::Vector2d pixel;
};

struct FreeBa {
  testing::Scene scene = MakeScene(6, 40, 512);
  std::vector<std::vector<double>> poses, intrinsics, points;
  ceres::Problem problem;
  FreeBa() {
    for (size_t i = 0; i < scene.rotations.size(); ++i) {
      const Eigen::AngleAxisd aa(scene.rotations[i]);
      const Eigen::Vector3d w = aa.angle() * aa.axis();
      const Eigen::Vector3d& t = scene.translations[i];
      poses.push_back({w.x(), w.y(), w.z(), t.x(), t.y(), t.z()});
      intrinsics.push_back({scene.focal, 0.0, 0.0});
    }
    for (const Eigen::Vector3d& p : scene.points) points.push_back({p.x(), p.y(), p.z()});
    for (const auto& o : scene.observations) {
      problem.AddResidualBlock(
          new ceres::AutoDiffCostFunction<BalReprojection, 2, 6, 3, 3>(new BalReprojection(o.pixel)), nullptr,
          poses[o.image].data(), intrinsics[o.image].data(), points[o.point].data());
    }
    ceres::Solver::Options options;
    options.linear_solver_type = ceres::DENSE_SCHUR;
    options.max_num_iterations = 50;
    ceres::Solver::Summary summary;
    ceres::Solve(options, &problem, &summary);
  }
  Pairs AllDiagonal() {
    std::vector<double*> blocks;
    problem.GetParameterBlocks(&blocks);
    Pairs pairs;
    for (double* x : blocks) pairs.emplace_back(x, x);
    pairs.emplace_back(poses[0].data(), points[5].data());
    pairs.emplace_back(points[1].data(), points[30].data());
    pairs.emplace_back(poses[1].data(), poses[4].data());
    return pairs;
  }
};

TEST(Covariance, FreeSimilarityDropsSevenDirectionsAsDenseSvd) {
  FreeBa f;
  const Pairs pairs = f.AllDiagonal();
  ceres::Covariance::Options ceres_options;
  ceres_options.algorithm_type = ceres::DENSE_SVD;
  ceres_options.null_space_rank = -1;
  ceres::Covariance reference(ceres_options);
  ASSERT_TRUE(reference.Compute(pairs, &f.problem));
  Covariance ours(ceres_options);
  ASSERT_TRUE(ours.Compute(pairs, &f.problem)) << ours.error();
  EXPECT_EQ(ours.summary().null_space_dimension, 7);
  const Comparison c = Compare(&f.problem, pairs, ours, reference);
  std::cout << "worst relative difference from ceres::Covariance: " << c.worst << " (" << pairs.size()
            << " blocks)\n";
  EXPECT_LE(c.worst, kPseudoInverse) << c.where;
  // null_space_rank = 7 gives the same.
  Covariance::Options seven(ceres_options);
  seven.null_space_rank = 7;
  Covariance by_rank(seven);
  ASSERT_TRUE(by_rank.Compute(pairs, &f.problem)) << by_rank.error();
  EXPECT_EQ(by_rank.summary().null_space_dimension, 7);
}

TEST(Covariance, FreeSimilarityFailsAsSparseQrWithTheRank) {
  FreeBa f;
  const Pairs pairs = f.AllDiagonal();
  ceres::Covariance reference{ceres::Covariance::Options()};
  EXPECT_FALSE(reference.Compute(pairs, &f.problem));
  Covariance ours{Covariance::Options()};
  EXPECT_FALSE(ours.Compute(pairs, &f.problem));
  const int columns = 6 * 9 + 40 * 3;
  EXPECT_NE(ours.error().find("Jacobian matrix is rank deficient. Number of columns: " + std::to_string(columns) +
                              " rank: " + std::to_string(columns - 7)),
            std::string::npos)
      << ours.error();
  // And DENSE_SVD without a null space to drop fails with Ceres' message.
  ceres::Covariance::Options no_drop;
  no_drop.algorithm_type = ceres::DENSE_SVD;
  Covariance strict(no_drop);
  EXPECT_FALSE(strict.Compute(pairs, &f.problem));
  EXPECT_NE(strict.error().find("Covariance matrix is near rank deficient"), std::string::npos) << strict.error();
}

// The camera term of a point's marginal covariance, K Sigma_C K^T, is not
// small on these scenes: a point covariance without it (the conditional
// R^-1 R^-T, what COLMAP reports for points) is far from Ceres' and would
// fail the 1e-8 comparisons above.
TEST(Covariance, CameraTermOfThePointCovarianceMatters) {
  const std::unique_ptr<Built> b = BuildAndSolve(testing::ColmapProblem(MakeScene(8, 60, 513)), {1});
  const double* point = b->values.points[7].data();
  ceres::Covariance reference{ceres::Covariance::Options()};
  ASSERT_TRUE(reference.Compute(Pairs{{point, point}}, b->problem.get()));
  Matrix marginal(3, 3);
  ASSERT_TRUE(reference.GetCovarianceBlock(point, point, marginal.data()));
  // The conditional covariance: (J_l^T J_l)^-1 from the point's own columns.
  ceres::Problem::EvaluateOptions evaluate;
  evaluate.parameter_blocks = {const_cast<double*>(point)};
  ceres::CRSMatrix jacobian;
  ASSERT_TRUE(b->problem->Evaluate(evaluate, nullptr, nullptr, nullptr, &jacobian));
  Matrix h = Matrix::Zero(3, 3);
  for (int r = 0; r < jacobian.num_rows; ++r) {
    for (int i = jacobian.rows[r]; i < jacobian.rows[r + 1]; ++i) {
      for (int j = jacobian.rows[r]; j < jacobian.rows[r + 1]; ++j) {
        h(jacobian.cols[i], jacobian.cols[j]) += jacobian.values[i] * jacobian.values[j];
      }
    }
  }
  const Matrix conditional = h.inverse();
  EXPECT_GT(Norm(marginal - conditional) / Norm(marginal), 1e-3);
  Covariance ours{Covariance::Options()};
  ASSERT_TRUE(ours.Compute(Pairs{{point, point}}, b->problem.get())) << ours.error();
  Matrix mine(3, 3);
  ASSERT_TRUE(ours.GetCovarianceBlock(point, point, mine.data()));
  EXPECT_LE(Norm(mine - marginal) / Norm(marginal), kExact);
}

TEST(Covariance, BitIdenticalForAnyThreadCount) {
  const std::unique_ptr<Built> b = BuildAndSolve(testing::ColmapProblem(MakeScene(16, 200, 514, 4)), {1});
  const Pairs pairs = Requests(*b);
  std::vector<Matrix> first;
  for (int threads : {1, 2, 3}) {
    Covariance::Options options;
    options.num_threads = threads;
    Covariance c(options);
    ASSERT_TRUE(c.Compute(pairs, b->problem.get())) << c.error();
    for (size_t i = 0; i < pairs.size(); ++i) {
      Matrix m(b->problem->ParameterBlockTangentSize(pairs[i].first),
               b->problem->ParameterBlockTangentSize(pairs[i].second));
      ASSERT_TRUE(c.GetCovarianceBlockInTangentSpace(pairs[i].first, pairs[i].second, m.data()));
      if (threads == 1) {
        first.push_back(m);
      } else {
        EXPECT_EQ(std::memcmp(m.data(), first[i].data(), sizeof(double) * m.size()), 0) << "block " << i;
      }
    }
  }
}

TEST(Covariance, MatrixOfSeveralBlocksAndParameterBlockList) {
  const std::unique_ptr<Built> b = BuildAndSolve(testing::ColmapProblem(MakeScene(8, 40, 515)), {1});
  const std::vector<const double*> blocks = {b->values.points[3].data(), b->values.poses[5].data(),
                                             b->values.intrinsics.data(), b->values.poses[0].data()};
  ceres::Covariance reference{ceres::Covariance::Options()};
  ASSERT_TRUE(reference.Compute(blocks, b->problem.get()));
  Covariance ours{Covariance::Options()};
  ASSERT_TRUE(ours.Compute(blocks, b->problem.get())) << ours.error();
  const int n = 3 + 7 + 4 + 7, nt = 3 + 6 + 2 + 6;
  Matrix mine(n, n), theirs(n, n), mine_t(nt, nt), theirs_t(nt, nt);
  ASSERT_TRUE(ours.GetCovarianceMatrix(blocks, mine.data()));
  ASSERT_TRUE(reference.GetCovarianceMatrix(blocks, theirs.data()));
  ASSERT_TRUE(ours.GetCovarianceMatrixInTangentSpace(blocks, mine_t.data()));
  ASSERT_TRUE(reference.GetCovarianceMatrixInTangentSpace(blocks, theirs_t.data()));
  EXPECT_LE(Norm(mine - theirs) / Norm(theirs), kExact);
  EXPECT_LE(Norm(mine_t - theirs_t) / Norm(theirs_t), kExact);
  // The constant pose's rows and columns are zero, as in Ceres.
  EXPECT_EQ(mine.bottomRows(7).norm(), 0.0);
}

// One block and one residual block: the block is a landmark without
// cameras, its covariance its own (R^T R)^-1.
TEST(Covariance, LandmarkWithoutCameras) {
  double x[2] = {1.0, 2.0};
  ceres::Problem problem;
  struct Prior {
    bool operator()(const double* x, double* r) const {
      r[0] = 2.0 * x[0] + x[1];
      r[1] = x[1] - 1.0;
      return true;
    }
  };
  problem.AddResidualBlock(new ceres::NumericDiffCostFunction<Prior, ceres::CENTRAL, 2, 2>(new Prior), nullptr, x);
  Covariance ours{Covariance::Options()};
  ASSERT_TRUE(ours.Compute(std::vector<const double*>{x}, &problem)) << ours.error();
  EXPECT_TRUE(ours.summary().square_root);
  double c[4];
  ASSERT_TRUE(ours.GetCovarianceBlock(x, x, c));
  // J = [2 1; 0 1], (J^T J)^-1 = J^-1 J^-T with J^-1 = [0.5 -0.5; 0 1]:
  // [0.5 -0.5; -0.5 1] (numeric differentiation: 1e-8 of its step).
  EXPECT_NEAR(c[0], 0.5, 1e-8);
  EXPECT_NEAR(c[1], -0.5, 1e-8);
  EXPECT_NEAR(c[2], -0.5, 1e-8);
  EXPECT_NEAR(c[3], 1.0, 1e-8);
}

// Nothing variable: nothing to eliminate, so ceres::Covariance answers
// (zeros), as Solve hands such problems to ceres::Solve.
TEST(Covariance, WithoutLandmarksGoesToCeres) {
  double x[2] = {1.0, 2.0};
  ceres::Problem problem;
  struct Prior {
    bool operator()(const double* x, double* r) const {
      r[0] = x[0];
      r[1] = x[1];
      return true;
    }
  };
  problem.AddResidualBlock(new ceres::NumericDiffCostFunction<Prior, ceres::CENTRAL, 2, 2>(new Prior), nullptr, x);
  problem.SetParameterBlockConstant(x);
  Covariance ours{Covariance::Options()};
  ASSERT_TRUE(ours.Compute(std::vector<const double*>{x}, &problem)) << ours.error();
  EXPECT_FALSE(ours.summary().square_root);
  double c[4] = {1, 1, 1, 1};
  ASSERT_TRUE(ours.GetCovarianceBlock(x, x, c));
  for (double v : c) EXPECT_EQ(v, 0.0);
}

TEST(Covariance, BadCallsReturnFalseWithAMessage) {
  const std::unique_ptr<Built> b = BuildAndSolve(testing::ColmapProblem(MakeScene(8, 30, 516)), {1});
  const double* point = b->values.points[0].data();
  const double* pose = b->values.poses[3].data();
  double out[49];
  Covariance c{Covariance::Options()};
  EXPECT_FALSE(c.GetCovarianceBlock(point, point, out));
  EXPECT_NE(c.error().find("before Covariance::Compute"), std::string::npos) << c.error();
  EXPECT_FALSE(c.Compute(Pairs{{point, point}, {point, point}}, b->problem.get()));
  EXPECT_NE(c.error().find("duplicate blocks at indices (0, 1)"), std::string::npos) << c.error();
  EXPECT_FALSE(c.GetCovarianceBlock(point, point, out));
  EXPECT_NE(c.error().find("returned false"), std::string::npos) << c.error();
  double stranger[3] = {0, 0, 0};
  EXPECT_FALSE(c.Compute(Pairs{{point, stranger}}, b->problem.get()));
  EXPECT_NE(c.error().find("is not a parameter block of the problem"), std::string::npos) << c.error();
  ASSERT_TRUE(c.Compute(Pairs{{point, point}}, b->problem.get())) << c.error();
  EXPECT_FALSE(c.GetCovarianceBlock(point, pose, out));
  EXPECT_NE(c.error().find("Unable to find covariance block"), std::string::npos) << c.error();
  EXPECT_TRUE(c.GetCovarianceBlock(point, point, out));
  // A constant block: zeros, as Ceres, requested or not.
  EXPECT_TRUE(c.GetCovarianceBlock(b->values.poses[0].data(), point, out));
  for (int i = 0; i < 21; ++i) EXPECT_EQ(out[i], 0.0);
  Covariance::Options tiny;
  tiny.memory_limit_in_bytes = 1000;
  Covariance limited(tiny);
  EXPECT_FALSE(limited.Compute(Pairs{{point, point}}, b->problem.get()));
  EXPECT_NE(limited.error().find("Covariance::Options::memory_limit_in_bytes = 1000"), std::string::npos)
      << limited.error();
  Covariance::Options zero_threads;
  zero_threads.num_threads = 0;
  Covariance no_threads(zero_threads);
  EXPECT_FALSE(no_threads.Compute(Pairs{{point, point}}, b->problem.get()));
  EXPECT_NE(no_threads.error().find("num_threads"), std::string::npos) << no_threads.error();
}

// Every pair of variable camera-side blocks (poses, intrinsics), far ones
// included.
Pairs CameraPairs(const Built& b) {
  std::vector<double*> blocks;
  b.problem->GetParameterBlocks(&blocks);
  std::vector<const double*> cameras;
  for (double* x : blocks) {
    const bool is_point = std::any_of(b.values.points.begin(), b.values.points.end(),
                                      [&](const std::vector<double>& p) { return p.data() == x; });
    if (!is_point && !b.problem->IsParameterBlockConstant(x)) cameras.push_back(x);
  }
  Pairs pairs;
  for (size_t i = 0; i < cameras.size(); ++i) {
    for (size_t j = 0; j < cameras.size(); ++j) pairs.emplace_back(cameras[i], cameras[j]);
  }
  return pairs;
}

// camera_pairs_on_demand: only the diagonal blocks requested, then every
// pair of cameras asked (both orders), against ceres::Covariance given all
// of them. Tracks of 3 consecutive images of 16: most pairs are far (not
// neighbours in the factor) and take solves.
void ExpectCameraPairsOnDemand(const PipelineProblem& p, const std::vector<int>& constant_poses,
                               ceres::CovarianceAlgorithmType algorithm, double tolerance) {
  const std::unique_ptr<Built> b = BuildAndSolve(p, constant_poses);
  ceres::Covariance::Options ceres_options;
  ceres_options.algorithm_type = algorithm;
  ceres_options.null_space_rank = algorithm == ceres::DENSE_SVD ? -1 : 0;
  Covariance::Options options(ceres_options);
  options.camera_pairs_on_demand = true;
  options.num_threads = 2;
  Covariance ours(options);
  const Pairs all = CameraPairs(*b);
  Pairs diagonal;
  for (const auto& pair : all) {
    if (pair.first == pair.second) diagonal.push_back(pair);
  }
  ASSERT_TRUE(ours.Compute(diagonal, b->problem.get())) << ours.error();
  EXPECT_EQ(ours.summary().cameras_with_columns, 0);  // nothing far was requested
  Pairs reference_pairs;
  for (const auto& pair : all) {
    if (pair.first <= pair.second) reference_pairs.push_back(pair);
  }
  ceres::Covariance reference(ceres_options);
  ASSERT_TRUE(reference.Compute(reference_pairs, b->problem.get()));
  const Comparison c = Compare(b->problem.get(), all, ours, reference);
  std::cout << "worst relative difference from ceres::Covariance, " << all.size() << " camera pairs on demand: "
            << c.worst << "\n";
  EXPECT_LE(c.worst, tolerance) << c.where;
  // A landmark pair that was not requested is still refused, saying what is
  // answered.
  double out[9];
  EXPECT_FALSE(ours.GetCovarianceBlock(b->values.points[0].data(), b->values.points[1].data(), out));
  EXPECT_NE(ours.error().find("camera_pairs_on_demand answers pairs of blocks that are not landmarks"),
            std::string::npos)
      << ours.error();
}

TEST(Covariance, CameraPairsOnDemandSparseSequence) {
  ExpectCameraPairsOnDemand(testing::ColmapProblem(MakeScene(16, 120, 503, 3)), {1}, ceres::SPARSE_QR, kExact);
}

TEST(Covariance, CameraPairsOnDemandRigs) {
  ExpectCameraPairsOnDemand(testing::RigProblem(MakeScene(8, 60, 504)), {1}, ceres::SPARSE_QR, kExact);
}

TEST(Covariance, CameraPairsOnDemandPseudoInverse) {
  ExpectCameraPairsOnDemand(testing::ColmapProblem(MakeScene(12, 60, 510, 4)), {}, ceres::DENSE_SVD,
                            kPseudoInverse);
}

// The same blocks whether requested or asked on demand (the same solves and
// selected inverse; only the order of a far pair's two cameras can differ).
TEST(Covariance, CameraPairsOnDemandEqualRequestedOnes) {
  const std::unique_ptr<Built> b = BuildAndSolve(testing::ColmapProblem(MakeScene(16, 120, 520, 3)), {1});
  Covariance::Options options;
  options.camera_pairs_on_demand = true;
  Covariance requested(options), on_demand(options);
  const Pairs all = CameraPairs(*b);
  Pairs diagonal;
  for (const auto& pair : all) {
    if (pair.first == pair.second) diagonal.push_back(pair);
  }
  ASSERT_TRUE(requested.Compute(all, b->problem.get())) << requested.error();
  EXPECT_GT(requested.summary().cameras_with_columns, 0);
  ASSERT_TRUE(on_demand.Compute(diagonal, b->problem.get())) << on_demand.error();
  double worst = 0.0;
  for (const auto& pair : all) {
    const int r = b->problem->ParameterBlockTangentSize(pair.first);
    const int k = b->problem->ParameterBlockTangentSize(pair.second);
    Matrix x(r, k), y(r, k);
    ASSERT_TRUE(requested.GetCovarianceBlockInTangentSpace(pair.first, pair.second, x.data()));
    ASSERT_TRUE(on_demand.GetCovarianceBlockInTangentSpace(pair.first, pair.second, y.data())) << on_demand.error();
    worst = std::max(worst, (x - y).norm() / std::max(x.norm(), 1e-300));
  }
  // Two triangular solves of a well-conditioned factor, in either order.
  EXPECT_LE(worst, 1e-12);
  // Without the option, the same call is refused as Ceres refuses it.
  Covariance strict{Covariance::Options()};
  ASSERT_TRUE(strict.Compute(diagonal, b->problem.get())) << strict.error();
  Matrix out(6, 6);
  EXPECT_FALSE(strict.GetCovarianceBlockInTangentSpace(b->values.poses[2].data(), b->values.poses[14].data(),
                                                       out.data()));
  EXPECT_NE(strict.error().find("it was not requested from Compute)"), std::string::npos) << strict.error();
}

// landmark_damping = delta is the covariance of the problem with a prior of
// weight delta on every landmark: ceres::Covariance on the problem with a
// ceres::NormalPrior sqrt(delta) I (x - x_now) per point gives the same
// blocks. delta is large enough here to change them (checked), so the test
// fails if the damping were ignored or applied twice.
TEST(Covariance, LandmarkDampingIsAPriorOnEveryLandmark) {
  const std::unique_ptr<Built> b = BuildAndSolve(testing::ColmapProblem(MakeScene(8, 60, 521)), {1});
  const Pairs pairs = WithDiagonals(Requests(*b));
  const double delta = 50.0;
  Covariance::Options options;
  options.landmark_damping = delta;
  Covariance damped(options), undamped{Covariance::Options()};
  ASSERT_TRUE(damped.Compute(pairs, b->problem.get())) << damped.error();
  ASSERT_TRUE(undamped.Compute(pairs, b->problem.get())) << undamped.error();
  for (auto& point : b->values.points) {
    Eigen::MatrixXd a = std::sqrt(delta) * Eigen::MatrixXd::Identity(3, 3);
    Eigen::VectorXd now = Eigen::Map<const Eigen::Vector3d>(point.data());
    b->problem->AddResidualBlock(new ceres::NormalPrior(a, now), nullptr, point.data());
  }
  ceres::Covariance reference{ceres::Covariance::Options()};
  ASSERT_TRUE(reference.Compute(pairs, b->problem.get()));
  const Comparison c = Compare(b->problem.get(), pairs, damped, reference);
  std::cout << "landmark_damping " << delta << " against NormalPriors: worst relative difference " << c.worst << "\n";
  EXPECT_LE(c.worst, kExact) << c.where;
  const Comparison without = Compare(b->problem.get(), pairs, undamped, reference);
  EXPECT_GT(without.worst, 1e-3) << "the damping does not change the covariance here: the test cannot fail";
}

TEST(Covariance, LandmarkDampingOptionIsChecked) {
  const std::unique_ptr<Built> b = BuildAndSolve(testing::ColmapProblem(MakeScene(8, 30, 522)), {1});
  const double* point = b->values.points[0].data();
  Covariance::Options negative;
  negative.landmark_damping = -1.0;
  Covariance a(negative);
  EXPECT_FALSE(a.Compute(Pairs{{point, point}}, b->problem.get()));
  EXPECT_NE(a.error().find("Covariance::Options::landmark_damping must be finite and at least 0"),
            std::string::npos)
      << a.error();
  Covariance::Options svd;
  svd.landmark_damping = 1e-8;
  svd.algorithm_type = ceres::DENSE_SVD;
  Covariance c(svd);
  EXPECT_FALSE(c.Compute(Pairs{{point, point}}, b->problem.get()));
  EXPECT_NE(c.error().find("landmark_damping > 0 needs algorithm_type = SPARSE_QR"), std::string::npos) << c.error();
}

TEST(Covariance, DegenerateLandmarkIsNamed) {
  // A point seen by one camera only: its depth is free.
  const std::unique_ptr<Built> b = BuildAndSolve(testing::ColmapProblem(MakeScene(8, 30, 517)), {1});
  double lonely[3] = {0.1, 0.2, 0.3};
  const double pixel[2] = {300.0, 200.0};
  const ceres::ResidualBlockId id = b->problem->AddResidualBlock(
      new ceres::AutoDiffCostFunction<testing::ReprojectionError, 2, 7, 4, 3>(
          new testing::ReprojectionError(Eigen::Vector2d(pixel[0], pixel[1]))),
      nullptr, b->values.poses[2].data(), b->values.intrinsics.data(), lonely);
  Covariance ours{Covariance::Options()};
  EXPECT_FALSE(ours.Compute(Pairs{{lonely, lonely}}, b->problem.get()));
  EXPECT_NE(ours.error().find("rank deficient: the landmark"), std::string::npos) << ours.error();
  // Left out on request: the rest is the covariance of the problem without
  // it, and the landmark's own block is refused.
  const double* pose = b->values.poses[2].data();
  Covariance::Options skip;
  skip.skip_undetermined_landmarks = true;
  Covariance skipping(skip);
  ASSERT_TRUE(skipping.Compute(Pairs{{lonely, lonely}, {pose, pose}}, b->problem.get())) << skipping.error();
  EXPECT_EQ(skipping.summary().undetermined_landmarks, 1);
  double out[49];
  EXPECT_FALSE(skipping.GetCovarianceBlock(lonely, lonely, out));
  EXPECT_NE(skipping.error().find("left out"), std::string::npos) << skipping.error();
  Matrix mine(6, 6), theirs(6, 6);
  ASSERT_TRUE(skipping.GetCovarianceBlockInTangentSpace(pose, pose, mine.data()));
  b->problem->RemoveResidualBlock(id);
  ceres::Covariance reference{ceres::Covariance::Options()};
  ASSERT_TRUE(reference.Compute(Pairs{{pose, pose}}, b->problem.get()));
  ASSERT_TRUE(reference.GetCovarianceBlockInTangentSpace(pose, pose, theirs.data()));
  EXPECT_LE(Norm(mine - theirs) / Norm(theirs), kExact);
}

}  // namespace
}  // namespace ceres_sqrtba
