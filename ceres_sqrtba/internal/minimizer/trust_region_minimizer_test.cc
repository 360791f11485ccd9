// The trust-region loop on its own, with scripted linear solvers: invalid
// steps shrink the radius as Ceres does and end the solve with Ceres' message.
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/solvers/explicit_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/minimizer/trust_region_minimizer.h"
#include "gtest/gtest.h"
#include "null_jacobian_writer.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// The trust-region loop from the structure's initial state, silent.
ceres::Solver::Summary RunMinimizer(const MinimizerOptions& options, const ProblemStructure& s,
                                    Evaluator* evaluator, PrecisionPolicy* precision) {
  MinimizerContext ctx;
  ctx.options = options;
  ctx.is_silent = true;
  std::vector<double> x = StateFromUser(s);
  ceres::Solver::Summary summary;
  MinimizerStatistics stats;
  Minimize(ctx, s, evaluator, precision, x.data(), &summary, &stats);
  return summary;
}

// Fails every solve (as a PCG that met rho = 0 would).
class FailingSolver : public LinearSolver {
 public:
  JacobianWriter* writer() override { return &writer_; }
  void SquaredColumnNorms(double* norms) override {
    for (int i = 0; i < n; ++i) norms[i] = 1.0;
  }
  void ScaleColumns(const double*) override {}
  LinearSolverSummary Solve(const double*, double, double*, double*) override {
    ++solves;
    LinearSolverSummary s;
    s.termination = LinearSolverTermination::kFailure;
    s.message = "scripted failure";
    return s;
  }
  int n = 0;
  int solves = 0;

 private:
  testing::NullJacobianWriter writer_;
};

TEST(TrustRegionMinimizer, ConsecutiveInvalidStepsEndWithCeresMessage) {
  auto p = testing::MakeRandomProblem(testing::RandomProblemConfig());
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*p.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  ParallelContext context(1);
  WorkPartition partition(static_cast<int>(s.groups.size()), {}, 2, 1);
  Evaluator evaluator(s, partition, &context);
  FailingSolver* solver = nullptr;
  PrecisionPolicy precision(
      DOUBLE_PRECISION,
      [&](Precision) {
        auto made = std::make_unique<FailingSolver>();
        made->n = s.num_effective_parameters;
        solver = made.get();
        return made;
      },
      [](Precision, std::string*) { return true; });
  MinimizerOptions options;
  options.max_num_consecutive_invalid_steps = 3;
  const ceres::Solver::Summary summary = RunMinimizer(options, s, &evaluator, &precision);
  EXPECT_EQ(summary.termination_type, ceres::FAILURE);
  EXPECT_EQ(summary.message,
            "Number of consecutive invalid steps more than "
            "Solver::Options::max_num_consecutive_invalid_steps: 3");
  EXPECT_EQ(solver->solves, 3);
  // Iteration 0, then two invalid steps, each shrinking the radius by the
  // growing decrease factor (2, then 4).
  ASSERT_EQ(summary.iterations.size(), 3u);
  EXPECT_DOUBLE_EQ(summary.iterations[0].trust_region_radius, 1e4);
  EXPECT_DOUBLE_EQ(summary.iterations[1].trust_region_radius, 1e4 / 2);
  EXPECT_DOUBLE_EQ(summary.iterations[2].trust_region_radius, 1e4 / 8);
  EXPECT_FALSE(summary.iterations[1].step_is_valid);
}

// Computes the right step of the real solver and scales it by 50: a "linear
// solver" that lost its precision. The true cost rejects every such step.
class WildSolver : public LinearSolver {
 public:
  WildSolver(LinearSolver* inner, int* solves) : inner_(inner), solves_(solves) {}
  JacobianWriter* writer() override { return inner_->writer(); }
  void SquaredColumnNorms(double* norms) override { inner_->SquaredColumnNorms(norms); }
  void ScaleColumns(const double* scale) override { inner_->ScaleColumns(scale); }
  LinearSolverSummary Solve(const double* d, double eta, double* y, double* jy) override {
    LinearSolverSummary s = inner_->Solve(d, eta, y, jy);
    for (int i = 0; i < n; ++i) y[i] *= 50.0;
    *jy = 0.0;  // keep the model change positive so that the step is valid
    ++*solves_;
    return s;
  }
  int n = 0;

 private:
  LinearSolver* inner_;
  int* solves_;  // outlives the solver, which the switch to double frees
};

// A random problem with the explicit blocks' layout and an evaluator, one
// thread: what the tests of the precision fallback run on.
class PrecisionFallback : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_EQ(BuildProblemStructure(*p.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
    layout = std::make_unique<ExplicitBlockLayout>(s);
    partition = WorkPartition(static_cast<int>(s.groups.size()), layout->work, 2, 1);
    evaluator = std::make_unique<Evaluator>(s, partition, &context);
  }
  testing::RandomProblem p = testing::MakeRandomProblem(testing::RandomProblemConfig());
  ProblemStructure s;
  ParallelContext context{1};
  std::unique_ptr<ExplicitBlockLayout> layout;
  WorkPartition partition;
  std::unique_ptr<Evaluator> evaluator;
};

