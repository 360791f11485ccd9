// Float Jacobians of cost functions (ceres_sqrtba/float_jacobians.h,
// ceres_sqrtba/autodiff_cost_function.h) through the public API:
//
//   - for every shape of tests/pipeline_shapes.h (OpenSfM's through
//     ceres_sqrtba::DynamicAutoDiffCostFunction), the float Jacobians equal the
//     double ones to float's accuracy, and the residuals are those of the
//     plain double evaluation exactly;
//   - ceres::Solve gives bit for bit the same on a problem built with
//     ceres_sqrtba::AutoDiffCostFunction as with ceres::AutoDiffCostFunction;
//   - a functor with branches, ceres::sqrt and ceres::atan2 evaluates in
//     float, and a single precision solve of it ends where ceres::Solve ends;
//   - a functor whose float evaluation overflows makes the solve continue in
//     double precision, saying why in the summary.
// The single precision solves of every pipeline shape against ceres::Solve
// (with these cost functions) are in pipeline_shapes_test.cc.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/autodiff_cost_function.h"
#include "ceres_sqrtba/float_jacobians.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "pipeline_shapes.h"

namespace ceres_sqrtba {
namespace {

using testing::MakeScene;
using testing::PipelineProblem;

// Float's unit roundoff is 2^-24 = 6e-8. An entry of these Jacobians is the
// value of a few tens of operations on parameters rounded to float, through
// a projection whose relative condition is about the ratio of the camera's
// distance to the scene's extent (about 10 in these scenes): an error of
// about 30 * 10 * 6e-8 = 2e-5 of the entry, and no entry exceeds its
// column's norm. 1e-4 of the column norm leaves a factor 5; a wrong entry
// (a wrong block offset or seed) is off by its own size.
constexpr double kFloatTolerance = 1e-4;

// Every residual block's double (Evaluate) and float
// (EvaluateFloatJacobians) Jacobians at the problem's values; the float
// ones within kFloatTolerance of the norm of their column over the whole
// problem, the residuals those of Evaluate without Jacobians. With
// expect_all_float, every cost function must offer FloatJacobians.
void ExpectFloatJacobiansMatch(ceres::Problem* problem, bool expect_all_float = true) {
  std::vector<ceres::ResidualBlockId> ids;
  problem->GetResidualBlocks(&ids);
  ASSERT_FALSE(ids.empty());
  struct Entry {
    const double* block;
    int column;
    double difference;
  };
  std::vector<Entry> entries;
  std::map<std::pair<const double*, int>, double> column_squares;
  int with_float = 0;
  for (ceres::ResidualBlockId id : ids) {
    const ceres::CostFunction* cost = problem->GetCostFunctionForResidualBlock(id);
    const auto* float_cost = dynamic_cast<const FloatJacobians*>(cost);
    if (float_cost == nullptr) continue;
    ++with_float;
    std::vector<double*> blocks;
    problem->GetParameterBlocksForResidualBlock(id, &blocks);
    const int m = cost->num_residuals();
    std::vector<std::vector<double>> jd(blocks.size());
    std::vector<std::vector<float>> jf(blocks.size());
    std::vector<double*> jd_ptr;
    std::vector<float*> jf_ptr;
    for (size_t b = 0; b < blocks.size(); ++b) {
      const int size = cost->parameter_block_sizes()[b];
      jd[b].assign(m * size, std::nan(""));
      jf[b].assign(m * size, std::nanf(""));
      jd_ptr.push_back(jd[b].data());
      jf_ptr.push_back(jf[b].data());
    }
    std::vector<double> rd(m, std::nan("")), rf(m, std::nan("")), r_plain(m, std::nan(""));
    ASSERT_TRUE(cost->Evaluate(blocks.data(), rd.data(), jd_ptr.data()));
    ASSERT_TRUE(cost->Evaluate(blocks.data(), r_plain.data(), nullptr));
    ASSERT_TRUE(float_cost->EvaluateFloatJacobians(blocks.data(), rf.data(), jf_ptr.data()));
    for (int i = 0; i < m; ++i) {
      // The residuals of the plain double evaluation, bit for bit (those of
      // Ceres' Jet<double> pass may differ from them in the last bits: a
      // Jet divides through the reciprocal).
      EXPECT_EQ(std::memcmp(&r_plain[i], &rf[i], sizeof(double)), 0) << r_plain[i] << " " << rf[i];
    }
    for (size_t b = 0; b < blocks.size(); ++b) {
      const int size = cost->parameter_block_sizes()[b];
      for (int i = 0; i < m; ++i) {
        for (int c = 0; c < size; ++c) {
          const double d = jd[b][i * size + c];
          const double f = jf[b][i * size + c];
          ASSERT_TRUE(std::isfinite(d) && std::isfinite(f)) << d << " " << f;
          column_squares[{blocks[b], c}] += d * d;
          entries.push_back({blocks[b], c, std::abs(f - d)});
        }
      }
    }
  }
  if (expect_all_float) {
    EXPECT_EQ(with_float, static_cast<int>(ids.size()));
  }
  ASSERT_GT(with_float, 0);
  double worst = 0.0;
  for (const Entry& e : entries) {
    const double norm = std::sqrt(column_squares[{e.block, e.column}]);
    EXPECT_LE(e.difference, kFloatTolerance * norm) << "column " << e.column;
    if (norm > 0.0) worst = std::max(worst, e.difference / norm);
  }
  // Float's rounding is there: the float path did not run in double.
  EXPECT_GT(worst, 0.0);
}

// A problem built from a pipeline shape, with its evaluation callback run
// at the initial values (AliceVision's residuals read what it computes).
void ExpectShapeMatches(const PipelineProblem& p, bool expect_all_float = true) {
  testing::Values v = p.values;
  const std::unique_ptr<ceres::EvaluationCallback> callback = p.make_callback ? p.make_callback(&v) : nullptr;
  ceres::Problem problem;
  p.build(&v, &problem);
  if (callback) callback->PrepareForEvaluation(true, true);
  ExpectFloatJacobiansMatch(&problem, expect_all_float);
}

TEST(FloatJacobians, EqualTheDoubleOnesForEveryPipelineShape) {
  {
    SCOPED_TRACE("COLMAP");
    ExpectShapeMatches(testing::ColmapProblem(MakeScene(8, 60, 501)));
  }
  {
    SCOPED_TRACE("rigs");
    ExpectShapeMatches(testing::RigProblem(MakeScene(8, 60, 502)));
  }
  {
    SCOPED_TRACE("Theia");
    ExpectShapeMatches(testing::TheiaProblem(MakeScene(8, 60, 503)));
  }
  {
    SCOPED_TRACE("GLOMAP");
    ExpectShapeMatches(testing::GlomapPositioningProblem(MakeScene(8, 60, 504), 505));
  }
  {
    SCOPED_TRACE("AliceVision (analytic, FloatJacobians by hand)");
    ExpectShapeMatches(testing::AliceVisionProblem(MakeScene(8, 60, 506)));
  }
  {
    SCOPED_TRACE("OpenMVG with control points");
    ExpectShapeMatches(testing::OpenMvgProblem(MakeScene(9, 60, 507), 16.0, 4));
  }
  {
    SCOPED_TRACE("OpenSfM (DynamicAutoDiffCostFunction, constant intrinsics: a block without Jacobian)");
    ExpectShapeMatches(testing::OpenSfmProblem(MakeScene(8, 60, 508)));
  }
}

// The dynamic variant with a stride that does not divide the derivatives
// (14 = 3 * 4 + 2 over the pose, intrinsics and point), every block wanted,
// and with the middle block not wanted (a constant block between variable
// ones: the passes skip it).
TEST(FloatJacobians, DynamicStridesAcrossBlocks) {
  const testing::Scene scene = MakeScene(4, 10, 512);
  testing::Values v = testing::ValuesOf(scene);
  const testing::Scene::Observation& o = scene.observations[5];
  DynamicAutoDiffCostFunction<testing::DynamicReprojection, 4> cost(new testing::DynamicReprojection(o.pixel));
  cost.AddParameterBlock(7);
  cost.AddParameterBlock(4);
  cost.AddParameterBlock(3);
  cost.SetNumResiduals(2);
  const double* parameters[3] = {v.poses[o.image].data(), v.intrinsics.data(), v.points[o.point].data()};
  for (bool middle : {true, false}) {
    SCOPED_TRACE(middle ? "every block" : "no Jacobian for the intrinsics");
    double jd0[14], jd1[8], jd2[6], rd[2], rf[2];
    float jf0[14], jf1[8], jf2[6];
    double* jd[3] = {jd0, middle ? jd1 : nullptr, jd2};
    float* jf[3] = {jf0, middle ? jf1 : nullptr, jf2};
    std::fill(jf1, jf1 + 8, 7.0f);
    ASSERT_TRUE(cost.Evaluate(parameters, rd, jd));
    ASSERT_TRUE(cost.EvaluateFloatJacobians(parameters, rf, jf));
    const int sizes[3] = {7, 4, 3};
    for (int b = 0; b < 3; ++b) {
      if (jd[b] == nullptr) {
        for (float f : jf1) EXPECT_EQ(f, 7.0f);  // not written
        continue;
      }
      for (int i = 0; i < 2 * sizes[b]; ++i) {
        EXPECT_NEAR(jf[b][i], jd[b][i], kFloatTolerance * std::max(1.0, std::abs(jd[b][i]))) << b << " " << i;
      }
    }
  }
}

// The COLMAP shape built with either type: ceres::Solve cannot tell them
// apart, bit for bit (one thread: Ceres' threaded sums vary from run to run).
template <template <typename, int, int...> class Cost>
std::pair<ceres::Solver::Summary, testing::Values> SolveWithCeres(const testing::Scene& scene) {
  testing::Values v = testing::ValuesOf(scene);
  ceres::Problem problem;
  ceres::LossFunction* loss = new ceres::SoftLOneLoss(1.0);
  for (const testing::Scene::Observation& o : scene.observations) {
    problem.AddResidualBlock(new Cost<testing::ReprojectionError, 2, 7, 4, 3>(new testing::ReprojectionError(o.pixel)),
                             loss, v.poses[o.image].data(), v.intrinsics.data(), v.points[o.point].data());
  }
  for (auto& pose : v.poses) problem.SetManifold(pose.data(), testing::PoseManifold());
  problem.SetParameterBlockConstant(v.poses[0].data());
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_SCHUR;
  options.max_num_iterations = 10;
  options.num_threads = 1;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  return {summary, v};
}

TEST(FloatJacobians, CeresSolveIsBitIdenticalWithEitherType) {
  const testing::Scene scene = MakeScene(6, 50, 509);
  const auto [ceres_summary, ceres_values] = SolveWithCeres<ceres::AutoDiffCostFunction>(scene);
  const auto [sqrtba_summary, sqrtba_values] = SolveWithCeres<AutoDiffCostFunction>(scene);
  ASSERT_TRUE(ceres_summary.IsSolutionUsable()) << ceres_summary.message;
  ASSERT_EQ(ceres_summary.iterations.size(), sqrtba_summary.iterations.size());
  for (size_t k = 0; k < ceres_summary.iterations.size(); ++k) {
    EXPECT_EQ(ceres_summary.iterations[k].cost, sqrtba_summary.iterations[k].cost) << "iteration " << k;
  }
  const auto same = [](const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].size() != b[i].size() || std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(double)) != 0) {
        return false;
      }
    }
    return a.size() == b.size();
  };
  EXPECT_TRUE(same(ceres_values.poses, sqrtba_values.poses));
  EXPECT_TRUE(same(ceres_values.points, sqrtba_values.points));
  EXPECT_EQ(std::memcmp(ceres_values.intrinsics.data(), sqrtba_values.intrinsics.data(),
                        ceres_values.intrinsics.size() * sizeof(double)),
            0);
}

