// SQRT_ITERATIVE_SCHUR on projected landmark blocks (the default storage;
// Solver::Options::use_explicit_reduced_rows selects the explicit blocks of
// ExplicitIterativeSchurSolver). For each damped linear problem
//
//   1. factor every landmark's damped columns [Jl; sqrt(lambda) D_l] by a thin
//      Householder QR (Q1, R^; projected_landmark_blocks.h), and form the
//      reduced right-hand side B^T r^ = Jp^T (r - Q1 Q1^T r) in double,
//   2. solve the reduced camera system by PCG with the block-Jacobi
//      preconditioner (or a visibility-based one, formed from W = Q1^T Jp
//      taken in step 1's pass: direct/visibility_based_preconditioner.h),
//      the product applied as Jp^T (u - Q1 Q1^T u), u = Jp x
//      (paper eq. (cg_mult) with B = Q^_2^T Jp never stored),
//   3. back-substitute y_l = R^-1 Q1^T (r - Jp y_p) and sum |J y|^2 directly.
//
// The steps are those of ExplicitIterativeSchurSolver up to rounding (the same
// Q^, the same B^T B); what changes is the memory a product streams: per
// 2-d observation of a 9-d camera, 24 scalars instead of 18 k for a landmark
// seen k times.
#ifndef CERES_SQRTBA_INTERNAL_SOLVERS_PROJECTED_ITERATIVE_SCHUR_SOLVER_H_
#define CERES_SQRTBA_INTERNAL_SOLVERS_PROJECTED_ITERATIVE_SCHUR_SOLVER_H_

#include <memory>
#include <vector>

#include "ceres_sqrtba/internal/cameras/block_jacobi_preconditioner.h"
#include "ceres_sqrtba/internal/cameras/pcg.h"
#include "ceres_sqrtba/internal/cameras/reduced_camera_pcg.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/visibility_based_preconditioner.h"
#include "ceres_sqrtba/internal/linear/linear_solver.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"
#include "ceres_sqrtba/internal/projected/projected_reduced_camera_system.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class ProjectedIterativeSchurSolver : public LinearSolver {
 public:
  using Layout = ProjectedBlockLayout;
  ProjectedIterativeSchurSolver(const ProblemStructure& s, const ProjectedBlockLayout& layout,
                                const WorkPartition& partition, ParallelContext* context,
                                const IterativeSchurOptions& options);

  JacobianWriter* writer() override;
  void SquaredColumnNorms(double* norms) override;
  void ScaleColumns(const double* scale) override;
  bool JacobianOutOfRange() const override { return blocks_.out_of_range(); }
  LinearSolverSummary Solve(const double* d, double eta, double* y,
                            double* jy_squared_norm) override;

  // For tests.
  ProjectedLandmarkBlocks<Scalar>* blocks() { return &blocks_; }
  ProjectedReducedCameraSystem<Scalar>* reduced_system() { return &system_; }
  BlockJacobiPreconditioner<Scalar>* preconditioner() { return cameras_.preconditioner(); }
  const std::vector<Scalar>& rhs() const { return cameras_.rhs(); }

 private:
  void EnsureCameraGram();

  const ProblemStructure& s_;
  IterativeSchurOptions options_;
  ParallelContext* context_;
  ProjectedLandmarkBlocks<Scalar> blocks_;
  ProjectedReducedCameraSystem<Scalar> system_;
  // Jc^T Jc per camera, for JACOBI only (SCHUR_JACOBI sums its blocks from
  // the projected rows, the column norms are summed directly).
  std::unique_ptr<CameraGram> camera_gram_;
  bool camera_gram_valid_ = false;
  ReducedCameraPcg<Scalar> cameras_;
  // CLUSTER_JACOBI, CLUSTER_TRIDIAGONAL.
  std::unique_ptr<VisibilityBasedPreconditioner<Scalar>> visibility_;
  std::vector<double> rhs_double_;  // B^T r^, summed in double
};

extern template class ProjectedIterativeSchurSolver<float>;
extern template class ProjectedIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVERS_PROJECTED_ITERATIVE_SCHUR_SOLVER_H_
