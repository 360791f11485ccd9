// BlockJacobiPreconditioner (block_jacobi_preconditioner.h) on random
// BA-shaped linear problems with a random LM diagonal D: its blocks against
// the inverses of the dense camera blocks of the damped Schur complement
// S = H_pp - H_pl H_ll^-1 H_lp, H = J^T J + D^2 (SCHUR_JACOBI, from the top
// rows' Gram matrices subtracted from Jc^T Jc, from whole blocks in double and
// in float), and of H_pp (JACOBI); applying it as solving with those blocks;
// the caller's own chunk loop giving the bits of SumBlocks; the fallback to
// the inverse diagonal for a block that is not positive definite.
//
// The per-block sums are what a storage would add, computed here densely from
// a Householder QR of each landmark's damped columns [Jl; D_l]; the reference
// S comes from the normal equations instead, so the two routes share nothing
// but the Jacobian.
#include "ceres_sqrtba/internal/cameras/block_jacobi_preconditioner.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/cameras/camera_gram.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "dense_jacobian_writer.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// A problem, its dense Jacobian, a diagonal D and the dense references.
struct DampedProblem {
  explicit DampedProblem(const testing::RandomProblemConfig& config) : problem(testing::MakeRandomProblem(config)) {
    std::string error;
    EXPECT_EQ(BuildProblemStructure(*problem.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
    partition = WorkPartition(static_cast<int>(s.groups.size()), {}, 8, 1);
    ParallelContext context(1);
    Evaluator evaluator(s, partition, &context);
    dense = std::make_unique<testing::DenseJacobianWriter>(s);
    const std::vector<double> x = StateFromUser(s);
    std::vector<double> gradient(s.num_effective_parameters);
    double cost;
    EXPECT_TRUE(evaluator.EvaluateJacobian(x.data(), true, &cost, gradient.data(), dense.get()));
    const int n = s.num_effective_parameters, nl = s.camera_tangent_begin, np = s.num_camera_parameters;
    std::mt19937 rng(config.seed + 100);
    testing::UniformRealDistribution u(0.1, 2.0);
    d.resize(n);
    for (int i = 0; i < n; ++i) d[i] = u(rng);
    const Eigen::MatrixXd& jm = dense->j;
    h = jm.transpose() * jm + Eigen::MatrixXd(d.cwiseAbs2().asDiagonal());
    const Eigen::MatrixXd hll = h.topLeftCorner(nl, nl), hlp = h.topRightCorner(nl, np);
    schur = h.bottomRightCorner(np, np) - hlp.transpose() * hll.ldlt().solve(hlp);
    pose_damping_squared.resize(np);
    for (int i = 0; i < np; ++i) pose_damping_squared[i] = d[nl + i] * d[nl + i];
    // Every landmark's block of H_ll: the normal-equation reference loses
    // its condition number.
    for (int l : s.landmarks) {
      const ParameterBlockInfo& pb = s.parameter_blocks[l];
      const Eigen::MatrixXd block = hll.block(pb.tangent_offset, pb.tangent_offset, pb.tangent_size, pb.tangent_size);
      const Eigen::VectorXd e = block.selfadjointView<Eigen::Lower>().eigenvalues();
      landmark_condition = std::max(landmark_condition, e.maxCoeff() / e.minCoeff());
    }
  }

  // Camera entry e of group g: its columns of the group's rows of J.
  Eigen::MatrixXd CameraRows(int g, int e) const {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.group_cameras[e]];
    return dense->j.block(dense->group_row(g), pb.tangent_offset, s.groups[g].num_rows, pb.tangent_size);
  }
  // The first m rows (the observation rows) of the orthogonal factor Q^ of
  // group g's damped landmark columns [Jl; D_l] ((m + d) x (m + d)): its
  // first d columns are Q^_1, the others Q^_2. Empty without a landmark.
  Eigen::MatrixXd ObservationRowsOfQ(int g) const {
    const Group& group = s.groups[g];
    const int m = group.num_rows, dl = group.landmark_size;
    if (dl == 0) return Eigen::MatrixXd(m, 0);
    const int o = s.parameter_blocks[group.landmark].tangent_offset;
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(m + dl, dl);
    a.topRows(m) = dense->j.block(dense->group_row(g), o, m, dl);
    a.bottomRows(dl) = d.segment(o, dl).asDiagonal();
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(a);
    const Eigen::MatrixXd q = qr.householderQ();
    return q.topRows(m);
  }
  // (Q^_1^T [Jp; 0])_c^T (Q^_1^T [Jp; 0])_c: the Gram matrix of the top rows.
  Eigen::MatrixXd TopRowGram(int g, int e) const {
    const int dl = s.groups[g].landmark_size;
    const Eigen::MatrixXd t = ObservationRowsOfQ(g).leftCols(dl).transpose() * CameraRows(g, e);
    return t.transpose() * t;
  }
  // (B_b)_c^T (B_b)_c, B_b = Q^_2^T [Jp; 0]: the whole block's share (all
  // rows of a landmark-free block).
  Eigen::MatrixXd WholeBlockGram(int g, int e) const {
    const int dl = s.groups[g].landmark_size;
    const Eigen::MatrixXd jc = CameraRows(g, e);
    if (dl == 0) return jc.transpose() * jc;
    const Eigen::MatrixXd q = ObservationRowsOfQ(g);
    const Eigen::MatrixXd b = q.rightCols(q.cols() - dl).transpose() * jc;
    return b.transpose() * b;
  }

  // The camera blocks of a camera-sized matrix: block-diagonal inverse, and
  // the largest condition number among the blocks.
  Eigen::MatrixXd BlockDiagonalInverse(const Eigen::MatrixXd& m, double* condition) const {
    const int np = s.num_camera_parameters;
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(np, np);
    *condition = 0;
    for (int c : s.cameras) {
      const ParameterBlockInfo& pb = s.parameter_blocks[c];
      const int o = pb.tangent_offset - s.camera_tangent_begin, n = pb.tangent_size;
      const Eigen::MatrixXd block = m.block(o, o, n, n);
      const Eigen::VectorXd e = block.selfadjointView<Eigen::Lower>().eigenvalues();
      *condition = std::max(*condition, e.maxCoeff() / e.minCoeff());
      out.block(o, o, n, n) = block.inverse();
    }
    return out;
  }

  testing::RandomProblem problem;
  ProblemStructure s;
  WorkPartition partition;
  std::unique_ptr<testing::DenseJacobianWriter> dense;
  Eigen::VectorXd d;
  Eigen::MatrixXd h, schur;
  std::vector<double> pose_damping_squared;
  double landmark_condition = 0;
};

// Adds the lower triangle of m to acc (n x n, row-major).
template <typename Acc>
void AddLower(const Eigen::MatrixXd& m, Acc* acc) {
  const int n = static_cast<int>(m.rows());
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k <= i; ++k) acc[i * n + k] += static_cast<Acc>(m(i, k));
  }
}

