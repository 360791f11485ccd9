#include "ceres_sqrtba/internal/common/dense_blas.h"

#include <cstddef>

// The Fortran interface, with the hidden lengths of the character
// arguments gfortran passes last (one per character argument).
extern "C" {
void dtrtri_(const char* uplo, const char* diag, const int* n, double* a, const int* lda, int* info, std::size_t,
             std::size_t);
void dlauum_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
void dtrmm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, std::size_t,
            std::size_t, std::size_t, std::size_t);
void dsymm_(const char* side, const char* uplo, const int* m, const int* n, const double* alpha, const double* a,
            const int* lda, const double* b, const int* ldb, const double* beta, double* c, const int* ldc,
            std::size_t, std::size_t);
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t, std::size_t);
}

namespace ceres_sqrtba {
namespace internal {

bool InvertLowerTriangular(int n, double* a, int lda) {
  if (n == 0) return true;
  int info = 0;
  dtrtri_("L", "N", &n, a, &lda, &info, 1, 1);
  return info == 0;
}

void LowerTransposeTimesLower(int n, double* a, int lda) {
  if (n == 0) return;
  int info = 0;
  dlauum_("L", &n, a, &lda, &info, 1);
}

void TimesLowerTriangular(int m, int n, const double* l, int lda, double* b, int ldb) {
  if (m == 0 || n == 0) return;
  const double one = 1.0;
  dtrmm_("R", "L", "N", "N", &m, &n, &one, l, &lda, b, &ldb, 1, 1, 1, 1);
}

void SymmetricTimes(int m, int n, double alpha, const double* a, int lda, const double* b, int ldb, double* c,
                    int ldc) {
  if (m == 0 || n == 0) return;
  const double zero = 0.0;
  dsymm_("L", "L", &m, &n, &alpha, a, &lda, b, &ldb, &zero, c, &ldc, 1, 1);
}

void AddTransposeTimes(int m, int n, int k, double alpha, const double* a, int lda, const double* b, int ldb,
                       double* c, int ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  const double one = 1.0;
  dgemm_("T", "N", &m, &n, &k, &alpha, a, &lda, b, &ldb, &one, c, &ldc, 1, 1);
}

}  // namespace internal
}  // namespace ceres_sqrtba
