// The interface between the trust-region loop and a linear solver, as in
// Ceres: the evaluator writes the Jacobian into the solver's storage (through
// writer()), and the solver then solves the damped linear least-squares
// problem
//
//   y = argmin |J y - r|^2 + |D y|^2        (step = -y, Ceres' convention)
//
// for as many diagonals D as the trust-region loop asks for, without a new
// evaluation. Vectors at this interface are double and in the tangent space of
// the whole problem (ProblemStructure's layout); the solver may work in single
// precision inside.
#ifndef CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_H_
#define CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_H_

#include <limits>

#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/linear/linear_solver_summary.h"

namespace ceres_sqrtba {
namespace internal {

// The largest magnitude a solver's storage in Scalar accepts in the scaled
// Jacobian and the residuals, the same for every storage (explicit and
// projected blocks): beyond it products of two such values overflow in float
// (|v| > sqrt(max) / 16, rounded down to 1e18), and the solver reports
// JacobianOutOfRange. Infinite in double: only single precision checks.
template <typename Scalar>
constexpr double kMaxStorableMagnitude =
    std::numeric_limits<Scalar>::digits < 53 ? 1e18 : std::numeric_limits<double>::infinity();

class LinearSolver {
 public:
  virtual ~LinearSolver() = default;

  // Where the evaluator writes the next Jacobian.
  virtual JacobianWriter* writer() = 0;

  // Squared column norms of the current Jacobian (size num_effective_parameters).
  virtual void SquaredColumnNorms(double* norms) = 0;

  // Scales the columns of the current Jacobian and of every later one.
  virtual void ScaleColumns(const double* scale) = 0;

  // True when the last Jacobian could not be stored faithfully in the
  // solver's precision (single precision overflow): the caller should solve
  // in double precision instead.
  virtual bool JacobianOutOfRange() const { return false; }

  // Solves the damped problem above for the current Jacobian and residuals.
  // d: the diagonal D; eta: Ceres' forcing parameter of the iterative solver.
  // Returns y and |J y|^2 (the model's quadratic term, undamped).
  virtual LinearSolverSummary Solve(const double* d, double eta, double* y,
                                    double* jy_squared_norm) = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_H_
