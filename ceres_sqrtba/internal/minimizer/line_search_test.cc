// ArmijoSearch (line_search.h) on one-dimensional functions built here, whose
// minimizers are known: the full step a = 1 is taken when it satisfies
// Armijo's inequality; otherwise the search contracts, every trial within
// [max_step_contraction, min_step_contraction] times the previous one, to
// the interpolation's minimizer (bisection halves); it fails when the step
// times |delta|_inf falls below min_step_size, or after max_num_iterations
// trials; invalid trials count as failed ones; and function and gradient
// evaluations are counted per interpolation type (CUBIC asks for the
// directional derivative at every trial, BISECTION and QUADRATIC never).
//
// Trial points are compared exactly where the search forms them by exact
// operations (halving, the clamps' products, which the test forms the same
// way); a minimizer found by polynomial interpolation of an exact quadratic
// is compared to 1e-9: the fit and its root round in the last bits, while any
// other interpolant misses the minimizer by more than 1e-3.
#include "ceres_sqrtba/internal/minimizer/line_search.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

const ceres::LineSearchInterpolationType kAllTypes[] = {ceres::BISECTION, ceres::QUADRATIC, ceres::CUBIC};

std::string Name(ceres::LineSearchInterpolationType type) {
  return ceres::LineSearchInterpolationTypeToString(type);
}

// phi(a) = f(x + a delta) and its derivative, and what the search asked.
struct Line {
  std::function<double(double)> value;
  std::function<double(double)> derivative;
  // Trials at which the function cannot be evaluated (value_is_valid false).
  std::function<bool(double)> invalid = [](double) { return false; };

  std::vector<double> trials;
  std::vector<bool> gradient_asked;

  LineSearchOutcome Search(const ArmijoOptions& options, double direction_max_norm = 1.0) {
    trials.clear();
    gradient_asked.clear();
    return ArmijoSearch(options, value(0.0), derivative(0.0), direction_max_norm,
                        [this](double a, bool evaluate_gradient, LineSample* sample) {
                          trials.push_back(a);
                          gradient_asked.push_back(evaluate_gradient);
                          sample->x = a;
                          if (invalid(a)) return;
                          sample->value = value(a);
                          sample->value_is_valid = true;
                          if (evaluate_gradient) {
                            sample->gradient = derivative(a);
                            sample->gradient_is_valid = true;
                          }
                        });
  }
};

// phi(a) = (a - m)^2: minimizer m.
Line Quadratic(double m) {
  Line line;
  line.value = [m](double a) { return (a - m) * (a - m); };
  line.derivative = [m](double a) { return 2.0 * (a - m); };
  return line;
}

// phi(0) = 0, phi'(0) = -1, and phi = 1 everywhere else: no step decreases it.
Line NeverDecreases() {
  Line line;
  line.value = [](double a) { return a == 0.0 ? 0.0 : 1.0; };
  line.derivative = [](double a) { return a == 0.0 ? -1.0 : 0.0; };
  return line;
}

ArmijoOptions Options(ceres::LineSearchInterpolationType type) {
  ArmijoOptions options;
  options.interpolation_type = type;
  return options;
}

TEST(ArmijoSearch, TakesTheFullStepWhenArmijoHolds) {
  for (const auto type : kAllTypes) {
    Line line = Quadratic(1.0);  // phi(0) = 1, phi'(0) = -2, phi(1) = 0
    const LineSearchOutcome out = line.Search(Options(type));
    EXPECT_TRUE(out.success) << Name(type);
    EXPECT_EQ(out.step, 1.0) << Name(type);
    EXPECT_EQ(out.num_iterations, 0) << Name(type);
    EXPECT_EQ(out.num_function_evaluations, 1) << Name(type);
    EXPECT_EQ(out.num_gradient_evaluations, type == ceres::CUBIC ? 1 : 0) << Name(type);
    EXPECT_EQ(line.trials, std::vector<double>{1.0}) << Name(type);
    EXPECT_EQ(line.gradient_asked, std::vector<bool>{type == ceres::CUBIC}) << Name(type);
  }
}

