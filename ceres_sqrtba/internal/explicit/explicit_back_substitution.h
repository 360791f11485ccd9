// Back substitution of the landmark updates and the trust-region model's
// |J y|^2 on the explicit landmark blocks: once PCG has solved the reduced
// camera system, the rest of the step comes from the marginalized and damped
// landmark blocks alone.
//
// Per block b, with the camera solution y_p gathered to the block's columns:
//
//   y_l = R^^-1 (Q^_1^T r - Q^_1^T Jp y_p)                 (paper eq. (backsub_nm))
//
//   |J_b y|^2 = |Q^_1^T r|^2 + |B_b y_p|^2 - lambda |D_l y_l|^2,
//
// with B_b = Q^_2^T Jp the block's damped reduced rows. The second identity
// holds because Q^ is orthogonal, the damping rows carry no camera entries
// before the rotations, and back substitution makes the top rows reproduce
// Q^_1^T r exactly: |Q^^T [J_b; sqrt(lambda) D_l] y|^2 = |J_b y|^2 +
// lambda |D_l y_l|^2. So no sparse Jacobian is needed for the model cost.
//
// Sums run per chunk of the fixed work partition and are added in chunk
// order: the result does not depend on the number of threads.
#ifndef CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_BACK_SUBSTITUTION_H_
#define CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_BACK_SUBSTITUTION_H_

#include <vector>

#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class ExplicitBackSubstitution {
 public:
  // Allocates the per-chunk scratch once; Run allocates nothing.
  ExplicitBackSubstitution(const ProblemStructure& s, const ExplicitBlockLayout& layout,
                           const WorkPartition& partition);

  // blocks: marginalized and damped with the diagonal d (tangent layout of the
  // whole problem). y (tangent layout): on entry its camera part holds the
  // solution y_p of the reduced camera system; on return its landmark part
  // holds y_l. Returns |J y|^2, the undamped quadratic term of the model.
  double Run(ExplicitLandmarkBlocks<Scalar>* blocks, const double* d, double* y,
             ParallelContext* context);

 private:
  const ProblemStructure& s_;
  const WorkPartition& partition_;
  int max_cols_ = 0;
  int max_obs_rows_ = 0;
  PerChunk<Scalar> scratch_;        // per chunk: y_p gathered, B y_p, y_l
  std::vector<double> chunk_sums_;  // per chunk: its part of |J y|^2
};

extern template class ExplicitBackSubstitution<float>;
extern template class ExplicitBackSubstitution<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EXPLICIT_EXPLICIT_BACK_SUBSTITUTION_H_
