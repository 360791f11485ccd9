// The trust-region loop on its own, with scripted linear solvers: invalid
// steps shrink the radius as Ceres does and end the solve with Ceres' message.
#include "ceres_sqrtba/internal/evaluator.h"
#include "ceres_sqrtba/internal/parallel.h"
#include "ceres_sqrtba/internal/problem_structure.h"
#include "ceres_sqrtba/internal/trust_region_minimizer.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

class NullWriter : public JacobianWriter {
 public:
  void Write(int, int, int, int, const double*, const double* const*) override {}
};

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
  NullWriter writer_;
};

TEST(TrustRegionMinimizer, ConsecutiveInvalidStepsEndWithCeresMessage) {
  auto p = testing::MakeRandomProblem(testing::RandomProblemConfig());
  ProblemStructure s;
  std::string error;
  ASSERT_TRUE(BuildProblemStructure(*p.problem, nullptr, &s, &error)) << error;
  ParallelContext context(1);
  WorkPartition partition(static_cast<int>(s.groups.size()), {}, 2, 1);
  Evaluator evaluator(s, partition, &context);
  FailingSolver solver;
  solver.n = s.num_effective_parameters;
  ceres::Solver::Options options;
  options.max_num_consecutive_invalid_steps = 3;
  options.logging_type = ceres::SILENT;
  MinimizerContext ctx;
  ctx.options = &options;
  ctx.is_silent = true;
  std::vector<double> x(s.num_parameters);
  for (int b : s.variable_blocks) {
    const ParameterBlockInfo& pb = s.parameter_blocks[b];
    std::copy(pb.user_values, pb.user_values + pb.size, x.begin() + pb.state_offset);
  }
  ceres::Solver::Summary summary;
  MinimizerStatistics stats;
  Minimize(ctx, s, &evaluator, &solver, x.data(), &summary, &stats);
  EXPECT_EQ(summary.termination_type, ceres::FAILURE);
  EXPECT_EQ(summary.message,
            "Number of consecutive invalid steps more than "
            "Solver::Options::max_num_consecutive_invalid_steps: 3");
  EXPECT_EQ(solver.solves, 3);
  // Iteration 0, then two invalid steps, each shrinking the radius by the
  // growing decrease factor (2, then 4).
  ASSERT_EQ(summary.iterations.size(), 3u);
  EXPECT_DOUBLE_EQ(summary.iterations[0].trust_region_radius, 1e4);
  EXPECT_DOUBLE_EQ(summary.iterations[1].trust_region_radius, 1e4 / 2);
  EXPECT_DOUBLE_EQ(summary.iterations[2].trust_region_radius, 1e4 / 8);
  EXPECT_FALSE(summary.iterations[1].step_is_valid);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
