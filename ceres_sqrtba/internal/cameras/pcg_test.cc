// Pcg<Scalar> against dense linear algebra, rule by rule of Ceres'
// ConjugateGradientsSolver as documented in pcg.h.
#include "ceres_sqrtba/internal/cameras/pcg.h"

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>

#include "dense_operator.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// A = Q diag(eigenvalues) Q^T with a random orthogonal Q: SPD with condition
// number max/min of the eigenvalues, and no structure CG could exploit.
Eigen::MatrixXd RandomSpd(const Eigen::VectorXd& eigenvalues, unsigned seed) {
  const int n = static_cast<int>(eigenvalues.size());
  std::mt19937 rng(seed);
  ::ceres_sqrtba::testing::NormalDistribution normal;
  Eigen::MatrixXd g(n, n);
  for (int i = 0; i < g.size(); ++i) g.data()[i] = normal(rng);
  const Eigen::MatrixXd q = Eigen::HouseholderQR<Eigen::MatrixXd>(g).householderQ();
  return q * eigenvalues.asDiagonal() * q.transpose();
}

Eigen::VectorXd RandomVector(int n, unsigned seed) {
  std::mt19937 rng(seed);
  ::ceres_sqrtba::testing::NormalDistribution normal;
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = normal(rng);
  return v;
}

// Eigenvalues spread geometrically over [1, kappa]: CG needs many iterations.
Eigen::VectorXd Spectrum(int n, double kappa) {
  Eigen::VectorXd e(n);
  for (int i = 0; i < n; ++i) e[i] = std::pow(kappa, static_cast<double>(i) / (n - 1));
  return e;
}

// Twice the quadratic model, Q(x) = x^T A x - 2 b^T x, as pcg.h defines it.
double Model(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, const Eigen::VectorXd& x) {
  return x.dot(a * x) - 2.0 * b.dot(x);
}

constexpr int kN = 30;

LinearSolverSummary SolveDouble(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                                const PcgOptions& options, Eigen::VectorXd* x,
                                LinearOperator<double>* preconditioner = nullptr) {
  testing::DenseOperator<double> op(a);
  Pcg<double> pcg(kN);
  x->resize(kN);
  return pcg.Solve(&op, preconditioner, b.data(), x->data(), options);
}

TEST(Pcg, StopsByTheNashSoferRule) {
  const Eigen::MatrixXd a = RandomSpd(Spectrum(kN, 1e3), 1);
  const Eigen::VectorXd b = RandomVector(kN, 2);
  PcgOptions options;  // eta = 0.1, r_tolerance disabled: the trust-region loop's
  Eigen::VectorXd x;
  const LinearSolverSummary s = SolveDouble(a, b, options, &x);
  ASSERT_EQ(s.termination, LinearSolverTermination::kSuccess) << s.message;
  const int k = s.num_iterations;
  ASSERT_GE(k, 2) << "too easy a system to tell the rule from a full solve";
  // Replay the iterates: the run truncated at k - 1 (and k - 2) iterations does
  // the same arithmetic, so it ends at x_{k-1} (x_{k-2}).
  PcgOptions truncated = options;
  truncated.q_tolerance = 0.0;  // never stops early (the model only decreases)
  std::vector<Eigen::VectorXd> iterate(k + 1, Eigen::VectorXd::Zero(kN));
  iterate[k] = x;
  for (int i = 1; i < k; ++i) {
    truncated.max_num_iterations = i;
    ASSERT_EQ(SolveDouble(a, b, truncated, &iterate[i]).num_iterations, i);
  }
  // zeta_i = i (Q_i - Q_{i-1}) / Q_i: below eta at k, not before. The model is
  // recomputed densely here while Pcg uses its recurrence residual; both agree
  // to ~1e-14 relative, far below the margin of the zetas from eta (printed).
  for (int i = 1; i <= k; ++i) {
    const double q1 = Model(a, b, iterate[i]), q0 = Model(a, b, iterate[i - 1]);
    const double zeta = i * (q1 - q0) / q1;
    if (i < k) {
      EXPECT_GE(zeta, options.q_tolerance) << "iteration " << i;
    } else {
      EXPECT_LT(zeta, options.q_tolerance) << "iteration " << i;
    }
  }
  // Against the dense solution: the rule is a heuristic (no bound on the error
  // follows from it), so only loosely: the truncated step achieves most of the
  // optimal model decrease Q* = -b^T A^-1 b (measured ~0.99 here; a wrong alpha
  // or beta leaves far less) and points the same way as the Newton step.
  const Eigen::VectorXd exact = a.ldlt().solve(b);
  const double q_star = Model(a, b, exact);
  EXPECT_GT(Model(a, b, x) / q_star, 0.9);
  EXPECT_GT(x.dot(exact) / (x.norm() * exact.norm()), 0.9);
}

