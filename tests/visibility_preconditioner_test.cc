// SQRT_ITERATIVE_SCHUR with CLUSTER_JACOBI and CLUSTER_TRIDIAGONAL (GLOMAP
// sets CLUSTER_TRIDIAGONAL, bundle_adjuster users set either) against
// Ceres' ITERATIVE_SCHUR with the same options.
#include <algorithm>
#include <string>
#include <vector>

#include "ceres_sqrtba/solver.h"
#include "direct_solve.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::MakeSyntheticBa;
using testing::SolveCopy;
using testing::SyntheticBa;

Solver::Options ClusterOptions(ceres::PreconditionerType preconditioner, ceres::VisibilityClusteringType clustering) {
  Solver::Options o;
  o.linear_solver_type = ceres::ITERATIVE_SCHUR;
  o.preconditioner_type = preconditioner;
  o.visibility_clustering_type = clustering;
  o.max_num_iterations = 15;
  o.num_threads = 2;
  o.logging_type = ceres::SILENT;
  return o;
}

struct Config {
  ceres::PreconditionerType preconditioner;
  ceres::VisibilityClusteringType clustering;
};
const Config kConfigs[] = {{ceres::CLUSTER_JACOBI, ceres::CANONICAL_VIEWS},
                           {ceres::CLUSTER_JACOBI, ceres::SINGLE_LINKAGE},
                           {ceres::CLUSTER_TRIDIAGONAL, ceres::CANONICAL_VIEWS},
                           {ceres::CLUSTER_TRIDIAGONAL, ceres::SINGLE_LINKAGE}};

std::string Name(const Config& c) {
  return std::string(ceres::PreconditionerTypeToString(c.preconditioner)) + " " +
         ceres::VisibilityClusteringTypeToString(c.clustering);
}

// The same LM iterates as Ceres' ITERATIVE_SCHUR up to the truncation of
// PCG: the final costs agree to 1e-6 (double) and 1e-4 (single precision),
// the tolerances of iterative counterparts (tests/automatic_solver_test.cc).
TEST(VisibilityPreconditioner, EndsWhereCeresEnds) {
  const SyntheticBa ba = MakeSyntheticBa(16, 400, 4, 301);
  for (const Config& config : kConfigs) {
    SCOPED_TRACE(Name(config));
    Solver::Options o = ClusterOptions(config.preconditioner, config.clustering);
    const Solver::Summary reference = SolveCopy(ba, o);
    ASSERT_TRUE(reference.IsSolutionUsable()) << reference.message;
    for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
      o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
      o.precision = precision;
      std::string error;
      EXPECT_TRUE(o.IsValid(&error)) << error;
      const Solver::Summary s = SolveCopy(ba, o);
      ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
      EXPECT_EQ(s.sqrt_linear_solver_type_used, SQRT_ITERATIVE_SCHUR);
      EXPECT_EQ(s.preconditioner_type_used, config.preconditioner);
      EXPECT_EQ(s.visibility_clustering_type, config.clustering);
      const double tolerance = precision == DOUBLE_PRECISION ? 1e-6 : 1e-4;
      EXPECT_NEAR(s.final_cost, reference.final_cost, tolerance * reference.final_cost);
    }
  }
}

// Every camera sees every point: one cluster, and the preconditioner is the
// whole damped reduced camera matrix S. PCG preconditioned by S^-1 converges
// in one step (the second only confirms it), where SCHUR_JACOBI needs more.
TEST(VisibilityPreconditioner, OneClusterIsTheExactReducedCameraMatrix) {
  const SyntheticBa ba = MakeSyntheticBa(5, 60, 5, 302);
  for (ceres::PreconditionerType type : {ceres::CLUSTER_JACOBI, ceres::CLUSTER_TRIDIAGONAL}) {
    SCOPED_TRACE(ceres::PreconditionerTypeToString(type));
    Solver::Options o = ClusterOptions(type, ceres::SINGLE_LINKAGE);
    o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
    o.eta = 1e-8;
    const Solver::Summary s = SolveCopy(ba, o);
    ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
    ASSERT_GT(s.iterations.size(), 3u);
    for (size_t i = 1; i < s.iterations.size(); ++i) {
      EXPECT_LE(s.iterations[i].linear_solver_iterations, 2) << "iteration " << i;
    }
    o.preconditioner_type = ceres::SCHUR_JACOBI;
    const Solver::Summary jacobi = SolveCopy(ba, o);
    int most = 0;
    for (const auto& it : jacobi.iterations) most = std::max(most, it.linear_solver_iterations);
    EXPECT_GT(most, 4);
  }
}

// The preconditioner's sums run in an order fixed by the problem: the same
// bits for one thread and two.
TEST(VisibilityPreconditioner, SameBitsForAnyNumberOfThreads) {
  const SyntheticBa ba = MakeSyntheticBa(12, 300, 4, 303);
  for (const Config& config : kConfigs) {
    SCOPED_TRACE(Name(config));
    Solver::Options o = ClusterOptions(config.preconditioner, config.clustering);
    o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
    o.num_threads = 1;
    const Solver::Summary one = SolveCopy(ba, o);
    o.num_threads = 2;
    const Solver::Summary two = SolveCopy(ba, o);
    ASSERT_EQ(one.iterations.size(), two.iterations.size());
    for (size_t i = 0; i < one.iterations.size(); ++i) {
      EXPECT_EQ(one.iterations[i].cost, two.iterations[i].cost) << i;
      EXPECT_EQ(one.iterations[i].linear_solver_iterations, two.iterations[i].linear_solver_iterations) << i;
    }
  }
}

// SQRT_AUTOMATIC keeps GLOMAP's CLUSTER_TRIDIAGONAL with ITERATIVE_SCHUR in
// square-root form; the explicit reduced rows cannot form it and say so.
TEST(VisibilityPreconditioner, AutomaticKeepsItExplicitRowsRefuseIt) {
  const SyntheticBa ba = MakeSyntheticBa(8, 150, 4, 304);
  Solver::Options o = ClusterOptions(ceres::CLUSTER_TRIDIAGONAL, ceres::CANONICAL_VIEWS);
  o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  Solver::Summary s = SolveCopy(ba, o);
  ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_EQ(s.sqrt_linear_solver_type_used, SQRT_ITERATIVE_SCHUR);
  EXPECT_EQ(s.preconditioner_type_used, ceres::CLUSTER_TRIDIAGONAL);

  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.use_explicit_reduced_rows = true;
  const std::string refusal =
      "Invalid configuration. Solver::Options::preconditioner_type = CLUSTER_TRIDIAGONAL is not supported by "
      "SQRT_ITERATIVE_SCHUR: with use_explicit_reduced_rows = true use SCHUR_JACOBI, JACOBI or IDENTITY (the "
      "visibility-based preconditioners are formed from the projected rows).";
  std::string error;
  EXPECT_FALSE(o.IsValid(&error));
  EXPECT_EQ(error, refusal);
  s = SolveCopy(ba, o);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message, refusal);
}

}  // namespace
}  // namespace ceres_sqrtba
