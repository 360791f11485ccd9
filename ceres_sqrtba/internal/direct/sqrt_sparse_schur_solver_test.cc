// SQRT_SPARSE_SCHUR: the stacked reduced camera system solved by sparse QR.
// - the stacked matrix is the damped Schur complement in square-root form
//   (A^T A = S, A^T b = b~, paper eqs. (red_H), (red_b));
// - the step equals a dense solve of the damped normal equations, also when
//   only the radius changes (a rejected step: damping swapped, no new QR);
// - a rank-deficient stacked matrix and SuiteSparse running out of memory end
//   in a failure with a message, never an abort;
// - a whole solve ends where ceres::Solve with SPARSE_SCHUR ends, in double
//   and with single precision landmark blocks, and reports SPARSE_SCHUR;
// - bad input is rejected exactly as with SQRT_ITERATIVE_SCHUR.
#include <SuiteSparse_config.h>

#include <Eigen/Dense>
#include <Eigen/SparseCore>
#include <cmath>
#include <functional>
#include <memory>
#include <regex>

#include "ceres_sqrtba/internal/direct/sqrt_sparse_schur_solver.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "linear_solver_fixture.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using testing::AddReprojectionResiduals;
using testing::LinearAlgebraConfigs;
using testing::MakeRandomProblem;
using testing::MakeSyntheticBa;
using testing::RandomDiagonal;
using testing::RandomProblemConfig;
using testing::SyntheticBa;
using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;

template <typename Scalar>
using Fixture = testing::LinearSolverFixture<SqrtSparseSchurSolver<Scalar>>;

// A of the last solve as an Eigen matrix.
Eigen::SparseMatrix<double> ToEigen(const CscMatrixView& a) {
  std::vector<Eigen::Triplet<double>> entries;
  for (int64_t j = 0; j < a.num_cols; ++j) {
    for (int64_t k = a.col_begin[j]; k < a.col_begin[j + 1]; ++k) {
      entries.emplace_back(static_cast<int>(a.row[k]), static_cast<int>(j), a.values[k]);
    }
  }
  Eigen::SparseMatrix<double> m(a.num_rows, a.num_cols);
  m.setFromTriplets(entries.begin(), entries.end());
  return m;
}

TEST(SqrtSparseSchur, StackedMatrixIsTheDampedSchurComplement) {
  for (const RandomProblemConfig& config : LinearAlgebraConfigs()) {
    auto p = MakeRandomProblem(config);
    Fixture<double> f(p.problem.get(), SqrtSparseSchurOptions());
    const ProblemStructure& s = f.s;
    const int n = s.num_effective_parameters, nl = s.camera_tangent_begin, np = s.num_camera_parameters;
    const Vec d = RandomDiagonal(n, config.seed + 30);
    Vec y(n);
    double jy;
    ASSERT_EQ(f.solver->Solve(d.data(), 0.1, y.data(), &jy).termination,
              LinearSolverTermination::kSuccess);

    const Mat h = f.j.transpose() * f.j + Mat(d.cwiseAbs2().asDiagonal());
    const Vec g = f.j.transpose() * f.r;
    const Mat hll = h.topLeftCorner(nl, nl), hlp = h.topRightCorner(nl, np);
    const Mat schur = h.bottomRightCorner(np, np) - hlp.transpose() * hll.ldlt().solve(hlp);
    const Vec schur_rhs = g.tail(np) - hlp.transpose() * hll.ldlt().solve(g.head(nl));

    const Eigen::SparseMatrix<double> a = ToEigen(f.solver->matrix().matrix());
    const Eigen::Map<const Vec> b(f.solver->matrix().rhs(), f.solver->matrix().num_rows());
    const Mat ata = Mat(a.transpose() * a);
    const Vec atb = a.transpose() * b;
    EXPECT_LT((ata - schur).norm() / schur.norm(), 1e-10) << "seed " << config.seed;
    EXPECT_LT((atb - schur_rhs).norm() / schur_rhs.norm(), 1e-10) << "seed " << config.seed;
  }
}

