// PrecisionPolicy (solvers/precision_policy.h) with scripted solver
// factories: the switch to double precision (reason and iteration recorded,
// the single precision solver freed before the double one is built), its
// refusal when double precision does not fit or is not possible, the run of
// rejections that puts single precision to the trial
// (NextRejectionIsTrial, StepAccepted), and ReturnToSingle doubling the run
// the next trial needs.
#include "ceres_sqrtba/internal/solvers/precision_policy.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "null_jacobian_writer.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// A solver that only knows its precision; it counts the live solvers so that
// the tests see which one existed when another was built.
class TaggedSolver : public LinearSolver {
 public:
  TaggedSolver(Precision precision, int* live) : precision(precision), live_(live) { ++*live_; }
  ~TaggedSolver() override { --*live_; }
  JacobianWriter* writer() override { return &writer_; }
  void SquaredColumnNorms(double*) override {}
  void ScaleColumns(const double*) override {}
  LinearSolverSummary Solve(const double*, double, double*, double*) override {
    return LinearSolverSummary();
  }
  const Precision precision;

 private:
  int* live_;
  testing::NullJacobianWriter writer_;
};

// The factories' record: every solver built (its precision and how many
// others were alive then) and every memory question asked.
struct Script {
  int live = 0;
  std::vector<Precision> made;
  std::vector<int> live_when_made;
  std::vector<Precision> asked;
  bool double_fits = true;

  PrecisionPolicy::MakeSolver Make() {
    return [this](Precision p) -> std::unique_ptr<LinearSolver> {
      made.push_back(p);
      live_when_made.push_back(live);
      return std::make_unique<TaggedSolver>(p, &live);
    };
  }
  PrecisionPolicy::FitsInMemory Fits() {
    return [this](Precision p, std::string* why) {
      asked.push_back(p);
      if (p == DOUBLE_PRECISION && !double_fits) {
        *why = "scripted: double precision needs 3 GiB";
        return false;
      }
      return true;
    };
  }
};

Precision PrecisionOf(const PrecisionPolicy& policy) {
  return static_cast<const TaggedSolver*>(policy.solver())->precision;
}

TEST(PrecisionPolicy, BuildsTheRequestedSolver) {
  for (Precision p : {SINGLE_PRECISION, DOUBLE_PRECISION}) {
    Script script;
    PrecisionPolicy policy(p, script.Make(), script.Fits());
    EXPECT_EQ(script.made, std::vector<Precision>{p});
    EXPECT_TRUE(script.asked.empty());  // the caller checked the requested precision
    ASSERT_NE(policy.solver(), nullptr);
    EXPECT_EQ(PrecisionOf(policy), p);
    EXPECT_EQ(policy.requested(), p);
    EXPECT_EQ(policy.current(), p);
    EXPECT_EQ(policy.CanSwitchToDouble(), p == SINGLE_PRECISION);
    EXPECT_EQ(policy.switch_iteration(), -1);
    EXPECT_EQ(policy.switch_reason(), "");
    EXPECT_EQ(policy.failed_trials(), 0);
    EXPECT_EQ(policy.rejections_before_trial(), PrecisionPolicy::kMaxRejectionsInSinglePrecision);
  }
}