// A range-and-bearing sensor at (x, y, z) with heading psi observes points:
// azimuth atan2(dy, dx) - psi wrapped into (-pi, pi] by a branch, elevation
// atan2(dz, sqrt(dx^2 + dy^2)), and the range sqrt(dx^2 + dy^2 + dz^2). Each
// precision takes the branch of its own value.
struct RangeBearingError {
  RangeBearingError(double azimuth, double elevation, double range)
      : azimuth(azimuth), elevation(elevation), range(range) {}
  template <typename T>
  bool operator()(const T* sensor, const T* point, T* r) const {
    using std::atan2;
    using std::sqrt;
    const T dx = point[0] - sensor[0], dy = point[1] - sensor[1], dz = point[2] - sensor[2];
    const T horizontal = sqrt(dx * dx + dy * dy);
    T a = atan2(dy, dx) - sensor[3] - T(azimuth);
    if (a > T(M_PI)) {
      a -= T(2.0 * M_PI);
    } else if (a <= T(-M_PI)) {
      a += T(2.0 * M_PI);
    }
    r[0] = a;
    r[1] = atan2(dz, horizontal) - T(elevation);
    r[2] = T(0.1) * (sqrt(dx * dx + dy * dy + dz * dz) - T(range));
    return true;
  }
  double azimuth, elevation, range;
};