TEST(Pcg, TinyEtaSolvesToRoundingLevel) {
  const Eigen::MatrixXd a = RandomSpd(Spectrum(kN, 1e3), 3);
  const Eigen::VectorXd b = RandomVector(kN, 4);
  PcgOptions options;
  options.q_tolerance = 1e-14;
  Eigen::VectorXd x;
  const LinearSolverSummary s = SolveDouble(a, b, options, &x);
  EXPECT_NE(s.termination, LinearSolverTermination::kFailure) << s.message;
  // The model test stops when rounding hides the model's progress: Q is
  // known to ~eps |Q| and Q - Q* = |x - x*|_A^2, so the energy error can stall
  // at sqrt(eps) |x*|_A = 1.5e-8 |x*|_A, i.e. up to sqrt(kappa) * 1.5e-8 =
  // 4.7e-7 relative in the 2-norm. Hence 1e-6 (measured: ~1e-10); eta = 0.1
  // ends ~1e-1 away.
  const Eigen::VectorXd exact = a.ldlt().solve(b);
  EXPECT_LT((x - exact).norm() / exact.norm(), 1e-6) << s.message;
}

TEST(Pcg, ZeroRightHandSideIsSuccessWithoutIterations) {
  testing::DenseOperator<double> op(RandomSpd(Spectrum(kN, 10), 5));
  Pcg<double> pcg(kN);
  const Eigen::VectorXd b = Eigen::VectorXd::Zero(kN);
  Eigen::VectorXd x = Eigen::VectorXd::Constant(kN, 7.0);  // must be overwritten
  const LinearSolverSummary s = pcg.Solve(&op, nullptr, b.data(), x.data(), PcgOptions());
  EXPECT_EQ(s.termination, LinearSolverTermination::kSuccess);
  EXPECT_EQ(s.num_iterations, 0);
  EXPECT_EQ(s.message, "Convergence. |b| = 0.");
  EXPECT_EQ(x, Eigen::VectorXd::Zero(kN));
  EXPECT_EQ(op.calls, 0);
}

TEST(Pcg, NonFiniteRightHandSideIsFailure) {
  for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    testing::DenseOperator<double> op(RandomSpd(Spectrum(kN, 10), 6));
    Pcg<double> pcg(kN);
    Eigen::VectorXd b = RandomVector(kN, 7);
    b[3] = bad;
    Eigen::VectorXd x(kN);
    const LinearSolverSummary s = pcg.Solve(&op, nullptr, b.data(), x.data(), PcgOptions());
    EXPECT_EQ(s.termination, LinearSolverTermination::kFailure) << bad;
    EXPECT_EQ(s.num_iterations, 0) << bad;
    EXPECT_EQ(op.calls, 0) << bad;
  }
}

TEST(Pcg, IndefiniteOperatorIsNoConvergence) {
  // Negative definite: the first p^T A p is already negative.
  Eigen::VectorXd eigenvalues = -Spectrum(kN, 10);
  Eigen::VectorXd x;
  LinearSolverSummary s = SolveDouble(RandomSpd(eigenvalues, 8), RandomVector(kN, 9),
                                      PcgOptions(), &x);
  EXPECT_EQ(s.termination, LinearSolverTermination::kNoConvergence);
  EXPECT_EQ(s.message.rfind("Matrix is indefinite, no more progress can be made.", 0), 0u)
      << s.message;
  EXPECT_EQ(s.num_iterations, 1);
  EXPECT_EQ(x, Eigen::VectorXd::Zero(kN)) << "the step along p is not taken";
  // Singular (A = 0) is caught by the same test: p^T A p = 0.
  s = SolveDouble(Eigen::MatrixXd::Zero(kN, kN), RandomVector(kN, 9), PcgOptions(), &x);
  EXPECT_EQ(s.termination, LinearSolverTermination::kNoConvergence) << s.message;
}

TEST(Pcg, MaxIterationsIsNoConvergence) {
  PcgOptions options;
  options.q_tolerance = 0.0;
  options.max_num_iterations = 4;
  Eigen::VectorXd x;
  const LinearSolverSummary s =
      SolveDouble(RandomSpd(Spectrum(kN, 1e3), 10), RandomVector(kN, 11), options, &x);
  EXPECT_EQ(s.termination, LinearSolverTermination::kNoConvergence);
  EXPECT_EQ(s.num_iterations, 4);
  EXPECT_EQ(s.message, "Maximum number of iterations reached.");
  EXPECT_TRUE(x.allFinite());
  EXPECT_GT(x.norm(), 0.0) << "the partial step is returned";
}

