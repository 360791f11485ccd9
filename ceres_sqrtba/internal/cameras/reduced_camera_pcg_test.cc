// ReducedCameraPcg (reduced_camera_pcg.h) on constructed SPD systems of a
// problem's reduced camera vector: the pose damping in both precisions, which
// preconditioner it owns, PCG on system + lambda D_p^2 against Eigen's LDLT,
// the block-Jacobi preconditioner steering it, the iteration limits of the
// options (IterativeSchurOptions::ForSolve), a failed solve leaving the
// output alone, and a preconditioner handed over with SetPreconditioner.
#include "ceres_sqrtba/internal/cameras/reduced_camera_pcg.h"

#include <Eigen/Dense>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/cameras/block_jacobi_preconditioner.h"
#include "ceres_sqrtba/internal/cameras/camera_gram.h"
#include "ceres_sqrtba/internal/cameras/linear_operator.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "dense_operator.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// A delegating operator that counts its calls.
template <typename Scalar>
class Counting : public LinearOperator<Scalar> {
 public:
  explicit Counting(LinearOperator<Scalar>* op) : op_(op) {}
  int num_rows() const override { return op_->num_rows(); }
  void Multiply(const Scalar* x, Scalar* y) override {
    ++calls;
    op_->Multiply(x, y);
  }
  int calls = 0;

 private:
  LinearOperator<Scalar>* op_;
};

// A problem with six 6-parameter cameras: a reduced camera vector of 36.
struct CameraProblem {
  CameraProblem() {
    testing::RandomProblemConfig config;
    config.num_cameras = 6;
    config.num_landmarks = 20;
    config.seed = 31;
    problem = testing::MakeRandomProblem(config);
    std::string error;
    EXPECT_EQ(BuildProblemStructure(*problem.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
    partition = WorkPartition(static_cast<int>(s.groups.size()), {}, 4, 1);
  }
  int n() const { return s.num_camera_parameters; }
  testing::RandomProblem problem;
  ProblemStructure s;
  WorkPartition partition;
};

// A = S Q diag(e) Q^T S: Q a random orthogonal matrix, e spread
// geometrically over [1, kappa], S constant on each camera's block and
// 4^camera: badly scaled across cameras (what block Jacobi removes).
Eigen::MatrixXd ScaledSpd(const CameraProblem& p, double kappa, bool scaled, unsigned seed) {
  const int n = p.n();
  std::mt19937 rng(seed);
  testing::NormalDistribution normal;
  Eigen::MatrixXd g(n, n);
  for (int i = 0; i < g.size(); ++i) g.data()[i] = normal(rng);
  const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(g).householderQ();
  Eigen::VectorXd e(n);
  for (int i = 0; i < n; ++i) e[i] = std::pow(kappa, static_cast<double>(i) / (n - 1));
  Eigen::VectorXd scale = Eigen::VectorXd::Ones(n);
  if (scaled) {
    for (int c : p.s.cameras) {
      const ParameterBlockInfo& pb = p.s.parameter_blocks[c];
      scale.segment(pb.tangent_offset - p.s.camera_tangent_begin, pb.tangent_size)
          .setConstant(std::pow(4.0, pb.camera_index));
    }
  }
  const Eigen::MatrixXd a = scale.asDiagonal() * q * e.asDiagonal() * q.transpose() * scale.asDiagonal();
  return 0.5 * (a + a.transpose());
}

Eigen::VectorXd RandomVector(int n, unsigned seed, double low = -1.0, double high = 1.0) {
  std::mt19937 rng(seed);
  testing::UniformRealDistribution u(low, high);
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = u(rng);
  return v;
}

// The camera blocks of `a` in a block-Jacobi preconditioner, inverted with
// the damping: SCHUR_JACOBI through its sums, JACOBI through a CameraGram.
// Each block is added once, from the first landmark block that sees the camera.
template <typename Scalar>
void FillBlocks(const CameraProblem& p, const Eigen::MatrixXd& a, const double* damping_squared,
                BlockJacobiPreconditioner<Scalar>* preconditioner, ParallelContext* context) {
  const ProblemStructure& s = p.s;
  auto add = [&](int g, int e, int, int n, double* acc) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.group_cameras[e]];
    if (s.camera_groups[s.camera_group_begin[pb.camera_index]] != g) return;
    const int o = pb.tangent_offset - s.camera_tangent_begin;
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k <= i; ++k) acc[i * n + k] += a(o + i, o + k);
    }
  };
  if (preconditioner->schur()) {
    preconditioner->SumBlocks(context, add);
    preconditioner->Invert(nullptr, damping_squared, context);
  } else {
    CameraGram gram(s, p.partition);
    gram.ComputeWith(context, add);
    preconditioner->Invert(&gram, damping_squared, context);
  }
}

