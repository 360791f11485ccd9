// LevenbergMarquardtStrategy against Ceres' LevenbergMarquardtStrategy: the
// radius updates, the damping diagonal handed to the linear solver, when that
// diagonal is recomputed, and non-finite steps.
//
// Expected radii are worked out by hand from Ceres' formulas; they are
// compared with EXPECT_DOUBLE_EQ (4 ulps) because the hand value and the unit
// may round the same real number differently (e.g. 1e4 / (1/3) vs 1e4 * 3),
// while any other rule is off by far more.
#include "ceres_sqrtba/internal/minimizer/levenberg_marquardt_strategy.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "null_jacobian_writer.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Records what the strategy asks; answers with scripted column norms and step.
class FakeSolver : public LinearSolver {
 public:
  explicit FakeSolver(std::vector<double> column_norms)
      : column_norms(std::move(column_norms)), y(this->column_norms.size(), 1.0) {}
  JacobianWriter* writer() override { return &writer_; }
  void SquaredColumnNorms(double* norms) override {
    ++norm_calls;
    std::copy(column_norms.begin(), column_norms.end(), norms);
  }
  void ScaleColumns(const double*) override {}
  LinearSolverSummary Solve(const double* d, double eta_in, double* y_out,
                            double* jy_squared_norm) override {
    last_d.assign(d, d + column_norms.size());
    eta = eta_in;
    if (write_y) std::copy(y.begin(), y.end(), y_out);
    *jy_squared_norm = jy;
    LinearSolverSummary s;
    s.termination = termination;
    s.message = "scripted";
    return s;
  }

  std::vector<double> column_norms;
  std::vector<double> y;
  double jy = 1.0;
  bool write_y = true;
  LinearSolverTermination termination = LinearSolverTermination::kSuccess;
  int norm_calls = 0;
  std::vector<double> last_d;
  double eta = 0.0;

 private:
  testing::NullJacobianWriter writer_;
};

LinearSolverSummary Step(LevenbergMarquardtStrategy* lm, FakeSolver* solver,
                         double eta = 0.1) {
  std::vector<double> y(solver->column_norms.size());
  double jy = 0.0;
  return lm->ComputeStep(solver, eta, y.data(), &jy);
}

TEST(LevenbergMarquardtStrategy, AcceptedStepScalesTheRadiusByCeresRule) {
  // radius /= max(1/3, 1 - (2 rho - 1)^3), worked out by hand:
  struct Case { double rho, factor; };
  const Case cases[] = {
      {1.0, 3.0},          // 1 - 1 = 0 -> 1/3: the radius triples
      {0.9, 1.0 / 0.488},  // 1 - 0.8^3 = 0.488
      {0.5, 1.0},          // 1 - 0 = 1: unchanged
      {0.25, 1.0 / 1.125}, // 1 - (-0.5)^3 = 1.125: shrinks
      {1e-3, 1.0 / (1.0 + std::pow(0.998, 3))},  // almost halves
  };
  for (const Case& c : cases) {
    LevenbergMarquardtOptions options;
    options.initial_radius = 1e4;
    LevenbergMarquardtStrategy lm(2, options);
    lm.StepAccepted(c.rho);
    EXPECT_DOUBLE_EQ(lm.Radius(), 1e4 * c.factor) << "rho = " << c.rho;
  }
}

TEST(LevenbergMarquardtStrategy, AcceptedRadiusIsCappedAtMax) {
  LevenbergMarquardtOptions options;
  options.initial_radius = 1e4;
  options.max_radius = 2e4;
  LevenbergMarquardtStrategy lm(2, options);
  lm.StepAccepted(1.0);  // would be 3e4
  EXPECT_EQ(lm.Radius(), 2e4);
  lm.StepAccepted(1.0);
  EXPECT_EQ(lm.Radius(), 2e4);
}

TEST(LevenbergMarquardtStrategy, RejectionsDoubleTheDecreaseFactorUntilAnAcceptance) {
  LevenbergMarquardtOptions options;
  options.initial_radius = 1e4;
  LevenbergMarquardtStrategy lm(2, options);
  lm.StepRejected();  // / 2
  EXPECT_EQ(lm.Radius(), 5e3);
  lm.StepIsInvalid();  // / 4: an invalid step counts as a rejection
  EXPECT_EQ(lm.Radius(), 1.25e3);
  lm.StepRejected();  // / 8
  EXPECT_EQ(lm.Radius(), 156.25);
  lm.StepAccepted(0.5);  // unchanged radius, factor back to 2
  EXPECT_EQ(lm.Radius(), 156.25);
  lm.StepRejected();
  EXPECT_EQ(lm.Radius(), 78.125);  // powers of two: exact
}

// Reset starts again (radius, decrease factor, a fresh diagonal) on a
// smaller problem, as inner iterations do for each block.
TEST(LevenbergMarquardtStrategy, ResetStartsAFreshSolve) {
  LevenbergMarquardtOptions options;
  options.initial_radius = 1.0;
  LevenbergMarquardtStrategy lm(3, options);
  FakeSolver big({1.0, 1.0, 1.0});
  Step(&lm, &big);
  lm.StepRejected();
  lm.StepRejected();  // radius 1/8, decrease factor 8
  lm.Reset(2);
  EXPECT_EQ(lm.Radius(), 1.0);
  FakeSolver small({4.0, 9.0});
  Step(&lm, &small);
  EXPECT_EQ(small.norm_calls, 1);  // the diagonal is computed again
  EXPECT_EQ(small.last_d, (std::vector<double>{2.0, 3.0}));
  lm.StepRejected();
  EXPECT_EQ(lm.Radius(), 0.5);  // the decrease factor is 2 again
}

