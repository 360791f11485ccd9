// The landmark blocks of the current Jacobian through their life cycle, shared
// by both square-root linear solvers (PCG and sparse QR):
//
//   written by the evaluator (raw) -> column-scaled -> marginalized by QR once
//   per Jacobian -> damped for one radius -> undamped and damped again for the
//   next radius (a rejected step: no new evaluation, no new QR).
//
// It also keeps the camera Gram matrices Jc^T Jc of the current Jacobian,
// computed once from the raw blocks: their diagonals are the camera column
// norms that LM's damping needs, and the preconditioner starts from them.
#ifndef CERES_SQRTBA_INTERNAL_MARGINALIZED_LANDMARK_BLOCKS_H_
#define CERES_SQRTBA_INTERNAL_MARGINALIZED_LANDMARK_BLOCKS_H_

#include <vector>

#include "ceres_sqrtba/internal/block_jacobi_preconditioner.h"
#include "ceres_sqrtba/internal/evaluator.h"
#include "ceres_sqrtba/internal/landmark_blocks.h"
#include "ceres_sqrtba/internal/parallel.h"
#include "ceres_sqrtba/internal/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class MarginalizedLandmarkBlocks {
 public:
  MarginalizedLandmarkBlocks(const ProblemStructure& s, const LandmarkBlockLayout& layout,
                             const WorkPartition& partition, ParallelContext* context);

  // Where the evaluator writes the next Jacobian; the current one is dropped.
  JacobianWriter* writer();
  // Squared column norms of the current Jacobian (LinearSolver's contract).
  void SquaredColumnNorms(double* norms);
  // Scales the current Jacobian's columns, and every later one's as written.
  void ScaleColumns(const double* scale);
  bool out_of_range() const { return blocks_.out_of_range(); }

  // Marginalizes the landmarks (once per Jacobian) and applies the landmark
  // part of the damping diagonal d (full tangent layout), undoing the previous
  // damping first. Afterwards blocks() holds the damped marginalized blocks.
  void MarginalizeAndDamp(const double* d);

  LandmarkBlocks<Scalar>* blocks() { return &blocks_; }
  // Jc^T Jc of the current (scaled) Jacobian; valid after MarginalizeAndDamp.
  const CameraGram& camera_gram() const { return camera_gram_; }

 private:
  void EnsureCameraGram();
  void Marginalize();
  void UndoDamping();
  Scalar* scratch(int chunk) {
    return chunk_scratch_.data() + static_cast<size_t>(chunk) * chunk_scratch_stride_;
  }

  const ProblemStructure& s_;
  const LandmarkBlockLayout& layout_;
  const WorkPartition& partition_;
  ParallelContext* context_;
  LandmarkBlocks<Scalar> blocks_;
  CameraGram camera_gram_;
  bool camera_gram_valid_ = false;
  bool marginalized_ = false;
  bool damped_ = false;
  std::vector<double> scale_;
  std::vector<Scalar> chunk_scratch_;
  int chunk_scratch_stride_ = 0;
};

extern template class MarginalizedLandmarkBlocks<float>;
extern template class MarginalizedLandmarkBlocks<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MARGINALIZED_LANDMARK_BLOCKS_H_
