// ceres_sqrtba::Solve against ceres::Solve on the same problems: the
// trust-region loop must follow Ceres iteration by iteration, and the problem
// shapes a Ceres user builds (manifolds, shared intrinsics, constant blocks,
// priors) must end at the cost Ceres reaches.
#include <cmath>
#include <functional>
#include <sstream>

#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::AddReprojectionResiduals;
using testing::MakeSyntheticBa;
using testing::SyntheticBa;

// Pose as quaternion (4, QuaternionManifold) + translation (3).
struct QuatError {
  QuatError(double u, double v) : u(u), v(v) {}
  template <typename T>
  bool operator()(const T* q, const T* t, const T* intr, const T* point, T* r) const {
    T p[3];
    ceres::QuaternionRotatePoint(q, point, p);
    for (int k = 0; k < 3; ++k) p[k] += t[k];
    const T xp = -p[0] / p[2], yp = -p[1] / p[2];
    const T r2 = xp * xp + yp * yp;
    const T dist = T(1.0) + r2 * (intr[1] + intr[2] * r2);
    r[0] = intr[0] * dist * xp - u;
    r[1] = intr[0] * dist * yp - v;
    return true;
  }
  double u, v;
};

struct Prior {
  explicit Prior(const std::vector<double>& v) : v(v) {}
  template <typename T>
  bool operator()(const T* pose, T* r) const {
    for (int k = 0; k < 6; ++k) r[k] = T(10.0) * (pose[k] - T(v[k]));
    return true;
  }
  std::vector<double> v;
};

Solver::Options BaseOptions() {
  Solver::Options o;
  o.linear_solver_type = ceres::ITERATIVE_SCHUR;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  o.max_num_iterations = 20;
  o.num_threads = 2;
  o.logging_type = ceres::SILENT;
  return o;
}

struct Runs {
  ceres::Solver::Summary ceres, sqrt_double, sqrt_single;
};

// Builds the problem three times from the same values (build(ba, problem)) and
// solves it with Ceres, sqrt-double and sqrt-single.
Runs SolveAll(const SyntheticBa& original, const Solver::Options& options,
              const std::function<void(SyntheticBa*, ceres::Problem*)>& build) {
  Runs runs;
  for (int which = 0; which < 3; ++which) {
    SyntheticBa ba = original;
    ceres::Problem problem;
    build(&ba, &problem);
    Solver::Options o = options;
    ceres::Solver::Summary* summary = which == 0 ? &runs.ceres : which == 1 ? &runs.sqrt_double : &runs.sqrt_single;
    if (which > 0) {
      o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
      o.precision = which == 1 ? DOUBLE_PRECISION : SINGLE_PRECISION;
    }
    Solve(o, &problem, summary);
    EXPECT_TRUE(summary->IsSolutionUsable()) << summary->message;
  }
  return runs;
}

double Rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

void ExpectSameEnd(const Runs& runs, double tolerance = 1e-6) {
  EXPECT_LT(Rel(runs.sqrt_double.final_cost, runs.ceres.final_cost), tolerance)
      << runs.sqrt_double.final_cost << " vs ceres " << runs.ceres.final_cost;
  EXPECT_LT(Rel(runs.sqrt_single.final_cost, runs.sqrt_double.final_cost), 1e-4)
      << runs.sqrt_single.final_cost << " vs double " << runs.sqrt_double.final_cost;
}

