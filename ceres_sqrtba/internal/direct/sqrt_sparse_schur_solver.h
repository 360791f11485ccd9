// SQRT_SPARSE_SCHUR: the direct square-root linear solver (paper section 5.4,
// first paragraph: "we could use dense or sparse QR decomposition of the
// stacked Q_2^T Jp from landmark blocks"). For each damped linear problem
//
//   1. marginalize every landmark block by QR (once per Jacobian) and add the
//      landmark damping with Givens rotations (undoing the previous damping
//      first when only the radius changed), exactly as SQRT_ITERATIVE_SCHUR
//      does, on the same ExplicitLandmarkBlocks;
//   2. stack the damped reduced rows Q^_2^T Jp of all blocks and the pose
//      damping rows sqrt(lambda) D_p into one sparse matrix A, with b the
//      stacked Q^_2^T r (StackedReducedMatrix: pattern built once, values
//      refilled per solve), and solve min |A y_p - b| by SuiteSparseQR in
//      double (SparseQr: symbolic analysis once, numeric factorization per
//      solve). The normal equations are never formed;
//   3. back-substitute the landmark updates and compute |J y|^2 for the model
//      from the blocks (ExplicitBackSubstitution, shared with PCG's solver).
//
// A rejected step changes only lambda: the blocks are re-damped, not
// re-marginalized, and only the values of A are refilled.
//
// The landmark blocks are Scalar (float or double); A, b and the QR are
// double, so the QR's accuracy does not depend on the block precision.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_SQRT_SPARSE_SCHUR_SOLVER_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_SQRT_SPARSE_SCHUR_SOLVER_H_

#include <vector>

#include "ceres_sqrtba/internal/explicit/explicit_back_substitution.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/solvers/linear_solver.h"
#include "ceres_sqrtba/internal/explicit/marginalized_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/sparse_qr.h"
#include "ceres_sqrtba/internal/direct/stacked_reduced_matrix.h"

namespace ceres_sqrtba {
namespace internal {

struct SqrtSparseSchurOptions {
  // AMD(A^T A), i.e. AMD on the pattern of the reduced camera system, as
  // Ceres orders SPARSE_SCHUR's Cholesky factorization. On the BAL problems
  // every ordering leaves R (nearly) dense; AMD needed the same or fewer
  // flops than SuiteSparseQR's default COLAMD (ladybug-49: 1.57e10 both;
  // problem-21: 2.67e9 vs 3.84e9).
  SparseQrOrdering ordering = SparseQrOrdering::kAmd;
};

template <typename Scalar>
class SqrtSparseSchurSolver : public LinearSolver {
 public:
  using Layout = ExplicitBlockLayout;
  SqrtSparseSchurSolver(const ProblemStructure& s, const ExplicitBlockLayout& layout,
                        const WorkPartition& partition, ParallelContext* context,
                        const SqrtSparseSchurOptions& options = SqrtSparseSchurOptions());

  JacobianWriter* writer() override { return landmarks_.writer(); }
  void SquaredColumnNorms(double* norms) override { landmarks_.SquaredColumnNorms(norms); }
  void ScaleColumns(const double* scale) override { landmarks_.ScaleColumns(scale); }
  bool JacobianOutOfRange() const override { return landmarks_.out_of_range(); }
  // eta is irrelevant: the step is exact up to round-off.
  LinearSolverSummary Solve(const double* d, double eta, double* y,
                            double* jy_squared_norm) override;

  // For tests and logs: the blocks and A as the last Solve left them.
  ExplicitLandmarkBlocks<Scalar>* blocks() { return landmarks_.blocks(); }
  const StackedReducedMatrix& matrix() const { return matrix_; }
  const SparseQr& qr() const { return qr_; }

 private:
  const ProblemStructure& s_;
  const WorkPartition& partition_;
  ParallelContext* context_;
  MarginalizedLandmarkBlocks<Scalar> landmarks_;
  StackedReducedMatrix matrix_;
  SparseQr qr_;
  ExplicitBackSubstitution<Scalar> back_substitution_;
  bool logged_statistics_ = false;
};

extern template class SqrtSparseSchurSolver<float>;
extern template class SqrtSparseSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_SQRT_SPARSE_SCHUR_SOLVER_H_