struct RangeBearingScene {
  std::vector<std::vector<double>> sensors, points;
  std::vector<std::pair<int, int>> observations;
  std::vector<RangeBearingError> errors;
};

// Sensors on a circle around the points, headings spread over every
// quadrant (so that wrapped and unwrapped azimuths occur), noisy
// observations and initial values.
RangeBearingScene MakeRangeBearingScene(unsigned seed) {
  RangeBearingScene s;
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<std::vector<double>> true_sensors, true_points;
  for (int i = 0; i < 6; ++i) {
    const double angle = 2.0 * M_PI * i / 6;
    true_sensors.push_back({10 * std::cos(angle), 10 * std::sin(angle), 0.5 * noise(rng), 0.9 * M_PI * (i - 2.5) / 2.5});
  }
  for (int j = 0; j < 40; ++j) true_points.push_back({u(rng), u(rng), u(rng)});
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 40; ++j) {
      const double* c = true_sensors[i].data();
      const double* p = true_points[j].data();
      const double dx = p[0] - c[0], dy = p[1] - c[1], dz = p[2] - c[2];
      double a = std::atan2(dy, dx) - c[3];
      a = std::remainder(a, 2.0 * M_PI);
      s.errors.emplace_back(a + 0.002 * noise(rng), std::atan2(dz, std::hypot(dx, dy)) + 0.002 * noise(rng),
                            std::sqrt(dx * dx + dy * dy + dz * dz) + 0.01 * noise(rng));
      s.observations.emplace_back(i, j);
    }
  }
  s.sensors = true_sensors;
  s.points = true_points;
  for (auto& c : s.sensors) {
    for (double& v : c) v += 0.05 * noise(rng);
  }
  for (auto& p : s.points) {
    for (double& v : p) v += 0.1 * noise(rng);
  }
  return s;
}