TEST(Solver, FollowsCeresIterationByIteration) {
  const SyntheticBa ba = MakeSyntheticBa(8, 300, 4, 11);
  Solver::Options o = BaseOptions();
  o.eta = 1e-10;  // tight: both linear solvers give the exact LM step
  o.max_linear_solver_iterations = 1000;
  const Runs runs = SolveAll(ba, o, [](SyntheticBa* b, ceres::Problem* p) {
    AddReprojectionResiduals(b, p, new ceres::HuberLoss(1.0));
  });
  ASSERT_GE(runs.ceres.iterations.size(), 6u);
  ASSERT_GE(runs.sqrt_double.iterations.size(), 6u);
  EXPECT_LT(Rel(runs.sqrt_double.initial_cost, runs.ceres.initial_cost), 1e-12);
  for (int i = 0; i < 6; ++i) {
    EXPECT_LT(Rel(runs.sqrt_double.iterations[i].cost, runs.ceres.iterations[i].cost), 1e-6) << "iteration " << i;
    EXPECT_EQ(runs.sqrt_double.iterations[i].step_is_successful, runs.ceres.iterations[i].step_is_successful);
    EXPECT_LT(Rel(runs.sqrt_double.iterations[i].trust_region_radius, runs.ceres.iterations[i].trust_region_radius), 1e-6);
    // Ceres 2.2 reports step_norm 0 until a step was accepted, 2.1 always.
    const double ceres_step = runs.ceres.iterations[i].step_norm;
    const double step = runs.sqrt_double.iterations[i].step_norm;
    if (ceres_step == 0.0) {
      EXPECT_EQ(step, 0.0) << "iteration " << i;
    } else {
      EXPECT_LT(Rel(step, ceres_step), 1e-4) << "iteration " << i;
    }
  }
  ExpectSameEnd(runs);
  EXPECT_EQ(runs.sqrt_double.termination_type, runs.ceres.termination_type);
}

// The Summary's fields are filled as the linked Ceres fills them (times and
// what only depends on the linear solver aside).
TEST(Solver, SummaryFilledAsCeresFillsIt) {
  const SyntheticBa ba = MakeSyntheticBa(8, 300, 4, 18);
  Solver::Options o = BaseOptions();
  o.eta = 1e-10;
  o.max_linear_solver_iterations = 1000;
  o.max_num_iterations = 8;
  o.num_threads = 1000;  // capped at the machine, as Ceres caps it
  // Ceres' evaluation counts: a cost pass per candidate, a Jacobian pass per
  // accepted point (JacobiansAtCandidates... below for the other way).
  o.jacobians_at_candidates = false;
  const Runs runs = SolveAll(ba, o, [](SyntheticBa* b, ceres::Problem* p) {
    AddReprojectionResiduals(b, p, new ceres::HuberLoss(1.0));
    // A constant block without residuals; it outlives all three problems.
    static double fixed[1] = {2.0};
    p->AddParameterBlock(fixed, 1);
    p->SetParameterBlockConstant(fixed);
  });
  const ceres::Solver::Summary& c = runs.ceres;
  const ceres::Solver::Summary& s = runs.sqrt_double;
  EXPECT_EQ(s.termination_type, c.termination_type);
  EXPECT_EQ(s.message, c.message);
  EXPECT_EQ(s.num_parameter_blocks, c.num_parameter_blocks);
  EXPECT_EQ(s.num_parameters, c.num_parameters);
  EXPECT_EQ(s.num_effective_parameters, c.num_effective_parameters);
  EXPECT_EQ(s.num_residual_blocks, c.num_residual_blocks);
  EXPECT_EQ(s.num_residuals, c.num_residuals);
  EXPECT_EQ(s.num_parameter_blocks_reduced, c.num_parameter_blocks_reduced);
  EXPECT_EQ(s.num_parameters_reduced, c.num_parameters_reduced);
  EXPECT_EQ(s.num_effective_parameters_reduced, c.num_effective_parameters_reduced);
  EXPECT_EQ(s.num_residual_blocks_reduced, c.num_residual_blocks_reduced);
  EXPECT_EQ(s.num_residuals_reduced, c.num_residuals_reduced);
  EXPECT_EQ(s.num_successful_steps, c.num_successful_steps);
  EXPECT_EQ(s.num_unsuccessful_steps, c.num_unsuccessful_steps);
  EXPECT_EQ(s.num_threads_given, c.num_threads_given);
  EXPECT_EQ(s.num_threads_used, c.num_threads_used);
  EXPECT_EQ(s.is_constrained, c.is_constrained);
  EXPECT_EQ(s.linear_solver_ordering_used, c.linear_solver_ordering_used);
  EXPECT_EQ(s.schur_structure_used, c.schur_structure_used);
  EXPECT_EQ(s.num_line_search_steps, c.num_line_search_steps);
  EXPECT_EQ(s.line_search_total_time_in_seconds, c.line_search_total_time_in_seconds);
  EXPECT_EQ(s.inner_iteration_time_in_seconds, c.inner_iteration_time_in_seconds);
  EXPECT_EQ(s.num_jacobian_evaluations, c.num_jacobian_evaluations);
  EXPECT_EQ(s.num_residual_evaluations, c.num_residual_evaluations);
  EXPECT_EQ(s.num_linear_solves, c.num_linear_solves);
  EXPECT_LT(Rel(s.fixed_cost + 1.0, c.fixed_cost + 1.0), 1e-12);
  EXPECT_LT(Rel(s.initial_cost, c.initial_cost), 1e-12);
  EXPECT_LT(Rel(s.final_cost, c.final_cost), 1e-6);
  EXPECT_EQ(s.iterations.size(), c.iterations.size());
}