// |x - x*|_A / |x*|_A.
double EnergyError(const Eigen::MatrixXd& a, const Eigen::VectorXd& x, const Eigen::VectorXd& exact) {
  const Eigen::VectorXd e = x - exact;
  return std::sqrt(e.dot(a * e) / exact.dot(a * exact));
}

TEST(ReducedCameraPcg, ForSolveStopsOnTheModelTestOnly) {
  IterativeSchurOptions options;
  options.min_num_iterations = 3;
  options.max_num_iterations = 77;
  const PcgOptions pcg = options.ForSolve(0.25);
  EXPECT_EQ(pcg.min_num_iterations, 3);
  EXPECT_EQ(pcg.max_num_iterations, 77);
  EXPECT_EQ(pcg.q_tolerance, 0.25);
  EXPECT_LT(pcg.r_tolerance, 0.0) << "the residual test is disabled, as in Ceres' ITERATIVE_SCHUR";
}

TEST(ReducedCameraPcg, PoseDampingIsSquaredInBothPrecisions) {
  CameraProblem p;
  const Eigen::VectorXd d = RandomVector(p.n(), 1, 0.1, 3.0);
  ReducedCameraPcg<float> pcg(p.s, p.partition, ceres::SCHUR_JACOBI);
  pcg.SetPoseDamping(d.data());
  for (int i = 0; i < p.n(); ++i) {
    // One multiplication in double (correctly rounded), then one rounding
    // to float: exact comparisons.
    const double square = d[i] * d[i];
    EXPECT_EQ(pcg.damping_squared_double()[i], square) << i;
    EXPECT_EQ(pcg.damping_squared()[i], static_cast<float>(square)) << i;
  }
}

TEST(ReducedCameraPcg, OwnsTheBlockJacobiPreconditionersOnly) {
  CameraProblem p;
  ReducedCameraPcg<double> identity(p.s, p.partition, ceres::IDENTITY);
  EXPECT_EQ(identity.preconditioner(), nullptr);
  ReducedCameraPcg<double> cluster(p.s, p.partition, ceres::CLUSTER_JACOBI);
  EXPECT_EQ(cluster.preconditioner(), nullptr);
  ReducedCameraPcg<double> jacobi(p.s, p.partition, ceres::JACOBI);
  ASSERT_NE(jacobi.preconditioner(), nullptr);
  EXPECT_FALSE(jacobi.preconditioner()->schur());
  ReducedCameraPcg<double> schur(p.s, p.partition, ceres::SCHUR_JACOBI);
  ASSERT_NE(schur.preconditioner(), nullptr);
  EXPECT_TRUE(schur.preconditioner()->schur());
  EXPECT_EQ(schur.preconditioner()->num_rows(), p.n());
  EXPECT_EQ(schur.rhs().size(), static_cast<size_t>(p.n()));
}

// The operator PCG solves is the system plus lambda D_p^2, which the solver
// adds to its products from damping_squared(); the preconditioner's blocks
// get it from damping_squared_double().
struct DampedSolve {
  LinearSolverSummary summary;
  Eigen::VectorXd y;
  bool ok = false;
};

DampedSolve SolveDamped(const CameraProblem& p, ceres::PreconditionerType type, const Eigen::MatrixXd& a,
                        const Eigen::VectorXd& d, const Eigen::VectorXd& b, const PcgOptions& options) {
  ParallelContext context(1);
  ReducedCameraPcg<double> pcg(p.s, p.partition, type);
  pcg.SetPoseDamping(d.data());
  const Eigen::Map<const Eigen::VectorXd> dsq(pcg.damping_squared(), p.n());
  testing::DenseOperator<double> system(Eigen::MatrixXd(a + Eigen::MatrixXd(dsq.asDiagonal())));
  if (pcg.preconditioner() != nullptr) FillBlocks(p, a, pcg.damping_squared_double(), pcg.preconditioner(), &context);
  Eigen::Map<Eigen::VectorXd>(pcg.rhs().data(), p.n()) = b;
  DampedSolve out;
  out.y = Eigen::VectorXd::Constant(p.n(), -7.0);
  out.ok = pcg.Solve(&system, options, out.y.data(), &out.summary);
  return out;
}

