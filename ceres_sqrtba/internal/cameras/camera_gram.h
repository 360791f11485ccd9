// Per variable camera, the Gram matrix Jc^T Jc of its columns of the (scaled)
// Jacobian, in double: row-major n_c x n_c blocks back to back.
//
// Its diagonal is the squared column norms Levenberg-Marquardt damps with; the
// JACOBI preconditioner inverts Jc^T Jc + lambda D_c^2, and the explicit
// storage's SCHUR_JACOBI starts from it (block_jacobi_preconditioner.h). Each
// storage adds its own blocks' contributions through ComputeWith, block-major
// and deterministic (camera_block_sum.h).
#ifndef CERES_SQRTBA_INTERNAL_CAMERAS_CAMERA_GRAM_H_
#define CERES_SQRTBA_INTERNAL_CAMERAS_CAMERA_GRAM_H_

#include <vector>

#include "ceres_sqrtba/internal/cameras/camera_block_sum.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class CameraGram {
 public:
  CameraGram(const ProblemStructure& s, const WorkPartition& partition);

  // fn(g, entry, column, n, acc) adds the lower triangle of the Gram matrix
  // of camera entry `entry` (an index into ProblemStructure::group_cameras)
  // of landmark block g, whose columns start at `column` of the block, to
  // acc (n x n, row-major). The result is symmetrized once at the end.
  template <typename Fn>
  void ComputeWith(ParallelContext* context, const Fn& fn) {
    sum_.Run(context, data_.data(), fn);
    Symmetrize();
  }
  // G <- diag(scale) G diag(scale), scale in the full tangent layout.
  void Scale(const double* scale);
  const double* block(int camera) const { return data_.data() + sum_.offset(camera); }
  double* block(int camera) { return data_.data() + sum_.offset(camera); }

 private:
  void Symmetrize();

  const ProblemStructure& s_;
  CameraBlockSum<double> sum_;
  std::vector<double> data_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERAS_CAMERA_GRAM_H_
