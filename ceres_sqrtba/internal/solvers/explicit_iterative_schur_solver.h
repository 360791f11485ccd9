// SQRT_ITERATIVE_SCHUR: the square-root linear solver (paper sections 4.2 and
// 5). For each damped linear problem
//
//   1. marginalize every landmark block by QR (once per Jacobian),
//   2. add the landmark damping with Givens rotations (undoing the previous
//      damping first when only the radius changed),
//   3. solve the reduced camera system by PCG, with the block-Jacobi
//      preconditioner, never forming the Schur complement,
//   4. back-substitute the landmark updates block by block, and accumulate
//      |J y|^2 for the trust-region model from the same blocks:
//      per block |J_b y|^2 = |Q^_1^T r|^2 + |B_b y_p|^2 - lambda |D_l y_l|^2,
//      because Q^ is orthogonal and back substitution makes the top rows
//      exactly reproduce Q^_1^T r.
//
// All linear algebra runs in Scalar (float or double); the interface is double.
#ifndef CERES_SQRTBA_INTERNAL_SOLVERS_EXPLICIT_ITERATIVE_SCHUR_SOLVER_H_
#define CERES_SQRTBA_INTERNAL_SOLVERS_EXPLICIT_ITERATIVE_SCHUR_SOLVER_H_

#include <memory>
#include <vector>

#include "ceres_sqrtba/internal/cameras/block_jacobi_preconditioner.h"
#include "ceres_sqrtba/internal/cameras/pcg.h"
#include "ceres_sqrtba/internal/cameras/reduced_camera_pcg.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/explicit/explicit_back_substitution.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/explicit/explicit_reduced_camera_system.h"
#include "ceres_sqrtba/internal/explicit/marginalized_landmark_blocks.h"
#include "ceres_sqrtba/internal/linear/linear_solver.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class ExplicitIterativeSchurSolver : public LinearSolver {
 public:
  using Layout = ExplicitBlockLayout;
  ExplicitIterativeSchurSolver(const ProblemStructure& s, const ExplicitBlockLayout& layout,
                           const WorkPartition& partition, ParallelContext* context,
                           const IterativeSchurOptions& options);

  JacobianWriter* writer() override { return landmarks_.writer(); }
  void SquaredColumnNorms(double* norms) override { landmarks_.SquaredColumnNorms(norms); }
  void ScaleColumns(const double* scale) override { landmarks_.ScaleColumns(scale); }
  bool JacobianOutOfRange() const override { return landmarks_.out_of_range(); }
  LinearSolverSummary Solve(const double* d, double eta, double* y,
                            double* jy_squared_norm) override;

  // For tests: the blocks, marginalized and damped as the last Solve left them.
  ExplicitLandmarkBlocks<Scalar>* blocks() { return landmarks_.blocks(); }
  ExplicitReducedCameraSystem<Scalar>* reduced_system() { return &system_; }
  BlockJacobiPreconditioner<Scalar>* preconditioner() { return cameras_.preconditioner(); }

 private:
  const ProblemStructure& s_;
  IterativeSchurOptions options_;
  ParallelContext* context_;
  MarginalizedLandmarkBlocks<Scalar> landmarks_;
  ExplicitReducedCameraSystem<Scalar> system_;
  ReducedCameraPcg<Scalar> cameras_;
  ExplicitBackSubstitution<Scalar> back_substitution_;
};

extern template class ExplicitIterativeSchurSolver<float>;
extern template class ExplicitIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVERS_EXPLICIT_ITERATIVE_SCHUR_SOLVER_H_
