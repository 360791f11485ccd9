#include "ceres_sqrtba/internal/direct/visibility_based_preconditioner.h"

#include <algorithm>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

namespace {

ReducedCameraPattern KeptPattern(const ProblemStructure& s, const CameraClusters& clusters,
                                 const ProcessGroup* processes) {
  const auto keep = [&clusters](int c1, int c2) { return clusters.Keeps(c1, c2); };
  return processes != nullptr ? ReducedCameraPattern::Union(s, *processes, keep) : ReducedCameraPattern(s, keep);
}

}  // namespace

VisibilityPreconditionerPlan::VisibilityPreconditionerPlan(const ProblemStructure& s,
                                                           ceres::PreconditionerType type,
                                                           ceres::VisibilityClusteringType clustering,
                                                           const ProcessGroup* processes)
    : type_(type),
      clusters_(ClusterCameras(processes != nullptr ? CameraVisibility(s, *processes) : CameraVisibility(s),
                               clustering, type)),
      factorization_(KeptPattern(s, clusters_, processes), AUTOMATIC_FACTORIZATION) {
  VLOG(1) << ceres::PreconditionerTypeToString(type) << ": " << s.cameras.size() << " cameras in "
          << clusters_.num_clusters << " clusters (" << ceres::VisibilityClusteringTypeToString(clustering)
          << "), " << factorization_.pattern().num_blocks() << " blocks of the reduced camera matrix kept, "
          << (factorization_.dense() ? "dense" : "sparse") << " Cholesky.";
}

template <typename Scalar>
VisibilityBasedPreconditioner<Scalar>::VisibilityBasedPreconditioner(const ProblemStructure& s,
                                                                     const ProjectedBlockLayout& layout,
                                                                     const WorkPartition& partition,
                                                                     const VisibilityPreconditionerPlan& plan,
                                                                     const ProjectedLandmarkBlocks<Scalar>& blocks)
    : plan_(plan),
      blocks_(blocks),
      matrix_(s, layout, plan.factorization().pattern(), partition),
      visitor_(blocks, &matrix_),
      cholesky_(plan.factorization().MakeCholesky(matrix_.col_begin(), matrix_.rows())),
      x_(s.num_camera_parameters) {}

template <typename Scalar>
LinearSolverSummary VisibilityBasedPreconditioner<Scalar>::Update(const double* pose_damping,
                                                                  ParallelContext* context) {
  LinearSolverSummary failed;
  failed.termination = LinearSolverTermination::kFailure;
  failed.message = "Preconditioner update failed.";
  if (!matrix_.Accumulate(blocks_, pose_damping, context)) return failed;
  LinearSolverSummary summary = cholesky_->Factorize(matrix_.values());
  if (summary.termination == LinearSolverTermination::kFailure && plan_.type() == ceres::CLUSTER_TRIDIAGONAL) {
    VLOG(2) << "CLUSTER_TRIDIAGONAL: factorization failed; again with the blocks between clusters halved.";
    HalveBlocksBetweenClusters();
    summary = cholesky_->Factorize(halved_.data());
  }
  if (summary.termination != LinearSolverTermination::kFatalError &&
      summary.termination != LinearSolverTermination::kSuccess) {
    summary = failed;
  }
  return AgreeOnTermination(context->processes(), summary);
}

template <typename Scalar>
void VisibilityBasedPreconditioner<Scalar>::HalveBlocksBetweenClusters() {
  const ReducedCameraPattern& pattern = matrix_.pattern();
  const int64_t* col_begin = matrix_.col_begin();
  halved_.assign(matrix_.values(), matrix_.values() + col_begin[pattern.num_parameters()]);
  for (int c = 0; c < pattern.num_cameras(); ++c) {
    for (int64_t k = pattern.block_begin(c); k < pattern.block_end(c); ++k) {
      const int r = pattern.block_row(k);
      if (!plan_.clusters().Joins(r, c)) continue;
      for (int a = 0; a < pattern.camera_size(c); ++a) {
        double* column = halved_.data() + col_begin[pattern.camera_offset(c) + a] + pattern.position(k);
        for (int i = 0; i < pattern.camera_size(r); ++i) column[i] *= 0.5;
      }
    }
  }
}

template <typename Scalar>
void VisibilityBasedPreconditioner<Scalar>::Multiply(const Scalar* x, Scalar* y) {
  std::copy(x, x + x_.size(), x_.begin());
  cholesky_->Solve(x_.data(), x_.data());
  for (size_t i = 0; i < x_.size(); ++i) y[i] = static_cast<Scalar>(x_[i]);
}

template class VisibilityBasedPreconditioner<float>;
template class VisibilityBasedPreconditioner<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