// The step solves (J^T J + D^2) y = J^T r; |J y|^2 is reported for the model.
// The second solve changes only the radius, as after a rejected step: the
// blocks keep their QR, only the damping and the values of A change.
template <typename Scalar>
void CheckStep(double tolerance) {
  for (const RandomProblemConfig& config : LinearAlgebraConfigs()) {
    auto p = MakeRandomProblem(config);
    Fixture<Scalar> f(p.problem.get(), SqrtSparseSchurOptions());
    const int n = f.s.num_effective_parameters;
    for (double factor : {1.0, 0.25}) {
      const Vec d = factor * RandomDiagonal(n, config.seed + 10);
      Vec y(n);
      double jy = 0;
      const LinearSolverSummary summary = f.solver->Solve(d.data(), 0.1, y.data(), &jy);
      ASSERT_EQ(summary.termination, LinearSolverTermination::kSuccess) << summary.message;
      EXPECT_EQ(summary.num_iterations, 1);
      testing::ExpectDenseStep(f.j, f.r, d, y, jy, tolerance,
                               "seed " + std::to_string(config.seed) + " factor " + std::to_string(factor));
    }
  }
}

TEST(SqrtSparseSchur, StepEqualsDenseSolveDouble) { CheckStep<double>(1e-9); }
TEST(SqrtSparseSchur, StepEqualsDenseSolveFloatBlocks) { CheckStep<float>(1e-3); }

// The same step with any SuiteSparseQR ordering.
TEST(SqrtSparseSchur, OrderingsGiveTheSameStep) {
  RandomProblemConfig config;
  config.num_cameras = 6;
  config.num_landmarks = 30;
  auto p = MakeRandomProblem(config);
  Vec reference;
  for (SparseQrOrdering ordering : {SparseQrOrdering::kDefault, SparseQrOrdering::kColamd,
                                    SparseQrOrdering::kAmd, SparseQrOrdering::kMetis,
                                    SparseQrOrdering::kBest}) {
    SqrtSparseSchurOptions options;
    options.ordering = ordering;
    Fixture<double> f(p.problem.get(), options);
    const int n = f.s.num_effective_parameters;
    const Vec d = RandomDiagonal(n, 5);
    Vec y(n);
    double jy;
    ASSERT_EQ(f.solver->Solve(d.data(), 0.1, y.data(), &jy).termination,
              LinearSolverTermination::kSuccess);
    if (reference.size() == 0) reference = y;
    EXPECT_LT((y - reference).norm() / reference.norm(), 1e-10)
        << "ordering " << static_cast<int>(ordering);
  }
}

// r = A l + b: depends on a camera block but not on its values, so that the
// camera's columns of J are zero ("a camera with no observations").
class CameraBlindCost : public ceres::SizedCostFunction<2, 6, 3> {
 public:
  bool Evaluate(double const* const* parameters, double* residuals,
                double** jacobians) const override {
    const double* l = parameters[1];
    residuals[0] = l[0] + 2 * l[1] - 1;
    residuals[1] = l[2] - l[0] + 3;
    if (jacobians != nullptr) {
      if (jacobians[0] != nullptr) std::fill(jacobians[0], jacobians[0] + 12, 0.0);
      if (jacobians[1] != nullptr) {
        const double j[6] = {1, 2, 0, -1, 0, 1};
        std::copy(j, j + 6, jacobians[1]);
      }
    }
    return true;
  }
};

// A problem with a camera J cannot see: without damping its columns of A are
// zero. It "observes" every landmark, so that it has more neighbours than any
// landmark and is found to be a camera.
struct BlindCameraProblem {
  BlindCameraProblem() {
    RandomProblemConfig config;
    config.min_observations = 2;  // every landmark block has full rank
    config.seed = 8;
    p = MakeRandomProblem(config);
    for (auto& landmark : p.landmarks) {
      p.problem->AddResidualBlock(new CameraBlindCost, nullptr, blind_camera.data(),
                                  landmark.data());
    }
  }
  testing::RandomProblem p;
  std::vector<double> blind_camera = std::vector<double>(6, 0.5);
};

