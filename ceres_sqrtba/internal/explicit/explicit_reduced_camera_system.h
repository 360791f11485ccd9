// The reduced camera system in square-root form (paper section 5.4):
//
//   H~ x = sum over landmark blocks b of B_b^T (B_b x) + lambda D_p^2 x,
//   b~   = sum over landmark blocks b of B_b^T r^_b,
//
// where B_b are the damped marginalized rows Q^_2^T Jp of block b and r^_b
// their residuals (paper eq. (cg_mult)). Neither H~ nor the Schur complement is
// ever formed: each product streams once through the landmark blocks. The pose
// damping enters only here, as the lambda D_p^2 x term.
//
// Blocks scatter into camera entries that other blocks share, so every chunk
// of the fixed work partition accumulates into its own camera vector and the
// chunk vectors are summed in chunk order: no locks, and the same result for
// any number of threads.
#ifndef CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_REDUCED_CAMERA_SYSTEM_H_
#define CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_REDUCED_CAMERA_SYSTEM_H_

#include <vector>

#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/cameras/pcg.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class ExplicitReducedCameraSystem : public LinearOperator<Scalar> {
 public:
  ExplicitReducedCameraSystem(const ProblemStructure& s, const ExplicitBlockLayout& layout,
                      const WorkPartition& partition, ExplicitLandmarkBlocks<Scalar>* blocks,
                      ParallelContext* context);

  // lambda D_p^2, size num_camera_parameters; the pointer must stay valid.
  void SetDamping(const Scalar* damping_squared) { damping_squared_ = damping_squared; }

  int num_rows() const override { return s_.num_camera_parameters; }
  void Multiply(const Scalar* x, Scalar* y) override;
  void Rhs(Scalar* b);
  // Rhs in pieces, for the damping pass (see DampedBlockVisitor), and what
  // Rhs itself runs: BeginRhsChunk(chunk), AddRhs for each block of the chunk
  // in order, then FinishRhs(b).
  void BeginRhsChunk(int chunk);
  void AddRhs(int chunk, int group, const LandmarkBlock<Scalar>& block);
  void FinishRhs(Scalar* b);

  // Per block: gathers the block's camera entries of the reduced vector x.
  void Gather(int group, const Scalar* x, Scalar* xb) const;
  void ScatterAdd(int group, const Scalar* yb, Scalar* y) const;

 private:
  const ProblemStructure& s_;
  const WorkPartition& partition_;
  ExplicitLandmarkBlocks<Scalar>* blocks_;
  ParallelContext* context_;
  const Scalar* damping_squared_ = nullptr;
  std::vector<int> camera_offset_;  // per entry of group_cameras: reduced offset
  std::vector<int> camera_size_;
  PerChunk<Scalar> accumulators_;  // per chunk: num_camera_parameters
  PerChunk<Scalar> scratch_;       // per chunk: xb, yb (max_cols each), unused rest
  int max_cols_ = 0;
};

extern template class ExplicitReducedCameraSystem<float>;
extern template class ExplicitReducedCameraSystem<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_REDUCED_CAMERA_SYSTEM_H_
