// What SQRT_SPARSE_SCHUR decides about the reduced camera matrix once per
// solve, before anything large is allocated: its block pattern
// (reduced_camera_pattern.h), whether its Cholesky factorization is dense or
// sparse (camera_cholesky.h), the sparse one's ordering and factor size, and
// the bytes all of it takes — so that the factory can check the memory limit
// first, and a single precision solve that continues in double reuses the
// plan.
//
// Dense or sparse. Solver::Options::reduced_camera_factorization chooses;
// AUTOMATIC_FACTORIZATION takes the dense LLT when the camera system has at
// most kMaxDenseParameters parameters, CHOLMOD's supernodal factorization
// otherwise. The bound is
// the measured crossover on this project's machine (docs/benchmarks.md,
// "Direct solver"): below it both factorizations take well under the rest of
// an iteration and the dense one has no symbolic overhead; above it the
// dense one's n^3/3 flops and n^2 memory grow faster than the sparse one's
// on BA's block-sparse camera graphs.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_FACTORIZATION_PLAN_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_FACTORIZATION_PLAN_H_

#include <cstdint>
#include <memory>

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/direct/camera_cholesky.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace internal {

class CameraFactorizationPlan {
 public:
  static constexpr int kMaxDenseParameters = 1000;

  CameraFactorizationPlan(const ProblemStructure& s, ReducedCameraFactorization factorization);

  const ReducedCameraPattern& pattern() const { return pattern_; }
  bool dense() const { return dense_; }
  const SparseCholeskyPlan& sparse() const { return sparse_; }

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
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_CAMERA_FACTORIZATION_PLAN_H_
