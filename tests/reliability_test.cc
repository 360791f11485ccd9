// What a user hits through the public API, each case checked against what
// ceres::Solve does on the same problem: a loss with a negative derivative,
// failures with update_state_every_iteration, absurd thread counts, the
// problem's evaluation callback, memory that is not there, values Ceres
// refuses up front.
#include <atomic>
#include <climits>
#include <cmath>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/solver.h"
#include "euclidean3_manifold.h"
#include "gtest/gtest.h"
#include "stop_at_iteration.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::AddReprojectionResiduals;
using testing::MakeSyntheticBa;
using testing::SyntheticBa;

Solver::Options SqrtOptions(Precision precision = DOUBLE_PRECISION) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.precision = precision;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  o.max_num_iterations = 10;
  o.logging_type = ceres::SILENT;
  return o;
}

bool Same(const SyntheticBa& a, const SyntheticBa& b) {
  return a.poses == b.poses && a.points == b.points && a.intrinsics == b.intrinsics;
}

// rho(s) = s exp(-s / 100): rho'(s) = exp(-s/100) (1 - s/100) < 0 for s > 100.
class DecayingLoss : public ceres::LossFunction {
 public:
  void Evaluate(double s, double rho[3]) const override {
    const double e = std::exp(-s / 100.0);
    rho[0] = s * e;
    rho[1] = e * (1.0 - s / 100.0);
    rho[2] = e * (-2.0 / 100.0 + s / 1e4);
  }
};

// Ceres aborts on such a loss (a CHECK in its corrector); here the solve ends
// with FAILURE naming the loss, in both precisions, without touching the
// parameters, and single precision does not switch back and forth (it hung).
TEST(Reliability, LossWithNegativeDerivativeFailsWithAMessage) {
  for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
    for (bool explicit_rows : {false, true}) {
      SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 31, 0.1);  // outliers: s >> 100
      const SyntheticBa original = ba;
      ceres::Problem problem;
      AddReprojectionResiduals(&ba, &problem, new DecayingLoss);
      Solver::Options o = SqrtOptions(precision);
      o.use_explicit_reduced_rows = explicit_rows;
      Solver::Summary s;
      Solve(o, &problem, &s);
      EXPECT_EQ(s.termination_type, ceres::FAILURE);
      EXPECT_EQ(s.message.rfind(std::string(internal::kInitialEvaluationFailed) + " The loss function of the residual block ", 0), 0u)
          << s.message;
      EXPECT_NE(s.message.find("a robust loss needs rho' >= 0"), std::string::npos) << s.message;
      EXPECT_EQ(s.precision_switch_iteration, -1);
      EXPECT_TRUE(Same(ba, original));
    }
  }
}

// With update_state_every_iteration the user's blocks move during the
// solve; when the solution is not usable Ceres puts the initial values back.
TEST(Reliability, UpdateStateEveryIterationAndAbortLeavesTheParametersUntouched) {
  for (bool ceres_solve : {false, true}) {
    SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 32);
    const SyntheticBa original = ba;
    ceres::Problem problem;
    AddReprojectionResiduals(&ba, &problem, nullptr);
    Solver::Options o = SqrtOptions();
    o.update_state_every_iteration = true;
    testing::StopAtIteration abort(2, ceres::SOLVER_ABORT);
    o.callbacks.push_back(&abort);
    ceres::Solver::Summary s;
    if (ceres_solve) {
      ceres::Solver::Options co = o;
      co.linear_solver_type = ceres::ITERATIVE_SCHUR;
      ceres::Solve(co, &problem, &s);
    } else {
      Solve(o, &problem, &s);
    }
    EXPECT_EQ(s.termination_type, ceres::USER_FAILURE) << (ceres_solve ? "ceres" : "sqrt");
    EXPECT_TRUE(Same(ba, original)) << (ceres_solve ? "ceres" : "sqrt");
  }
}

// A Jacobian that is infinite at an accepted point: a weak prior on a point
// whose Jacobian is infinite once the point has moved (its residual stays
// finite, so the candidate is accepted first).
class InfiniteJacobianOnceMoved : public ceres::SizedCostFunction<1, 3> {
 public:
  explicit InfiniteJacobianOnceMoved(double x0) : x0_(x0) {}
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    r[0] = 1e-3 * (x[0][0] - x0_);
    if (j != nullptr && j[0] != nullptr) {
      j[0][0] = x[0][0] == x0_ ? 1e-3 : INFINITY;
      j[0][1] = j[0][2] = 0.0;
    }
    return true;
  }

 private:
  double x0_;
};

struct ScalarPrior {
  template <typename T>
  bool operator()(const T* x, T* r) const {
    r[0] = x[0] - T(0.5);
    return true;
  }
};

