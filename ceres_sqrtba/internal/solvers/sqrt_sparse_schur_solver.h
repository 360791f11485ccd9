// SQRT_SPARSE_SCHUR: the direct square-root linear solver. For each damped
// linear problem (paper section 5.4, with the reduced camera matrix formed
// from the marginalized rows instead of stacking them for a sparse QR):
//
//   1. every landmark's damped columns [Jl; sqrt(lambda) D_l] are factored
//      by a thin Householder QR (Q1, R^; projected_landmark_blocks.h, as
//      SQRT_ITERATIVE_SCHUR does), which also gives the reduced right-hand
//      side sum_b B^_b^T r^_b; while each landmark's rows are in cache its
//      W_b = Q1^T Jp is taken in double;
//   2. S = sum_b B^_b^T B^_b + lambda D_p^2 = sum_b (Jp^T Jp - W_b^T W_b) +
//      lambda D_p^2 is accumulated in double per camera pair
//      (reduced_camera_matrix.h): positive semi-definite by construction,
//      never U - W V^-1 W^T, nothing inverts Jl^T Jl;
//   3. S = L L^T by a dense LLT (small camera systems) or CHOLMOD's
//      supernodal Cholesky (camera_cholesky.h, chosen by
//      camera_factorization_plan.h), and y_p = S^-1 b^;
//   4. y_l = R^-1 Q1^T (r - Jp y_p) and |J y|^2 from the blocks
//      (ProjectedLandmarkBlocks::BackSubstitute, as the iterative solver).
//
// A rejected step changes only lambda: the next Solve repeats 1-4 on the
// same Jacobian (new thin QRs, S, numeric factorization), with no
// re-evaluation and no new symbolic analysis. A Cholesky that fails (S not
// numerically positive definite) is a failed step (kFailure): the radius
// shrinks, as after Ceres' "not positive definite".
//
// The landmark blocks are Scalar (float or double); W, S, the right-hand
// side and the Cholesky are double.
//
// Spread over processes (process_group.h): each process holds its own
// landmarks' blocks; S (on the union of the processes' patterns,
// ReducedCameraPattern::Union), the right-hand side and |J y|^2 are summed
// over the processes in rank order, and every process factors the same S
// and solves for the same camera step (the Cholesky is replicated, not
// distributed: S's n^2 / 2 doubles at most, n the camera parameters), then
// back-substitutes its own landmarks.
#ifndef CERES_SQRTBA_INTERNAL_SOLVERS_SQRT_SPARSE_SCHUR_SOLVER_H_
#define CERES_SQRTBA_INTERNAL_SOLVERS_SQRT_SPARSE_SCHUR_SOLVER_H_

#include <memory>
#include <vector>

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/camera_cholesky.h"
#include "ceres_sqrtba/internal/direct/camera_factorization_plan.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_matrix.h"
#include "ceres_sqrtba/internal/linear/linear_solver.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class SqrtSparseSchurSolver : public LinearSolver {
 public:
  using Layout = ProjectedBlockLayout;
  SqrtSparseSchurSolver(const ProblemStructure& s, const ProjectedBlockLayout& layout,
                        const WorkPartition& partition, ParallelContext* context,
                        const CameraFactorizationPlan& plan);

  JacobianWriter* writer() override;
  void SquaredColumnNorms(double* norms) override { blocks_.SquaredColumnNorms(norms); }
  void ScaleColumns(const double* scale) override { blocks_.ScaleColumns(scale); }
  bool JacobianOutOfRange() const override { return blocks_.out_of_range(); }
  // eta is irrelevant: the step is exact up to rounding.
  LinearSolverSummary Solve(const double* d, double eta, double* y, double* jy_squared_norm) override;

  // For tests and logs: what the last Solve left.
  const ReducedCameraMatrix<Scalar>& matrix() const { return matrix_; }
  const std::vector<double>& rhs() const { return rhs_; }
  CameraCholesky* cholesky() { return cholesky_.get(); }

 private:
  const ProblemStructure& s_;
  ParallelContext* context_;
  ProjectedLandmarkBlocks<Scalar> blocks_;
  ReducedCameraMatrix<Scalar> matrix_;
  std::unique_ptr<CameraCholesky> cholesky_;
  std::vector<double> rhs_;  // sum_b B^_b^T r^_b
  bool logged_statistics_ = false;
};

extern template class SqrtSparseSchurSolver<float>;
extern template class SqrtSparseSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVERS_SQRT_SPARSE_SCHUR_SOLVER_H_
