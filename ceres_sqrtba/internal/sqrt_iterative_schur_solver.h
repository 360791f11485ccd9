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
#ifndef CERES_SQRTBA_INTERNAL_SQRT_ITERATIVE_SCHUR_SOLVER_H_
#define CERES_SQRTBA_INTERNAL_SQRT_ITERATIVE_SCHUR_SOLVER_H_

#include <memory>
#include <vector>

#include "ceres/types.h"
#include "ceres_sqrtba/internal/block_jacobi_preconditioner.h"
#include "ceres_sqrtba/internal/landmark_back_substitution.h"
#include "ceres_sqrtba/internal/landmark_blocks.h"
#include "ceres_sqrtba/internal/linear_solver.h"
#include "ceres_sqrtba/internal/marginalized_landmark_blocks.h"
#include "ceres_sqrtba/internal/parallel.h"
#include "ceres_sqrtba/internal/pcg.h"
#include "ceres_sqrtba/internal/reduced_camera_pcg.h"
#include "ceres_sqrtba/internal/reduced_camera_system.h"

namespace ceres_sqrtba {
namespace internal {

struct SqrtIterativeSchurOptions {
  ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI;
  int min_num_iterations = 0;
  int max_num_iterations = 500;

  // PCG's options for one solve with Ceres' forcing parameter eta: Ceres'
  // ITERATIVE_SCHUR stops on the q criterion only.
  PcgOptions ForSolve(double eta) const {
    PcgOptions o;
    o.min_num_iterations = min_num_iterations;
    o.max_num_iterations = max_num_iterations;
    o.q_tolerance = eta;
    o.r_tolerance = -1.0;
    return o;
  }
};

template <typename Scalar>
class SqrtIterativeSchurSolver : public LinearSolver {
 public:
  using Layout = LandmarkBlockLayout;
  SqrtIterativeSchurSolver(const ProblemStructure& s, const LandmarkBlockLayout& layout,
                           const WorkPartition& partition, ParallelContext* context,
                           const SqrtIterativeSchurOptions& options);

  JacobianWriter* writer() override { return landmarks_.writer(); }
  void SquaredColumnNorms(double* norms) override { landmarks_.SquaredColumnNorms(norms); }
  void ScaleColumns(const double* scale) override { landmarks_.ScaleColumns(scale); }
  bool JacobianOutOfRange() const override { return landmarks_.out_of_range(); }
  LinearSolverSummary Solve(const double* d, double eta, double* y,
                            double* jy_squared_norm) override;

  // For tests: the blocks, marginalized and damped as the last Solve left them.
  LandmarkBlocks<Scalar>* blocks() { return landmarks_.blocks(); }
  ReducedCameraSystem<Scalar>* reduced_system() { return &system_; }
  BlockJacobiPreconditioner<Scalar>* preconditioner() { return cameras_.preconditioner(); }

 private:
  const ProblemStructure& s_;
  SqrtIterativeSchurOptions options_;
  ParallelContext* context_;
  MarginalizedLandmarkBlocks<Scalar> landmarks_;
  ReducedCameraSystem<Scalar> system_;
  ReducedCameraPcg<Scalar> cameras_;
  LandmarkBackSubstitution<Scalar> back_substitution_;
};

extern template class SqrtIterativeSchurSolver<float>;
extern template class SqrtIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SQRT_ITERATIVE_SCHUR_SOLVER_H_
