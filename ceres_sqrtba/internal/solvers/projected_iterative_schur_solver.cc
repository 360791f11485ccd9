#include "ceres_sqrtba/internal/solvers/projected_iterative_schur_solver.h"

#include <algorithm>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
ProjectedIterativeSchurSolver<Scalar>::ProjectedIterativeSchurSolver(
    const ProblemStructure& s, const ProjectedBlockLayout& layout, const WorkPartition& partition,
    ParallelContext* context, const IterativeSchurOptions& options)
    : s_(s),
      options_(options),
      context_(context),
      blocks_(s, layout, partition, context),
      system_(s, partition, &blocks_, context),
      cameras_(s, partition, options.preconditioner, BlockSums::kInScalar),
      rhs_double_(s.num_camera_parameters) {
  if (options.preconditioner == ceres::JACOBI) camera_gram_ = std::make_unique<CameraGram>(s, partition);
  if (options.visibility != nullptr) {
    visibility_ = std::make_unique<VisibilityBasedPreconditioner<Scalar>>(s, layout, partition,
                                                                          *options.visibility, blocks_);
    cameras_.SetPreconditioner(visibility_.get());
  }
  system_.SetDamping(cameras_.damping_squared());
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
  blocks_.SquaredColumnNorms(norms);
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
  BlockJacobiPreconditioner<Scalar>* preconditioner = cameras_.preconditioner();
  const bool visit = schur && preconditioner->CanVisit();
  // The sums in Scalar: positive semidefinite terms (block_jacobi_preconditioner.h).
  auto reduced_gram = [&](int g, int e, int, int n, Scalar* acc) {
    blocks_.AddReducedGramLower(g, e, n, acc);
  };
  struct Visitor : ProjectedLandmarkBlocks<Scalar>::Visitor {
    BlockJacobiPreconditioner<Scalar>* preconditioner;
    const decltype(reduced_gram)* fn;
    bool UsesQ1() const override { return false; }  // reads the hot rows
    void BeginChunk(int chunk) override { preconditioner->BeginChunk(chunk); }
    void Visit(int chunk, int group, const double*) override {
      preconditioner->AddGroup(chunk, group, *fn);
    }
  } visitor;
  visitor.preconditioner = preconditioner;
  visitor.fn = &reduced_gram;
  blocks_.Damp(d, rhs_double_.data(),
               visibility_ != nullptr ? visibility_->visitor() : visit ? &visitor : nullptr);
  std::vector<Scalar>& rhs = cameras_.rhs();
  for (size_t i = 0; i < rhs.size(); ++i) rhs[i] = static_cast<Scalar>(rhs_double_[i]);
  cameras_.SetPoseDamping(d + s_.camera_tangent_begin);
  if (visit) {
    preconditioner->FinishSums(context_);
    preconditioner->Invert(nullptr, cameras_.damping_squared_double(), context_);
  } else if (schur) {
    preconditioner->SumBlocks(context_, reduced_gram);
    preconditioner->Invert(nullptr, cameras_.damping_squared_double(), context_);
  } else if (preconditioner != nullptr) {
    // JACOBI: Jc^T Jc + lambda D_c^2.
    EnsureCameraGram();
    preconditioner->Invert(camera_gram_.get(), cameras_.damping_squared_double(), context_);
  } else if (visibility_ != nullptr) {
    const LinearSolverSummary update = visibility_->Update(d + s_.camera_tangent_begin, context_);
    if (update.termination != LinearSolverTermination::kSuccess) return update;
  }
  LinearSolverSummary summary;
  if (cameras_.Solve(&system_, options_.ForSolve(eta), y + s_.camera_tangent_begin, &summary)) {
    *jy_squared_norm = blocks_.BackSubstitute(y);
    if (context_->processes() != nullptr) context_->processes()->Sum(jy_squared_norm, 1);
  }
  return summary;
}

template class ProjectedIterativeSchurSolver<float>;
template class ProjectedIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
