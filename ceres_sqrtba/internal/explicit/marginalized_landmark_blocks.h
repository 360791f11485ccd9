// The explicit landmark blocks of the current Jacobian through their life
// cycle (SQRT_ITERATIVE_SCHUR with use_explicit_reduced_rows):
//
//   written by the evaluator (raw) -> column-scaled -> marginalized by QR once
//   per Jacobian -> damped for one radius -> undamped and damped again for the
//   next radius (a rejected step: no new evaluation, no new QR).
//
// It also keeps the camera Gram matrices Jc^T Jc of the current Jacobian,
// computed once from the raw blocks: their diagonals are the camera column
// norms that LM's damping needs, and the preconditioner starts from them.
#ifndef CERES_SQRTBA_INTERNAL_EXPLICIT_MARGINALIZED_LANDMARK_BLOCKS_H_
#define CERES_SQRTBA_INTERNAL_EXPLICIT_MARGINALIZED_LANDMARK_BLOCKS_H_

#include <vector>

#include "ceres_sqrtba/internal/cameras/camera_gram.h"
#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

// Work a solver does on every block right after it is damped, in the same
// pass over the blocks while the block is still in cache (the top-row Gram
// of the preconditioner, the right-hand side): one pass over the landmark
// blocks per solve instead of three. Called from the chunk loop of the work
// partition: BeginChunk(chunk) before the chunk's first block, then Visit
// for each of its blocks in order (every group, landmark-free ones too).
template <typename Scalar>
class DampedBlockVisitor {
 public:
  virtual ~DampedBlockVisitor() = default;
  virtual void BeginChunk(int chunk) = 0;
  virtual void Visit(int chunk, int group, const LandmarkBlock<Scalar>& block) = 0;
};

template <typename Scalar>
class MarginalizedLandmarkBlocks {
 public:
  MarginalizedLandmarkBlocks(const ProblemStructure& s, const ExplicitBlockLayout& layout,
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
  // Undoing, QR, damping and `visitor` (optional) run in one pass over the
  // blocks.
  void MarginalizeAndDamp(const double* d, DampedBlockVisitor<Scalar>* visitor = nullptr);

  ExplicitLandmarkBlocks<Scalar>* blocks() { return &blocks_; }
  // Jc^T Jc of the current (scaled) Jacobian; valid after MarginalizeAndDamp.
  const CameraGram& camera_gram() const { return camera_gram_; }

 private:
  void EnsureCameraGram();
  void UndoDamping();

  const ProblemStructure& s_;
  const ExplicitBlockLayout& layout_;
  const WorkPartition& partition_;
  ParallelContext* context_;
  ExplicitLandmarkBlocks<Scalar> blocks_;
  CameraGram camera_gram_;
  bool camera_gram_valid_ = false;
  bool marginalized_ = false;
  bool damped_ = false;
  std::vector<double> scale_;
  PerChunk<Scalar> scratch_;  // per chunk: QR scratch, damping values, column scale
};

extern template class MarginalizedLandmarkBlocks<float>;
extern template class MarginalizedLandmarkBlocks<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EXPLICIT_MARGINALIZED_LANDMARK_BLOCKS_H_