TEST(Pcg, MinNumIterationsIsHonoured) {
  const Eigen::MatrixXd a = RandomSpd(Spectrum(kN, 1e3), 12);
  const Eigen::VectorXd b = RandomVector(kN, 13);
  Eigen::VectorXd x;
  PcgOptions options;
  const int free_stop = SolveDouble(a, b, options, &x).num_iterations;
  options.min_num_iterations = free_stop + 5;  // still far from n = 30
  const LinearSolverSummary s = SolveDouble(a, b, options, &x);
  EXPECT_EQ(s.termination, LinearSolverTermination::kSuccess) << s.message;
  // zeta keeps below eta once it got there on this system (the model
  // converges): the first allowed iteration stops.
  EXPECT_EQ(s.num_iterations, free_stop + 5);
}

TEST(Pcg, ExactInversePreconditionerConvergesInOneIteration) {
  const Eigen::MatrixXd a = RandomSpd(Spectrum(kN, 1e4), 14);
  const Eigen::VectorXd b = RandomVector(kN, 15);
  // With M = A^-1, alpha = 1 and x_1 = A^-1 b. The Nash-Sofer test cannot
  // stop there (zeta_1 = 1 always, since Q_0 = 0), so this uses the residual
  // test: |r_1| is rounding-level (kappa * eps ~ 1e-12), far below 1e-8 |b|.
  PcgOptions options;
  options.r_tolerance = 1e-8;
  testing::DenseOperator<double> inverse(a.inverse());
  Eigen::VectorXd x;
  const LinearSolverSummary s = SolveDouble(a, b, options, &x, &inverse);
  EXPECT_EQ(s.termination, LinearSolverTermination::kSuccess) << s.message;
  EXPECT_EQ(s.num_iterations, 1);
  EXPECT_EQ(inverse.calls, 1);
  EXPECT_LT((x - a.ldlt().solve(b)).norm() / x.norm(), 1e-8);
  // Without it the same system takes many iterations.
  EXPECT_GT(SolveDouble(a, b, options, &x).num_iterations, 10);
}

TEST(Pcg, FloatAgreesWithDoubleToFloatAccuracy) {
  const Eigen::MatrixXd a = RandomSpd(Spectrum(kN, 10), 16);
  const Eigen::VectorXd b = RandomVector(kN, 17);
  PcgOptions options;
  options.q_tolerance = 1e-14;
  options.max_num_iterations = 200;
  Eigen::VectorXd xd;
  SolveDouble(a, b, options, &xd);
  testing::DenseOperator<float> op(a.cast<float>());
  Pcg<float> pcg(kN);
  const Eigen::VectorXf bf = b.cast<float>();
  Eigen::VectorXf xf(kN);
  const LinearSolverSummary s = pcg.Solve(&op, nullptr, bf.data(), xf.data(), options);
  EXPECT_NE(s.termination, LinearSolverTermination::kFailure) << s.message;
  // Both stop where rounding hides the model's progress (see TinyEta): in
  // float, r carries rounding of ~u |b| (u = 6e-8), so the energy error can
  // stall at sqrt(u) = 2.4e-4, up to sqrt(kappa) * 2.4e-4 = 7.7e-4 in the
  // 2-norm; the double solution is 1e-6 or better. Hence 1e-3 (measured:
  // 1e-5 to 3e-5 over seeds); eta = 0.1 would end ~1e-1 away.
  EXPECT_LT((xf.cast<double>() - xd).norm() / xd.norm(), 1e-3) << s.message;
}

TEST(Pcg, InnerProductsAccumulateInDouble) {
  // b = (4096, 1, ..., 1) with 1000 ones, A = diag(1, 2, ..., 2): one step
  // gives x = alpha b with alpha = b'b / b'Ab = (2^24 + 1000) / (2^24 + 2000).
  // Summed in float, +1s added to 2^24 (ulp 2) are lost while +2s are not:
  // alpha would be off by up to 6e-5 (1e-5 or more whatever the summation
  // order); in double it is exact up to the final rounding to float (6e-8),
  // hence 1e-6.
  const int n = 1001;
  Eigen::VectorXf diagonal = Eigen::VectorXf::Constant(n, 2.0f);
  diagonal[0] = 1.0f;
  testing::DenseOperator<float> op(Eigen::MatrixXf(diagonal.asDiagonal()));
  Eigen::VectorXf b = Eigen::VectorXf::Ones(n);
  b[0] = 4096.0f;
  PcgOptions options;
  options.max_num_iterations = 1;
  options.q_tolerance = 0.0;
  Pcg<float> pcg(n);
  Eigen::VectorXf x(n);
  pcg.Solve(&op, nullptr, b.data(), x.data(), options);
  const double alpha = (16777216.0 + 1000.0) / (16777216.0 + 2000.0);
  EXPECT_NEAR(x[0] / 4096.0, alpha, 1e-6);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
