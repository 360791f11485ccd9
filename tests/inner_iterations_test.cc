// Inner iterations (use_inner_iterations = true, Theia's default) through the
// public API, against ceres::Solve on the same problems: the final cost, the
// summary's inner-iteration fields, the switch-off by inner_iteration_tolerance,
// bounds, bits for any number of threads, and Ceres' messages for what it
// refuses.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::SyntheticBa;

// Theia-like: BAL-like cameras (pose and intrinsics blocks), points, Huber
// loss, inner iterations with the automatic ordering.
Solver::Options TheiaLikeOptions() {
  Solver::Options o;
  o.use_inner_iterations = true;
  o.max_num_iterations = 30;
  o.num_threads = 2;
  o.logging_type = ceres::SILENT;
  return o;
}

struct Setting {
  const char* name;
  ceres::LinearSolverType ceres_solver;
  SqrtLinearSolverType sqrt_solver;
};

const Setting kSettings[] = {
    {"iterative", ceres::ITERATIVE_SCHUR, SQRT_ITERATIVE_SCHUR},
    {"sparse", ceres::SPARSE_SCHUR, SQRT_SPARSE_SCHUR},
};

using Build = std::function<void(SyntheticBa*, ceres::Problem*, Solver::Options*)>;

void AddHuber(SyntheticBa* ba, ceres::Problem* problem, Solver::Options*) {
  testing::AddReprojectionResiduals(ba, problem, new ceres::HuberLoss(1.0));
}

// Solves a copy of `original` (built by `build`) with `options`; the copy's
// values come back in *solved when given.
Solver::Summary SolveCopy(const SyntheticBa& original, Solver::Options options, const Build& build,
                          SyntheticBa* solved = nullptr) {
  SyntheticBa ba = original;
  ceres::Problem problem;
  build(&ba, &problem, &options);
  Solver::Summary summary;
  Solve(options, &problem, &summary);
  if (solved != nullptr) *solved = ba;
  return summary;
}

Solver::Options CeresOptions(const Setting& setting, Solver::Options o) {
  o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
  o.linear_solver_type = setting.ceres_solver;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  if (setting.ceres_solver == ceres::SPARSE_SCHUR) o.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  return o;
}

Solver::Options SqrtOptions(const Setting& setting, Solver::Options o, Precision precision) {
  o.sqrt_linear_solver_type = setting.sqrt_solver;
  o.precision = precision;
  return o;
}

void ExpectSameInnerIterationFields(const ceres::Solver::Summary& ceres, const ceres::Solver::Summary& ours,
                                    const std::string& what) {
  EXPECT_EQ(ours.inner_iterations_given, ceres.inner_iterations_given) << what;
  EXPECT_EQ(ours.inner_iterations_used, ceres.inner_iterations_used) << what;
  EXPECT_EQ(ours.inner_iteration_ordering_given, ceres.inner_iteration_ordering_given) << what;
  EXPECT_EQ(ours.inner_iteration_ordering_used, ceres.inner_iteration_ordering_used) << what;
}

// The final cost is Ceres' or lower (1e-6 relative: the sub-solves are
// Ceres' but sum their costs in another order, and Ceres breaks ties between
// blocks of equal degree by address, see coordinate_descent_minimizer.h).
// Measured on these problems: SPARSE_SCHUR to 1e-9 or below Ceres; with PCG
// up to 8.6e-7 above (the shared-intrinsics problem, where the function
// tolerance ends Ceres' run one iteration earlier; 2.7e-7 without inner
// iterations on the given-ordering problem).
void CompareWithCeres(const SyntheticBa& ba, const Solver::Options& base, const Build& build) {
  for (const Setting& setting : kSettings) {
    const Solver::Summary ceres = SolveCopy(ba, CeresOptions(setting, base), build);
    ASSERT_TRUE(ceres.IsSolutionUsable()) << ceres.message;
    ASSERT_TRUE(ceres.inner_iterations_used) << setting.name;
    ASSERT_GT(ceres.num_inner_iteration_steps, 0);
    for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
      const std::string what = std::string(setting.name) + (precision == SINGLE_PRECISION ? " single" : " double");
      const Solver::Summary ours = SolveCopy(ba, SqrtOptions(setting, base, precision), build);
      ASSERT_TRUE(ours.IsSolutionUsable()) << what << ": " << ours.message;
      EXPECT_LE(ours.final_cost, ceres.final_cost * (1 + 1e-6)) << what;
      ExpectSameInnerIterationFields(ceres, ours, what);
      EXPECT_GE(ours.num_inner_iteration_steps, 0) << what;
      EXPECT_GT(ours.inner_iteration_time_in_seconds, 0.0) << what;
      EXPECT_NE(ours.FullReport().find("Steps with inner iterations"), std::string::npos) << what;
      EXPECT_NE(ours.FullReport().find("Inner iteration ordering"), std::string::npos) << what;
      std::printf("%-18s ceres %.10e (%d inner steps, %d iterations)  sqrt %.10e (%d inner steps, %d iterations)\n",
                  what.c_str(), ceres.final_cost, ceres.num_inner_iteration_steps,
                  static_cast<int>(ceres.iterations.size()), ours.final_cost, ours.num_inner_iteration_steps,
                  static_cast<int>(ours.iterations.size()));
    }
  }
}

