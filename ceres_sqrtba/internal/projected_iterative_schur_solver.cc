#include "ceres_sqrtba/internal/projected_iterative_schur_solver.h"

#include <algorithm>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
ProjectedIterativeSchurSolver<Scalar>::ProjectedIterativeSchurSolver(
    const ProblemStructure& s, const ProjectedBlockLayout& layout, const WorkPartition& partition,
    ParallelContext* context, const SqrtIterativeSchurOptions& options)
    : s_(s),
      options_(options),
      context_(context),
      blocks_(s, layout, partition, context),
      system_(s, partition, &blocks_, context),
      pcg_(s.num_camera_parameters) {
  if (options.preconditioner == ceres::JACOBI) camera_gram_ = std::make_unique<CameraGram>(s, partition);
  if (options.preconditioner == ceres::SCHUR_JACOBI || options.preconditioner == ceres::JACOBI) {
    preconditioner_ = std::make_unique<BlockJacobiPreconditioner<Scalar>>(
        s, partition, options.preconditioner == ceres::SCHUR_JACOBI);
  }
  damping_squared_.resize(s.num_camera_parameters);
  damping_squared_double_.resize(s.num_camera_parameters);
  rhs_double_.resize(s.num_camera_parameters);
  rhs_.resize(s.num_camera_parameters);
  solution_.resize(s.num_camera_parameters);
}

template <typename Scalar>
JacobianWriter* ProjectedIterativeSchurSolver<Scalar>::writer() {
  camera_gram_valid_ = false;
  blocks_.BeginJacobian();
  return &blocks_;
}

template <typename Scalar>
void ProjectedIterativeSchurSolver<Scalar>::EnsureCameraGram() {
  if (camera_gram_valid_) return;
  camera_gram_->ComputeWith(context_, [&](int g, int e, int, int n, double* acc) {
    blocks_.AddCameraGramLower(g, e, n, acc);
  });
  camera_gram_valid_ = true;
}

template <typename Scalar>
void ProjectedIterativeSchurSolver<Scalar>::SquaredColumnNorms(double* norms) {
  std::fill(norms, norms + s_.num_effective_parameters, 0.0);
  blocks_.AddLandmarkColumnNorms(norms);
  blocks_.CameraColumnNorms(norms + s_.camera_tangent_begin);
}

template <typename Scalar>
void ProjectedIterativeSchurSolver<Scalar>::ScaleColumns(const double* scale) {
  blocks_.ScaleColumns(scale);
  if (camera_gram_valid_) camera_gram_->Scale(scale);
}

template <typename Scalar>
LinearSolverSummary ProjectedIterativeSchurSolver<Scalar>::Solve(const double* d, double eta,
                                                                 double* y,
                                                                 double* jy_squared_norm) {
  // SCHUR_JACOBI: each block's share of the preconditioner's camera blocks,
  // Jc^T (I - Q1 Q1^T) Jc, right after its Q1 is computed (same pass, rows in
  // cache) when the per-chunk sums fit; otherwise in a second pass.
  const bool schur = options_.preconditioner == ceres::SCHUR_JACOBI;
  const bool visit = schur && preconditioner_->CanVisit();
  auto reduced_gram = [&](int g, int e, int, int n, double* acc) {
    blocks_.AddReducedGramLower(g, e, n, acc);
  };
  struct Visitor : ProjectedLandmarkBlocks<Scalar>::Visitor {
    BlockJacobiPreconditioner<Scalar>* preconditioner;
    const decltype(reduced_gram)* fn;
    void BeginChunk(int chunk) override { preconditioner->BeginChunk(chunk); }
    void Visit(int chunk, int group) override { preconditioner->AddGroup(chunk, group, *fn); }
  } visitor;
  visitor.preconditioner = preconditioner_.get();
  visitor.fn = &reduced_gram;
  blocks_.Damp(d, rhs_double_.data(), visit ? &visitor : nullptr);
  // The pose damping lambda D_p^2 enters only the products (paper eq. (cg_mult)).
  const double* dp = d + s_.camera_tangent_begin;
  for (int i = 0; i < s_.num_camera_parameters; ++i) {
    rhs_[i] = static_cast<Scalar>(rhs_double_[i]);
    damping_squared_double_[i] = dp[i] * dp[i];
    damping_squared_[i] = static_cast<Scalar>(damping_squared_double_[i]);
  }
  system_.SetDamping(damping_squared_.data());
  if (visit) {
    preconditioner_->FinishReduced(damping_squared_double_.data(), context_);
  } else if (schur) {
    preconditioner_->ComputeReduced(damping_squared_double_.data(), context_, reduced_gram);
  } else if (preconditioner_ != nullptr) {
    // JACOBI: Jc^T Jc + lambda D_c^2.
    EnsureCameraGram();
    preconditioner_->ComputeJacobi(*camera_gram_, damping_squared_double_.data(), context_);
  }
  LinearSolverSummary summary = pcg_.Solve(&system_, preconditioner_.get(), rhs_.data(),
                                           solution_.data(), options_.ForSolve(eta));
  if (summary.termination == LinearSolverTermination::kFailure ||
      summary.termination == LinearSolverTermination::kFatalError) {
    return summary;
  }
  double* y_cameras = y + s_.camera_tangent_begin;
  for (int i = 0; i < s_.num_camera_parameters; ++i) y_cameras[i] = solution_[i];
  *jy_squared_norm = blocks_.BackSubstitute(y);
  return summary;
}

template class ProjectedIterativeSchurSolver<float>;
template class ProjectedIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
