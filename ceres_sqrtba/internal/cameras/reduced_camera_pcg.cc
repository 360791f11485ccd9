#include "ceres_sqrtba/internal/cameras/reduced_camera_pcg.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
ReducedCameraPcg<Scalar>::ReducedCameraPcg(const ProblemStructure& s, const WorkPartition& partition,
                                           ceres::PreconditionerType preconditioner, BlockSums sums)
    : pcg_(s.num_camera_parameters),
      damping_squared_double_(s.num_camera_parameters),
      damping_squared_(s.num_camera_parameters),
      rhs_(s.num_camera_parameters),
      solution_(s.num_camera_parameters) {
  if (preconditioner == ceres::SCHUR_JACOBI || preconditioner == ceres::JACOBI) {
    preconditioner_ = std::make_unique<BlockJacobiPreconditioner<Scalar>>(
        s, partition, preconditioner == ceres::SCHUR_JACOBI, sums);
  }
}

template <typename Scalar>
void ReducedCameraPcg<Scalar>::SetPoseDamping(const double* camera_d) {
  for (size_t i = 0; i < damping_squared_double_.size(); ++i) {
    damping_squared_double_[i] = camera_d[i] * camera_d[i];
    damping_squared_[i] = static_cast<Scalar>(damping_squared_double_[i]);
  }
}

template <typename Scalar>
bool ReducedCameraPcg<Scalar>::Solve(LinearOperator<Scalar>* system, const PcgOptions& options,
                                     double* y_cameras, LinearSolverSummary* summary) {
  LinearOperator<Scalar>* preconditioner =
      other_preconditioner_ != nullptr ? other_preconditioner_ : preconditioner_.get();
  *summary = pcg_.Solve(system, preconditioner, rhs_.data(), solution_.data(), options);
  if (summary->termination == LinearSolverTermination::kFailure ||
      summary->termination == LinearSolverTermination::kFatalError) {
    return false;
  }
  for (size_t i = 0; i < solution_.size(); ++i) y_cameras[i] = solution_[i];
  return true;
}

template class ReducedCameraPcg<float>;
template class ReducedCameraPcg<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
