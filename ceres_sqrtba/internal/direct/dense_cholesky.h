// The dense Cholesky factorization of a small reduced camera matrix
// (camera_cholesky.h): S's upper triangle is scattered into an n x n matrix
// (lower triangle) and factored in place by Eigen's blocked LLT (S = L L^T),
// as Ceres' DENSE_SCHUR does with Eigen.
//
// Why a dense path at all. BA camera systems of a few hundred parameters are
// dense or nearly so (every camera pair shares points), where a supernodal
// sparse factorization does the same flops plus its symbolic bookkeeping and
// the scatter into fronts. Which one is faster up to which size was measured
// (docs/benchmarks.md, "Direct solver"); the factory picks by
// Solver::Options::reduced_camera_factorization.
//
// Memory: n^2 doubles, allocated at construction. Nothing is allocated per
// factorization.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_DENSE_CHOLESKY_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_DENSE_CHOLESKY_H_

#include <cstdint>
#include <string>

#include <Eigen/Core>

#include "ceres_sqrtba/internal/direct/camera_cholesky.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"

namespace ceres_sqrtba {
namespace internal {

class DenseCameraCholesky : public CameraCholesky {
 public:
  // col_begin, rows: the scalar CSC pattern of S's upper triangle (held by
  // the caller, reduced_camera_matrix.h).
  DenseCameraCholesky(const ReducedCameraPattern& pattern, const int64_t* col_begin, const int64_t* rows);

  static int64_t RequiredBytes(const ReducedCameraPattern& pattern);

  LinearSolverSummary Factorize(const double* values) override;
  LinearSolverSummary Solve(const double* b, double* x) override;
  std::string Statistics() const override;

 private:
  const ReducedCameraPattern& pattern_;
  const int64_t* col_begin_;
  const int64_t* rows_;
  Eigen::MatrixXd factor_;  // S, then L (lower triangle)
  bool factorized_ = false;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_DENSE_CHOLESKY_H_