// Cameras of two sizes (poses, shared intrinsics); a camera seeing a landmark
// twice, a landmark seen once, 3-d residuals; mixed landmark sizes.
std::vector<testing::RandomProblemConfig> Configs() {
  std::vector<testing::RandomProblemConfig> configs;
  testing::RandomProblemConfig c;
  c.num_cameras = 5;
  c.num_landmarks = 30;
  c.intrinsics_size = 3;
  c.seed = 21;
  configs.push_back(c);
  c = testing::RandomProblemConfig();
  c.num_landmarks = 25;
  c.repeat_camera = true;
  c.single_observation = true;
  c.residual_size = 3;
  c.seed = 22;
  configs.push_back(c);
  c = testing::RandomProblemConfig();
  c.num_landmarks = 25;
  c.landmark_sizes = {1, 2, 3, 4};
  c.seed = 23;
  configs.push_back(c);
  return configs;
}

// The n x n matrix of the preconditioner, column by column.
template <typename Scalar>
Eigen::MatrixXd DenseMatrixOf(BlockJacobiPreconditioner<Scalar>* p) {
  const int n = p->num_rows();
  Eigen::MatrixXd m(n, n);
  Eigen::Matrix<Scalar, Eigen::Dynamic, 1> e(n), col(n);
  for (int i = 0; i < n; ++i) {
    e.setZero();
    e[i] = 1;
    col.setConstant(std::numeric_limits<Scalar>::quiet_NaN());  // every entry must be written
    p->Multiply(e.data(), col.data());
    m.col(i) = col.template cast<double>();
  }
  return m;
}

