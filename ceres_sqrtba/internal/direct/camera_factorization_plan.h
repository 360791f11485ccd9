// What SQRT_SPARSE_SCHUR decides about the reduced camera matrix once per
// solve, before anything large is allocated: its block pattern
// (reduced_camera_pattern.h), whether its Cholesky factorization is dense or
// sparse (camera_cholesky.h), the sparse one's ordering and factor size, and
// the bytes all of it takes — so that the factory can check the memory limit
// first, and a single precision solve that continues in double reuses the
// plan.
//
// Dense or sparse. Solver::Options::reduced_camera_factorization chooses;
// AUTOMATIC_FACTORIZATION plans the sparse factorization (cheap: one node per
// camera) and takes the dense LLT when it needs at most kDenseFlopRatio times
// the sparse one's flops. Measured on this project's machine
// (docs/benchmarks.md, "Direct solver"): Eigen's dense LLT runs at about 20
// GFlop/s single-threaded, CHOLMOD's supernodal factorization (ATLAS BLAS)
// at about 12 GFlop/s on one large front and 4-6 GFlop/s on the small
// supernodes of BA camera graphs. So BA problems whose cameras all share
// points (dense S, e.g. ladybug-49: 441 parameters) factor densely, and large
// problems with local camera graphs (synthetic, 100+ cameras) sparsely.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_FACTORIZATION_PLAN_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_FACTORIZATION_PLAN_H_

#include <cstdint>
#include <memory>
#include <string>

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/camera_cholesky.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/types.h"

namespace ceres_sqrtba {
namespace internal {

class CameraFactorizationPlan {
 public:
  static constexpr double kDenseFlopRatio = 4.0;
  // The flops of a dense LL^T of order n, counted as SparseCholeskyPlan's.
  static double DenseFlops(int64_t n);

  CameraFactorizationPlan(const ProblemStructure& s, ReducedCameraFactorization factorization);
  // The same for a matrix of another pattern (a visibility-based
  // preconditioner's subset of S).
  CameraFactorizationPlan(ReducedCameraPattern pattern, ReducedCameraFactorization factorization);

  const ReducedCameraPattern& pattern() const { return pattern_; }
  bool dense() const { return dense_; }
  const SparseCholeskyPlan& sparse() const { return sparse_; }
  // Non-empty when the factorization asked for cannot be planned
  // (SPARSE_FACTORIZATION whose ordering failed): the solve fails with it
  // before anything large is allocated. AUTOMATIC_FACTORIZATION falls back to
  // the dense factorization instead.
  const std::string& error() const { return error_; }

  // Bytes of the reduced camera matrix (W, values, scalar pattern) and of
  // its factorization (dense: n^2 doubles; sparse: the estimate of CHOLMOD's
  // analysis and factor).
  int64_t RequiredBytes(const ProblemStructure& s, const WorkPartition& partition) const;

  // The factorization of the plan's kind, reading S's scalar pattern
  // (col_begin, rows) that the caller keeps.
  std::unique_ptr<CameraCholesky> MakeCholesky(const int64_t* col_begin, const int64_t* rows) const;

 private:
  ReducedCameraPattern pattern_;
  bool dense_ = true;
  SparseCholeskyPlan sparse_;
  std::string error_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_FACTORIZATION_PLAN_H_