TEST(ReducedCameraPcg, TinyEtaSolvesTheDampedSystem) {
  CameraProblem p;
  const Eigen::MatrixXd a = ScaledSpd(p, 100.0, /*scaled=*/true, 2);
  const Eigen::VectorXd d = RandomVector(p.n(), 3, 0.1, 1.0);
  const Eigen::VectorXd b = RandomVector(p.n(), 4);
  const Eigen::MatrixXd damped = a + Eigen::MatrixXd(d.cwiseAbs2().asDiagonal());
  const Eigen::VectorXd exact = damped.ldlt().solve(b);
  IterativeSchurOptions options;
  for (ceres::PreconditionerType type : {ceres::IDENTITY, ceres::SCHUR_JACOBI}) {
    const DampedSolve solve = SolveDamped(p, type, a, d, b, options.ForSolve(1e-14));
    ASSERT_TRUE(solve.ok) << solve.summary.message;
    EXPECT_NE(solve.summary.termination, LinearSolverTermination::kFailure);
    // The model test stops where rounding hides the model's progress: the
    // model is known to ~n eps of itself and its excess over the minimum is
    // the squared energy error, which so stalls near sqrt(n eps) = 1e-7
    // of |x*|_A. Hence 1e-6 in the energy norm (the 2-norm error would carry
    // the system's condition number, 1e7 here).
    EXPECT_LT(EnergyError(damped, solve.y, exact), 1e-6) << "preconditioner " << type;
  }
}

TEST(ReducedCameraPcg, BlockJacobiCutsTheIterationsOnABadlyScaledSystem) {
  CameraProblem p;
  // Camera scales 1 to 4^5: the scaling alone multiplies the condition number
  // by 4^10 = 1e6, and block Jacobi takes it out (what remains is the
  // spectrum's 10 and the cross-camera coupling).
  const Eigen::MatrixXd a = ScaledSpd(p, 10.0, /*scaled=*/true, 5);
  const Eigen::VectorXd d = RandomVector(p.n(), 6, 0.01, 0.1);
  const Eigen::VectorXd b = RandomVector(p.n(), 7);
  IterativeSchurOptions options;
  const DampedSolve plain = SolveDamped(p, ceres::IDENTITY, a, d, b, options.ForSolve(1e-10));
  const DampedSolve jacobi = SolveDamped(p, ceres::SCHUR_JACOBI, a, d, b, options.ForSolve(1e-10));
  ASSERT_TRUE(plain.ok && jacobi.ok);
  EXPECT_EQ(jacobi.summary.termination, LinearSolverTermination::kSuccess) << jacobi.summary.message;
  // Without a preconditioner CG needs more iterations than the dimension
  // (36) on such a spread (rounding keeps it from finishing in n); with it,
  // less than half as many.
  EXPECT_GT(plain.summary.num_iterations, p.n());
  EXPECT_LT(2 * jacobi.summary.num_iterations, plain.summary.num_iterations)
      << jacobi.summary.num_iterations << " vs " << plain.summary.num_iterations;
}

TEST(ReducedCameraPcg, MaxNumIterationsEndsWithTheStepSoFar) {
  CameraProblem p;
  const Eigen::MatrixXd a = ScaledSpd(p, 1e3, /*scaled=*/false, 8);
  const Eigen::VectorXd d = RandomVector(p.n(), 9, 0.1, 1.0);
  const Eigen::VectorXd b = RandomVector(p.n(), 10);
  IterativeSchurOptions options;
  options.max_num_iterations = 3;
  const DampedSolve solve = SolveDamped(p, ceres::JACOBI, a, d, b, options.ForSolve(1e-14));
  EXPECT_TRUE(solve.ok) << "no convergence is not a failure: the step is used";
  EXPECT_EQ(solve.summary.termination, LinearSolverTermination::kNoConvergence);
  EXPECT_EQ(solve.summary.num_iterations, 3);
  EXPECT_TRUE(solve.y.allFinite());
  EXPECT_FALSE((solve.y.array() == -7.0).any()) << "the step is written out";
}

TEST(ReducedCameraPcg, MinNumIterationsIsHonoured) {
  CameraProblem p;
  const Eigen::MatrixXd a = ScaledSpd(p, 1e3, /*scaled=*/false, 11);
  const Eigen::VectorXd d = RandomVector(p.n(), 12, 0.1, 1.0);
  const Eigen::VectorXd b = RandomVector(p.n(), 13);
  IterativeSchurOptions options;
  const DampedSolve free = SolveDamped(p, ceres::IDENTITY, a, d, b, options.ForSolve(0.5));
  ASSERT_TRUE(free.ok);
  options.min_num_iterations = free.summary.num_iterations + 10;
  const DampedSolve held = SolveDamped(p, ceres::IDENTITY, a, d, b, options.ForSolve(0.5));
  ASSERT_TRUE(held.ok);
  EXPECT_GE(held.summary.num_iterations, free.summary.num_iterations + 10);
}