TEST(InnerIterations, AutomaticOrderingReachesCeresCost) {
  CompareWithCeres(testing::MakeSyntheticBa(12, 400, 4, 61), TheiaLikeOptions(), AddHuber);
}

// Points, then poses, then intrinsics (three independent sets), given.
TEST(InnerIterations, GivenOrderingReachesCeresCost) {
  CompareWithCeres(testing::MakeSyntheticBa(12, 400, 4, 62), TheiaLikeOptions(),
                   [](SyntheticBa* ba, ceres::Problem* problem, Solver::Options* o) {
                     AddHuber(ba, problem, o);
                     o->inner_iteration_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
                     for (auto& p : ba->points) o->inner_iteration_ordering->AddElementToGroup(p.data(), 0);
                     for (auto& p : ba->poses) o->inner_iteration_ordering->AddElementToGroup(p.data(), 1);
                     for (auto& p : ba->intrinsics) o->inner_iteration_ordering->AddElementToGroup(p.data(), 2);
                     // A constant block in the ordering is dropped from it.
                     problem->SetParameterBlockConstant(ba->intrinsics[0].data());
                   });
}

// Theia's shape: one intrinsics block shared by every camera. Ceres' sets
// are then free of ties (intrinsics, poses, points) and its runs repeat:
// the number of rounds must be Ceres'.
TEST(InnerIterations, SharedIntrinsicsReachCeresCost) {
  const Build shared = [](SyntheticBa* b, ceres::Problem* problem, Solver::Options*) {
    for (const auto& o : b->observations) {
      problem->AddResidualBlock(new ceres::AutoDiffCostFunction<testing::ReprojectionError, 2, 6, 3, 3>(
                                    new testing::ReprojectionError(o.u, o.v)),
                                new ceres::HuberLoss(1.0), b->poses[o.camera].data(), b->intrinsics[0].data(),
                                b->points[o.point].data());
    }
  };
  const SyntheticBa ba = testing::MakeSyntheticBa(12, 400, 4, 71);
  CompareWithCeres(ba, TheiaLikeOptions(), shared);
  for (const Setting& setting : kSettings) {
    const Solver::Summary ceres = SolveCopy(ba, CeresOptions(setting, TheiaLikeOptions()), shared);
    const Solver::Summary ours = SolveCopy(ba, SqrtOptions(setting, TheiaLikeOptions(), DOUBLE_PRECISION), shared);
    EXPECT_EQ(ours.inner_iteration_ordering_used, (std::vector<int>{1, 12, 400}));
    EXPECT_EQ(ours.num_inner_iteration_steps, ceres.num_inner_iteration_steps) << setting.name;
  }
}

// With inner iterations on, the step is not Ceres' LM step alone: the
// iterations must differ from a run without them (else they did nothing).
TEST(InnerIterations, ChangeTheIterates) {
  const SyntheticBa ba = testing::MakeSyntheticBa(10, 300, 4, 63);
  Solver::Options with = SqrtOptions(kSettings[1], TheiaLikeOptions(), DOUBLE_PRECISION);
  Solver::Options without = with;
  without.use_inner_iterations = false;
  const Solver::Summary a = SolveCopy(ba, with, AddHuber);
  const Solver::Summary b = SolveCopy(ba, without, AddHuber);
  ASSERT_GE(a.iterations.size(), 2u);
  EXPECT_NE(a.iterations[1].cost, b.iterations[1].cost);
  EXPECT_LT(a.iterations[1].cost, b.iterations[1].cost);
  EXPECT_FALSE(b.inner_iterations_used);
  EXPECT_EQ(b.num_inner_iteration_steps, -1);  // Ceres' default, untouched
}

