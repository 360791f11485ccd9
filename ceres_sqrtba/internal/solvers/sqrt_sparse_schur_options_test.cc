// What SQRT_SPARSE_SCHUR accepts and refuses, and how it fails:
// - the memory limit counts the reduced camera matrix and its factorization
//   (a limit that holds only the landmark blocks ends the solve before
//   anything is allocated, the parameters untouched);
// - Solver::Options::reduced_camera_factorization is checked up front and
//   parsed by name;
// - CHOLMOD out of memory ends a solve with FAILURE and CHOLMOD's message;
// - bad input is rejected exactly as with SQRT_ITERATIVE_SCHUR, and what only
//   configures PCG is accepted and ignored.
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <string>

#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "direct_solve.h"
#include "limited_suitesparse_memory.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

// A limit that holds the landmark blocks but not the reduced camera matrix
// and its factorization ends the solve before anything is allocated.
TEST(SqrtSparseSchurOptions, MemoryLimitCountsTheCameraMatrixAndItsFactor) {
  const testing::SyntheticBa ba = testing::MakeSyntheticBa(30, 600, 5, 44);
  for (ReducedCameraFactorization f : testing::kDenseAndSparse) {
    Solver::Options iterative = testing::DirectOptions(DOUBLE_PRECISION, f);
    iterative.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
    iterative.memory_limit_in_bytes = 1000;
    const Solver::Summary blocks_only = testing::SolveCopy(ba, iterative);
    // "... need X MiB (N bytes) ...": the projected blocks' figure.
    std::smatch m;
    const std::string message = blocks_only.message;
    ASSERT_TRUE(std::regex_search(message, m, std::regex("\\((\\d+) bytes\\)"))) << message;
    const int64_t blocks_bytes = std::stoll(m[1]);
    Solver::Options o = testing::DirectOptions(DOUBLE_PRECISION, f);
    o.memory_limit_in_bytes = blocks_bytes + blocks_bytes / 10;
    testing::SyntheticBa copy = ba;
    ceres::Problem problem;
    testing::AddReprojectionResiduals(&copy, &problem, nullptr);
    Solver::Summary s;
    Solve(o, &problem, &s);
    EXPECT_EQ(s.termination_type, ceres::FAILURE) << ReducedCameraFactorizationToString(f);
    EXPECT_NE(s.message.find("the reduced camera matrix and its factorization"), std::string::npos) << s.message;
    EXPECT_TRUE(copy.points == ba.points && copy.poses == ba.poses) << "parameters touched";
    o.memory_limit_in_bytes = 0;
    EXPECT_TRUE(testing::SolveCopy(ba, o).IsSolutionUsable());
  }
}

// CHOLMOD running out of memory in a solve ends it with FAILURE and
// CHOLMOD's message, the parameters untouched, never an abort: every
// allocation is made to fail in turn (the planning's, the analysis', the
// factorization's, the solve's) until the solve goes through.
TEST(SqrtSparseSchurOptions, CholmodOutOfMemoryEndsTheSolveWithItsMessage) {
  const testing::SyntheticBa original = testing::MakeSyntheticBa(8, 200, 4, 45);
  std::set<std::string> failed_steps;
  bool solved = false;
  for (int allowed = 0; allowed < 500 && !solved; ++allowed) {
    testing::SyntheticBa ba = original;
    ceres::Problem problem;
    testing::AddReprojectionResiduals(&ba, &problem, nullptr);
    Solver::Summary s;
    {
      testing::LimitedSuiteSparseMemory limit(allowed);
      Solve(testing::DirectOptions(DOUBLE_PRECISION, SPARSE_FACTORIZATION), &problem, &s);
    }
    solved = s.termination_type != ceres::FAILURE;
    if (solved) break;
    const size_t at = s.message.find("CHOLMOD ");
    ASSERT_NE(at, std::string::npos) << "allowed " << allowed << ": " << s.message;
    EXPECT_NE(s.message.find("out of memory"), std::string::npos) << s.message;
    EXPECT_TRUE(ba.points == original.points && ba.poses == original.poses) << "parameters touched";
    failed_steps.insert(s.message.substr(at, s.message.find(" failed", at) - at));
  }
  EXPECT_TRUE(solved);
  EXPECT_EQ(failed_steps, (std::set<std::string>{"CHOLMOD ordering of the camera blocks", "CHOLMOD symbolic analysis",
                                                 "CHOLMOD numeric factorization", "CHOLMOD solve"}));
}

TEST(SqrtSparseSchurOptions, FactorizationOptionCheckedAndParsed) {
  Solver::Options o = testing::DirectOptions(DOUBLE_PRECISION);
  std::string error;
  EXPECT_TRUE(o.IsValid(&error)) << error;
  o.reduced_camera_factorization = static_cast<ReducedCameraFactorization>(7);
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_NE(error.find("Solver::Options::reduced_camera_factorization = 7"), std::string::npos) << error;
  const Solver::Summary s = testing::SolveCopy(testing::MakeSyntheticBa(5, 60, 3, 21), o);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message, error);
  ReducedCameraFactorization f = AUTOMATIC_FACTORIZATION;
  EXPECT_TRUE(StringToReducedCameraFactorization("dense", &f));
  EXPECT_EQ(f, DENSE_FACTORIZATION);
  EXPECT_TRUE(StringToReducedCameraFactorization("SPARSE_FACTORIZATION", &f));
  EXPECT_EQ(f, SPARSE_FACTORIZATION);
  EXPECT_TRUE(StringToReducedCameraFactorization("Automatic", &f));
  EXPECT_EQ(f, AUTOMATIC_FACTORIZATION);
  EXPECT_FALSE(StringToReducedCameraFactorization("qr", &f));
  EXPECT_EQ(std::string(ReducedCameraFactorizationToString(DENSE_FACTORIZATION)), "DENSE_FACTORIZATION");
  SqrtLinearSolverType type = CERES_LINEAR_SOLVER;
  EXPECT_TRUE(StringToSqrtLinearSolverType("sqrt_sparse_schur", &type));
  EXPECT_EQ(type, SQRT_SPARSE_SCHUR);
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
  std::function<void(testing::SyntheticBa*, ceres::Problem*, Solver::Options*)> set;
};

