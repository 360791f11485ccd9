// Sparse linear least squares min |A x - b| by SuiteSparseQR (multifrontal
// Householder QR, Davis 2011), for a matrix whose sparsity pattern stays
// fixed while its values change, as the stacked reduced camera system of
// SQRT_SPARSE_SCHUR does between solves:
//
//   - the fill-reducing column ordering and the symbolic analysis
//     (SuiteSparseQR_symbolic) run once, on the first solve with a pattern;
//   - every solve runs only the numeric factorization A E = Q R
//     (SuiteSparseQR_numeric), then x = E R^-1 (Q^T b) (SuiteSparseQR_qmult,
//     SuiteSparseQR_solve). A^T A is never formed, so the condition number is
//     that of A, not its square.
//
// Nothing here aborts: CHOLMOD's error handler records the messages of the
// calling thread, the status of the cholmod_common is checked after every
// call, and the outcome is a LinearSolverSummary:
//   kFailure     A is numerically rank deficient (SuiteSparseQR's rank
//                estimate, columns of norm <= 20 (m + n) eps max|A_j| are
//                dead): more damping can cure it;
//   kFatalError  out of memory, integer overflow or any other CHOLMOD error,
//                with CHOLMOD's message.
// SuiteSparse stays an implementation detail of the .cc file.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_SPARSE_QR_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_SPARSE_QR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "ceres_sqrtba/internal/solvers/linear_solver_summary.h"
#include "ceres_sqrtba/internal/direct/stacked_reduced_matrix.h"

namespace ceres_sqrtba {
namespace internal {

// Fill-reducing column orderings of SuiteSparseQR (SPQR_ORDERING_*).
enum class SparseQrOrdering {
  kDefault,  // SuiteSparseQR's default, COLAMD(A) since SPQR 1.2
  kColamd,
  kAmd,
  kMetis,    // METIS(A^T A), when CHOLMOD was built with it (Debian's is)
  kBest,     // tries COLAMD, AMD and METIS, keeps the least fill
};

class SparseQr {
 public:
  explicit SparseQr(SparseQrOrdering ordering = SparseQrOrdering::kDefault);
  ~SparseQr();
  SparseQr(const SparseQr&) = delete;
  SparseQr& operator=(const SparseQr&) = delete;

  // x (a.num_cols) = argmin |A x - b| (b: a.num_rows). Requires num_rows >=
  // num_cols. The symbolic analysis of the previous call is reused when A
  // has the same pattern (the same arrays and sizes). Allocates only inside
  // SuiteSparseQR.
  LinearSolverSummary Solve(const CscMatrixView& a, const double* b, double* x);

  // Of the last successful factorization: SuiteSparseQR's rank estimate and
  // a line of statistics (ordering, nnz(R), nnz(H), flops, times).
  int64_t rank() const;
  std::string Statistics() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_SPARSE_QR_H_