TEST(SqrtSparseSchur, RankDeficientMatrixIsAFailureWithAMessage) {
  BlindCameraProblem problem;
  Fixture<double> f(problem.p.problem.get(), SqrtSparseSchurOptions());
  const int n = f.s.num_effective_parameters;
  Vec y(n);
  double jy = 0;
  const Vec zero = Vec::Zero(n);
  const LinearSolverSummary failed = f.solver->Solve(zero.data(), 0.1, y.data(), &jy);
  EXPECT_EQ(failed.termination, LinearSolverTermination::kFailure);
  EXPECT_NE(failed.message.find("rank deficient"), std::string::npos) << failed.message;
  EXPECT_EQ(f.s.num_camera_parameters, 5 * 6);
  EXPECT_LT(f.solver->qr().rank(), f.s.num_camera_parameters);

  // More damping cures it, as the trust-region loop would try next.
  const Vec d = RandomDiagonal(n, 3);
  const LinearSolverSummary solved = f.solver->Solve(d.data(), 0.1, y.data(), &jy);
  ASSERT_EQ(solved.termination, LinearSolverTermination::kSuccess) << solved.message;
  const Mat h = f.j.transpose() * f.j + Mat(d.cwiseAbs2().asDiagonal());
  const Vec y_dense = h.ldlt().solve(f.j.transpose() * f.r);
  EXPECT_LT((y - y_dense).norm() / y_dense.norm(), 1e-9);
}

// SuiteSparse allocates through SuiteSparse_config.malloc_func: a failing one
// simulates running out of memory in the analysis and in the factorization.
void* FailingMalloc(size_t) { return nullptr; }

class FailingSuiteSparseMalloc {
 public:
  FailingSuiteSparseMalloc() : saved_(SuiteSparse_config.malloc_func) {
    SuiteSparse_config.malloc_func = &FailingMalloc;
  }
  ~FailingSuiteSparseMalloc() { SuiteSparse_config.malloc_func = saved_; }

 private:
  void* (*saved_)(size_t);
};

TEST(SqrtSparseSchur, OutOfMemoryIsAFatalErrorNotAnAbort) {
  auto p = MakeRandomProblem(RandomProblemConfig());
  Fixture<double> f(p.problem.get(), SqrtSparseSchurOptions());
  const int n = f.s.num_effective_parameters;
  const Vec d = RandomDiagonal(n, 4);
  Vec y(n), y_first(n);
  double jy = 0;
  {
    FailingSuiteSparseMalloc no_memory;  // the symbolic analysis fails
    const LinearSolverSummary s = f.solver->Solve(d.data(), 0.1, y.data(), &jy);
    EXPECT_EQ(s.termination, LinearSolverTermination::kFatalError);
    EXPECT_NE(s.message.find("out of memory"), std::string::npos) << s.message;
  }
  ASSERT_EQ(f.solver->Solve(d.data(), 0.1, y_first.data(), &jy).termination,
            LinearSolverTermination::kSuccess);
  {
    FailingSuiteSparseMalloc no_memory;  // the numeric factorization fails
    const LinearSolverSummary s = f.solver->Solve(d.data(), 0.1, y.data(), &jy);
    EXPECT_EQ(s.termination, LinearSolverTermination::kFatalError);
    EXPECT_NE(s.message.find("SuiteSparseQR numeric factorization failed: out of memory"),
              std::string::npos)
        << s.message;
  }
  // The solver recovers once memory is there again.
  ASSERT_EQ(f.solver->Solve(d.data(), 0.1, y.data(), &jy).termination,
            LinearSolverTermination::kSuccess);
  EXPECT_LT((y - y_first).norm(), 1e-12 * y_first.norm());
}

}  // namespace
}  // namespace internal

namespace {

using testing::AddReprojectionResiduals;
using testing::MakeSyntheticBa;
using testing::SyntheticBa;

double Rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

Solver::Options SparseOptions(Precision precision) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  o.precision = precision;
  o.max_num_iterations = 20;
  o.num_threads = 2;
  o.logging_type = ceres::SILENT;
  return o;
}