TEST(InnerIterations, BitIdenticalForOneAndTwoThreads) {
  const SyntheticBa ba = testing::MakeSyntheticBa(10, 300, 4, 64);
  for (const Setting& setting : kSettings) {
    for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
      SyntheticBa solved[2];
      Solver::Summary summaries[2];
      for (int threads = 1; threads <= 2; ++threads) {
        Solver::Options o = SqrtOptions(setting, TheiaLikeOptions(), precision);
        o.num_threads = threads;
        summaries[threads - 1] = SolveCopy(ba, o, AddHuber, &solved[threads - 1]);
      }
      EXPECT_EQ(summaries[0].final_cost, summaries[1].final_cost) << setting.name;
      EXPECT_EQ(summaries[0].num_inner_iteration_steps, summaries[1].num_inner_iteration_steps);
      EXPECT_TRUE(solved[0].points == solved[1].points && solved[0].poses == solved[1].poses &&
                  solved[0].intrinsics == solved[1].intrinsics)
          << setting.name;
    }
  }
}

// A tolerance no round can beat switches them off after the first round, in
// Ceres and here. Summary::num_inner_iteration_steps counts as Ceres counts:
// from its default of -1, so one round reads 0.
TEST(InnerIterations, ToleranceSwitchesThemOff) {
  const SyntheticBa ba = testing::MakeSyntheticBa(10, 300, 4, 65);
  Solver::Options o = TheiaLikeOptions();
  o.inner_iteration_tolerance = 0.999;
  for (const Setting& setting : kSettings) {
    const Solver::Summary ceres = SolveCopy(ba, CeresOptions(setting, o), AddHuber);
    const Solver::Summary ours = SolveCopy(ba, SqrtOptions(setting, o, DOUBLE_PRECISION), AddHuber);
    EXPECT_EQ(ceres.num_inner_iteration_steps, 0);
    EXPECT_EQ(ours.num_inner_iteration_steps, 0) << setting.name;
    EXPECT_LE(ours.final_cost, ceres.final_cost * (1 + 1e-6)) << setting.name;
  }
  // The default tolerance (1e-3) lets them run for more than one step.
  Solver::Options d = SqrtOptions(kSettings[1], TheiaLikeOptions(), DOUBLE_PRECISION);
  const Solver::Summary ours = SolveCopy(ba, d, AddHuber);
  EXPECT_GT(ours.num_inner_iteration_steps, 0);
}

// Bounds: the intrinsics' focal lengths below their initial values, so that
// bounds are active; the sub-solves project onto them as Ceres' do. Each of
// ours ends at the cost of Ceres' same solver or below (measured:
// SQRT_SPARSE_SCHUR equal to SPARSE_SCHUR to 11 digits, SQRT_ITERATIVE_SCHUR
// 9e-5 below ITERATIVE_SCHUR).
TEST(InnerIterations, BoundedBlocks) {
  const SyntheticBa ba = testing::MakeSyntheticBa(10, 300, 4, 66);
  const Build bounded = [](SyntheticBa* b, ceres::Problem* problem, Solver::Options* o) {
    AddHuber(b, problem, o);
    for (auto& intrinsics : b->intrinsics) problem->SetParameterUpperBound(intrinsics.data(), 0, intrinsics[0] - 2.0);
    problem->SetParameterLowerBound(b->points[0].data(), 2, b->points[0][2] + 0.1);
    // Given, so that Ceres' sets do not depend on addresses (its runs then
    // end 5e-3 apart from one run to the next on this problem).
    o->inner_iteration_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (auto& p : b->points) o->inner_iteration_ordering->AddElementToGroup(p.data(), 2);
    for (auto& p : b->poses) o->inner_iteration_ordering->AddElementToGroup(p.data(), 1);
    for (auto& p : b->intrinsics) o->inner_iteration_ordering->AddElementToGroup(p.data(), 0);
  };
  double ceres_costs[2];
  for (int k = 0; k < 2; ++k) {
    const Solver::Summary ceres = SolveCopy(ba, CeresOptions(kSettings[k], TheiaLikeOptions()), bounded);
    ASSERT_TRUE(ceres.IsSolutionUsable()) << ceres.message;
    ceres_costs[k] = ceres.final_cost;
  }
  for (int k = 0; k < 2; ++k) {
    const Setting& setting = kSettings[k];
    SyntheticBa solved;
    const Solver::Summary ours =
        SolveCopy(ba, SqrtOptions(setting, TheiaLikeOptions(), DOUBLE_PRECISION), bounded, &solved);
    ASSERT_TRUE(ours.IsSolutionUsable()) << ours.message;
    std::printf("bounded %-10s ceres %.10e / %.10e  sqrt %.10e\n", setting.name, ceres_costs[0], ceres_costs[1],
                ours.final_cost);
    EXPECT_TRUE(ours.is_constrained);
    EXPECT_GT(ours.num_inner_iteration_steps, -1);
    EXPECT_LE(ours.final_cost, ceres_costs[k] * (1 + 1e-6)) << setting.name;
    for (size_t c = 0; c < solved.intrinsics.size(); ++c) EXPECT_LE(solved.intrinsics[c][0], ba.intrinsics[c][0] - 2.0);
    EXPECT_GE(solved.points[0][2], ba.points[0][2] + 0.1);
  }
}

