// The few BLAS and LAPACK routines the covariance's dense blocks run on,
// column-major doubles, through the Fortran interface every BLAS and LAPACK
// on Debian provides (libblas.so.3 / liblapack.so.3: reference, ATLAS,
// OpenBLAS, BLIS, MKL): the same library CHOLMOD factors with, so the
// selected inversion of a factor costs what the factorization costs with
// whichever BLAS is installed (scripts/install_dependencies.sh installs
// OpenBLAS; its threads are its own, set by OPENBLAS_NUM_THREADS, not by
// the options' num_threads).
//
// Each routine is called from one thread at a time by the code here, in a
// fixed order, so a result depends on the BLAS and its thread count, never
// on the options' num_threads. Sizes are LAPACK's 32-bit integers: a block
// with more than 2^31 - 1 rows or columns is refused by the caller's memory
// plan long before (2^31 columns of one supernode are 2^62 doubles).
#ifndef CERES_SQRTBA_INTERNAL_COMMON_DENSE_BLAS_H_
#define CERES_SQRTBA_INTERNAL_COMMON_DENSE_BLAS_H_

namespace ceres_sqrtba {
namespace internal {

// a (n x n, lower triangle, leading dimension lda) <- its inverse (LAPACK
// dtrtri, non-unit diagonal). False when a diagonal entry is zero.
bool InvertLowerTriangular(int n, double* a, int lda);

// a's lower triangle, holding a lower-triangular L, <- L^T L (LAPACK
// dlauum). With L = F^-1 for a Cholesky factor F this is (F F^T)^-1.
void LowerTransposeTimesLower(int n, double* a, int lda);

// b (m x n, ldb) <- b L for the lower-triangular L (n x n, lda): dtrmm.
void TimesLowerTriangular(int m, int n, const double* l, int lda, double* b, int ldb);

// c (m x n, ldc) <- alpha A B for the symmetric A (m x m, lda, read from its
// lower triangle) and B (m x n, ldb): dsymm.
void SymmetricTimes(int m, int n, double alpha, const double* a, int lda, const double* b, int ldb, double* c,
                    int ldc);

// c (m x n, ldc) <- c + alpha A^T B for A (k x m, lda), B (k x n, ldb): dgemm.
void AddTransposeTimes(int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
                       double* c, int ldc);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_DENSE_BLAS_H_