// Solves a copy of `original` built by `build` with `options` (ceres::Solve
// when sqrt_linear_solver_type is CERES_LINEAR_SOLVER).
ceres::Solver::Summary SolveCopy(const SyntheticBa& original, const Solver::Options& options,
                                 SyntheticBa* solved = nullptr) {
  SyntheticBa ba = original;
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, new ceres::HuberLoss(1.0));
  ceres::Solver::Summary summary;
  Solve(options, &problem, &summary);
  if (solved != nullptr) *solved = ba;
  return summary;
}

TEST(SqrtSparseSchurSolve, EndsAtCeresSparseSchurCost) {
  const SyntheticBa ba = MakeSyntheticBa(10, 400, 5, 12);
  Solver::Options ceres_options = SparseOptions(DOUBLE_PRECISION);
  ceres_options.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
  ceres_options.linear_solver_type = ceres::SPARSE_SCHUR;
  ceres_options.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  const ceres::Solver::Summary ceres_summary = SolveCopy(ba, ceres_options);
  const ceres::Solver::Summary sqrt_double = SolveCopy(ba, SparseOptions(DOUBLE_PRECISION));
  const ceres::Solver::Summary sqrt_single = SolveCopy(ba, SparseOptions(SINGLE_PRECISION));
  ASSERT_TRUE(ceres_summary.IsSolutionUsable()) << ceres_summary.message;
  ASSERT_TRUE(sqrt_double.IsSolutionUsable()) << sqrt_double.message;
  ASSERT_TRUE(sqrt_single.IsSolutionUsable()) << sqrt_single.message;
  EXPECT_LT(Rel(sqrt_double.final_cost, ceres_summary.final_cost), 1e-6)
      << sqrt_double.final_cost << " vs ceres " << ceres_summary.final_cost;
  EXPECT_LT(Rel(sqrt_single.final_cost, ceres_summary.final_cost), 1e-4)
      << sqrt_single.final_cost << " vs ceres " << ceres_summary.final_cost;
  // Both take exact LM steps: the same iterates, step by step.
  ASSERT_GE(sqrt_double.iterations.size(), 6u);
  ASSERT_GE(ceres_summary.iterations.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_LT(Rel(sqrt_double.iterations[i].cost, ceres_summary.iterations[i].cost), 1e-6)
        << "iteration " << i;
    EXPECT_EQ(sqrt_double.iterations[i].step_is_successful,
              ceres_summary.iterations[i].step_is_successful);
  }
  EXPECT_EQ(sqrt_double.termination_type, ceres_summary.termination_type);
}

TEST(SqrtSparseSchurSolve, SummaryReportsSparseSchur) {
  const SyntheticBa ba = MakeSyntheticBa(6, 100, 3, 42);
  Solver::Options o = SparseOptions(SINGLE_PRECISION);
  o.max_num_iterations = 5;
  o.function_tolerance = 1e-16;
  o.gradient_tolerance = 1e-16;
  const ceres::Solver::Summary s = SolveCopy(ba, o);
  EXPECT_EQ(s.termination_type, ceres::NO_CONVERGENCE) << s.message;
  EXPECT_EQ(s.linear_solver_type_given, ceres::SPARSE_SCHUR);
  EXPECT_EQ(s.linear_solver_type_used, ceres::SPARSE_SCHUR);
  EXPECT_EQ(s.num_linear_solves, 5);
  for (size_t i = 1; i < s.iterations.size(); ++i) {
    EXPECT_EQ(s.iterations[i].linear_solver_iterations, 1);
  }
  const std::string report = s.FullReport();
  EXPECT_NE(report.find("SPARSE_SCHUR"), std::string::npos) << report;
  EXPECT_NE(report.find("SUITE_SPARSE"), std::string::npos) << report;
  EXPECT_LT(s.final_cost, s.initial_cost);
}

