#include "ceres_sqrtba/internal/projected/projected_reduced_camera_system.h"

#include <algorithm>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
ProjectedReducedCameraSystem<Scalar>::ProjectedReducedCameraSystem(
    const ProblemStructure& s, const WorkPartition& partition,
    const ProjectedLandmarkBlocks<Scalar>* blocks, ParallelContext* context)
    : s_(s),
      partition_(partition),
      blocks_(blocks),
      context_(context),
      accumulators_(partition.num_chunks(), std::max(1, s.num_camera_parameters)),
      scratch_(partition.num_chunks(),
               blocks->layout().max_rows + blocks->layout().max_landmark_size + 1) {}

template <typename Scalar>
void ProjectedReducedCameraSystem<Scalar>::Multiply(const Scalar* x, Scalar* y) {
  const int nc = s_.num_camera_parameters;
  context_->ForChunks(partition_, [&](int chunk, int gb, int ge) {
    Scalar* acc = accumulators_[chunk];
    std::fill(acc, acc + nc, Scalar(0));
    blocks_->MultiplyNormal(gb, ge, x, acc, scratch_[chunk]);
  });
  accumulators_.SumInto(context_, nc, y);
  if (damping_squared_ != nullptr) {
    for (int i = 0; i < nc; ++i) y[i] += damping_squared_[i] * x[i];
  }
}

template class ProjectedReducedCameraSystem<float>;
template class ProjectedReducedCameraSystem<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
