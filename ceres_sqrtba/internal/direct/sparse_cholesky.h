// The sparse Cholesky factorization of the reduced camera matrix
// (camera_cholesky.h) by CHOLMOD's supernodal LL^T, as Ceres' SPARSE_SCHUR
// factors its Schur complement with SuiteSparse:
//
//   - the fill-reducing ordering is AMD on the camera blocks (not on the
//     scalar pattern: nine times fewer nodes for BA cameras, and every
//     camera's columns stay together), expanded to the scalar columns, with
//     CHOLMOD's postordering;
//   - the symbolic analysis (cholmod_analyze_p with that ordering) runs once,
//     at the first factorization; every later one (a new Jacobian or a new
//     radius) is only cholmod_factorize on the same pattern;
//   - solves reuse their CHOLMOD work space (cholmod_solve2): after the first
//     step nothing is allocated.
//
// Before anything large is allocated, PlanSparseCholesky orders the blocks
// and runs CHOLMOD's symbolic factorization on the block pattern (one node
// per camera): that gives the exact supernodes of L, hence the values CHOLMOD
// stores, from which the memory figure of the factor is estimated (with a
// margin for the zeros CHOLMOD's relaxed supernodes add, and its update
// work space), and the solver reuses the ordering.
//
// Nothing aborts: CHOLMOD's error handler records the messages of the
// calling thread, every call's status is checked, and the outcome is a
// LinearSolverSummary (camera_cholesky.h): CHOLMOD_NOT_POSDEF is a failed
// step (kFailure), out of memory and every other CHOLMOD error end the solve
// (kFatalError, with CHOLMOD's message). CHOLMOD stays an implementation
// detail of the .cc file.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_SPARSE_CHOLESKY_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_SPARSE_CHOLESKY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/direct/camera_cholesky.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"

namespace ceres_sqrtba {
namespace internal {

struct SparseCholeskyPlan {
  // Cameras in elimination order (AMD on the block pattern, postordered);
  // empty when the planning failed (error says why).
  std::vector<int> camera_order;
  // The values of L's exact supernodes for that order (dense blocks; a
  // supernode is stored as a rectangle), and the largest update matrix of a
  // supernode, in doubles.
  int64_t factor_size = 0;
  int64_t update_size = 0;
  // The factorization's flops, counted as CHOLMOD counts a simplicial LL^T
  // (the sum of the squared column counts of L).
  double flops = 0.0;
  std::string error;
  // The estimate of what CHOLMOD allocates for the analysis and the factor.
  int64_t RequiredBytes(const ReducedCameraPattern& pattern) const;
};

SparseCholeskyPlan PlanSparseCholesky(const ReducedCameraPattern& pattern);

// The factor of the last successful factorization as CHOLMOD stores it,
// without CHOLMOD's types (the selected inversion of covariance/ reads it):
// P S P^T = L L^T with row k of P S P^T row perm[k] of S. Supernode j holds
// the columns [super[j], super[j+1]) of L; its row indices are
// rows[row_begin[j] .. row_begin[j+1]), those columns first, then the rows
// below them, increasing; its values are stored column-major with that many
// rows (the leading dimension) at values + value_begin[j]. Valid until the
// next Factorize.
struct SupernodalFactor {
  int64_t n = 0;
  int64_t num_supernodes = 0;
  const int64_t* perm = nullptr;
  const int64_t* super = nullptr;
  const int64_t* row_begin = nullptr;
  const int64_t* rows = nullptr;
  const int64_t* value_begin = nullptr;
  const double* values = nullptr;
};

class SparseCameraCholesky : public CameraCholesky {
 public:
  // col_begin, rows: the scalar CSC pattern of S's upper triangle (held by
  // the caller, reduced_camera_matrix.h).
  SparseCameraCholesky(const ReducedCameraPattern& pattern, const SparseCholeskyPlan& plan,
                       const int64_t* col_begin, const int64_t* rows);
  ~SparseCameraCholesky() override;
  SparseCameraCholesky(const SparseCameraCholesky&) = delete;
  SparseCameraCholesky& operator=(const SparseCameraCholesky&) = delete;

  LinearSolverSummary Factorize(const double* values) override;
  LinearSolverSummary Solve(const double* b, double* x) override;
  std::string Statistics() const override;

  // The factor of the last successful Factorize; false (and *factor
  // untouched) without one or when CHOLMOD did not keep it supernodal.
  bool GetSupernodalFactor(SupernodalFactor* factor) const;

  // Of the symbolic analysis, for tests: the doubles of L's values
  // (supernodal, padding included), -1 before the analysis.
  int64_t factor_size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_SPARSE_CHOLESKY_H_