// In double the blocks are formed to a few ulps of |J|^2 (sums of at most a
// few dozen products, a backward-stable QR) and the reference loses the
// condition numbers of the landmark blocks (normal equations) and of the
// camera block (inversion): 100 eps per unit of condition leaves an order of
// magnitude over those sums' lengths. The conditioning is asserted, so the
// bound stays meaningful (~1e-11 here).
double DoubleTolerance(const DampedProblem& p, double camera_condition) {
  EXPECT_LT(p.landmark_condition, 1e3);
  EXPECT_LT(camera_condition, 1e3);
  return 100 * kEps * std::max(p.landmark_condition, 1.0) * camera_condition;
}

double RelativeError(const Eigen::MatrixXd& a, const Eigen::MatrixXd& reference) {
  return (a - reference).norm() / reference.norm();
}

TEST(BlockJacobiPreconditioner, JacobiInvertsTheDampedCameraGramBlocks) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    DampedProblem p(config);
    const int np = p.s.num_camera_parameters;
    ParallelContext context(1);
    CameraGram gram(p.s, p.partition);
    gram.ComputeWith(&context, [&](int g, int e, int, int, double* acc) {
      const Eigen::MatrixXd jc = p.CameraRows(g, e);
      AddLower<double>(jc.transpose() * jc, acc);
    });
    BlockJacobiPreconditioner<double> preconditioner(p.s, p.partition, /*schur=*/false);
    EXPECT_FALSE(preconditioner.schur());
    EXPECT_FALSE(preconditioner.CanVisit());
    EXPECT_EQ(preconditioner.num_rows(), np);
    preconditioner.Invert(&gram, p.pose_damping_squared.data(), &context);
    double condition;
    const Eigen::MatrixXd reference = p.BlockDiagonalInverse(p.h.bottomRightCorner(np, np), &condition);
    const Eigen::MatrixXd m = DenseMatrixOf(&preconditioner);
    EXPECT_LT(RelativeError(m, reference), DoubleTolerance(p, condition)) << "seed " << config.seed;
  }
}

TEST(BlockJacobiPreconditioner, SchurJacobiFromTopRowsInvertsTheSchurComplementBlocks) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    DampedProblem p(config);
    for (int threads : {1, 2}) {
      ParallelContext context(threads);
      CameraGram gram(p.s, p.partition);
      gram.ComputeWith(&context, [&](int g, int e, int, int, double* acc) {
        const Eigen::MatrixXd jc = p.CameraRows(g, e);
        AddLower<double>(jc.transpose() * jc, acc);
      });
      BlockJacobiPreconditioner<double> preconditioner(p.s, p.partition, /*schur=*/true, BlockSums::kInDouble);
      EXPECT_TRUE(preconditioner.schur());
      preconditioner.SumBlocks(&context, [&](int g, int e, int, int, double* acc) {
        if (p.s.groups[g].landmark_size > 0) AddLower<double>(p.TopRowGram(g, e), acc);
      });
      preconditioner.Invert(&gram, p.pose_damping_squared.data(), &context);
      double condition;
      const Eigen::MatrixXd reference = p.BlockDiagonalInverse(p.schur, &condition);
      EXPECT_LT(RelativeError(DenseMatrixOf(&preconditioner), reference), DoubleTolerance(p, condition))
          << "seed " << config.seed << ", " << threads << " threads";
    }
  }
}

