// TrustRegionStepEvaluator against hand-worked sequences of Ceres' rules
// (Conn, Gould & Toint, algorithm 10.1.2).
//
// All costs and model cost changes below are small integers, so every sum the
// evaluator forms is exact and each quality is one correctly rounded division
// of the same real number as the hand-written fraction: EXPECT_EQ is exact
// equality on purpose.
#include "ceres_sqrtba/internal/minimizer/trust_region_step_evaluator.h"

#include <limits>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

TEST(TrustRegionStepEvaluator, MonotonicIsThePlainRatio) {
  TrustRegionStepEvaluator e(100.0, 0);
  EXPECT_EQ(e.StepQuality(90.0, 20.0), 10.0 / 20.0);
  EXPECT_EQ(e.StepQuality(110.0, 20.0), -10.0 / 20.0);  // rejected: no state change
  e.StepAccepted(90.0, 20.0);
  // Relative to the new cost only. Had the reference stayed at 100 with 20 of
  // accumulated model change, the historical ratio (100 - 89) / 30 would win.
  EXPECT_EQ(e.StepQuality(89.0, 10.0), 1.0 / 10.0);
  e.StepAccepted(89.0, 10.0);
  EXPECT_EQ(e.StepQuality(88.0, 4.0), 1.0 / 4.0);
  EXPECT_EQ(e.StepQuality(90.0, 4.0), -1.0 / 4.0);
}

// max_consecutive_nonmonotonic_steps = 2. State after each accepted step:
// (current, minimum, reference, accumulated reference model change,
//  candidate, accumulated candidate model change, nonmonotonic count).
TEST(TrustRegionStepEvaluator, NonMonotonicReferenceLagsAndResets) {
  TrustRegionStepEvaluator e(100.0, 2);
  // (100, 100, 100, 0, 100, 0, 0)
  EXPECT_EQ(e.StepQuality(90.0, 12.0), 10.0 / 12.0);
  e.StepAccepted(90.0, 12.0);
  // New minimum: (90, 90, ref 100, 12, cand 90, 0, 0).

  // A cost increase: relative (90 - 95) / 4 < 0, but against the lagging
  // reference (100 - 95) / (12 + 4) = 5/16, so the step is good enough.
  EXPECT_EQ(e.StepQuality(95.0, 4.0), 5.0 / 16.0);
  e.StepAccepted(95.0, 4.0);
  // Non-monotonic, above the candidate: (95, 90, 100, 16, cand 95, 0, 1).

  // relative (95 - 93) / 6 = 1/3 beats historical (100 - 93) / 22 = 7/22.
  EXPECT_EQ(e.StepQuality(93.0, 6.0), 1.0 / 3.0);
  e.StepAccepted(93.0, 6.0);
  // Second non-monotonic step (93 >= minimum 90), below the candidate 95:
  // (93, 90, 100, 22, 95, 6, 2) -> count reached 2: reference <- candidate,
  // (93, 90, ref 95, 6, 95, 6, 2).

  // relative (93 - 94) / 1 = -1; historical from the reset reference:
  // (95 - 94) / (6 + 1) = 1/7 (without the reset: (100 - 94) / 23).
  EXPECT_EQ(e.StepQuality(94.0, 1.0), 1.0 / 7.0);
  e.StepAccepted(94.0, 1.0);
  // (94, 90, 95, 7, 95, 7, 3): count past 2, no further reset.

  // A new minimum resets the count and the candidate, not the reference.
  EXPECT_EQ(e.StepQuality(89.0, 2.0), 5.0 / 2.0);
  e.StepAccepted(89.0, 2.0);
  // (89, 89, 95, 9, cand 89, 0, 0)
  EXPECT_EQ(e.StepQuality(90.0, 1.0), (95.0 - 90.0) / (9.0 + 1.0));
}

TEST(TrustRegionStepEvaluator, NonMonotonicReferenceStaysWhileTheCostDecreases) {
  // Only max consecutive non-monotonic steps move the reference: a run of
  // decreases keeps it at the initial cost, so the quality is the better of
  // the last step's ratio and the whole run's.
  TrustRegionStepEvaluator monotonic(50.0, 0), lagging(50.0, 3);
  monotonic.StepAccepted(40.0, 20.0);
  lagging.StepAccepted(40.0, 20.0);
  EXPECT_EQ(monotonic.StepQuality(39.0, 10.0), 1.0 / 10.0);
  EXPECT_EQ(lagging.StepQuality(39.0, 10.0), (50.0 - 39.0) / (20.0 + 10.0));
}

TEST(TrustRegionStepEvaluator, FailedEvaluationHasTheLowestQuality) {
  for (int max_nonmonotonic : {0, 2}) {
    TrustRegionStepEvaluator e(100.0, max_nonmonotonic);
    // The trust-region loop reports a failed evaluation as DBL_MAX; a
    // negative model change would otherwise turn it into +huge.
    for (double model_change : {1.0, -1.0, 0.0}) {
      EXPECT_EQ(e.StepQuality(std::numeric_limits<double>::max(), model_change),
                std::numeric_limits<double>::lowest());
      EXPECT_EQ(e.StepQuality(std::numeric_limits<double>::infinity(), model_change),
                std::numeric_limits<double>::lowest());
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