void BuildRangeBearing(RangeBearingScene* s, ceres::Problem* problem) {
  for (size_t k = 0; k < s->observations.size(); ++k) {
    const auto [i, j] = s->observations[k];
    problem->AddResidualBlock(
        new AutoDiffCostFunction<RangeBearingError, 3, 4, 3>(new RangeBearingError(s->errors[k])), nullptr,
        s->sensors[i].data(), s->points[j].data());
  }
  problem->SetParameterBlockConstant(s->sensors[0].data());
}

TEST(FloatJacobians, FunctorWithBranchesSqrtAndAtan2) {
  RangeBearingScene jacobian_scene = MakeRangeBearingScene(510);
  ceres::Problem problem;
  BuildRangeBearing(&jacobian_scene, &problem);
  ExpectFloatJacobiansMatch(&problem);

  ceres::Solver::Options ceres_options;
  ceres_options.linear_solver_type = ceres::DENSE_SCHUR;
  ceres_options.max_num_iterations = 50;
  ceres_options.function_tolerance = 1e-10;
  ceres_options.num_threads = 1;
  RangeBearingScene ceres_scene = MakeRangeBearingScene(510);
  ceres::Problem ceres_problem;
  BuildRangeBearing(&ceres_scene, &ceres_problem);
  ceres::Solver::Summary reference;
  ceres::Solve(ceres_options, &ceres_problem, &reference);
  ASSERT_EQ(reference.termination_type, ceres::CONVERGENCE) << reference.message;
  for (SqrtLinearSolverType type : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
    SCOPED_TRACE(SqrtLinearSolverTypeToString(type));
    Solver::Options options(ceres_options);
    options.sqrt_linear_solver_type = type;
    options.precision = SINGLE_PRECISION;
    options.num_threads = 2;
    RangeBearingScene scene = MakeRangeBearingScene(510);
    ceres::Problem sqrt_problem;
    BuildRangeBearing(&scene, &sqrt_problem);
    Solver::Summary summary;
    Solve(options, &sqrt_problem, &summary);
    ASSERT_TRUE(summary.IsSolutionUsable()) << summary.message;
    EXPECT_EQ(summary.precision_given, SINGLE_PRECISION);
    // pipeline_shapes_test's single precision tolerance.
    EXPECT_NEAR(summary.final_cost, reference.final_cost, 1e-4 * reference.final_cost);
  }
}

