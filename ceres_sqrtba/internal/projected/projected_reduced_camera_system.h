// The reduced camera system of SQRT_ITERATIVE_SCHUR over projected landmark
// blocks (projected_landmark_blocks.h):
//
//   H~ x = sum over landmarks of Jp^T (I - Q1 Q1^T) Jp x + lambda D_p^2 x,
//
// the same operator as ExplicitReducedCameraSystem's sum of B^T B x (paper eq.
// (cg_mult)), applied without the explicit rows B. As there, every chunk of
// the fixed work partition accumulates into its own camera vector and the
// chunk vectors are summed in chunk order: no locks, and the same result for
// any number of threads.
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_REDUCED_CAMERA_SYSTEM_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_REDUCED_CAMERA_SYSTEM_H_

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/cameras/pcg.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class ProjectedReducedCameraSystem : public LinearOperator<Scalar> {
 public:
  ProjectedReducedCameraSystem(const ProblemStructure& s, const WorkPartition& partition,
                               const ProjectedLandmarkBlocks<Scalar>* blocks,
                               ParallelContext* context);

  // lambda D_p^2, size num_camera_parameters; the pointer must stay valid.
  void SetDamping(const Scalar* damping_squared) { damping_squared_ = damping_squared; }

  int num_rows() const override { return s_.num_camera_parameters; }
  void Multiply(const Scalar* x, Scalar* y) override;

 private:
  const ProblemStructure& s_;
  const WorkPartition& partition_;
  const ProjectedLandmarkBlocks<Scalar>* blocks_;
  ParallelContext* context_;
  const Scalar* damping_squared_ = nullptr;
  PerChunk<Scalar> accumulators_;  // per chunk: num_camera_parameters
  PerChunk<Scalar> scratch_;       // per chunk: Jp x of one landmark, Q1^T Jp x
};

extern template class ProjectedReducedCameraSystem<float>;
extern template class ProjectedReducedCameraSystem<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_REDUCED_CAMERA_SYSTEM_H_