// f(1) <= f(0) + c * 1 * phi'(0), with equality accepted: with c = 1/2,
// f(0) = 1, phi'(0) = -1 the bound is exactly 0.5.
TEST(ArmijoSearch, SufficientDecreaseIsArmijosInequality) {
  for (const double value_at_one : {0.5, std::nextafter(0.5, 1.0)}) {
    Line line;
    line.value = [value_at_one](double a) { return a == 0.0 ? 1.0 : a == 1.0 ? value_at_one : 2.0; };
    line.derivative = [](double) { return -1.0; };
    ArmijoOptions options = Options(ceres::BISECTION);
    options.sufficient_decrease = 0.5;
    options.max_num_iterations = 1;  // only the full step
    const LineSearchOutcome out = line.Search(options);
    EXPECT_EQ(out.success, value_at_one == 0.5) << value_at_one;
    EXPECT_EQ(out.step, 1.0);
    EXPECT_EQ(line.trials.size(), 1u);
  }
}

// phi(a) = (a - 1/4)^2: phi(1) = 9/16 > phi(0) = 1/16. Bisection tries 1/2
// (phi = 1/16, no sufficient decrease), then 1/4; the interpolations fit the
// quadratic itself and go to 1/4 at once.
TEST(ArmijoSearch, ContractsToTheMinimizerOfAQuadratic) {
  {
    Line line = Quadratic(0.25);
    const LineSearchOutcome out = line.Search(Options(ceres::BISECTION));
    EXPECT_TRUE(out.success);
    EXPECT_EQ(out.step, 0.25);
    EXPECT_EQ(line.trials, (std::vector<double>{1.0, 0.5, 0.25}));
    EXPECT_EQ(out.num_iterations, 2);
    EXPECT_EQ(out.num_function_evaluations, 3);
    EXPECT_EQ(out.num_gradient_evaluations, 0);
  }
  for (const auto type : {ceres::QUADRATIC, ceres::CUBIC}) {
    Line line = Quadratic(0.25);
    const LineSearchOutcome out = line.Search(Options(type));
    EXPECT_TRUE(out.success) << Name(type);
    EXPECT_NEAR(out.step, 0.25, 1e-9) << Name(type);
    ASSERT_EQ(line.trials.size(), 2u) << Name(type);
    EXPECT_EQ(line.trials[1], out.step) << Name(type);
    EXPECT_EQ(out.num_iterations, 1) << Name(type);
    EXPECT_EQ(out.num_function_evaluations, 2) << Name(type);
    EXPECT_EQ(out.num_gradient_evaluations, type == ceres::CUBIC ? 2 : 0) << Name(type);
    EXPECT_EQ(line.gradient_asked, std::vector<bool>(2, type == ceres::CUBIC)) << Name(type);
  }
}

// The interpolation's minimizer is clamped to [max_step_contraction,
// min_step_contraction] times the failed trial.
TEST(ArmijoSearch, NextTrialIsClampedToTheContractionInterval) {
  {
    // A steep wall beyond 1/2: the quadratic through phi(0) = 0, phi'(0) = -1
    // and phi(1) = 1e6 has its minimizer near 5e-7, below the interval; its
    // lower end max_step_contraction * 1 is taken (and is good: phi = -a).
    Line line;
    line.value = [](double a) { return a >= 0.5 ? 1e6 : -a; };
    line.derivative = [](double a) { return a >= 0.5 ? 0.0 : -1.0; };
    for (const double contraction : {1e-3, 1e-2}) {
      ArmijoOptions options = Options(ceres::QUADRATIC);
      options.max_step_contraction = contraction;
      const LineSearchOutcome out = line.Search(options);
      EXPECT_TRUE(out.success);
      EXPECT_EQ(line.trials, (std::vector<double>{1.0, contraction}));
      EXPECT_EQ(out.step, contraction);
    }
  }
  {
    // phi(1) = phi(0): the quadratic -a + a^2 has its minimizer at 1/2,
    // above min_step_contraction = 0.4.
    Line line;
    line.value = [](double a) { return a == 1.0 ? 0.0 : -a + a * a; };
    line.derivative = [](double a) { return -1.0 + 2.0 * a; };
    ArmijoOptions options = Options(ceres::QUADRATIC);
    options.min_step_contraction = 0.4;
    line.Search(options);
    ASSERT_GE(line.trials.size(), 2u);
    EXPECT_EQ(line.trials[1], 0.4);
    options.min_step_contraction = 0.6;  // the default: 1/2 is inside
    line.Search(options);
    ASSERT_GE(line.trials.size(), 2u);
    EXPECT_NEAR(line.trials[1], 0.5, 1e-9);
  }
  {
    // Bisection halves, clamped too: 1, 0.3, 0.3 * 0.3 with min_step_contraction 0.3.
    Line line = NeverDecreases();
    ArmijoOptions options = Options(ceres::BISECTION);
    options.min_step_contraction = 0.3;
    options.max_num_iterations = 3;
    line.Search(options);
    EXPECT_EQ(line.trials, (std::vector<double>{1.0, 0.3, 0.3 * 0.3}));
  }
}

