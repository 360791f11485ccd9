// Ceres' termination tests: each on both sides of its threshold (the
// boundary itself counts as met, as in Ceres), with Ceres' messages, and
// without a message when none is asked for (the inner iterations' use).
#include "ceres_sqrtba/internal/minimizer/termination.h"

#include <string>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

TEST(Termination, ParameterTolerance) {
  std::string message;
  // 1e-8 (|x| + 1e-8) with |x| = 1: the boundary is 1e-8 + 1e-16.
  EXPECT_FALSE(ParameterToleranceMet(2e-8, 1.0, 1e-8, &message));
  EXPECT_TRUE(message.empty());
  EXPECT_TRUE(ParameterToleranceMet(1e-8, 1.0, 1e-8, &message));
  EXPECT_EQ(message.find("Parameter tolerance reached. Relative step_norm: "), 0u) << message;
  EXPECT_TRUE(ParameterToleranceMet(0.0, 0.0, 1e-8, nullptr));
}

TEST(Termination, FunctionTolerance) {
  std::string message;
  EXPECT_FALSE(FunctionToleranceMet(-2e-6, 1.0, 1e-6, &message));  // |change| counts
  EXPECT_TRUE(FunctionToleranceMet(-0.5e-6, 1.0, 1e-6, &message));
  EXPECT_EQ(message, "Function tolerance reached. |cost_change|/cost: 5.000000e-07 <= 1.000000e-06");
  EXPECT_TRUE(FunctionToleranceMet(0.25, 0.5, 0.5, nullptr));  // the boundary
}

TEST(Termination, GradientTolerance) {
  std::string message;
  EXPECT_FALSE(GradientToleranceMet(0.5, 0.25, &message));
  EXPECT_TRUE(GradientToleranceMet(0.25, 0.25, &message));
  EXPECT_EQ(message, "Gradient tolerance reached. Gradient max norm: 2.500000e-01 <= 2.500000e-01");
  EXPECT_TRUE(GradientToleranceMet(0.0, 0.25, nullptr));
}

TEST(Termination, RadiusIterationsAndTime) {
  std::string message;
  EXPECT_FALSE(MinTrustRegionRadiusMet(1e-31, 1e-32, &message));
  EXPECT_TRUE(MinTrustRegionRadiusMet(1e-32, 1e-32, &message));
  EXPECT_EQ(message.find("Minimum trust region radius reached. Trust region radius: "), 0u) << message;
  EXPECT_FALSE(MaxIterationsMet(49, 50, &message));
  EXPECT_TRUE(MaxIterationsMet(50, 50, &message));
  EXPECT_EQ(message, "Maximum number of iterations reached. Number of iterations: 50.");
  EXPECT_FALSE(MaxSolverTimeMet(1.0, 2.0, &message));
  EXPECT_TRUE(MaxSolverTimeMet(2.0, 2.0, &message));
  EXPECT_EQ(message.find("Maximum solver time reached. Total solver time: "), 0u) << message;
  EXPECT_TRUE(MaxIterationsMet(51, 50, nullptr));
}

TEST(Termination, NotMetLeavesTheMessage) {
  std::string message = "unchanged";
  EXPECT_FALSE(GradientToleranceMet(1.0, 0.5, &message));
  EXPECT_FALSE(MaxIterationsMet(1, 2, &message));
  EXPECT_EQ(message, "unchanged");
}

TEST(Termination, TooManyInvalidSteps) {
  EXPECT_EQ(TooManyInvalidStepsMessage(5),
            "Number of consecutive invalid steps more than "
            "Solver::Options::max_num_consecutive_invalid_steps: 5");
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