TEST(PrecisionPolicy, SwitchRecordsReasonAndIterationAndFreesTheSingleSolverFirst) {
  Script script;
  PrecisionPolicy policy(SINGLE_PRECISION, script.Make(), script.Fits());
  std::string why = "untouched";
  ASSERT_TRUE(policy.SwitchToDouble("PCG failed in single precision", 7, &why));
  EXPECT_EQ(why, "untouched");
  EXPECT_EQ(script.asked, std::vector<Precision>{DOUBLE_PRECISION});
  EXPECT_EQ(script.made, (std::vector<Precision>{SINGLE_PRECISION, DOUBLE_PRECISION}));
  // The single precision solver was gone when the double one was built.
  EXPECT_EQ(script.live_when_made, (std::vector<int>{0, 0}));
  EXPECT_EQ(script.live, 1);
  EXPECT_EQ(PrecisionOf(policy), DOUBLE_PRECISION);
  EXPECT_EQ(policy.current(), DOUBLE_PRECISION);
  EXPECT_EQ(policy.requested(), SINGLE_PRECISION);
  EXPECT_EQ(policy.switch_iteration(), 7);
  EXPECT_EQ(policy.switch_reason(), "PCG failed in single precision");
  EXPECT_FALSE(policy.CanSwitchToDouble());
  // Once in double precision: no second switch, nothing rebuilt.
  EXPECT_FALSE(policy.SwitchToDouble("again", 9, &why));
  EXPECT_EQ(why, "the solve is already in double precision.");
  EXPECT_EQ(script.made.size(), 2u);
  EXPECT_EQ(policy.switch_iteration(), 7);
  EXPECT_EQ(policy.switch_reason(), "PCG failed in single precision");
}

TEST(PrecisionPolicy, DoubleRequestNeverSwitches) {
  Script script;
  PrecisionPolicy policy(DOUBLE_PRECISION, script.Make(), script.Fits());
  const LinearSolver* solver = policy.solver();
  std::string why;
  EXPECT_FALSE(policy.SwitchToDouble("anything", 1, &why));
  EXPECT_EQ(why, "the solve is already in double precision.");
  EXPECT_TRUE(script.asked.empty());
  EXPECT_EQ(script.made.size(), 1u);
  EXPECT_EQ(policy.solver(), solver);
  EXPECT_EQ(policy.switch_iteration(), -1);
  for (int i = 0; i < 10; ++i) {
    EXPECT_FALSE(policy.NextRejectionIsTrial());
    policy.StepRejected();
  }
}

// Double precision does not fit: the switch is refused with the memory
// check's reason, the single precision solver stays, and it is not tried
// again (nor is the memory asked again).
TEST(PrecisionPolicy, SwitchRefusedWhenDoubleDoesNotFit) {
  Script script;
  script.double_fits = false;
  PrecisionPolicy policy(SINGLE_PRECISION, script.Make(), script.Fits());
  const LinearSolver* solver = policy.solver();
  std::string why;
  EXPECT_FALSE(policy.SwitchToDouble("5 consecutive steps were rejected", 5, &why));
  EXPECT_EQ(why, "scripted: double precision needs 3 GiB");
  EXPECT_EQ(script.asked, std::vector<Precision>{DOUBLE_PRECISION});
  EXPECT_EQ(script.made, std::vector<Precision>{SINGLE_PRECISION});
  EXPECT_EQ(policy.solver(), solver);
  EXPECT_EQ(policy.current(), SINGLE_PRECISION);
  EXPECT_EQ(policy.switch_iteration(), -1);
  EXPECT_EQ(policy.switch_reason(), "");
  EXPECT_FALSE(policy.CanSwitchToDouble());
  for (int i = 0; i < 20; ++i) {
    EXPECT_FALSE(policy.NextRejectionIsTrial()) << i;
    policy.StepRejected();
  }
  why.clear();
  EXPECT_FALSE(policy.SwitchToDouble("again", 6, &why));
  EXPECT_EQ(why, "double precision was already found not to fit in memory.");
  EXPECT_EQ(script.asked.size(), 1u);
  EXPECT_EQ(script.made.size(), 1u);
}

// kMaxRejectionsInSinglePrecision (5) in a row: the fifth rejection is the
// trial, so NextRejectionIsTrial turns true after four.
TEST(PrecisionPolicy, NextRejectionIsTrialAfterARunOfRejections) {
  Script script;
  PrecisionPolicy policy(SINGLE_PRECISION, script.Make(), script.Fits());
  ASSERT_EQ(PrecisionPolicy::kMaxRejectionsInSinglePrecision, 5);
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(policy.NextRejectionIsTrial()) << i;
    policy.StepRejected();
  }
  EXPECT_TRUE(policy.NextRejectionIsTrial());
  policy.StepRejected();
  EXPECT_TRUE(policy.NextRejectionIsTrial());  // still, until a step is accepted or the switch
}

