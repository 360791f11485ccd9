// Numerical checks every iterative square-root solver must pass, whatever its
// storage of the marginalized rows (ExplicitIterativeSchurSolver: explicit blocks,
// ProjectedIterativeSchurSolver: projected), each against a dense computation
// in double on the random problems of linear_solver_fixture.h. A test passes
// its fixture type, constructible from a ceres::Problem*.
#ifndef CERES_SQRTBA_TESTS_LINEAR_SOLVER_CHECKS_H_
#define CERES_SQRTBA_TESTS_LINEAR_SOLVER_CHECKS_H_

#include <Eigen/Dense>
#include <string>

#include "ceres_sqrtba/internal/solvers/projected_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/solvers/explicit_iterative_schur_solver.h"
#include "gtest/gtest.h"
#include "linear_solver_fixture.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace testing {

// The n x n matrix of a linear operator, column by column.
template <typename Operator>
Eigen::MatrixXd DenseMatrixOf(Operator* op, int n) {
  Eigen::MatrixXd m(n, n);
  Eigen::VectorXd e(n), col(n);
  for (int i = 0; i < n; ++i) {
    e.setZero();
    e[i] = 1;
    op->Multiply(e.data(), col.data());
    m.col(i) = col;
  }
  return m;
}

// The reduced right-hand side of the last solve.
inline Eigen::VectorXd ReducedRhs(internal::ExplicitIterativeSchurSolver<double>* solver, int n) {
  Eigen::VectorXd b(n);
  solver->reduced_system()->Rhs(b.data());
  return b;
}
inline Eigen::VectorXd ReducedRhs(internal::ProjectedIterativeSchurSolver<double>* solver, int n) {
  return Eigen::Map<const Eigen::VectorXd>(solver->rhs().data(), n);
}

// H and b of the damped problem, and its Schur complement on the cameras.
struct DampedSchur {
  DampedSchur(const Eigen::MatrixXd& j, const Eigen::VectorXd& r, const Eigen::VectorXd& d, int nl) {
    const int np = static_cast<int>(j.cols()) - nl;
    h = j.transpose() * j + Eigen::MatrixXd(d.cwiseAbs2().asDiagonal());
    const Eigen::VectorXd b = j.transpose() * r;
    const Eigen::MatrixXd hll = h.topLeftCorner(nl, nl), hlp = h.topRightCorner(nl, np);
    s = h.bottomRightCorner(np, np) - hlp.transpose() * hll.ldlt().solve(hlp);
    rhs = b.tail(np) - hlp.transpose() * hll.ldlt().solve(b.head(nl));
  }
  Eigen::MatrixXd h, s;
  Eigen::VectorXd rhs;
};

// Paper eqs. (red_H)/(red_b): the reduced system and its right-hand side are
// the Schur complement of the damped problem (1e-10).
template <typename Fixture>
void CheckReducedSystemEqualsDampedSchurComplement() {
  for (const RandomProblemConfig& config : LinearAlgebraConfigs()) {
    auto p = MakeRandomProblem(config);
    Fixture f(p.problem.get());
    const int n = f.s.num_effective_parameters, np = f.s.num_camera_parameters;
    const Eigen::VectorXd d = RandomDiagonal(n, config.seed);
    Eigen::VectorXd y(n);
    double jy;
    f.solver->Solve(d.data(), 1e-12, y.data(), &jy);
    const DampedSchur dense(f.j, f.r, d, f.s.camera_tangent_begin);
    const Eigen::MatrixXd s = DenseMatrixOf(f.solver->reduced_system(), np);
    const Eigen::VectorXd b = ReducedRhs(f.solver.get(), np);
    EXPECT_LT((s - dense.s).norm() / dense.s.norm(), 1e-10) << "seed " << config.seed;
    EXPECT_LT((b - dense.rhs).norm() / dense.rhs.norm(), 1e-10) << "seed " << config.seed;
  }
}

// SCHUR_JACOBI is the inverse of the camera blocks of the damped Schur
// complement (JACOBI: of J^T J + D^2), as Ceres computes it (1e-10).
template <typename Fixture>
void CheckPreconditionerInvertsDiagonalBlocks(bool schur) {
  for (const RandomProblemConfig& config : LinearAlgebraConfigs()) {
    auto p = MakeRandomProblem(config);
    internal::IterativeSchurOptions options = Fixture::Options();
    options.preconditioner = schur ? ceres::SCHUR_JACOBI : ceres::JACOBI;
    Fixture f(p.problem.get(), options);
    const internal::ProblemStructure& s = f.s;
    const int n = s.num_effective_parameters, nl = s.camera_tangent_begin, np = s.num_camera_parameters;
    const Eigen::VectorXd d = RandomDiagonal(n, config.seed + 20);
    Eigen::VectorXd y(n);
    double jy;
    f.solver->Solve(d.data(), 0.1, y.data(), &jy);
    const DampedSchur dense(f.j, f.r, d, nl);
    const Eigen::MatrixXd blocks = schur ? dense.s : Eigen::MatrixXd(dense.h.bottomRightCorner(np, np));
    Eigen::MatrixXd block_diagonal = Eigen::MatrixXd::Zero(np, np);
    for (int c : s.cameras) {
      const internal::ParameterBlockInfo& pb = s.parameter_blocks[c];
      const int o = pb.tangent_offset - nl;
      block_diagonal.block(o, o, pb.tangent_size, pb.tangent_size) =
          blocks.block(o, o, pb.tangent_size, pb.tangent_size).inverse();
    }
    const Eigen::MatrixXd m = DenseMatrixOf(f.solver->preconditioner(), np);
    EXPECT_LT((m - block_diagonal).norm() / block_diagonal.norm(), 1e-10)
        << (schur ? "SCHUR_JACOBI" : "JACOBI") << ", seed " << config.seed;
  }
}

// The step solves (J^T J + D^2) y = J^T r and |J y|^2 is reported for the
// model; then again for a smaller diagonal on the same Jacobian, as after a
// rejected step (the solver reuses the marginalization).
template <typename Fixture>
void CheckStep(double tolerance) {
  for (const RandomProblemConfig& config : LinearAlgebraConfigs()) {
    auto p = MakeRandomProblem(config);
    Fixture f(p.problem.get());
    const int n = f.s.num_effective_parameters;
    for (double factor : {1.0, 0.25}) {
      const Eigen::VectorXd d = factor * RandomDiagonal(n, config.seed + 10);
      Eigen::VectorXd y(n);
      double jy = 0;
      const internal::LinearSolverSummary summary = f.solver->Solve(d.data(), 1e-14, y.data(), &jy);
      EXPECT_NE(summary.termination, internal::LinearSolverTermination::kFailure) << summary.message;
      ExpectDenseStep(f.j, f.r, d, y, jy, tolerance,
                      "seed " + std::to_string(config.seed) + " factor " + std::to_string(factor));
    }
  }
}

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_LINEAR_SOLVER_CHECKS_H_
