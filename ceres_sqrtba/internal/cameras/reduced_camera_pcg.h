// The camera half of one SQRT_ITERATIVE_SCHUR step, the same for both
// storages of the landmark blocks (explicit rows: ExplicitIterativeSchurSolver,
// projected rows: ProjectedIterativeSchurSolver):
//
//   - the pose damping lambda D_p^2, which is not part of the marginalized
//     rows but enters only the products H~ x = B^T B x + lambda D_p^2 x (paper
//     eq. (cg_mult)): kept in double for the preconditioner's blocks and in
//     Scalar for the products;
//   - the block-Jacobi preconditioner selected by the options (SCHUR_JACOBI or
//     JACOBI; IDENTITY has none), whose blocks each solver fills from its own
//     storage;
//   - PCG in Scalar on the reduced right-hand side, and the camera part of the
//     step copied out in double, ready for back substitution.
#ifndef CERES_SQRTBA_INTERNAL_CAMERAS_REDUCED_CAMERA_PCG_H_
#define CERES_SQRTBA_INTERNAL_CAMERAS_REDUCED_CAMERA_PCG_H_

#include <memory>
#include <vector>

#include "ceres/types.h"
#include "ceres_sqrtba/internal/cameras/block_jacobi_preconditioner.h"
#include "ceres_sqrtba/internal/cameras/pcg.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/linear/linear_solver_summary.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class VisibilityPreconditionerPlan;

// The options of the iterative square-root solvers, from Solver::Options.
struct IterativeSchurOptions {
  ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI;
  // CLUSTER_JACOBI, CLUSTER_TRIDIAGONAL: the clusters and the plan of the
  // preconditioner's matrix, made once per solve by the factory
  // (direct/visibility_based_preconditioner.h).
  const VisibilityPreconditionerPlan* visibility = nullptr;
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
class ReducedCameraPcg {
 public:
  // sums: where SCHUR_JACOBI's per-chunk block sums run
  // (block_jacobi_preconditioner.h).
  ReducedCameraPcg(const ProblemStructure& s, const WorkPartition& partition,
                   ceres::PreconditionerType preconditioner, BlockSums sums = BlockSums::kInDouble);

  // lambda D_p^2 from the camera part of the damping vector D (size
  // num_camera_parameters). Call before the preconditioner is computed.
  void SetPoseDamping(const double* camera_d);
  const double* damping_squared_double() const { return damping_squared_double_.data(); }
  // Stays valid for the solver's lifetime: give it to the system's SetDamping.
  const Scalar* damping_squared() const { return damping_squared_.data(); }

  // nullptr for IDENTITY and the visibility-based preconditioners, which
  // the solver owns and hands over with SetPreconditioner.
  BlockJacobiPreconditioner<Scalar>* preconditioner() { return preconditioner_.get(); }
  void SetPreconditioner(LinearOperator<Scalar>* preconditioner) { other_preconditioner_ = preconditioner; }
  // The reduced right-hand side B^T r^, filled by the solver before Solve.
  std::vector<Scalar>& rhs() { return rhs_; }
  const std::vector<Scalar>& rhs() const { return rhs_; }

  // PCG on system x = rhs(). Unless it failed (kFailure or kFatalError, the
  // summary says which), writes x to y_cameras in double and returns true.
  bool Solve(LinearOperator<Scalar>* system, const PcgOptions& options, double* y_cameras,
             LinearSolverSummary* summary);

 private:
  std::unique_ptr<BlockJacobiPreconditioner<Scalar>> preconditioner_;
  LinearOperator<Scalar>* other_preconditioner_ = nullptr;
  Pcg<Scalar> pcg_;
  std::vector<double> damping_squared_double_;
  std::vector<Scalar> damping_squared_;
  std::vector<Scalar> rhs_, solution_;
};

extern template class ReducedCameraPcg<float>;
extern template class ReducedCameraPcg<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERAS_REDUCED_CAMERA_PCG_H_
