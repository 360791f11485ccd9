#include "ceres_sqrtba/internal/direct/sparse_qr.h"

#include <SuiteSparseQR.hpp>

#include <algorithm>
#include <cstdio>
#include <new>

namespace ceres_sqrtba {
namespace internal {
namespace {

// The CSC arrays are int64_t; CHOLMOD's long-integer interface reads them as
// SuiteSparse_long.
static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t),
              "SuiteSparse_long must be a 64-bit integer");

int SpqrOrdering(SparseQrOrdering ordering) {
  switch (ordering) {
    case SparseQrOrdering::kDefault: return SPQR_ORDERING_DEFAULT;
    case SparseQrOrdering::kColamd: return SPQR_ORDERING_COLAMD;
    case SparseQrOrdering::kAmd: return SPQR_ORDERING_AMD;
    case SparseQrOrdering::kMetis: return SPQR_ORDERING_METIS;
    case SparseQrOrdering::kBest: return SPQR_ORDERING_BEST;
  }
  return SPQR_ORDERING_DEFAULT;
}

const char* OrderingName(int64_t spqr_ordering) {
  switch (spqr_ordering) {
    case SPQR_ORDERING_FIXED: return "fixed";
    case SPQR_ORDERING_NATURAL: return "natural";
    case SPQR_ORDERING_COLAMD: return "COLAMD";
    case SPQR_ORDERING_GIVEN: return "given";
    case SPQR_ORDERING_CHOLMOD: return "CHOLMOD";
    case SPQR_ORDERING_AMD: return "AMD";
    case SPQR_ORDERING_METIS: return "METIS";
    default: return "unknown";
  }
}

const char* StatusName(int status) {
  switch (status) {
    case CHOLMOD_NOT_INSTALLED: return "method not installed";
    case CHOLMOD_OUT_OF_MEMORY: return "out of memory";
    case CHOLMOD_TOO_LARGE: return "integer overflow";
    case CHOLMOD_INVALID: return "invalid input";
    case CHOLMOD_GPU_PROBLEM: return "GPU error";
    default: return "unknown error";
  }
}

// CHOLMOD reports errors through one global function pointer without a user
// argument, so the messages go to the SparseQr that is calling CHOLMOD on
// this thread (SuiteSparseQR without TBB, as Debian builds it, calls the
// handler from the calling thread).
thread_local std::string* t_cholmod_errors = nullptr;

void CholmodErrorHandler(int status, const char* file, int line, const char* message) {
  if (t_cholmod_errors == nullptr || status >= CHOLMOD_OK) return;  // warnings: ignored
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), "%s%s (CHOLMOD status %d, %s:%d)",
                t_cholmod_errors->empty() ? "" : "; ", message != nullptr ? message : "",
                status, file != nullptr ? file : "?", line);
  t_cholmod_errors->append(buffer);
}

class ErrorCapture {
 public:
  explicit ErrorCapture(std::string* errors) : previous_(t_cholmod_errors) {
    errors->clear();
    t_cholmod_errors = errors;
  }
  ~ErrorCapture() { t_cholmod_errors = previous_; }

 private:
  std::string* previous_;
};

}  // namespace

struct SparseQr::Impl {
  cholmod_common cc;
  int ordering = SPQR_ORDERING_DEFAULT;
  SuiteSparseQR_factorization<double>* qr = nullptr;
  // The pattern qr was analysed for (arrays and sizes).
  const int64_t* analysed_col_begin = nullptr;
  const int64_t* analysed_row = nullptr;
  int64_t analysed_rows = -1, analysed_cols = -1, analysed_nonzeros = -1;
  bool started = false;
  bool factorized = false;
  std::string errors;

  void Free() {
    if (qr != nullptr) SuiteSparseQR_free<double>(&qr, &cc);
    qr = nullptr;
    factorized = false;
  }

  bool SamePattern(const CscMatrixView& a) const {
    return qr != nullptr && a.col_begin == analysed_col_begin && a.row == analysed_row &&
           a.num_rows == analysed_rows && a.num_cols == analysed_cols &&
           a.col_begin[a.num_cols] == analysed_nonzeros;
  }

  // The outcome of a failed CHOLMOD call: what failed, CHOLMOD's status and
  // its messages.
  LinearSolverSummary Error(const char* what, int status) const {
    LinearSolverSummary summary;
    summary.termination = LinearSolverTermination::kFatalError;
    summary.message = std::string("SuiteSparseQR ") + what + " failed: " + StatusName(status);
    if (!errors.empty()) summary.message += " (" + errors + ")";
    summary.message += ".";
    return summary;
  }
};

SparseQr::SparseQr(SparseQrOrdering ordering) : impl_(new Impl) {
  impl_->started = cholmod_l_start(&impl_->cc) != 0 && impl_->cc.status == CHOLMOD_OK;
  impl_->cc.print = 0;  // errors go to the handler, not to stdout
  impl_->cc.error_handler = &CholmodErrorHandler;
  impl_->ordering = SpqrOrdering(ordering);
}

SparseQr::~SparseQr() {
  impl_->Free();
  if (impl_->started) cholmod_l_finish(&impl_->cc);
}

int64_t SparseQr::rank() const {
  return impl_->factorized ? static_cast<int64_t>(impl_->qr->rank) : -1;
}