TEST(LevenbergMarquardtStrategy, DiagonalIsClampedAndScaledByTheRadius) {
  LevenbergMarquardtOptions options;
  options.initial_radius = 4.0;
  options.min_diagonal = 1e-6;
  options.max_diagonal = 1e32;
  FakeSolver solver({1e-9, 0.0, 0.5, 16.0, 1e40});
  LevenbergMarquardtStrategy lm(5, options);
  Step(&lm, &solver, 0.25);
  EXPECT_EQ(solver.norm_calls, 1);
  EXPECT_EQ(solver.eta, 0.25);
  // D = sqrt(clamp(norm) / radius); one rounding each, so 4 ulps suffice.
  const double expected[] = {std::sqrt(1e-6 / 4), std::sqrt(1e-6 / 4), std::sqrt(0.5 / 4), 2.0,
                             std::sqrt(1e32 / 4)};
  for (int i = 0; i < 5; ++i) EXPECT_DOUBLE_EQ(solver.last_d[i], expected[i]) << i;
}

TEST(LevenbergMarquardtStrategy, DiagonalIsReusedAfterRejectionRecomputedAfterAcceptance) {
  LevenbergMarquardtOptions options;
  options.initial_radius = 1.0;
  FakeSolver solver({4.0, 9.0});
  LevenbergMarquardtStrategy lm(2, options);
  Step(&lm, &solver);
  EXPECT_EQ(solver.last_d, (std::vector<double>{2.0, 3.0}));
  // A new Jacobian would have other norms; the strategy must not ask for them
  // while the Jacobian is the same (after a rejection, or a repeated solve).
  solver.column_norms = {64.0, 144.0};
  lm.StepRejected();  // radius 1/2: D = sqrt(2 * old diagonal)
  Step(&lm, &solver);
  EXPECT_EQ(solver.norm_calls, 1);
  EXPECT_DOUBLE_EQ(solver.last_d[0], std::sqrt(8.0));
  EXPECT_DOUBLE_EQ(solver.last_d[1], std::sqrt(18.0));
  Step(&lm, &solver);
  EXPECT_EQ(solver.norm_calls, 1);
  lm.StepAccepted(0.5);  // radius stays 1/2, new Jacobian: new diagonal
  Step(&lm, &solver);
  EXPECT_EQ(solver.norm_calls, 2);
  EXPECT_DOUBLE_EQ(solver.last_d[0], std::sqrt(128.0));
  EXPECT_DOUBLE_EQ(solver.last_d[1], std::sqrt(288.0));
}

TEST(LevenbergMarquardtStrategy, InvalidateDiagonalForcesARecomputation) {
  LevenbergMarquardtOptions options;
  options.initial_radius = 1.0;
  FakeSolver solver({4.0, 9.0});
  LevenbergMarquardtStrategy lm(2, options);
  Step(&lm, &solver);
  lm.StepRejected();
  lm.InvalidateDiagonal();  // e.g. the Jacobian moved to a double-precision solver
  solver.column_norms = {16.0, 36.0};
  Step(&lm, &solver);
  EXPECT_EQ(solver.norm_calls, 2);
  EXPECT_DOUBLE_EQ(solver.last_d[0], std::sqrt(32.0));
  EXPECT_DOUBLE_EQ(solver.last_d[1], std::sqrt(72.0));
}

TEST(LevenbergMarquardtStrategy, NonFiniteStepIsAFailure) {
  LevenbergMarquardtStrategy lm(3, LevenbergMarquardtOptions());
  FakeSolver solver({1.0, 1.0, 1.0});
  EXPECT_EQ(Step(&lm, &solver).termination, LinearSolverTermination::kSuccess);
  solver.termination = LinearSolverTermination::kNoConvergence;  // usable step
  EXPECT_EQ(Step(&lm, &solver).termination, LinearSolverTermination::kNoConvergence);

  for (double bad : {std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    solver.y = {1.0, bad, 1.0};
    const LinearSolverSummary s = Step(&lm, &solver);
    EXPECT_EQ(s.termination, LinearSolverTermination::kFailure) << bad;
    EXPECT_EQ(s.message, "Linear solver failure. Failed to compute a finite step.");
  }
  solver.y = {1.0, 1.0, 1.0};
  solver.jy = std::numeric_limits<double>::infinity();  // |J y|^2 overflowed
  EXPECT_EQ(Step(&lm, &solver).termination, LinearSolverTermination::kFailure);
  solver.jy = 1.0;
  solver.write_y = false;  // a solver that left y alone
  EXPECT_EQ(Step(&lm, &solver).termination, LinearSolverTermination::kFailure);

  // The solver's own failure passes through with its message.
  solver.write_y = true;
  solver.termination = LinearSolverTermination::kFatalError;
  const LinearSolverSummary s = Step(&lm, &solver);
  EXPECT_EQ(s.termination, LinearSolverTermination::kFatalError);
  EXPECT_EQ(s.message, "scripted");
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
