// What the linear-solver tests share: a square-root linear solver set up on a
// problem's first Jacobian next to a dense copy of the same Jacobian (for
// dense reference computations in double), random LM diagonals, and the
// random BA-shaped problems every solver is checked on.
#ifndef CERES_SQRTBA_TESTS_LINEAR_SOLVER_FIXTURE_H_
#define CERES_SQRTBA_TESTS_LINEAR_SOLVER_FIXTURE_H_

#include <Eigen/Core>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"
#include "dense_jacobian_writer.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace testing {


// The block layout a solver is constructed with (SolverT::Layout).
template <typename Layout>
std::unique_ptr<Layout> MakeLayout(const internal::ProblemStructure& s);
template <>
inline std::unique_ptr<internal::ExplicitBlockLayout> MakeLayout(const internal::ProblemStructure& s) {
  return std::make_unique<internal::ExplicitBlockLayout>(s);
}
template <>
inline std::unique_ptr<internal::ProjectedBlockLayout> MakeLayout(const internal::ProblemStructure& s) {
  return std::make_unique<internal::ProjectedBlockLayout>(s);
}

// Everything needed to run a linear solver (ExplicitIterativeSchurSolver<Scalar>,
// SqrtSparseSchurSolver<Scalar>, ProjectedIterativeSchurSolver<Scalar>,
// constructed from (structure, layout of type SolverT::Layout,
// partition, context, solver_options)) on the problem's Jacobian at its
// current values; j and r are the same Jacobian and residuals, dense.
template <typename SolverT>
struct LinearSolverFixture {
  template <typename SolverOptions>
  LinearSolverFixture(ceres::Problem* problem, const SolverOptions& solver_options,
                      int num_threads = 1)
      : context(num_threads) {
    std::string error;
    EXPECT_EQ(internal::BuildProblemStructure(*problem, nullptr, &s, &error), internal::StructureStatus::kOk) << error;
    layout = MakeLayout<typename SolverT::Layout>(s);
    partition = internal::WorkPartition(static_cast<int>(s.groups.size()), layout->work, 4, 1);
    evaluator = std::make_unique<internal::Evaluator>(s, partition, &context);
    solver = std::make_unique<SolverT>(s, *layout, partition, &context, solver_options);
    x = internal::StateFromUser(s);
    DenseJacobianWriter dense(s);
    double cost;
    Eigen::VectorXd g(s.num_effective_parameters);
    EXPECT_TRUE(evaluator->EvaluateJacobian(x.data(), true, &cost, g.data(), &dense));
    j = dense.j;
    r = dense.r;
    EXPECT_TRUE(evaluator->EvaluateJacobian(x.data(), true, &cost, g.data(), solver->writer()));
  }
  internal::ParallelContext context;
  internal::ProblemStructure s;
  std::unique_ptr<typename SolverT::Layout> layout;
  internal::WorkPartition partition;
  std::unique_ptr<internal::Evaluator> evaluator;
  std::unique_ptr<SolverT> solver;
  std::vector<double> x;
  Eigen::MatrixXd j;
  Eigen::VectorXd r;
};

// A diagonal D with entries in [0.1, 2).
inline Eigen::VectorXd RandomDiagonal(int n, unsigned seed) {
  std::mt19937 rng(seed);
  ::ceres_sqrtba::testing::UniformRealDistribution u(0.1, 2.0);
  Eigen::VectorXd d(n);
  for (int i = 0; i < n; ++i) d[i] = u(rng);
  return d;
}

// A solver's step y and |J y|^2 against a dense solve of the damped normal
// equations (J^T J + D^2) y = J^T r of the same Jacobian.
inline void ExpectDenseStep(const Eigen::MatrixXd& j, const Eigen::VectorXd& r,
                            const Eigen::VectorXd& d, const Eigen::VectorXd& y, double jy,
                            double tolerance, const std::string& context) {
  const Eigen::MatrixXd h = j.transpose() * j + Eigen::MatrixXd(d.cwiseAbs2().asDiagonal());
  const Eigen::VectorXd y_dense = h.ldlt().solve(j.transpose() * r);
  EXPECT_LT((y - y_dense).norm() / y_dense.norm(), tolerance) << context;
  const double jy_dense = (j * y_dense).squaredNorm();
  EXPECT_NEAR(jy, jy_dense, tolerance * jy_dense) << context;
}

// Random linear BA-shaped problems covering the structures a solver must
// handle.
inline std::vector<RandomProblemConfig> LinearAlgebraConfigs() {
  std::vector<RandomProblemConfig> configs;
  RandomProblemConfig c;
  configs.push_back(c);  // 3-d landmarks, 6-d cameras, 2-d residuals
  c.landmark_sizes = {1, 2, 3, 4};
  c.seed = 2;
  configs.push_back(c);  // mixed landmark sizes
  c = RandomProblemConfig();
  c.intrinsics_size = 3;
  c.seed = 3;
  configs.push_back(c);  // pose + shared intrinsics blocks
  c = RandomProblemConfig();
  c.repeat_camera = true;
  c.single_observation = true;
  c.residual_size = 3;
  c.seed = 4;
  configs.push_back(c);  // seen twice by one camera, seen once, 3-d residuals
  c = RandomProblemConfig();
  c.camera_size = 9;
  c.num_cameras = 8;
  c.num_landmarks = 40;
  c.max_observations = 6;
  c.seed = 5;
  configs.push_back(c);  // BAL's shape: 2-d residuals, 9-d cameras, 3-d landmarks
  return configs;
}

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_LINEAR_SOLVER_FIXTURE_H_