TEST(BlockJacobiPreconditioner, SchurJacobiFromWholeBlocksInvertsTheSchurComplementBlocks) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    DampedProblem p(config);
    ParallelContext context(2);
    BlockJacobiPreconditioner<double> preconditioner(p.s, p.partition, /*schur=*/true, BlockSums::kInDouble);
    preconditioner.SumBlocks(&context, [&](int g, int e, int, int, double* acc) {
      AddLower<double>(p.WholeBlockGram(g, e), acc);
    });
    preconditioner.Invert(nullptr, p.pose_damping_squared.data(), &context);
    double condition;
    const Eigen::MatrixXd reference = p.BlockDiagonalInverse(p.schur, &condition);
    EXPECT_LT(RelativeError(DenseMatrixOf(&preconditioner), reference), DoubleTolerance(p, condition))
        << "seed " << config.seed;
  }
}

TEST(BlockJacobiPreconditioner, FloatSumsInScalarInvertToFloatAccuracy) {
  for (const testing::RandomProblemConfig& config : Configs()) {
    DampedProblem p(config);
    ParallelContext context(1);
    BlockJacobiPreconditioner<float> preconditioner(p.s, p.partition, /*schur=*/true, BlockSums::kInScalar);
    preconditioner.SumBlocks(&context, [&](int g, int e, int, int, float* acc) {
      AddLower<float>(p.WholeBlockGram(g, e), acc);
    });
    preconditioner.Invert(nullptr, p.pose_damping_squared.data(), &context);
    double condition;
    const Eigen::MatrixXd reference = p.BlockDiagonalInverse(p.schur, &condition);
    // Each block entry is a sum of at most k positive semidefinite terms,
    // rounded to float and added in float: |error_ik| <= (k + 1) u
    // sqrt(S_ii S_kk) (u = 2^-24, Cauchy-Schwarz on each term), so a block of
    // size n moves by at most (k + 1) n u of its norm and its inverse by
    // condition times that, plus one rounding of the inverse to float.
    int k = 0, n = 0;
    for (size_t c = 0; c < p.s.cameras.size(); ++c) {
      k = std::max(k, p.s.camera_group_begin[c + 1] - p.s.camera_group_begin[c]);
      n = std::max(n, p.s.parameter_blocks[p.s.cameras[c]].tangent_size);
    }
    const double u = std::ldexp(1.0, -24);
    const double tolerance = condition * ((k + 1) * n + 1) * u;
    const double error = RelativeError(DenseMatrixOf(&preconditioner), reference);
    EXPECT_LT(error, tolerance) << "seed " << config.seed;
    // And not merely double's accuracy by accident: float was used.
    EXPECT_GT(error, 1e-12) << "seed " << config.seed;
  }
}

TEST(BlockJacobiPreconditioner, MultiplySolvesWithTheBlocks) {
  DampedProblem p(Configs()[0]);
  const int np = p.s.num_camera_parameters, nl = p.s.camera_tangent_begin;
  ParallelContext context(1);
  BlockJacobiPreconditioner<double> preconditioner(p.s, p.partition, /*schur=*/true);
  preconditioner.SumBlocks(&context, [&](int g, int e, int, int, double* acc) {
    AddLower<double>(p.WholeBlockGram(g, e), acc);
  });
  preconditioner.Invert(nullptr, p.pose_damping_squared.data(), &context);
  std::mt19937 rng(5);
  testing::NormalDistribution normal;
  Eigen::VectorXd x(np), y(np);
  for (int i = 0; i < np; ++i) x[i] = normal(rng);
  preconditioner.Multiply(x.data(), y.data());
  double condition = 0;
  p.BlockDiagonalInverse(p.schur, &condition);
  const double tolerance = DoubleTolerance(p, condition);
  for (int c : p.s.cameras) {
    const ParameterBlockInfo& pb = p.s.parameter_blocks[c];
    const int o = pb.tangent_offset - nl, n = pb.tangent_size;
    const Eigen::VectorXd expected = p.schur.block(o, o, n, n).ldlt().solve(x.segment(o, n));
    EXPECT_LT((y.segment(o, n) - expected).norm() / expected.norm(), tolerance) << "camera at " << o;
  }
}