// r = x0 - c, written so that the float evaluation overflows: (x0 * 1e30) *
// 1e10 is beyond float's largest value (3.4e38), and so are the Jacobian's
// products; in double it is x0 * 1e40, brought back by 1e-40.
struct OverflowingPrior {
  explicit OverflowingPrior(double c) : c(c) {}
  template <typename T>
  bool operator()(const T* point, T* r) const {
    r[0] = ((point[0] * T(1e30)) * T(1e10)) * T(1e-40) - T(c);
    return true;
  }
  double c;
};

TEST(FloatJacobians, OverflowInFloatContinuesInDoubleAndSaysWhy) {
  const PipelineProblem shape = testing::ColmapProblem(MakeScene(6, 50, 511));
  auto solve = [&](const Solver::Options& options) {
    testing::Values v = shape.values;
    ceres::Problem problem;
    shape.build(&v, &problem);
    problem.AddResidualBlock(new AutoDiffCostFunction<OverflowingPrior, 1, 3>(new OverflowingPrior(v.points[7][0])),
                             nullptr, v.points[7].data());
    Solver::Summary summary;
    Solve(options, &problem, &summary);
    return summary;
  };
  Solver::Options options;
  options.linear_solver_type = ceres::DENSE_SCHUR;
  options.max_num_iterations = 20;
  options.num_threads = 1;
  const Solver::Summary reference = solve(options);
  ASSERT_TRUE(reference.IsSolutionUsable()) << reference.message;
  options.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  options.precision = SINGLE_PRECISION;
  options.num_threads = 2;
  const Solver::Summary summary = solve(options);
  ASSERT_TRUE(summary.IsSolutionUsable()) << summary.message;
  EXPECT_EQ(summary.precision_used, DOUBLE_PRECISION);
  EXPECT_EQ(summary.precision_switch_iteration, 0);
  EXPECT_NE(summary.precision_switch_reason.find("float Jacobian"), std::string::npos)
      << summary.precision_switch_reason;
  EXPECT_NE(summary.FullReport().find("float Jacobian"), std::string::npos);
  EXPECT_NEAR(summary.final_cost, reference.final_cost, 1e-6 * reference.final_cost);
}

// Run to convergence with a gradient tolerance below what float Jacobians
// resolve: once the gradient is within their rounding the solve continues in
// double precision (float steps would only wander at the cost's rounding
// level), says why, and converges where ceres::Solve does.
TEST(FloatJacobians, GradientAtTheirRoundingContinuesInDouble) {
  const PipelineProblem shape = testing::ColmapProblem(MakeScene(8, 120, 513));
  Solver::Options options;
  options.linear_solver_type = ceres::DENSE_SCHUR;
  options.max_num_iterations = 100;
  options.function_tolerance = 0.0;
  options.parameter_tolerance = 0.0;
  options.gradient_tolerance = 1e-9;
  options.num_threads = 1;
  const Solver::Summary reference = testing::SolvePipelineProblem(shape, options);
  ASSERT_EQ(reference.termination_type, ceres::CONVERGENCE) << reference.message;
  options.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  options.precision = SINGLE_PRECISION;
  options.num_threads = 2;
  const Solver::Summary summary = testing::SolvePipelineProblem(shape, options);
  EXPECT_EQ(summary.termination_type, ceres::CONVERGENCE) << summary.message;
  EXPECT_EQ(summary.precision_used, DOUBLE_PRECISION);
  EXPECT_NE(summary.precision_switch_reason.find("within the rounding of the float Jacobians"), std::string::npos)
      << summary.precision_switch_reason;
  // Both at the minimum: the same cost to double's rounding of the sums.
  EXPECT_NEAR(summary.final_cost, reference.final_cost, 1e-10 * reference.final_cost);
  // Not many more iterations than Ceres' in double.
  EXPECT_LE(summary.iterations.size(), reference.iterations.size() + 5);
}

}  // namespace
}  // namespace ceres_sqrtba