TEST(Solver, DefaultEtaEndsAtCeresCost) {
  const SyntheticBa ba = MakeSyntheticBa(10, 400, 5, 12);
  Solver::Options o = BaseOptions();
  o.max_num_iterations = 50;
  const Runs runs = SolveAll(ba, o, [](SyntheticBa* b, ceres::Problem* p) {
    AddReprojectionResiduals(b, p, new ceres::HuberLoss(1.0));
  });
  ExpectSameEnd(runs);
}

TEST(Solver, QuaternionTranslationManifolds) {
  const SyntheticBa ba = MakeSyntheticBa(8, 300, 4, 13);
  const Runs runs = SolveAll(ba, BaseOptions(), [](SyntheticBa* b, ceres::Problem* p) {
    // Store quaternion + translation in the pose vector (resized to 7).
    for (auto& pose : b->poses) {
      double q[4];
      ceres::AngleAxisToQuaternion(pose.data(), q);
      pose = {q[0], q[1], q[2], q[3], pose[3], pose[4], pose[5]};
    }
    for (const auto& o : b->observations) {
      auto* cost = new ceres::AutoDiffCostFunction<QuatError, 2, 4, 3, 3, 3>(new QuatError(o.u, o.v));
      p->AddResidualBlock(cost, nullptr, b->poses[o.camera].data(), b->poses[o.camera].data() + 4,
                          b->intrinsics[o.camera].data(), b->points[o.point].data());
    }
    for (auto& pose : b->poses) p->SetManifold(pose.data(), new ceres::QuaternionManifold);
  });
  ExpectSameEnd(runs);
}

TEST(Solver, SharedIntrinsicsConstantBlocksAndPriors) {
  const SyntheticBa ba = MakeSyntheticBa(8, 300, 4, 14);
  const Runs runs = SolveAll(ba, BaseOptions(), [](SyntheticBa* b, ceres::Problem* p) {
    // One intrinsics block shared by all cameras.
    for (auto& o : b->observations) {
      auto* cost = new ceres::AutoDiffCostFunction<testing::ReprojectionError, 2, 6, 3, 3>(
          new testing::ReprojectionError(o.u, o.v));
      p->AddResidualBlock(cost, new ceres::CauchyLoss(2.0), b->poses[o.camera].data(),
                          b->intrinsics[0].data(), b->points[o.point].data());
    }
    // Gauge: first camera constant, a few points constant.
    p->SetParameterBlockConstant(b->poses[0].data());
    for (int i = 0; i < 5; ++i) p->SetParameterBlockConstant(b->points[i].data());
    // A prior on the second camera's translation (no landmark involved).
    p->AddResidualBlock(new ceres::AutoDiffCostFunction<Prior, 6, 6>(new Prior(b->poses[1])), nullptr,
                        b->poses[1].data());
  });
  ExpectSameEnd(runs);
}