TEST(SqrtSparseSchurSolve, DeterministicAcrossRunsAndThreads) {
  const SyntheticBa ba = MakeSyntheticBa(8, 300, 4, 43);
  std::vector<double> costs;
  for (int threads : {1, 2, 2}) {
    Solver::Options o = SparseOptions(DOUBLE_PRECISION);
    o.num_threads = threads;
    costs.push_back(SolveCopy(ba, o).final_cost);
  }
  EXPECT_EQ(costs[1], costs[2]);
  EXPECT_EQ(costs[0], costs[1]);
}

// Residuals around 1e20 do not fit single precision blocks: the solve goes on
// with double blocks (the fallback factory makes a SQRT_SPARSE_SCHUR solver).
// (robustness_test runs its hard problems, concurrent solves included, with
// SQRT_SPARSE_SCHUR too.)
using testing::HugeReprojectionError;

TEST(SqrtSparseSchurSolve, SinglePrecisionFallsBackToDouble) {
  const SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 37);
  auto solve = [&](Precision precision) {
    SyntheticBa copy = ba;
    ceres::Problem problem;
    for (const auto& o : copy.observations) {
      problem.AddResidualBlock(
          new ceres::AutoDiffCostFunction<HugeReprojectionError, 2, 6, 3, 3>(new HugeReprojectionError(o.u, o.v)), nullptr,
          copy.poses[o.camera].data(), copy.intrinsics[o.camera].data(),
          copy.points[o.point].data());
    }
    ceres::Solver::Summary s;
    Solve(SparseOptions(precision), &problem, &s);
    return s;
  };
  const ceres::Solver::Summary single = solve(SINGLE_PRECISION);
  const ceres::Solver::Summary dbl = solve(DOUBLE_PRECISION);
  ASSERT_TRUE(single.IsSolutionUsable()) << single.message;
  EXPECT_NE(single.message.find("continued in double precision"), std::string::npos)
      << single.message;
  EXPECT_NEAR(single.final_cost, dbl.final_cost, 1e-6 * dbl.final_cost);
}

// Bad input: SQRT_SPARSE_SCHUR rejects what SQRT_ITERATIVE_SCHUR rejects, with
// the same message (naming its own solver type), and leaves the problem alone.
struct Between {
  template <typename T>
  bool operator()(const T* a, const T* b, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = a[k] - b[k];
    return true;
  }
};

struct BadInputCase {
  const char* name;
  std::function<void(SyntheticBa*, ceres::Problem*, Solver::Options*)> set;
};

std::vector<BadInputCase> BadInputCases() {
  // Points eliminated first (group 0), cameras and intrinsics kept.
  auto points_first = [](SyntheticBa* ba, Solver::Options* o) {
    auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (auto& p : ba->points) ordering->AddElementToGroup(p.data(), 0);
    for (auto& p : ba->poses) ordering->AddElementToGroup(p.data(), 1);
    for (auto& p : ba->intrinsics) ordering->AddElementToGroup(p.data(), 1);
    o->linear_solver_ordering = ordering;
  };
  return {
      {"empty box",
       [](SyntheticBa* ba, ceres::Problem* p, Solver::Options*) {
         p->SetParameterLowerBound(ba->points[3].data(), 1, 2.0);
         p->SetParameterUpperBound(ba->points[3].data(), 1, -2.0);
       }},
      {"two landmarks",
       [points_first](SyntheticBa* ba, ceres::Problem* p, Solver::Options* o) {
         p->AddResidualBlock(new ceres::AutoDiffCostFunction<Between, 3, 3, 3>(new Between),
                             nullptr, ba->points[0].data(), ba->points[1].data());
         points_first(ba, o);
       }},
      {"memory limit",
       [](SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->memory_limit_in_bytes = 1000; }},
      {"num_threads", [](SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->num_threads = 0; }},
      {"min_lm_diagonal",
       [](SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->min_lm_diagonal = 0; }},
      {"dogleg",
       [](SyntheticBa*, ceres::Problem*, Solver::Options* o) {
         o->trust_region_strategy_type = ceres::DOGLEG;
       }},
      {"line search",
       [](SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->minimizer_type = ceres::LINE_SEARCH; }},
      {"inner iterations",
       [](SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->use_inner_iterations = true; }},
      {"check gradients",
       [](SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->check_gradients = true; }},
      {"null callback",
       [](SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->callbacks.push_back(nullptr); }},
  };
}