TEST(ReducedCameraPcg, FailedSolveLeavesTheOutputAlone) {
  CameraProblem p;
  const Eigen::MatrixXd a = ScaledSpd(p, 10.0, /*scaled=*/false, 14);
  const Eigen::VectorXd d = RandomVector(p.n(), 15, 0.1, 1.0);
  Eigen::VectorXd b = RandomVector(p.n(), 16);
  b[5] = std::numeric_limits<double>::quiet_NaN();
  IterativeSchurOptions options;
  const DampedSolve solve = SolveDamped(p, ceres::SCHUR_JACOBI, a, d, b, options.ForSolve(0.1));
  EXPECT_FALSE(solve.ok);
  EXPECT_EQ(solve.summary.termination, LinearSolverTermination::kFailure);
  EXPECT_TRUE((solve.y.array() == -7.0).all()) << "y_cameras is not written";
}

// A preconditioner handed over with SetPreconditioner is the one PCG uses:
// the same blocks as the owned SCHUR_JACOBI give the same bits.
TEST(ReducedCameraPcg, SetPreconditionerReplacesTheOwnedOne) {
  CameraProblem p;
  const Eigen::MatrixXd a = ScaledSpd(p, 100.0, /*scaled=*/true, 17);
  const Eigen::VectorXd d = RandomVector(p.n(), 18, 0.1, 1.0);
  const Eigen::VectorXd b = RandomVector(p.n(), 19);
  IterativeSchurOptions options;
  const DampedSolve owned = SolveDamped(p, ceres::SCHUR_JACOBI, a, d, b, options.ForSolve(1e-6));
  ASSERT_TRUE(owned.ok);

  ParallelContext context(1);
  ReducedCameraPcg<double> pcg(p.s, p.partition, ceres::IDENTITY);
  pcg.SetPoseDamping(d.data());
  BlockJacobiPreconditioner<double> blocks(p.s, p.partition, /*schur=*/true);
  FillBlocks(p, a, pcg.damping_squared_double(), &blocks, &context);
  Counting<double> counting(&blocks);
  pcg.SetPreconditioner(&counting);
  const Eigen::Map<const Eigen::VectorXd> dsq(pcg.damping_squared(), p.n());
  testing::DenseOperator<double> system(Eigen::MatrixXd(a + Eigen::MatrixXd(dsq.asDiagonal())));
  Eigen::Map<Eigen::VectorXd>(pcg.rhs().data(), p.n()) = b;
  Eigen::VectorXd y(p.n());
  LinearSolverSummary summary;
  ASSERT_TRUE(pcg.Solve(&system, options.ForSolve(1e-6), y.data(), &summary));
  EXPECT_GT(counting.calls, 0);
  EXPECT_EQ(summary.num_iterations, owned.summary.num_iterations);
  EXPECT_EQ(std::memcmp(y.data(), owned.y.data(), sizeof(double) * p.n()), 0);
}

TEST(ReducedCameraPcg, FloatSolvesToFloatAccuracy) {
  CameraProblem p;
  const Eigen::MatrixXd a = ScaledSpd(p, 10.0, /*scaled=*/false, 20);
  const Eigen::VectorXd d = RandomVector(p.n(), 21, 0.1, 1.0);
  const Eigen::VectorXd b = RandomVector(p.n(), 22);
  ParallelContext context(1);
  ReducedCameraPcg<float> pcg(p.s, p.partition, ceres::SCHUR_JACOBI);
  pcg.SetPoseDamping(d.data());
  const Eigen::VectorXd dsq = Eigen::Map<const Eigen::VectorXf>(pcg.damping_squared(), p.n()).cast<double>();
  const Eigen::MatrixXd damped = a + Eigen::MatrixXd(dsq.asDiagonal());
  testing::DenseOperator<float> system(damped);
  FillBlocks(p, a, pcg.damping_squared_double(), pcg.preconditioner(), &context);
  Eigen::Map<Eigen::VectorXf>(pcg.rhs().data(), p.n()) = b.cast<float>();
  IterativeSchurOptions options;
  Eigen::VectorXd y(p.n());
  LinearSolverSummary summary;
  ASSERT_TRUE(pcg.Solve(&system, options.ForSolve(1e-14), y.data(), &summary)) << summary.message;
  // As pcg_test's float case: float rounding of the residual (u = 6e-8)
  // stalls the energy error near sqrt(u) = 2.4e-4, up to sqrt(kappa = 10)
  // times that in the 2-norm. Hence 1e-3.
  const Eigen::VectorXd exact = damped.ldlt().solve(b);
  EXPECT_LT((y - exact).norm() / exact.norm(), 1e-3) << summary.message;
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