TEST(Reliability, UpdateStateEveryIterationAndFailureLeavesTheParametersUntouched) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 33);
  const SyntheticBa original = ba;
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  problem.AddResidualBlock(new InfiniteJacobianOnceMoved(ba.points[0][0]), nullptr, ba.points[0].data());
  Solver::Options o = SqrtOptions();
  o.update_state_every_iteration = true;
  Solver::Summary s;
  Solve(o, &problem, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE) << s.message;
  EXPECT_TRUE(Same(ba, original));
}

// As Ceres: more threads than the machine has are not used (and a huge
// request neither crashes TBB nor takes memory and time in proportion).
TEST(Reliability, HugeNumThreadsIsCappedAtTheMachine) {
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  for (int threads : {INT_MAX, 16777216, 64}) {
    SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 34);
    ceres::Problem problem;
    AddReprojectionResiduals(&ba, &problem, nullptr);
    Solver::Options o = SqrtOptions();
    o.num_threads = threads;
    Solver::Summary s;
    Solve(o, &problem, &s);
    EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
    EXPECT_EQ(s.num_threads_given, threads);
    if (hardware > 0) EXPECT_EQ(s.num_threads_used, std::min(threads, hardware));
  }
}

// The problem's evaluation callback is called as Ceres calls it, with the
// point being evaluated in the user's blocks; a cost function that reads
// what the callback prepared sees the right values.
class Recorder : public ceres::EvaluationCallback {
 public:
  explicit Recorder(const double* watched) : watched_(watched) {}
  void PrepareForEvaluation(bool evaluate_jacobians, bool new_evaluation_point) override {
    calls.emplace_back(evaluate_jacobians, new_evaluation_point);
    prepared = watched_[0];
  }
  std::vector<std::pair<bool, bool>> calls;
  double prepared = 0.0;

 private:
  const double* watched_;
};

// A weak prior on the watched block that checks the value the callback
// prepared against the point it is evaluated at.
class PreparedPrior : public ceres::SizedCostFunction<1, 3> {
 public:
  PreparedPrior(const Recorder* recorder, std::atomic<int>* mismatches)
      : recorder_(recorder), mismatches_(mismatches) {}
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    if (x[0][0] != recorder_->prepared) ++*mismatches_;
    r[0] = 1e-3 * recorder_->prepared;
    if (j != nullptr && j[0] != nullptr) j[0][0] = 1e-3, j[0][1] = j[0][2] = 0.0;
    return true;
  }

 private:
  const Recorder* recorder_;
  std::atomic<int>* mismatches_;
};

struct CallbackRun {
  std::vector<std::pair<bool, bool>> calls;
  int mismatches = 0;
  double final_cost = 0.0;
  double evaluated_cost = 0.0;
};

CallbackRun RunWithCallback(bool ceres_solve, bool jacobians_at_candidates = false) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 35, 0.0);
  std::vector<double> fixed = {1.0};
  Recorder recorder(ba.points[0].data());
  std::atomic<int> mismatches{0};
  ceres::Problem::Options po;
  po.evaluation_callback = &recorder;
  ceres::Problem problem(po);
  AddReprojectionResiduals(&ba, &problem, nullptr);
  problem.AddResidualBlock(new PreparedPrior(&recorder, &mismatches), nullptr, ba.points[0].data());
  // An all-constant residual block: Ceres prepares once before its cost.
  problem.AddResidualBlock(new ceres::AutoDiffCostFunction<ScalarPrior, 1, 1>(new ScalarPrior),
                           nullptr, fixed.data());
  problem.SetParameterBlockConstant(fixed.data());
  Solver::Options o = SqrtOptions();
  o.max_num_iterations = 6;
  o.eta = 1e-10;  // both solvers take the exact Gauss-Newton steps
  o.jacobians_at_candidates = jacobians_at_candidates;
  ceres::Solver::Summary s;
  if (ceres_solve) {
    ceres::Solver::Options co = o;
    co.linear_solver_type = ceres::ITERATIVE_SCHUR;
    ceres::Solve(co, &problem, &s);
  } else {
    Solve(o, &problem, &s);
  }
  CallbackRun run;
  run.calls = recorder.calls;
  run.mismatches = mismatches.load();
  run.final_cost = s.final_cost;
  problem.Evaluate(ceres::Problem::EvaluateOptions(), &run.evaluated_cost, nullptr, nullptr, nullptr);
  return run;
}

TEST(Reliability, EvaluationCallbackIsCalledAsCeresCallsIt) {
  const CallbackRun sqrt = RunWithCallback(false);
  const CallbackRun ceres = RunWithCallback(true);
  EXPECT_EQ(sqrt.mismatches, 0);
  EXPECT_EQ(ceres.mismatches, 0);
  ASSERT_FALSE(ceres.calls.empty());
  EXPECT_EQ(sqrt.calls, ceres.calls);
  // The result is the cost Problem::Evaluate gives at it.
  EXPECT_NEAR(sqrt.evaluated_cost, sqrt.final_cost, 1e-9 * sqrt.final_cost);
  EXPECT_NEAR(sqrt.final_cost, ceres.final_cost, 1e-6 * ceres.final_cost);
}