TEST_F(PrecisionFallback, RepeatedRejectionsSwitchToTheFallbackSolver) {
  // Single precision: the real solver behind a WildSolver; double: the real
  // solver alone.
  ExplicitIterativeSchurSolver<float> inner(s, *layout, partition, &context, IterativeSchurOptions());
  int wild_solves = 0;
  int doubles_made = 0;
  PrecisionPolicy precision(
      SINGLE_PRECISION,
      [&](Precision p) -> std::unique_ptr<LinearSolver> {
        if (p == SINGLE_PRECISION) {
          auto made = std::make_unique<WildSolver>(&inner, &wild_solves);
          made->n = s.num_effective_parameters;
          return made;
        }
        ++doubles_made;
        return std::make_unique<ExplicitIterativeSchurSolver<double>>(s, *layout, partition, &context,
                                                                      IterativeSchurOptions());
      },
      [](Precision, std::string*) { return true; });
  MinimizerOptions options;
  options.max_num_iterations = 20;
  const ceres::Solver::Summary summary = RunMinimizer(options, s, evaluator.get(), &precision);
  EXPECT_EQ(doubles_made, 1);
  EXPECT_EQ(wild_solves, 5);
  EXPECT_EQ(precision.current(), DOUBLE_PRECISION);
  EXPECT_NE(precision.switch_reason().find("5 consecutive steps were rejected"), std::string::npos)
      << precision.switch_reason();
  EXPECT_EQ(precision.switch_iteration(), 5);
  EXPECT_NE(summary.termination_type, ceres::FAILURE) << summary.message;
  // The linear problem is solved exactly once the double solver took over.
  EXPECT_LT(summary.final_cost, 1e-3 * summary.initial_cost);
}

// Both precisions take the wild steps: the run of rejections is put to the
// trial, double precision rejects the step as well, and the solve goes back
// to single precision, with no switch in the summary; the next trial needs
// a run twice as long.
TEST_F(PrecisionFallback, RejectionsThatDoubleRejectsTooStayInSinglePrecision) {
  ExplicitIterativeSchurSolver<float> inner_float(s, *layout, partition, &context, IterativeSchurOptions());
  ExplicitIterativeSchurSolver<double> inner_double(s, *layout, partition, &context, IterativeSchurOptions());
  int float_solves = 0, double_solves = 0, floats_made = 0, doubles_made = 0;
  PrecisionPolicy precision(
      SINGLE_PRECISION,
      [&](Precision p) -> std::unique_ptr<LinearSolver> {
        const bool single = p == SINGLE_PRECISION;
        ++(single ? floats_made : doubles_made);
        auto made = single ? std::make_unique<WildSolver>(&inner_float, &float_solves)
                           : std::make_unique<WildSolver>(&inner_double, &double_solves);
        made->n = s.num_effective_parameters;
        return made;
      },
      [](Precision, std::string*) { return true; });
  MinimizerOptions options;
  options.max_num_iterations = 12;
  const ceres::Solver::Summary summary = RunMinimizer(options, s, evaluator.get(), &precision);
  ASSERT_GE(summary.iterations.size(), 6u);
  // Iterations 1-4 rejected in float; at 5 the trial: the double step is
  // rejected too, and float comes back.
  for (int i = 1; i <= 5; ++i) EXPECT_FALSE(summary.iterations[i].step_is_successful) << i;
  EXPECT_GE(doubles_made, 1);
  EXPECT_EQ(floats_made, doubles_made + 1);
  EXPECT_GE(precision.failed_trials(), 1);
  EXPECT_EQ(double_solves, doubles_made);  // one step per trial
  EXPECT_EQ(precision.current(), SINGLE_PRECISION);
  EXPECT_EQ(precision.switch_iteration(), -1);
  EXPECT_TRUE(precision.switch_reason().empty());
  // The next trial needs twice as many rejections: at most one more in 12
  // iterations (after 5, then 10 more).
  EXPECT_LE(precision.failed_trials(), 2);
  EXPECT_EQ(precision.rejections_before_trial(), 5 << precision.failed_trials());
  EXPECT_NE(summary.termination_type, ceres::FAILURE) << summary.message;
  EXPECT_EQ(float_solves, static_cast<int>(summary.iterations.size()) - 1);  // one per iteration
}

// The same run of rejections when double precision does not fit: the solve
// goes on in single precision, as Ceres would (not FAILURE).
TEST_F(PrecisionFallback, RejectionsWithoutMemoryForDoubleGoOnInSinglePrecision) {
  ExplicitIterativeSchurSolver<float> inner(s, *layout, partition, &context, IterativeSchurOptions());
  int wild_solves = 0, doubles_made = 0;
  PrecisionPolicy precision(
      SINGLE_PRECISION,
      [&](Precision p) -> std::unique_ptr<LinearSolver> {
        if (p == DOUBLE_PRECISION) ++doubles_made;
        auto made = std::make_unique<WildSolver>(&inner, &wild_solves);
        made->n = s.num_effective_parameters;
        return made;
      },
      [](Precision p, std::string* why) {
        *why = "scripted: no memory";
        return p == SINGLE_PRECISION;
      });
  MinimizerOptions options;
  options.max_num_iterations = 12;
  const ceres::Solver::Summary summary = RunMinimizer(options, s, evaluator.get(), &precision);
  EXPECT_EQ(doubles_made, 0);
  EXPECT_EQ(precision.current(), SINGLE_PRECISION);
  EXPECT_EQ(precision.switch_iteration(), -1);
  EXPECT_NE(summary.termination_type, ceres::FAILURE) << summary.message;
  EXPECT_EQ(wild_solves, static_cast<int>(summary.iterations.size()) - 1);
  EXPECT_FALSE(summary.iterations[5].step_is_successful);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