std::vector<BadInputCase> BadInputCases() {
  // Points eliminated first (group 0), cameras and intrinsics kept.
  auto points_first = [](testing::SyntheticBa* ba, Solver::Options* o) {
    auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (auto& p : ba->points) ordering->AddElementToGroup(p.data(), 0);
    for (auto& p : ba->poses) ordering->AddElementToGroup(p.data(), 1);
    for (auto& p : ba->intrinsics) ordering->AddElementToGroup(p.data(), 1);
    o->linear_solver_ordering = ordering;
  };
  return {
      {"empty box",
       [](testing::SyntheticBa* ba, ceres::Problem* p, Solver::Options*) {
         p->SetParameterLowerBound(ba->points[3].data(), 1, 2.0);
         p->SetParameterUpperBound(ba->points[3].data(), 1, -2.0);
       }},
      {"two landmarks",
       [points_first](testing::SyntheticBa* ba, ceres::Problem* p, Solver::Options* o) {
         p->AddResidualBlock(new ceres::AutoDiffCostFunction<Between, 3, 3, 3>(new Between),
                             nullptr, ba->points[0].data(), ba->points[1].data());
         points_first(ba, o);
       }},
      {"memory limit",
       [](testing::SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->memory_limit_in_bytes = 1000; }},
      {"num_threads", [](testing::SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->num_threads = 0; }},
      {"min_lm_diagonal",
       [](testing::SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->min_lm_diagonal = 0; }},
      {"dogleg",
       [](testing::SyntheticBa*, ceres::Problem*, Solver::Options* o) {
         o->trust_region_strategy_type = ceres::DOGLEG;
       }},
      {"inner iterations, an ordering that is not an independent set",
       [](testing::SyntheticBa* ba, ceres::Problem*, Solver::Options* o) {
         o->use_inner_iterations = true;
         o->inner_iteration_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
         o->inner_iteration_ordering->AddElementToGroup(ba->poses[0].data(), 2);
         o->inner_iteration_ordering->AddElementToGroup(ba->intrinsics[0].data(), 2);
       }},
      {"inner iterations, a negative tolerance",
       [](testing::SyntheticBa*, ceres::Problem*, Solver::Options* o) {
         o->use_inner_iterations = true;
         o->inner_iteration_tolerance = -1;
       }},
      {"check gradients",
       [](testing::SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->check_gradients = true; }},
      {"null callback",
       [](testing::SyntheticBa*, ceres::Problem*, Solver::Options* o) { o->callbacks.push_back(nullptr); }},
  };
}

// The message with the solver's own name replaced, so that both compare. The
// memory figures differ (SQRT_SPARSE_SCHUR also needs the reduced camera
// matrix and its factorization):
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

TEST(SqrtSparseSchurOptions, BadInputParityWithIterativeSolver) {
  for (const BadInputCase& c : BadInputCases()) {
    std::string messages[2];
    for (int which = 0; which < 2; ++which) {
      testing::SyntheticBa ba = testing::MakeSyntheticBa(5, 60, 3, 21);
      const testing::SyntheticBa original = ba;
      ceres::Problem problem;
      testing::AddReprojectionResiduals(&ba, &problem, nullptr);
      Solver::Options o = testing::DirectOptions(DOUBLE_PRECISION);
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
  Solve(testing::DirectOptions(DOUBLE_PRECISION), nullptr, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_NE(s.message.find("null problem"), std::string::npos);
}

// The preconditioner means nothing to the direct solver: accepted. The
// forcing sequence and the iteration limits are checked as Ceres checks them
// for every linear solver.
TEST(SqrtSparseSchurOptions, PreconditionerIsIrrelevantIterationOptionsAreChecked) {
  const testing::SyntheticBa ba = testing::MakeSyntheticBa(5, 60, 3, 22);
  Solver::Options o = testing::DirectOptions(DOUBLE_PRECISION);
  o.max_num_iterations = 3;
  o.preconditioner_type = ceres::CLUSTER_JACOBI;
  std::string error;
  EXPECT_TRUE(o.IsValid(&error)) << error;
  const Solver::Summary s = testing::SolveCopy(ba, o);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_LT(s.final_cost, s.initial_cost);
  o.preconditioner_type = ceres::SUBSET;
  EXPECT_TRUE(o.IsValid(&error)) << error;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  EXPECT_FALSE(o.IsValid(&error));
  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  o.eta = 0.0;
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_NE(error.find("eta"), std::string::npos) << error;
  o.eta = 0.1;
  o.min_linear_solver_iterations = 10;
  o.max_linear_solver_iterations = 5;
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_NE(error.find("min_linear_solver_iterations"), std::string::npos) << error;
}

}  // namespace
}  // namespace ceres_sqrtba