// The message with the solver's own name replaced, so that both compare. The
// memory figures differ (SQRT_SPARSE_SCHUR also needs the stacked matrix):
// only the part naming the limit is compared then.
std::string Normalized(std::string message) {
  for (const std::string name : {"SQRT_SPARSE_SCHUR", "SQRT_ITERATIVE_SCHUR"}) {
    for (size_t at = message.find(name); at != std::string::npos; at = message.find(name)) {
      message.replace(at, name.size(), "<solver>");
    }
  }
  // Addresses of parameter blocks differ from problem to problem.
  message = std::regex_replace(message, std::regex("0x[0-9a-f]+"), "<address>");
  const size_t limit = message.find(" may be used");
  return limit == std::string::npos ? message : message.substr(limit);
}

TEST(SqrtSparseSchurSolve, BadInputParityWithIterativeSolver) {
  for (const BadInputCase& c : BadInputCases()) {
    std::string messages[2];
    for (int which = 0; which < 2; ++which) {
      SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 21);
      const SyntheticBa original = ba;
      ceres::Problem problem;
      AddReprojectionResiduals(&ba, &problem, nullptr);
      Solver::Options o = SparseOptions(DOUBLE_PRECISION);
      if (which == 1) o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
      c.set(&ba, &problem, &o);
      ceres::Solver::Summary s;
      Solve(o, &problem, &s);
      EXPECT_EQ(s.termination_type, ceres::FAILURE) << c.name << ": " << s.message;
      EXPECT_FALSE(s.message.empty()) << c.name;
      EXPECT_TRUE(ba.poses == original.poses && ba.points == original.points &&
                  ba.intrinsics == original.intrinsics)
          << c.name;
      messages[which] = Normalized(s.message);
    }
    EXPECT_EQ(messages[0], messages[1]) << c.name;
  }
  ceres::Solver::Summary s;
  Solve(SparseOptions(DOUBLE_PRECISION), nullptr, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_NE(s.message.find("null problem"), std::string::npos);
}

// What only configures PCG means nothing to the direct solver: accepted.
// The preconditioner means nothing to the direct solver: accepted. The
// forcing sequence and iteration limits are checked as Ceres checks them for
// every linear solver.
TEST(SqrtSparseSchurSolve, PreconditionerIsIrrelevantIterationOptionsAreChecked) {
  const SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 22);
  Solver::Options o = SparseOptions(DOUBLE_PRECISION);
  o.max_num_iterations = 3;
  o.preconditioner_type = ceres::CLUSTER_JACOBI;
  std::string error;
  EXPECT_TRUE(o.IsValid(&error)) << error;
  const ceres::Solver::Summary s = SolveCopy(ba, o);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_LT(s.final_cost, s.initial_cost);
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  EXPECT_FALSE(o.IsValid(&error));
  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  o.eta = std::nan("");
  EXPECT_FALSE(o.IsValid(&error));
  o.eta = 0.1;
  o.min_linear_solver_iterations = 10;
  o.max_linear_solver_iterations = 5;
  EXPECT_FALSE(o.IsValid(&error));
}

TEST(SqrtSparseSchurSolve, TypeNames) {
  SqrtLinearSolverType type = CERES_LINEAR_SOLVER;
  EXPECT_TRUE(StringToSqrtLinearSolverType("sqrt_sparse_schur", &type));
  EXPECT_EQ(type, SQRT_SPARSE_SCHUR);
  EXPECT_EQ(std::string(SqrtLinearSolverTypeToString(SQRT_SPARSE_SCHUR)), "SQRT_SPARSE_SCHUR");
}

}  // namespace
}  // namespace ceres_sqrtba
