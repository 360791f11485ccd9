#include "ceres_sqrtba/internal/direct/camera_factorization_plan.h"

#include <utility>

#include "ceres_sqrtba/internal/direct/dense_cholesky.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_matrix.h"

namespace ceres_sqrtba {
namespace internal {

CameraFactorizationPlan::CameraFactorizationPlan(const ProblemStructure& s,
                                                 ReducedCameraFactorization factorization)
    : CameraFactorizationPlan(ReducedCameraPattern(s), factorization) {}

CameraFactorizationPlan::CameraFactorizationPlan(ReducedCameraPattern pattern,
                                                 ReducedCameraFactorization factorization)
    : pattern_(std::move(pattern)) {
  if (factorization == DENSE_FACTORIZATION) return;
  sparse_ = PlanSparseCholesky(pattern_);
  if (factorization == SPARSE_FACTORIZATION) {
    dense_ = false;
    if (!sparse_.error.empty()) error_ = "SQRT_SPARSE_SCHUR with SPARSE_FACTORIZATION: " + sparse_.error;
    return;
  }
  // AUTOMATIC: a sparse plan that failed leaves the dense factorization
  // (whose memory the caller still checks).
  dense_ = !sparse_.error.empty() || DenseFlops(pattern_.num_parameters()) <= kDenseFlopRatio * sparse_.flops;
}

double CameraFactorizationPlan::DenseFlops(int64_t n) {
  // The sum of the squared column counts of a dense L: n (n + 1) (2n + 1) / 6.
  const double m = static_cast<double>(n);
  return m * (m + 1) * (2 * m + 1) / 6;
}

int64_t CameraFactorizationPlan::RequiredBytes(const ProblemStructure& s, const WorkPartition& partition) const {
  // Everything here is double, whatever the precision of the blocks.
  const int64_t matrix = ReducedCameraMatrix<double>::RequiredBytes(s, pattern_, partition);
  return matrix + (dense_ ? DenseCameraCholesky::RequiredBytes(pattern_) : sparse_.RequiredBytes(pattern_));
}

std::unique_ptr<CameraCholesky> CameraFactorizationPlan::MakeCholesky(const int64_t* col_begin,
                                                                      const int64_t* rows) const {
  if (dense_) return std::make_unique<DenseCameraCholesky>(pattern_, col_begin, rows);
  return std::make_unique<SparseCameraCholesky>(pattern_, sparse_, col_begin, rows);
}

}  // namespace internal
}  // namespace ceres_sqrtba