// Whatever the function, every trial after the first lies in
// [max_step_contraction, min_step_contraction] times the one before, and a
// step reported as found satisfies Armijo's inequality.
TEST(ArmijoSearch, EveryTrialLiesWithinTheContractionBounds) {
  std::vector<Line> lines;
  lines.push_back(Quadratic(1e-4));
  lines.push_back(Quadratic(0.3));
  {
    Line cubic;  // -a + 1000 a^3: minimizer at 1/sqrt(3000)
    cubic.value = [](double a) { return -a + 1000.0 * a * a * a; };
    cubic.derivative = [](double a) { return -1.0 + 3000.0 * a * a; };
    lines.push_back(cubic);
  }
  {
    Line oscillating;  // -sin(20 a) + 5 a^2: phi'(0) = -20, several local minima
    oscillating.value = [](double a) { return -std::sin(20.0 * a) + 5.0 * a * a; };
    oscillating.derivative = [](double a) { return -20.0 * std::cos(20.0 * a) + 10.0 * a; };
    lines.push_back(oscillating);
  }
  lines.push_back(NeverDecreases());
  for (size_t i = 0; i < lines.size(); ++i) {
    for (const auto type : kAllTypes) {
      ArmijoOptions options = Options(type);
      options.max_num_iterations = 50;
      const LineSearchOutcome out = lines[i].Search(options);
      const std::vector<double>& t = lines[i].trials;
      ASSERT_FALSE(t.empty());
      EXPECT_EQ(t[0], 1.0);
      for (size_t k = 1; k < t.size(); ++k) {
        EXPECT_GE(t[k], options.max_step_contraction * t[k - 1]) << "function " << i << ", " << Name(type);
        EXPECT_LE(t[k], options.min_step_contraction * t[k - 1]) << "function " << i << ", " << Name(type);
      }
      EXPECT_EQ(out.num_function_evaluations, static_cast<int>(t.size()));
      EXPECT_EQ(out.num_gradient_evaluations, type == ceres::CUBIC ? static_cast<int>(t.size()) : 0);
      if (out.success) {
        EXPECT_EQ(out.step, t.back());
        const double f0 = lines[i].value(0.0), g0 = lines[i].derivative(0.0);
        EXPECT_LE(lines[i].value(out.step), f0 + options.sufficient_decrease * g0 * out.step)
            << "function " << i << ", " << Name(type);
      }
    }
  }
}