TEST(Solver, UserOrderingAndPreconditioners) {
  const SyntheticBa ba = MakeSyntheticBa(8, 200, 4, 15);
  for (ceres::PreconditionerType pre : {ceres::SCHUR_JACOBI, ceres::JACOBI, ceres::IDENTITY}) {
    Solver::Options o = BaseOptions();
    o.preconditioner_type = pre;
    SyntheticBa copy = ba;
    auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    const Runs runs = SolveAll(ba, o, [&](SyntheticBa* b, ceres::Problem* p) {
      AddReprojectionResiduals(b, p, nullptr);
    });
    ExpectSameEnd(runs, 1e-5);
  }
}

TEST(Solver, FullReportAndSummaryFields) {
  SyntheticBa ba = MakeSyntheticBa(6, 100, 3, 16);
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, nullptr);
  Solver::Options o = BaseOptions();
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.max_num_iterations = 5;
  o.function_tolerance = 1e-16;
  o.gradient_tolerance = 1e-16;
  ceres::Solver::Summary s;
  Solve(o, &problem, &s);
  EXPECT_EQ(s.termination_type, ceres::NO_CONVERGENCE);
  EXPECT_EQ(s.message, "Maximum number of iterations reached. Number of iterations: 5.");
  ASSERT_EQ(s.iterations.size(), 6u);
  for (size_t i = 1; i < s.iterations.size(); ++i) {
    EXPECT_GE(s.iterations[i].cumulative_time_in_seconds, s.iterations[i - 1].cumulative_time_in_seconds);
    EXPECT_GT(s.iterations[i].linear_solver_iterations, 0);
    EXPECT_GT(s.iterations[i].trust_region_radius, 0.0);
  }
  EXPECT_EQ(s.num_residual_blocks, static_cast<int>(ba.observations.size()));
  EXPECT_EQ(s.num_linear_solves, 5);
  EXPECT_GT(s.total_time_in_seconds, 0.0);
  EXPECT_EQ(s.linear_solver_ordering_used, (std::vector<int>{100, 12}));
  EXPECT_EQ(s.schur_structure_used, "2,3,d");
  const std::string report = s.FullReport();
  EXPECT_NE(report.find("ITERATIVE_SCHUR"), std::string::npos) << report;
  EXPECT_NE(report.find("SCHUR_JACOBI"), std::string::npos) << report;
  EXPECT_LT(s.final_cost, s.initial_cost);
}

TEST(Solver, PassThroughIsCeres) {
  SyntheticBa a = MakeSyntheticBa(6, 100, 3, 17), b = a;
  ceres::Problem pa, pb;
  AddReprojectionResiduals(&a, &pa, nullptr);
  AddReprojectionResiduals(&b, &pb, nullptr);
  Solver::Options o = BaseOptions();
  o.num_threads = 1;
  ceres::Solver::Summary sa, sb;
  Solve(o, &pa, &sa);
  ceres::Solve(o, &pb, &sb);
  EXPECT_EQ(sa.final_cost, sb.final_cost);
  EXPECT_EQ(sa.iterations.size(), sb.iterations.size());
}

TEST(Solver, DeterministicAcrossRunsAndThreads) {
  const SyntheticBa ba = MakeSyntheticBa(8, 400, 4, 18);
  std::vector<double> costs;
  for (int threads : {1, 2, 2}) {
    SyntheticBa copy = ba;
    ceres::Problem problem;
    AddReprojectionResiduals(&copy, &problem, new ceres::HuberLoss(1.0));
    Solver::Options o = BaseOptions();
    o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
    o.num_threads = threads;
    ceres::Solver::Summary s;
    Solve(o, &problem, &s);
    costs.push_back(s.final_cost);
  }
  EXPECT_EQ(costs[1], costs[2]);  // bit-identical run to run
  EXPECT_EQ(costs[0], costs[1]);  // the work partition does not depend on threads
}

}  // namespace
}  // namespace ceres_sqrtba

namespace ceres_sqrtba {
namespace {

// update_state_every_iteration: callbacks see the best state so far in the
// user's parameter blocks, as in Ceres.
class StateRecorder : public ceres::IterationCallback {
 public:
  explicit StateRecorder(const double* point) : point_(point) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary&) override {
    seen.push_back(point_[0]);
    return ceres::SOLVER_CONTINUE;
  }
  std::vector<double> seen;