std::string SparseQr::Statistics() const {
  if (!impl_->factorized) return "not factorized";
  const cholmod_common& cc = impl_->cc;
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer),
                "%s ordering, %lld fronts, nnz(R) = %lld, nnz(H) = %lld, %.3g flops; "
                "analysis %.3f s, last factorization %.3f s",
                OrderingName(cc.SPQR_istat[7]), static_cast<long long>(cc.SPQR_istat[2]),
                static_cast<long long>(cc.SPQR_istat[0]), static_cast<long long>(cc.SPQR_istat[1]),
                cc.SPQR_flopcount, cc.SPQR_analyze_time, cc.SPQR_factorize_time);
  return buffer;
}

LinearSolverSummary SparseQr::Solve(const CscMatrixView& a, const double* b, double* x) {
  Impl& m = *impl_;
  ErrorCapture capture(&m.errors);
  LinearSolverSummary summary;
  if (!m.started) return m.Error("initialization (cholmod_l_start)", m.cc.status);
  if (a.num_rows < a.num_cols) {
    summary.termination = LinearSolverTermination::kFatalError;
    summary.message = "SuiteSparseQR needs at least as many rows as columns.";
    return summary;
  }
  summary.termination = LinearSolverTermination::kSuccess;
  summary.num_iterations = 1;
  if (a.num_cols == 0) return summary;  // nothing to solve (e.g. all cameras constant)
  // Views of the caller's arrays; SuiteSparseQR does not modify its inputs.
  cholmod_sparse matrix = {};
  matrix.nrow = static_cast<size_t>(a.num_rows);
  matrix.ncol = static_cast<size_t>(a.num_cols);
  matrix.nzmax = static_cast<size_t>(a.col_begin[a.num_cols]);
  matrix.p = const_cast<int64_t*>(a.col_begin);
  matrix.i = const_cast<int64_t*>(a.row);
  matrix.x = const_cast<double*>(a.values);
  matrix.stype = 0;
  matrix.itype = CHOLMOD_LONG;
  matrix.xtype = CHOLMOD_REAL;
  matrix.dtype = CHOLMOD_DOUBLE;
  matrix.sorted = 1;
  matrix.packed = 1;
  cholmod_dense rhs = {};
  rhs.nrow = static_cast<size_t>(a.num_rows);
  rhs.ncol = 1;
  rhs.nzmax = static_cast<size_t>(a.num_rows);
  rhs.d = static_cast<size_t>(a.num_rows);
  rhs.x = const_cast<double*>(b);
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;

  cholmod_dense* qtb = nullptr;
  cholmod_dense* solution = nullptr;
  auto free_dense = [&] {
    if (qtb != nullptr) cholmod_l_free_dense(&qtb, &m.cc);
    if (solution != nullptr) cholmod_l_free_dense(&solution, &m.cc);
  };
  try {
    if (!m.SamePattern(a)) {
      m.Free();
      // allow_tol: the numeric factorization estimates the rank (Heath's
      // method), so that a rank-deficient A is reported, not solved.
      m.qr = SuiteSparseQR_symbolic<double>(m.ordering, /*allow_tol=*/1, &matrix, &m.cc);
      if (m.qr == nullptr || m.cc.status < CHOLMOD_OK) {
        const int status = m.cc.status;
        m.Free();
        return m.Error("symbolic analysis", status);
      }
      m.analysed_col_begin = a.col_begin;
      m.analysed_row = a.row;
      m.analysed_rows = a.num_rows;
      m.analysed_cols = a.num_cols;
      m.analysed_nonzeros = a.col_begin[a.num_cols];
    }
    m.factorized = false;
    // On failure the object keeps its symbolic analysis for the next call.
    if (!SuiteSparseQR_numeric<double>(SPQR_DEFAULT_TOL, &matrix, m.qr, &m.cc) ||
        m.cc.status < CHOLMOD_OK) {
      return m.Error("numeric factorization", m.cc.status);
    }
    m.factorized = true;
    if (m.qr->rank < a.num_cols) {
      char buffer[256];
      std::snprintf(buffer, sizeof(buffer),
                    "The reduced camera system is rank deficient: SuiteSparseQR estimates rank %lld "
                    "for %lld columns (a column whose remaining norm is <= %g counts as dependent).",
                    static_cast<long long>(m.qr->rank), static_cast<long long>(a.num_cols),
                    m.cc.SPQR_tol_used);
      summary.termination = LinearSolverTermination::kFailure;
      summary.message = buffer;
      return summary;
    }
    // x = E R^-1 (Q^T b).
    qtb = SuiteSparseQR_qmult<double>(SPQR_QTX, m.qr, &rhs, &m.cc);
    if (qtb == nullptr || m.cc.status < CHOLMOD_OK) {
      const int status = m.cc.status;
      free_dense();
      return m.Error("Q^T b", status);
    }
    solution = SuiteSparseQR_solve<double>(SPQR_RETX_EQUALS_B, m.qr, qtb, &m.cc);
    if (solution == nullptr || m.cc.status < CHOLMOD_OK) {
      const int status = m.cc.status;
      free_dense();
      return m.Error("triangular solve", status);
    }
    const double* sx = static_cast<const double*>(solution->x);
    std::copy(sx, sx + a.num_cols, x);
    free_dense();
  } catch (const std::bad_alloc&) {
    free_dense();
    m.factorized = false;
    return m.Error("factorization", CHOLMOD_OUT_OF_MEMORY);
  }
  return summary;
}

}  // namespace internal
}  // namespace ceres_sqrtba