// The memory plan counts the sub-solves' scratch (per thread: the dense
// Jacobian and QR of the largest block's sub-problem, here a camera seeing
// about 120 points: 2 x 240 x 6 doubles at least).
TEST(InnerIterations, MemoryPlanCountsTheSubSolves) {
  const SyntheticBa ba = testing::MakeSyntheticBa(10, 300, 4, 70);
  int64_t needed[2];
  for (int with = 0; with < 2; ++with) {
    Solver::Options o = SqrtOptions(kSettings[0], TheiaLikeOptions(), DOUBLE_PRECISION);
    o.use_inner_iterations = with == 1;
    o.memory_limit_in_bytes = 1000;
    const Solver::Summary s = SolveCopy(ba, o, AddHuber);
    ASSERT_EQ(s.termination_type, ceres::FAILURE);
    const size_t at = s.message.find(" bytes) but only");
    ASSERT_NE(at, std::string::npos) << s.message;
    const size_t open = s.message.rfind('(', at);
    needed[with] = std::stoll(s.message.substr(open + 1, at - open - 1));
  }
  EXPECT_GE(needed[1] - needed[0], 2 * 2 * 240 * 6 * 8) << needed[0] << " " << needed[1];
}

// What Ceres refuses, with Ceres' message, the parameters untouched. The
// reference runs Ceres with DENSE_QR: with its Schur solvers, Ceres 2.1 and
// 2.2 crash after such a refusal (Solver::Solve reads the Schur structure of
// a Jacobian the failed preprocessing never created).
Solver::Options CeresReferenceOptions(Solver::Options o) {
  o.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
  o.linear_solver_type = ceres::DENSE_QR;
  return o;
}

TEST(InnerIterations, RefusedAsCeresRefusesThem) {
  const SyntheticBa ba = testing::MakeSyntheticBa(6, 60, 3, 67);
  const std::vector<std::pair<const char*, Build>> cases = {
      {"not independent",
       [](SyntheticBa* b, ceres::Problem* problem, Solver::Options* o) {
         AddHuber(b, problem, o);
         o->inner_iteration_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
         for (auto& p : b->points) o->inner_iteration_ordering->AddElementToGroup(p.data(), 0);
         o->inner_iteration_ordering->AddElementToGroup(b->poses[0].data(), 4);
         o->inner_iteration_ordering->AddElementToGroup(b->intrinsics[0].data(), 4);
       }},
      {"negative tolerance",
       [](SyntheticBa* b, ceres::Problem* problem, Solver::Options* o) {
         AddHuber(b, problem, o);
         o->inner_iteration_tolerance = -1.0;
       }},
  };
  for (const auto& c : cases) {
    for (const Setting& setting : kSettings) {
      SyntheticBa ceres_ba, ours_ba;
      const Solver::Summary ceres = SolveCopy(ba, CeresReferenceOptions(TheiaLikeOptions()), c.second, &ceres_ba);
      const Solver::Summary ours =
          SolveCopy(ba, SqrtOptions(setting, TheiaLikeOptions(), DOUBLE_PRECISION), c.second, &ours_ba);
      EXPECT_EQ(ceres.termination_type, ceres::FAILURE) << c.first;
      EXPECT_EQ(ours.termination_type, ceres::FAILURE) << c.first;
      EXPECT_EQ(ours.message, ceres.message) << c.first;
      EXPECT_FALSE(ours.inner_iterations_used);
      EXPECT_TRUE(ours_ba.points == ba.points && ours_ba.poses == ba.poses) << c.first;
    }
  }
}