// With no acceptable step, bisection from 1 stops before a trial below
// min_step_size / |delta|_inf: 2^-29 * 1 >= 1e-9 > 2^-30, so 30 trials;
// 2^-39 * 1024 >= 1e-9 > 2^-40 * 1024, so 40 trials.
TEST(ArmijoSearch, FailsBelowTheMinimumStepRelativeToTheDirectionNorm) {
  struct Case {
    double norm;
    int trials;
  };
  for (const Case c : {Case{1.0, 30}, Case{1024.0, 40}}) {
    Line line = NeverDecreases();
    ArmijoOptions options = Options(ceres::BISECTION);
    options.max_num_iterations = 1000;
    const LineSearchOutcome out = line.Search(options, c.norm);
    EXPECT_FALSE(out.success) << c.norm;
    EXPECT_EQ(out.step, 1.0) << "a failed search leaves the step";
    ASSERT_EQ(static_cast<int>(line.trials.size()), c.trials) << c.norm;
    EXPECT_EQ(line.trials.back(), std::ldexp(1.0, 1 - c.trials));
    EXPECT_EQ(out.num_iterations, c.trials);
    EXPECT_EQ(out.num_function_evaluations, c.trials);
  }
  // A larger min_step_size stops earlier: 2^-3 >= 0.1 > 2^-4.
  Line line = NeverDecreases();
  ArmijoOptions options = Options(ceres::BISECTION);
  options.min_step_size = 0.1;
  EXPECT_FALSE(line.Search(options).success);
  EXPECT_EQ(line.trials, (std::vector<double>{1.0, 0.5, 0.25, 0.125}));
}

TEST(ArmijoSearch, StopsAfterMaxNumIterationsTrials) {
  for (const auto type : kAllTypes) {
    for (const int max_iterations : {1, 2, 5}) {
      Line line = NeverDecreases();
      ArmijoOptions options = Options(type);
      options.max_num_iterations = max_iterations;
      const LineSearchOutcome out = line.Search(options);
      EXPECT_FALSE(out.success) << Name(type);
      EXPECT_EQ(out.step, 1.0);
      EXPECT_EQ(static_cast<int>(line.trials.size()), max_iterations) << Name(type);
      EXPECT_EQ(out.num_iterations, max_iterations) << Name(type);
      EXPECT_EQ(out.num_function_evaluations, max_iterations) << Name(type);
      EXPECT_EQ(out.num_gradient_evaluations, type == ceres::CUBIC ? max_iterations : 0) << Name(type);
    }
  }
  // Bisection on (a - 1/4)^2 needs three trials (1, 1/2, 1/4): found with a
  // limit of 3, not with 2.
  for (const int max_iterations : {2, 3}) {
    Line line = Quadratic(0.25);
    ArmijoOptions options = Options(ceres::BISECTION);
    options.max_num_iterations = max_iterations;
    const LineSearchOutcome out = line.Search(options);
    EXPECT_EQ(out.success, max_iterations == 3);
    EXPECT_EQ(out.step, max_iterations == 3 ? 0.25 : 1.0);
    EXPECT_EQ(static_cast<int>(line.trials.size()), max_iterations);
  }
}

// A trial that cannot be evaluated counts as one without sufficient
// decrease, and the next one halves the step whatever the interpolation.
TEST(ArmijoSearch, InvalidTrialsHalveTheStep) {
  for (const auto type : kAllTypes) {
    Line line = Quadratic(0.5);
    line.invalid = [](double a) { return a > 0.7; };
    const LineSearchOutcome out = line.Search(Options(type));
    EXPECT_TRUE(out.success) << Name(type);
    EXPECT_EQ(line.trials, (std::vector<double>{1.0, 0.5})) << Name(type);
    EXPECT_EQ(out.step, 0.5) << Name(type);
    EXPECT_EQ(out.num_function_evaluations, 2) << Name(type);
    EXPECT_EQ(out.num_gradient_evaluations, type == ceres::CUBIC ? 2 : 0) << Name(type);
  }
  // Nowhere valid: a failure, the step left at 1.
  Line line = Quadratic(0.5);
  line.invalid = [](double) { return true; };
  ArmijoOptions options = Options(ceres::CUBIC);
  options.max_num_iterations = 4;
  const LineSearchOutcome out = line.Search(options);
  EXPECT_FALSE(out.success);
  EXPECT_EQ(out.step, 1.0);
  EXPECT_EQ(line.trials, (std::vector<double>{1.0, 0.5, 0.25, 0.125}));
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
