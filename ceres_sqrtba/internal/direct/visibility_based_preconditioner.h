// CLUSTER_JACOBI and CLUSTER_TRIDIAGONAL for SQRT_ITERATIVE_SCHUR: Ceres'
// visibility-based preconditioners (Kushal & Agarwal, CVPR 2012), formed in
// square-root form.
//
// The preconditioner is the damped reduced camera matrix
//
//   S = sum_b B^_b^T B^_b + lambda D_p^2,   B^_b = Q^_2^T Jp of landmark b,
//
// (paper eqs. (red_H), (reduced)) restricted to the blocks of camera pairs
// that cameras/visibility_clustering.h keeps: pairs within a cluster
// (CLUSTER_JACOBI), and also pairs across clusters joined in the degree-2
// forest of the cluster graph (CLUSTER_TRIDIAGONAL). It is formed as
// SQRT_SPARSE_SCHUR forms all of S (direct/reduced_camera_matrix.h): in
// double, from W_b = Q1^T Jp taken in the thin QR's pass while each
// landmark's rows are in cache, as the Gram matrix of the marginalized rows
// (Jp^T Jp - W^T W), never as U - W V^-1 W^T; then factored by Cholesky
// (dense or CHOLMOD, whichever needs fewer flops: direct/
// camera_factorization_plan.h) and applied in PCG as x -> S_kept^-1 x, in
// double, whatever the precision of the blocks.
//
// Ceres' rules are kept. CLUSTER_JACOBI's matrix is a block diagonal of
// principal submatrices of S, positive definite with S. CLUSTER_TRIDIAGONAL's
// need not be: when its factorization fails, the blocks between clusters are
// halved and it is factored again (Kushal & Agarwal, Lemma 1: then it is
// positive definite). A factorization that still fails fails the step, as
// Ceres' "Preconditioner update failed.": the trust region shrinks.
//
// Memory: W of every landmark (d doubles per camera column of a landmark
// block, 27 per observation of a 9-parameter camera), the kept blocks of S
// and the factor, counted by the factory against the memory limit with the
// rest (VisibilityPreconditionerPlan::RequiredBytes). Where the clusters are
// large the preconditioner approaches S itself, and so does its cost; the
// measured trade-off against SCHUR_JACOBI is in docs/benchmarks.md.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_VISIBILITY_BASED_PRECONDITIONER_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_VISIBILITY_BASED_PRECONDITIONER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ceres/types.h"
#include "ceres_sqrtba/internal/cameras/linear_operator.h"
#include "ceres_sqrtba/internal/cameras/visibility_clustering.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/camera_cholesky.h"
#include "ceres_sqrtba/internal/direct/camera_factorization_plan.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_matrix.h"
#include "ceres_sqrtba/internal/linear/linear_solver_summary.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"

namespace ceres_sqrtba {
namespace internal {

// What is decided once per solve, before anything large is allocated: the
// clusters, the kept pattern of S and its factorization's plan.
class VisibilityPreconditionerPlan {
 public:
  // processes (optional): a solve spread over processes, whose clusters and
  // kept pattern are those of all their landmarks, the same on each; the
  // kept blocks are then summed over them (ReducedCameraMatrix::Accumulate).
  VisibilityPreconditionerPlan(const ProblemStructure& s, ceres::PreconditionerType type,
                               ceres::VisibilityClusteringType clustering, const ProcessGroup* processes = nullptr);

  ceres::PreconditionerType type() const { return type_; }
  const CameraClusters& clusters() const { return clusters_; }
  const CameraFactorizationPlan& factorization() const { return factorization_; }
  // W, the kept blocks of S and the factorization (double, whatever the
  // blocks' precision), and CLUSTER_TRIDIAGONAL's copy of the kept blocks
  // for its retry.
  int64_t RequiredBytes(const ProblemStructure& s, const WorkPartition& partition) const {
    const int64_t retry = type_ == ceres::CLUSTER_TRIDIAGONAL ? factorization_.pattern().num_nonzeros() * 8 : 0;
    return factorization_.RequiredBytes(s, partition) + retry;
  }

 private:
  ceres::PreconditionerType type_;
  CameraClusters clusters_;
  CameraFactorizationPlan factorization_;
};

template <typename Scalar>
class VisibilityBasedPreconditioner : public LinearOperator<Scalar> {
 public:
  VisibilityBasedPreconditioner(const ProblemStructure& s, const ProjectedBlockLayout& layout,
                                const WorkPartition& partition, const VisibilityPreconditionerPlan& plan,
                                const ProjectedLandmarkBlocks<Scalar>& blocks);

  // For ProjectedLandmarkBlocks::Damp: takes W of every landmark block.
  typename ProjectedLandmarkBlocks<Scalar>::Visitor* visitor() { return &visitor_; }

  // After Damp with visitor(): forms the kept blocks of S with the pose
  // damping D_p (reduced camera vector) and factors them. kFailure when no
  // factorization succeeds (or an entry is not finite): the step fails.
  LinearSolverSummary Update(const double* pose_damping, ParallelContext* context);

  int num_rows() const override { return static_cast<int>(x_.size()); }
  // y = S_kept^-1 x with the last successful factorization.
  void Multiply(const Scalar* x, Scalar* y) override;

  // For tests: the matrix of the last Update (before any halving).
  const ReducedCameraMatrix<Scalar>& matrix() const { return matrix_; }

 private:
  // CLUSTER_TRIDIAGONAL's retry: S_kept with the blocks between clusters
  // halved, into halved_.
  void HalveBlocksBetweenClusters();

  const VisibilityPreconditionerPlan& plan_;
  const ProjectedLandmarkBlocks<Scalar>& blocks_;
  ReducedCameraMatrix<Scalar> matrix_;
  typename ReducedCameraMatrix<Scalar>::RowsVisitor visitor_;
  std::unique_ptr<CameraCholesky> cholesky_;
  std::vector<double> halved_;
  std::vector<double> x_;
};

extern template class VisibilityBasedPreconditioner<float>;
extern template class VisibilityBasedPreconditioner<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_VISIBILITY_BASED_PRECONDITIONER_H_