 private:
  const double* point_;
};

TEST(Solver, UpdateStateEveryIterationMatchesCeres) {
  const SyntheticBa ba = MakeSyntheticBa(6, 100, 3, 41);
  std::vector<std::vector<double>> seen;
  for (bool sqrt : {false, true}) {
    SyntheticBa copy = ba;
    ceres::Problem problem;
    AddReprojectionResiduals(&copy, &problem, nullptr);
    StateRecorder recorder(copy.points[7].data());
    Solver::Options o = BaseOptions();
    o.eta = 1e-10;
    o.max_num_iterations = 8;
    o.update_state_every_iteration = true;
    o.callbacks.push_back(&recorder);
    if (sqrt) o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
    ceres::Solver::Summary s;
    Solve(o, &problem, &s);
    seen.push_back(recorder.seen);
  }
  ASSERT_EQ(seen[0].size(), seen[1].size());
  for (size_t i = 0; i < seen[0].size(); ++i) EXPECT_NEAR(seen[0][i], seen[1][i], 1e-6 * std::abs(seen[0][i]));
  EXPECT_NE(seen[1].front(), seen[1].back());
}

// minimizer_progress_to_stdout prints Ceres' table: same header, one row per
// iteration, same columns.
TEST(Solver, ProgressTableHasCeresFormat) {
  const SyntheticBa ba = MakeSyntheticBa(6, 100, 3, 42);
  std::vector<std::string> outputs;
  for (bool sqrt : {false, true}) {
    SyntheticBa copy = ba;
    ceres::Problem problem;
    AddReprojectionResiduals(&copy, &problem, nullptr);
    Solver::Options o = BaseOptions();
    o.max_num_iterations = 4;
    o.logging_type = ceres::PER_MINIMIZER_ITERATION;
    o.minimizer_progress_to_stdout = true;
    if (sqrt) o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
    ceres::Solver::Summary s;
    ::testing::internal::CaptureStdout();
    Solve(o, &problem, &s);
    outputs.push_back(::testing::internal::GetCapturedStdout());
  }
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string line; std::getline(ss, line);) {
      if (!line.empty()) out.push_back(line);
    }
    return out;
  };
  const auto ceres_lines = lines(outputs[0]), sqrt_lines = lines(outputs[1]);
  ASSERT_EQ(ceres_lines.size(), sqrt_lines.size()) << outputs[0] << "\n---\n" << outputs[1];
  EXPECT_EQ(ceres_lines[0], sqrt_lines[0]);  // header
  for (size_t i = 1; i < ceres_lines.size(); ++i) {
    // Same iteration number and cost columns; times differ.
    EXPECT_EQ(ceres_lines[i].size(), sqrt_lines[i].size()) << ceres_lines[i] << "\n" << sqrt_lines[i];
    EXPECT_EQ(ceres_lines[i].substr(0, 18), sqrt_lines[i].substr(0, 18));
  }
}

}  // namespace
}  // namespace ceres_sqrtba

namespace ceres_sqrtba {
namespace {

// Landmarks of tangent sizes 1..4 and 3-d residuals, 7-d cameras with shared
// 2-d intrinsics: the linear least-squares problem ends where Ceres ends.
TEST(Solver, MixedLandmarkSizesMatchCeres) {
  testing::RandomProblemConfig config;
  config.landmark_sizes = {1, 2, 3, 4};
  config.camera_size = 7;
  config.intrinsics_size = 2;
  config.residual_size = 3;
  config.num_landmarks = 40;
  config.repeat_camera = true;
  config.single_observation = true;
  std::vector<double> final_costs;
  for (int which = 0; which < 3; ++which) {
    auto p = testing::MakeRandomProblem(config);
    Solver::Options o = BaseOptions();
    o.eta = 1e-10;
    o.max_linear_solver_iterations = 1000;
    if (which > 0) {
      o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
      o.precision = which == 1 ? DOUBLE_PRECISION : SINGLE_PRECISION;
    }
    ceres::Solver::Summary s;
    Solve(o, p.problem.get(), &s);
    EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
    final_costs.push_back(s.final_cost);
  }
  EXPECT_NEAR(final_costs[1], final_costs[0], 1e-6 * final_costs[0]);
  EXPECT_NEAR(final_costs[2], final_costs[0], 1e-4 * final_costs[0]);
}

// Jacobians at candidates: the same iterations (costs, radii, CG counts and
// acceptance) as without, up to the rounding in which an autodiff cost
// function's value differs when it also computes Jacobians, fewer cost
// passes, and a rejected candidate still followed by a step from the
// current point's Jacobian (a block whose cost function fails beyond a
// fence makes rejections happen).
class FencedPrior : public ceres::SizedCostFunction<1, 3> {
 public:
  explicit FencedPrior(double fence) : fence_(fence) {}
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    if (x[0][0] > fence_) return false;
    r[0] = 1e-3 * x[0][0];
    if (j != nullptr && j[0] != nullptr) j[0][0] = 1e-3, j[0][1] = j[0][2] = 0.0;
    return true;
  }