TEST(PrecisionPolicy, StepAcceptedResetsTheRun) {
  Script script;
  PrecisionPolicy policy(SINGLE_PRECISION, script.Make(), script.Fits());
  for (int i = 0; i < 4; ++i) policy.StepRejected();
  ASSERT_TRUE(policy.NextRejectionIsTrial());
  policy.StepAccepted();
  EXPECT_FALSE(policy.NextRejectionIsTrial());
  // A full run of four is needed again.
  for (int i = 0; i < 3; ++i) {
    policy.StepRejected();
    EXPECT_FALSE(policy.NextRejectionIsTrial()) << i;
  }
  policy.StepRejected();
  EXPECT_TRUE(policy.NextRejectionIsTrial());
  EXPECT_EQ(script.made.size(), 1u);  // counting builds nothing
}

// A failed trial: back to a single precision solver (built after the double
// one is freed), the switch forgotten, and a run twice as long needed next.
TEST(PrecisionPolicy, ReturnToSingleForgetsTheSwitchAndDoublesTheRun) {
  Script script;
  PrecisionPolicy policy(SINGLE_PRECISION, script.Make(), script.Fits());
  for (int i = 0; i < 4; ++i) policy.StepRejected();
  ASSERT_TRUE(policy.NextRejectionIsTrial());
  std::string why;
  ASSERT_TRUE(policy.SwitchToDouble("5 consecutive steps were rejected", 5, &why)) << why;
  EXPECT_FALSE(policy.NextRejectionIsTrial());  // in double precision: no trial
  policy.ReturnToSingle();
  EXPECT_EQ(script.made, (std::vector<Precision>{SINGLE_PRECISION, DOUBLE_PRECISION, SINGLE_PRECISION}));
  EXPECT_EQ(script.live_when_made, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(script.live, 1);
  EXPECT_EQ(PrecisionOf(policy), SINGLE_PRECISION);
  EXPECT_EQ(policy.current(), SINGLE_PRECISION);
  EXPECT_EQ(policy.switch_iteration(), -1);
  EXPECT_EQ(policy.switch_reason(), "");
  EXPECT_EQ(policy.failed_trials(), 1);
  EXPECT_EQ(policy.rejections_before_trial(), 10);
  EXPECT_TRUE(policy.CanSwitchToDouble());
  // The run starts over and is twice as long: the tenth rejection is the trial.
  for (int i = 0; i < 9; ++i) {
    EXPECT_FALSE(policy.NextRejectionIsTrial()) << i;
    policy.StepRejected();
  }
  EXPECT_TRUE(policy.NextRejectionIsTrial());
  // The next trial may switch again, and fail again: 20.
  ASSERT_TRUE(policy.SwitchToDouble("10 consecutive steps were rejected", 15, &why)) << why;
  EXPECT_EQ(policy.switch_iteration(), 15);
  EXPECT_EQ(policy.switch_reason(), "10 consecutive steps were rejected");
  policy.ReturnToSingle();
  EXPECT_EQ(policy.failed_trials(), 2);
  EXPECT_EQ(policy.rejections_before_trial(), 20);
  EXPECT_EQ(script.asked.size(), 2u);
}

// The run doubles with each failed trial up to 2^20 and stays there.
TEST(PrecisionPolicy, RunLengthIsCapped) {
  Script script;
  PrecisionPolicy policy(SINGLE_PRECISION, script.Make(), script.Fits());
  for (int trial = 1; trial <= 25; ++trial) {
    std::string why;
    ASSERT_TRUE(policy.SwitchToDouble("trial", trial, &why)) << why;
    policy.ReturnToSingle();
    const int expected = std::min(5 << std::min(trial, 20), 1 << 20);
    EXPECT_EQ(policy.rejections_before_trial(), expected) << trial;
    EXPECT_EQ(policy.failed_trials(), trial);
  }
  EXPECT_EQ(policy.rejections_before_trial(), 1 << 20);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
