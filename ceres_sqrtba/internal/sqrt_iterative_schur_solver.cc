#include "ceres_sqrtba/internal/sqrt_iterative_schur_solver.h"

#include <algorithm>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
SqrtIterativeSchurSolver<Scalar>::SqrtIterativeSchurSolver(
    const ProblemStructure& s, const LandmarkBlockLayout& layout,
    const WorkPartition& partition, ParallelContext* context,
    const SqrtIterativeSchurOptions& options)
    : s_(s),
      options_(options),
      context_(context),
      landmarks_(s, layout, partition, context),
      system_(s, layout, partition, landmarks_.blocks(), context),
      pcg_(s.num_camera_parameters),
      back_substitution_(s, layout, partition) {
  if (options.preconditioner == ceres::SCHUR_JACOBI || options.preconditioner == ceres::JACOBI) {
    preconditioner_ = std::make_unique<BlockJacobiPreconditioner<Scalar>>(
        s, partition, options.preconditioner == ceres::SCHUR_JACOBI);
  }
  damping_squared_.resize(s.num_camera_parameters);
  damping_squared_double_.resize(s.num_camera_parameters);
  rhs_.resize(s.num_camera_parameters);
  solution_.resize(s.num_camera_parameters);
}

template <typename Scalar>
LinearSolverSummary SqrtIterativeSchurSolver<Scalar>::Solve(const double* d, double eta,
                                                            double* y,
                                                            double* jy_squared_norm) {
  // One pass over the blocks: QR (new Jacobian) or undoing the previous
  // damping (new radius), damping, and, while each block is in cache, its
  // top-row Gram for the preconditioner and its share of the right-hand side.
  const bool visit_top_rows = preconditioner_ != nullptr && preconditioner_->CanVisit();
  struct Visitor : DampedBlockVisitor<Scalar> {
    ReducedCameraSystem<Scalar>* system;
    BlockJacobiPreconditioner<Scalar>* preconditioner;  // nullptr: not visited
    void BeginChunk(int chunk) override {
      system->BeginRhsChunk(chunk);
      if (preconditioner != nullptr) preconditioner->BeginChunk(chunk);
    }
    void Visit(int chunk, int group, const LandmarkBlock<Scalar>& block) override {
      system->AddRhs(chunk, group, block);
      if (preconditioner != nullptr) preconditioner->AddTopRows(chunk, group, block);
    }
  } visitor;
  visitor.system = &system_;
  visitor.preconditioner = visit_top_rows ? preconditioner_.get() : nullptr;
  landmarks_.MarginalizeAndDamp(d, &visitor);
  system_.FinishRhs(rhs_.data());
  // The pose damping lambda D_p^2 enters only the products (paper eq. (cg_mult)).
  const double* dp = d + s_.camera_tangent_begin;
  for (int i = 0; i < s_.num_camera_parameters; ++i) {
    damping_squared_double_[i] = dp[i] * dp[i];
    damping_squared_[i] = static_cast<Scalar>(damping_squared_double_[i]);
  }
  system_.SetDamping(damping_squared_.data());
  if (preconditioner_ != nullptr) {
    preconditioner_->Compute(landmarks_.blocks(), landmarks_.camera_gram(),
                             damping_squared_double_.data(), context_, visit_top_rows);
  }
  LinearSolverSummary summary = pcg_.Solve(&system_, preconditioner_.get(), rhs_.data(),
                                           solution_.data(), options_.ForSolve(eta));
  if (summary.termination == LinearSolverTermination::kFailure ||
      summary.termination == LinearSolverTermination::kFatalError) {
    return summary;
  }

  // Back substitution and the model's |J y|^2, block by block.
  double* y_cameras = y + s_.camera_tangent_begin;
  for (int i = 0; i < s_.num_camera_parameters; ++i) y_cameras[i] = solution_[i];
  *jy_squared_norm = back_substitution_.Run(landmarks_.blocks(), d, y, context_);
  return summary;
}

template class SqrtIterativeSchurSolver<float>;
template class SqrtIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