// Passed through to Ceres' own Schur solvers (CERES_LINEAR_SOLVER), the same
// refusals would crash Ceres (see above): refused first, with the message
// Ceres gives with its other solvers.
TEST(InnerIterations, PassThroughRefusesWhatCrashesCeresSchurSolvers) {
  const SyntheticBa ba = testing::MakeSyntheticBa(6, 60, 3, 69);
  const Build not_independent = [](SyntheticBa* b, ceres::Problem* problem, Solver::Options* o) {
    AddHuber(b, problem, o);
    o->inner_iteration_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (auto& p : b->points) o->inner_iteration_ordering->AddElementToGroup(p.data(), 1);
    o->inner_iteration_ordering->AddElementToGroup(b->poses[2].data(), 3);
    o->inner_iteration_ordering->AddElementToGroup(b->intrinsics[2].data(), 3);
  };
  const Solver::Summary reference = SolveCopy(ba, CeresReferenceOptions(TheiaLikeOptions()), not_independent);
  ASSERT_EQ(reference.message,
            "The user-provided parameter_blocks_for_inner_iterations does not form an independent set. Group Id: 3");
  for (ceres::LinearSolverType type : {ceres::ITERATIVE_SCHUR, ceres::SPARSE_SCHUR, ceres::DENSE_SCHUR}) {
    Solver::Options o = CeresReferenceOptions(TheiaLikeOptions());
    o.linear_solver_type = type;
    SyntheticBa solved;
    const Solver::Summary s = SolveCopy(ba, o, not_independent, &solved);
    EXPECT_EQ(s.termination_type, ceres::FAILURE);
    EXPECT_EQ(s.message, reference.message) << ceres::LinearSolverTypeToString(type);
    EXPECT_TRUE(solved.points == ba.points && solved.poses == ba.poses);
  }
  // A valid ordering goes through to Ceres.
  Solver::Options o = CeresReferenceOptions(TheiaLikeOptions());
  o.linear_solver_type = ceres::ITERATIVE_SCHUR;
  const Solver::Summary fine = SolveCopy(ba, o, [](SyntheticBa* b, ceres::Problem* problem, Solver::Options* opt) {
    AddHuber(b, problem, opt);
    opt->inner_iteration_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (auto& p : b->points) opt->inner_iteration_ordering->AddElementToGroup(p.data(), 1);
    for (auto& p : b->poses) opt->inner_iteration_ordering->AddElementToGroup(p.data(), 2);
  });
  EXPECT_TRUE(fine.IsSolutionUsable()) << fine.message;
  EXPECT_TRUE(fine.inner_iterations_used);
}

#if CERES_SQRTBA_CERES_2_2
struct NoOpCallback : public ceres::EvaluationCallback {
  void PrepareForEvaluation(bool, bool) override {}
};

// Ceres 2.2 shows us the evaluation callback (2.1 does not, see
// docs/solver.md): refused with Ceres' message.
TEST(InnerIterations, EvaluationCallbackRefused) {
  const SyntheticBa original = testing::MakeSyntheticBa(6, 60, 3, 68);
  NoOpCallback callback;
  std::string messages[2];
  for (int which = 0; which < 2; ++which) {
    SyntheticBa ba = original;
    ceres::Problem::Options po;
    po.evaluation_callback = &callback;
    ceres::Problem problem(po);
    testing::AddReprojectionResiduals(&ba, &problem, nullptr);
    Solver::Options o = TheiaLikeOptions();
    o = which == 0 ? CeresReferenceOptions(o) : SqrtOptions(kSettings[0], o, DOUBLE_PRECISION);
    Solver::Summary s;
    Solve(o, &problem, &s);
    EXPECT_EQ(s.termination_type, ceres::FAILURE);
    messages[which] = s.message;
  }
  EXPECT_EQ(messages[1], messages[0]);
  EXPECT_EQ(messages[1], "Inner iterations cannot be used with EvaluationCallbacks");
  // Through to Ceres' ITERATIVE_SCHUR (which would crash): refused first.
  SyntheticBa ba = original;
  ceres::Problem::Options po;
  po.evaluation_callback = &callback;
  ceres::Problem problem(po);
  testing::AddReprojectionResiduals(&ba, &problem, nullptr);
  Solver::Options o = CeresOptions(kSettings[0], TheiaLikeOptions());
  Solver::Summary s;
  Solve(o, &problem, &s);
  EXPECT_EQ(s.message, messages[0]);
}
#endif

}  // namespace
}  // namespace ceres_sqrtba
