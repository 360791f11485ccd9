// What the square-root solve hands to its parts: MinimizerOptionsOf and
// LinearSolverOptionsOf copy every field they name from Solver::Options
// (each set here to a value other than its default), and the minimizer's
// defaults are Ceres' Solver::Options defaults. The whole solve is tested
// through the public API (tests/solver_test.cc and the others).
#include "ceres_sqrtba/internal/solve/square_root_solve.h"

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

TEST(MinimizerOptionsOf, CopiesEveryField) {
  Solver::Options options;
  options.max_num_iterations = 7;
  options.max_solver_time_in_seconds = 12.5;
  options.function_tolerance = 1e-3;
  options.gradient_tolerance = 1e-4;
  options.parameter_tolerance = 1e-5;
  options.min_trust_region_radius = 1e-20;
  options.max_num_consecutive_invalid_steps = 9;
  options.min_relative_decrease = 1e-2;
  options.use_nonmonotonic_steps = true;
  options.max_consecutive_nonmonotonic_steps = 4;
  options.eta = 0.25;
  options.jacobi_scaling = false;
  options.initial_trust_region_radius = 3.0;
  options.max_trust_region_radius = 1e8;
  options.min_lm_diagonal = 1e-4;
  options.max_lm_diagonal = 1e20;
  options.line_search_interpolation_type = ceres::QUADRATIC;
  options.line_search_sufficient_function_decrease = 1e-2;
  options.max_line_search_step_contraction = 1e-2;
  options.min_line_search_step_contraction = 0.5;
  options.min_line_search_step_size = 1e-6;
  options.max_num_line_search_step_size_iterations = 11;
  options.inner_iteration_tolerance = 0.125;
  const MinimizerOptions o = MinimizerOptionsOf(options);
  EXPECT_EQ(o.max_num_iterations, 7);
  EXPECT_EQ(o.max_solver_time_in_seconds, 12.5);
  EXPECT_EQ(o.function_tolerance, 1e-3);
  EXPECT_EQ(o.gradient_tolerance, 1e-4);
  EXPECT_EQ(o.parameter_tolerance, 1e-5);
  EXPECT_EQ(o.min_trust_region_radius, 1e-20);
  EXPECT_EQ(o.max_num_consecutive_invalid_steps, 9);
  EXPECT_EQ(o.min_relative_decrease, 1e-2);
  EXPECT_EQ(o.max_consecutive_nonmonotonic_steps, 4);
  EXPECT_EQ(o.eta, 0.25);
  EXPECT_FALSE(o.jacobi_scaling);
  EXPECT_EQ(o.levenberg_marquardt.initial_radius, 3.0);
  EXPECT_EQ(o.levenberg_marquardt.max_radius, 1e8);
  EXPECT_EQ(o.levenberg_marquardt.min_diagonal, 1e-4);
  EXPECT_EQ(o.levenberg_marquardt.max_diagonal, 1e20);
  EXPECT_EQ(o.line_search.interpolation_type, ceres::QUADRATIC);
  EXPECT_EQ(o.line_search.sufficient_decrease, 1e-2);
  EXPECT_EQ(o.line_search.max_step_contraction, 1e-2);
  EXPECT_EQ(o.line_search.min_step_contraction, 0.5);
  EXPECT_EQ(o.line_search.min_step_size, 1e-6);
  EXPECT_EQ(o.line_search.max_num_iterations, 11);
  EXPECT_EQ(o.inner_iteration_tolerance, 0.125);
}

TEST(MinimizerOptionsOf, MonotonicStepsHaveNoNonmonotonicSteps) {
  Solver::Options options;
  options.use_nonmonotonic_steps = false;
  options.max_consecutive_nonmonotonic_steps = 4;
  EXPECT_EQ(MinimizerOptionsOf(options).max_consecutive_nonmonotonic_steps, 0);
}

// The defaults inner iterations run with are Ceres' own.
TEST(MinimizerOptions, DefaultsAreCeresDefaults) {
  const ceres::Solver::Options ceres;
  const MinimizerOptions o;
  EXPECT_EQ(o.max_num_iterations, ceres.max_num_iterations);
  EXPECT_EQ(o.max_solver_time_in_seconds, ceres.max_solver_time_in_seconds);
  EXPECT_EQ(o.function_tolerance, ceres.function_tolerance);
  EXPECT_EQ(o.gradient_tolerance, ceres.gradient_tolerance);
  EXPECT_EQ(o.parameter_tolerance, ceres.parameter_tolerance);
  EXPECT_EQ(o.min_trust_region_radius, ceres.min_trust_region_radius);
  EXPECT_EQ(o.max_num_consecutive_invalid_steps, ceres.max_num_consecutive_invalid_steps);
  EXPECT_EQ(o.min_relative_decrease, ceres.min_relative_decrease);
  EXPECT_EQ(o.max_consecutive_nonmonotonic_steps, ceres.use_nonmonotonic_steps ? ceres.max_consecutive_nonmonotonic_steps : 0);
  EXPECT_EQ(o.eta, ceres.eta);
  EXPECT_EQ(o.jacobi_scaling, ceres.jacobi_scaling);
  EXPECT_EQ(o.levenberg_marquardt.initial_radius, ceres.initial_trust_region_radius);
  EXPECT_EQ(o.levenberg_marquardt.max_radius, ceres.max_trust_region_radius);
  EXPECT_EQ(o.levenberg_marquardt.min_diagonal, ceres.min_lm_diagonal);
  EXPECT_EQ(o.levenberg_marquardt.max_diagonal, ceres.max_lm_diagonal);
  EXPECT_EQ(o.line_search.interpolation_type, ceres.line_search_interpolation_type);
  EXPECT_EQ(o.line_search.sufficient_decrease, ceres.line_search_sufficient_function_decrease);
  EXPECT_EQ(o.line_search.max_step_contraction, ceres.max_line_search_step_contraction);
  EXPECT_EQ(o.line_search.min_step_contraction, ceres.min_line_search_step_contraction);
  EXPECT_EQ(o.line_search.min_step_size, ceres.min_line_search_step_size);
  EXPECT_EQ(o.line_search.max_num_iterations, ceres.max_num_line_search_step_size_iterations);
  EXPECT_EQ(o.inner_iteration_tolerance, ceres.inner_iteration_tolerance);
}

TEST(LinearSolverOptionsOf, CopiesEveryField) {
  Solver::Options options;
  options.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  options.use_explicit_reduced_rows = true;
  options.reduced_camera_factorization = DENSE_FACTORIZATION;
  options.preconditioner_type = ceres::CLUSTER_JACOBI;
  options.visibility_clustering_type = ceres::SINGLE_LINKAGE;
  options.min_linear_solver_iterations = 3;
  options.max_linear_solver_iterations = 77;
  const LinearSolverOptions o = LinearSolverOptionsOf(options);
  EXPECT_EQ(o.sqrt_linear_solver_type, SQRT_SPARSE_SCHUR);
  EXPECT_TRUE(o.use_explicit_reduced_rows);
  EXPECT_EQ(o.reduced_camera_factorization, DENSE_FACTORIZATION);
  EXPECT_EQ(o.preconditioner_type, ceres::CLUSTER_JACOBI);
  EXPECT_EQ(o.visibility_clustering_type, ceres::SINGLE_LINKAGE);
  EXPECT_EQ(o.min_linear_solver_iterations, 3);
  EXPECT_EQ(o.max_linear_solver_iterations, 77);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
