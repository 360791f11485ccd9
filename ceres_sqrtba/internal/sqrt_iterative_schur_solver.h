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
#include "ceres_sqrtba/internal/parallel.h"
#include "ceres_sqrtba/internal/pcg.h"
#include "ceres_sqrtba/internal/reduced_camera_system.h"

namespace ceres_sqrtba {
namespace internal {

struct SqrtIterativeSchurOptions {
  ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI;
  int min_num_iterations = 0;
  int max_num_iterations = 500;
};

template <typename Scalar>
class SqrtIterativeSchurSolver : public LinearSolver {
 public:
  SqrtIterativeSchurSolver(const ProblemStructure& s, const LandmarkBlockLayout& layout,
                           const WorkPartition& partition, ParallelContext* context,
                           const SqrtIterativeSchurOptions& options);

  JacobianWriter* writer() override;
  void SquaredColumnNorms(double* norms) override;
  void ScaleColumns(const double* scale) override;
  bool JacobianOutOfRange() const override { return blocks_.out_of_range(); }
  LinearSolverSummary Solve(const double* d, double eta, double* y,
                            double* jy_squared_norm) override;

  // For tests: the blocks, marginalized and damped as the last Solve left them.
  LandmarkBlocks<Scalar>* blocks() { return &blocks_; }
  ReducedCameraSystem<Scalar>* reduced_system() { return &system_; }
  BlockJacobiPreconditioner<Scalar>* preconditioner() { return preconditioner_.get(); }

 private:
  void Marginalize();
  void UndoDamping();
  void ApplyDamping(const double* d);

  const ProblemStructure& s_;
  const LandmarkBlockLayout& layout_;
  const WorkPartition& partition_;
  ParallelContext* context_;
  SqrtIterativeSchurOptions options_;
  LandmarkBlocks<Scalar> blocks_;
  ReducedCameraSystem<Scalar> system_;
  std::unique_ptr<BlockJacobiPreconditioner<Scalar>> preconditioner_;
  Pcg<Scalar> pcg_;
  CameraGram camera_gram_;  // Jc^T Jc of the current (scaled) Jacobian
  bool camera_gram_valid_ = false;
  LandmarkBackSubstitution<Scalar> back_substitution_;
  std::vector<double> scale_;
  std::vector<double> damping_squared_double_;  // lambda D_p^2
  std::vector<Scalar> damping_squared_;
  std::vector<Scalar> rhs_, solution_;
  std::vector<Scalar> chunk_scratch_;
  int chunk_scratch_stride_ = 0;
  bool marginalized_ = false;
  bool damped_ = false;
};

extern template class SqrtIterativeSchurSolver<float>;
extern template class SqrtIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SQRT_ITERATIVE_SCHUR_SOLVER_H_
