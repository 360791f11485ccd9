// The entries of S^-1 on the sparsity pattern of S's Cholesky factor, from
// the factor, without forming S^-1: the selected inversion (Takahashi, Fagan
// and Chen, 1973; in its supernodal form as in Lin et al.'s SelInv, 2011).
//
// With P S P^T = L L^T, Z = (P S P^T)^-1 = L^-T L^-1 satisfies L^T Z = L^-1,
// whose right side is lower triangular; read block by block for a supernode
// with columns J and the rows I below them (L's structure of those columns):
//
//   U    = L_IJ L_JJ^-1
//   Z_IJ = -Z_II U
//   Z_JJ = L_JJ^-T L_JJ^-1 - U^T Z_IJ,
//
// and every entry of Z_II that this needs lies on L's pattern in the
// supernodes of the ancestors (the rows below a column of L are, closed
// under the elimination tree, a subset of the rows of its parent's
// columns). So the supernodes are visited from the last to the first, each
// reading only what the later ones wrote, and Z is stored exactly where L's
// values are: as many doubles as the factor, whatever n.
//
// Why it is enough for covariances: cameras that see a common landmark are
// neighbours in S, hence on L's pattern, so every block of S^-1 that a
// landmark's marginal covariance needs (landmark_factorization.h) is here;
// other blocks (far-apart cameras) are columns of S^-1 from solves.
//
// The cost is about twice the numeric factorization's (per supernode the
// triangular inverse of L_JJ, its Gram matrix, and the products with Z_II),
// in the same BLAS and LAPACK as CHOLMOD's factorization
// (common/dense_blas.h: dtrtri, dlauum, dtrmm, dsymm, dgemm), so with the
// BLAS's threads; the supernodes run in a fixed order from one thread, so
// the result does not depend on the options' number of threads. Only lower
// triangles of the diagonal blocks are read (Entry and Block read those).
#ifndef CERES_SQRTBA_INTERNAL_COVARIANCE_SELECTED_INVERSION_H_
#define CERES_SQRTBA_INTERNAL_COVARIANCE_SELECTED_INVERSION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"

namespace ceres_sqrtba {
namespace internal {

class SelectedInverse {
 public:
  // Bytes Compute allocates for a factor of `factor_values` doubles (the
  // plan's factor size with CHOLMOD's padding) and n columns.
  static int64_t RequiredBytes(int64_t factor_values, int64_t n);

  // Computes Z from `factor`, which must stay valid while this object is
  // used. False, with the reason, when the factor's pattern is not what the
  // recurrence needs (unsorted rows, an entry of Z_II off the pattern).
  bool Compute(const SupernodalFactor& factor, std::string* error);

  // S^-1(i, j) in S's own (unpermuted) numbering; false when the entry is
  // not on the factor's pattern.
  bool Entry(int64_t i, int64_t j, double* value) const;

  // The block S^-1(i0 .. i0+ni, j0 .. j0+nj) into out (ni x nj,
  // column-major, leading dimension ld) when both ranges are contiguous and
  // increasing in the factor's order (a camera's columns are) and either do
  // not overlap or are the same (a diagonal block, both triangles written),
  // and the block is on the pattern: one search per column instead of one
  // per entry (none in a supernode whose rows are contiguous, as a dense
  // one's are). False otherwise (out then undefined).
  bool Block(int64_t i0, int ni, int64_t j0, int nj, double* out, int ld) const;

  int64_t n() const { return f_.n; }

 private:
  // Position of row `row` among supernode t's rows, or -1.
  int64_t Position(int64_t t, int64_t row) const;
  // Z's entries (row0 .. row0 + rows, column) in the factor's order, or
  // nullptr when they are not all on the pattern, consecutive.
  const double* ColumnSegment(int64_t column, int64_t row0, int rows) const;

  SupernodalFactor f_;
  std::vector<int64_t> supernode_of_;  // per permuted column
  std::vector<int64_t> inverse_perm_;  // original index -> permuted
  std::vector<char> contiguous_;       // per supernode: its rows are consecutive
  std::unique_ptr<double[], FreeDeleter> z_;  // laid out as the factor's values
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COVARIANCE_SELECTED_INVERSION_H_