// The caller's chunk loop (BeginChunk, AddGroup in order, FinishSums) adds
// the same terms in the same order as SumBlocks: the same bits.
TEST(BlockJacobiPreconditioner, ChunkLoopGivesTheBitsOfSumBlocks) {
  DampedProblem p(Configs()[1]);
  auto add = [&](int g, int e, int, int, double* acc) { AddLower<double>(p.WholeBlockGram(g, e), acc); };
  ParallelContext serial(1);
  BlockJacobiPreconditioner<double> reference(p.s, p.partition, /*schur=*/true);
  reference.SumBlocks(&serial, add);
  reference.Invert(nullptr, p.pose_damping_squared.data(), &serial);
  const Eigen::MatrixXd expected = DenseMatrixOf(&reference);
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    BlockJacobiPreconditioner<double> preconditioner(p.s, p.partition, /*schur=*/true);
    ASSERT_TRUE(preconditioner.CanVisit()) << "small blocks: one slot per chunk";
    context.ForChunks(p.partition, [&](int chunk, int gb, int ge) {
      preconditioner.BeginChunk(chunk);
      for (int g = gb; g < ge; ++g) preconditioner.AddGroup(chunk, g, add);
    });
    preconditioner.FinishSums(&context);
    preconditioner.Invert(nullptr, p.pose_damping_squared.data(), &context);
    const Eigen::MatrixXd m = DenseMatrixOf(&preconditioner);
    EXPECT_EQ(std::memcmp(m.data(), expected.data(), sizeof(double) * m.size()), 0) << threads << " threads";
  }
}

// A block whose Cholesky fails falls back to the inverse of its diagonal,
// 1 where a diagonal entry is not positive. Every value below is a power of
// two, so the inverses are exact.
TEST(BlockJacobiPreconditioner, NotPositiveDefiniteBlockFallsBackToInverseDiagonal) {
  testing::RandomProblemConfig config;
  config.num_cameras = 3;
  config.seed = 24;
  DampedProblem p(config);
  const ProblemStructure& s = p.s;
  ASSERT_EQ(s.cameras.size(), 3u);
  const int n = 6;
  // Camera 0: diag(4, -2, 0, 8, 8, 8), negative and zero pivots. Camera 1:
  // positive diagonal (1) with an off-diagonal 2 (indefinite). Camera 2: 4 I,
  // positive definite. Added once, from the camera's first block.
  auto add = [&](int g, int e, int, int size, double* acc) {
    ASSERT_EQ(size, n);
    const int c = s.parameter_blocks[s.group_cameras[e]].camera_index;
    if (s.camera_groups[s.camera_group_begin[c]] != g) return;
    Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
    if (c == 0) {
      m.diagonal() << 4, -2, 0, 8, 8, 8;
    } else if (c == 1) {
      m.setIdentity();
      m(1, 0) = 2;
    } else {
      m = 4 * Eigen::MatrixXd::Identity(n, n);
    }
    AddLower<double>(m, acc);
  };
  ParallelContext context(1);
  BlockJacobiPreconditioner<double> preconditioner(s, p.partition, /*schur=*/true);
  preconditioner.SumBlocks(&context, add);
  const std::vector<double> no_damping(s.num_camera_parameters, 0.0);
  preconditioner.Invert(nullptr, no_damping.data(), &context);
  const Eigen::MatrixXd m = DenseMatrixOf(&preconditioner);
  Eigen::VectorXd expected(3 * n);
  for (int c = 0; c < 3; ++c) {
    const int o = s.parameter_blocks[s.cameras[c]].tangent_offset - s.camera_tangent_begin;
    Eigen::VectorXd diagonal(n);
    if (c == 0) diagonal << 0.25, 1, 1, 0.125, 0.125, 0.125;
    if (c == 1) diagonal.setOnes();
    if (c == 2) diagonal.setConstant(0.25);
    expected.segment(o, n) = diagonal;
  }
  EXPECT_EQ(m, Eigen::MatrixXd(expected.asDiagonal()));
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