 private:
  double fence_;
};

TEST(Solver, JacobiansAtCandidatesChangeOnlyTheEvaluations) {
  for (bool fenced : {false, true}) {
    for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
      ceres::Solver::Summary summaries[2];
      for (bool on : {false, true}) {
        SyntheticBa ba = MakeSyntheticBa(8, 300, 4, 19);
        ceres::Problem problem;
        AddReprojectionResiduals(&ba, &problem, new ceres::HuberLoss(1.0));
        if (fenced) problem.AddResidualBlock(new FencedPrior(ba.points[3][0] + 1e-3), nullptr, ba.points[3].data());
        Solver::Options o = BaseOptions();
        o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
        o.precision = precision;
        o.max_num_iterations = 25;
        o.jacobians_at_candidates = on;
        Solve(o, &problem, &summaries[on]);
        ASSERT_TRUE(summaries[on].IsSolutionUsable()) << summaries[on].message;
      }
      const ceres::Solver::Summary& off = summaries[0];
      const ceres::Solver::Summary& on = summaries[1];
      SCOPED_TRACE(::testing::Message() << "fenced " << fenced << ", precision " << precision);
      ASSERT_EQ(on.iterations.size(), off.iterations.size());
      for (size_t i = 0; i < on.iterations.size(); ++i) {
        EXPECT_EQ(on.iterations[i].step_is_successful, off.iterations[i].step_is_successful) << "iteration " << i;
        EXPECT_EQ(on.iterations[i].linear_solver_iterations, off.iterations[i].linear_solver_iterations)
            << "iteration " << i;
        EXPECT_LT(Rel(on.iterations[i].cost, off.iterations[i].cost), 1e-10) << "iteration " << i;
        EXPECT_LT(Rel(on.iterations[i].trust_region_radius, off.iterations[i].trust_region_radius), 1e-8)
            << "iteration " << i;
      }
      EXPECT_EQ(on.termination_type, off.termination_type);
      EXPECT_LT(Rel(on.final_cost, off.final_cost), 1e-10);
      // One pass per candidate either way; an accepted candidate evaluated
      // with its Jacobian saves a pass, a rejected one costs a pass more.
      const int passes_on = on.num_residual_evaluations + on.num_jacobian_evaluations;
      const int passes_off = off.num_residual_evaluations + off.num_jacobian_evaluations;
      EXPECT_LT(on.num_residual_evaluations, off.num_residual_evaluations);
      EXPECT_LE(passes_on, passes_off + off.num_unsuccessful_steps);
      if (off.num_unsuccessful_steps == 0) EXPECT_LT(passes_on, passes_off);
      if (fenced) {
        EXPECT_GT(off.num_unsuccessful_steps, 0) << "the fence was to make rejections happen";
        // A candidate evaluated with its Jacobian was rejected: the current
        // point's Jacobian was evaluated again, and the loop backed off.
        EXPECT_GT(on.num_jacobian_evaluations, off.num_jacobian_evaluations);
        EXPECT_LE(passes_on, passes_off + 2);
      }
    }
  }
}

}  // namespace
}  // namespace ceres_sqrtba