// With Jacobians at candidates (the default): on Ceres 2.2, which shows the
// callback, they are not used and the calls are Ceres' own; on 2.1, which
// does not, a candidate is announced as (true, true) and its acceptance
// needs no call, so Ceres' (false, true), (true, false) pairs become
// (true, true) — and the cost functions still see prepared values.
TEST(Reliability, EvaluationCallbackWithJacobiansAtCandidates) {
  const CallbackRun sqrt = RunWithCallback(false, true);
  const CallbackRun ceres = RunWithCallback(true);
  EXPECT_EQ(sqrt.mismatches, 0);
  EXPECT_NEAR(sqrt.final_cost, ceres.final_cost, 1e-6 * ceres.final_cost);
  if (internal::kCeres22) {
    EXPECT_EQ(sqrt.calls, ceres.calls);
    return;
  }
  // Ceres: the fixed cost, iteration 0, then per step its candidate and,
  // every step being accepted here, (true, false). The first step is
  // evaluated as Ceres does (no step accepted before it).
  std::vector<std::pair<bool, bool>> expected;
  for (size_t i = 0; i < ceres.calls.size(); ++i) {
    if (i < 4) {
      expected.push_back(ceres.calls[i]);
    } else if (ceres.calls[i] == std::make_pair(false, true)) {
      expected.emplace_back(true, true);
    } else {
      EXPECT_EQ(ceres.calls[i], std::make_pair(true, false)) << "call " << i << ": a step was not accepted";
    }
  }
  EXPECT_GT(expected.size(), 5u);
  EXPECT_EQ(sqrt.calls, expected);
}

// Memory that is not there: FAILURE naming the bytes, nothing thrown out of
// Solve, the parameters untouched.
TEST(Reliability, FailedAllocationIsAFailureNamingTheBytes) {
  for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
    SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 36);
    const SyntheticBa original = ba;
    ceres::Problem problem;
    AddReprojectionResiduals(&ba, &problem, nullptr);
    internal::SetAllocationFailureAboveForTesting(64);
    Solver::Summary s;
    Solve(SqrtOptions(precision), &problem, &s);
    internal::SetAllocationFailureAboveForTesting(-1);
    EXPECT_EQ(s.termination_type, ceres::FAILURE);
    EXPECT_EQ(s.message.rfind("Out of memory: could not allocate ", 0), 0u) << s.message;
    EXPECT_NE(s.message.find(" bytes)"), std::string::npos) << s.message;
    EXPECT_TRUE(Same(ba, original));
  }
}

// Ceres checks every parameter block's values before it solves, also blocks
// no residual uses; the message is Ceres' own (the same problem object is
// solved by both, so the addresses agree).
TEST(Reliability, NonFiniteValueInABlockWithoutResidualsIsRefusedAsCeresRefusesIt) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 37);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  std::vector<double> lonely = {1.0, std::nan(""), 3.0};
  problem.AddParameterBlock(lonely.data(), 3);
  Solver::Summary s;
  Solve(SqrtOptions(), &problem, &s);
  ceres::Solver::Summary c;
  ceres::Solver::Options co = SqrtOptions();
  co.linear_solver_type = ceres::ITERATIVE_SCHUR;
  ceres::Solve(co, &problem, &c);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(c.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message, c.message);
  EXPECT_NE(s.message.find("has at least one invalid value"), std::string::npos) << s.message;
}

// A manifold whose PlusJacobian fails beyond a threshold, on a weak prior's
// block: as in Ceres, a candidate there counts as a step of infinite cost
// (rejected, the radius shrinks), not as a failure of the solve.
class FencedEuclidean : public testing::Euclidean3Manifold {
 public:
  explicit FencedEuclidean(double fence) : fence_(fence) {}
  bool PlusJacobian(const double* x, double* jacobian) const override {
    if (x[0] > fence_) return false;
    return Euclidean3Manifold::PlusJacobian(x, jacobian);
  }

 private:
  double fence_;
};

struct PullTo {
  template <typename T>
  bool operator()(const T* x, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = x[k] - T(target);
    return true;
  }
  double target;
};

TEST(Reliability, PlusJacobianFailingAtACandidateRejectsTheStep) {
  SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 38);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  std::vector<double> extra = {0.0, 0.0, 0.0};
  problem.AddResidualBlock(new ceres::AutoDiffCostFunction<PullTo, 3, 3>(new PullTo{10.0}), nullptr, extra.data());
  problem.SetManifold(extra.data(), new FencedEuclidean(5.0));
  Solver::Options o = SqrtOptions();
  o.max_num_iterations = 30;
  Solver::Summary s;
  Solve(o, &problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_GT(s.num_unsuccessful_steps, 0);
  EXPECT_LE(extra[0], 5.0);
}

}  // namespace
}  // namespace ceres_sqrtba
