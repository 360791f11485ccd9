#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"

#include <cholmod.h>

#include <algorithm>
#include <cstdio>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// The CSC arrays are int64_t; CHOLMOD's long-integer interface reads them as
// SuiteSparse_long.
static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t), "SuiteSparse_long must be a 64-bit integer");

// CHOLMOD's relaxed supernodes add explicit zeros (with its default
// parameters at most 80% in supernodes of <= 16 columns, 10% up to 48, 5%
// beyond) to the exact supernodes the block analysis finds, so a quarter on
// top of their storage bounds the values CHOLMOD allocates (checked by the
// tests against CHOLMOD's figure).
constexpr double kRelaxationMargin = 1.25;

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

// CHOLMOD reports errors through a function pointer in cholmod_common that
// takes no user argument: the messages go to the object whose call is
// running on this thread (CHOLMOD calls the handler from the calling thread).
thread_local std::string* t_messages = nullptr;

void RecordCholmodError(int status, const char* file, int line, const char* message) {
  if (t_messages == nullptr || status >= CHOLMOD_OK) return;  // warnings: read from the status
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer), "%s%s (CHOLMOD status %d, %s:%d)", t_messages->empty() ? "" : "; ",
                message != nullptr ? message : "", status, file != nullptr ? file : "?", line);
  t_messages->append(buffer);
}

class CaptureErrors {
 public:
  explicit CaptureErrors(std::string* messages) : previous_(t_messages) {
    messages->clear();
    t_messages = messages;
  }
  ~CaptureErrors() { t_messages = previous_; }

 private:
  std::string* previous_;
};

void Start(cholmod_common* cc) {
  cholmod_l_start(cc);
  cc->print = 0;  // errors go to the handler, not to stdout
  cc->error_handler = &RecordCholmodError;
  cc->nmethods = 1;
  cc->method[0].ordering = CHOLMOD_GIVEN;
  cc->supernodal = CHOLMOD_SUPERNODAL;
  cc->quick_return_if_not_posdef = 1;
}

// A view of a CSC upper triangle (stype 1); x == nullptr: the pattern only.
cholmod_sparse UpperView(int64_t n, const int64_t* col_begin, const int64_t* rows, const double* x) {
  cholmod_sparse a = {};
  a.nrow = static_cast<size_t>(n);
  a.ncol = static_cast<size_t>(n);
  a.nzmax = static_cast<size_t>(col_begin[n]);
  a.p = const_cast<int64_t*>(col_begin);
  a.i = const_cast<int64_t*>(rows);
  a.x = const_cast<double*>(x);
  a.stype = 1;
  a.itype = CHOLMOD_LONG;
  a.xtype = x == nullptr ? CHOLMOD_PATTERN : CHOLMOD_REAL;
  a.dtype = CHOLMOD_DOUBLE;
  a.sorted = 1;
  a.packed = 1;
  return a;
}

std::string Error(const char* what, int status, const std::string& messages) {
  std::string message = std::string("CHOLMOD ") + what + " failed: " + StatusName(status);
  if (!messages.empty()) message += " (" + messages + ")";
  return message + ".";
}

}  // namespace

int64_t SparseCholeskyPlan::RequiredBytes(const ReducedCameraPattern& pattern) const {
  const int64_t n = pattern.num_parameters();
  const double factor = kRelaxationMargin * static_cast<double>(factor_size) + static_cast<double>(update_size);
  // Values of L and its update matrix; the analysis' copy of S's pattern and
  // its integer work space (a few arrays of n).
  return static_cast<int64_t>(factor * sizeof(double)) + pattern.num_nonzeros() * 2 * static_cast<int64_t>(sizeof(int64_t)) +
         16 * n * static_cast<int64_t>(sizeof(int64_t));
}

SparseCholeskyPlan PlanSparseCholesky(const ReducedCameraPattern& pattern) {
  SparseCholeskyPlan plan;
  const int nb = pattern.num_cameras();
  if (nb == 0) return plan;
  std::string messages;
  CaptureErrors capture(&messages);
  cholmod_common cc;
  Start(&cc);
  // Only the exact structure: no relaxed amalgamation at the block level.
  for (int i = 0; i < 3; ++i) {
    cc.nrelax[i] = 0;
    cc.zrelax[i] = 0.0;
  }
  const std::vector<int64_t>& col_begin = pattern.block_col_begin();
  const std::vector<int64_t> rows(pattern.block_rows().begin(), pattern.block_rows().end());
  cholmod_sparse blocks = UpperView(nb, col_begin.data(), rows.data(), nullptr);
  std::vector<SuiteSparse_long> amd(nb);
  cholmod_factor* symbolic = nullptr;
  if (cholmod_l_amd(&blocks, nullptr, 0, amd.data(), &cc) && cc.status == CHOLMOD_OK) {
    symbolic = cholmod_l_analyze_p(&blocks, amd.data(), nullptr, 0, &cc);
  }
  if (symbolic == nullptr || cc.status != CHOLMOD_OK || !symbolic->is_super) {
    plan.error = Error("ordering of the camera blocks", cc.status, messages);
    if (symbolic != nullptr) cholmod_l_free_factor(&symbolic, &cc);
    cholmod_l_finish(&cc);
    return plan;
  }
  const SuiteSparse_long* perm = static_cast<const SuiteSparse_long*>(symbolic->Perm);
  const SuiteSparse_long* super = static_cast<const SuiteSparse_long*>(symbolic->super);
  const SuiteSparse_long* pi = static_cast<const SuiteSparse_long*>(symbolic->pi);
  const SuiteSparse_long* srows = static_cast<const SuiteSparse_long*>(symbolic->s);
  plan.camera_order.assign(perm, perm + nb);
  for (size_t sn = 0; sn < symbolic->nsuper; ++sn) {
    // Supernode sn: block columns [super[sn], super[sn + 1]) of the permuted
    // matrix, rows srows[pi[sn] ...] (its own columns first, in order).
    const int64_t first = super[sn], last = super[sn + 1];
    int64_t below = 0;  // scalar rows of the supernode after its columns
    for (SuiteSparse_long p = pi[sn] + (last - first); p < pi[sn + 1]; ++p) {
      below += pattern.camera_size(static_cast<int>(perm[srows[p]]));
    }
    int64_t columns = 0;
    for (int64_t j = first; j < last; ++j) columns += pattern.camera_size(static_cast<int>(perm[j]));
    // CHOLMOD stores a supernode as a dense (its rows) x (its columns)
    // rectangle, the upper part of its diagonal block included.
    plan.factor_size += columns * (columns + below);
    // Column j of the supernode has (columns - j) + below rows from the
    // diagonal on; a factorization costs the sum of their squares.
    for (int64_t j = 0; j < columns; ++j) {
      const double rows = static_cast<double>(columns - j + below);
      plan.flops += rows * rows;
    }
    plan.update_size = std::max(plan.update_size, below * below);
  }
  cholmod_l_free_factor(&symbolic, &cc);
  cholmod_l_finish(&cc);
  return plan;
}

struct SparseCameraCholesky::Impl {
  const ReducedCameraPattern& pattern;
  const int64_t* col_begin;
  const int64_t* rows;
  std::string plan_error;
  std::vector<SuiteSparse_long> permutation;  // scalar, from the plan's camera order
  cholmod_common cc;
  cholmod_factor* factor = nullptr;
  cholmod_dense* x = nullptr;  // cholmod_solve2's result and work space
  cholmod_dense* y = nullptr;
  cholmod_dense* e = nullptr;
  bool factorized = false;
  std::string messages;

  Impl(const ReducedCameraPattern& p, const int64_t* cb, const int64_t* r) : pattern(p), col_begin(cb), rows(r) {}
};

SparseCameraCholesky::SparseCameraCholesky(const ReducedCameraPattern& pattern, const SparseCholeskyPlan& plan,
                                           const int64_t* col_begin, const int64_t* rows)
    : impl_(new Impl(pattern, col_begin, rows)) {
  Impl& m = *impl_;
  m.plan_error = plan.camera_order.empty() && pattern.num_cameras() > 0 ? plan.error : "";
  for (int camera : plan.camera_order) {
    for (int a = 0; a < pattern.camera_size(camera); ++a) m.permutation.push_back(pattern.camera_offset(camera) + a);
  }
  Start(&m.cc);
}

SparseCameraCholesky::~SparseCameraCholesky() {
  Impl& m = *impl_;
  if (m.factor != nullptr) cholmod_l_free_factor(&m.factor, &m.cc);
  for (cholmod_dense** d : {&m.x, &m.y, &m.e}) {
    if (*d != nullptr) cholmod_l_free_dense(d, &m.cc);
  }
  cholmod_l_finish(&m.cc);
}

int64_t SparseCameraCholesky::factor_size() const {
  return impl_->factor != nullptr ? static_cast<int64_t>(impl_->factor->xsize) : -1;
}

LinearSolverSummary SparseCameraCholesky::Factorize(const double* values) {
  Impl& m = *impl_;
  CaptureErrors capture(&m.messages);
  LinearSolverSummary summary;
  summary.num_iterations = 1;
  summary.termination = LinearSolverTermination::kFatalError;
  m.factorized = false;
  const int64_t n = m.pattern.num_parameters();
  if (!m.plan_error.empty()) {
    summary.message = m.plan_error;
    return summary;
  }
  if (n == 0) {
    summary.termination = LinearSolverTermination::kSuccess;
    m.factorized = true;
    return summary;
  }
  cholmod_sparse s = UpperView(n, m.col_begin, m.rows, values);
  if (m.factor == nullptr) {
    m.factor = cholmod_l_analyze_p(&s, m.permutation.data(), nullptr, 0, &m.cc);
    if (m.factor == nullptr || m.cc.status != CHOLMOD_OK) {
      summary.message = Error("symbolic analysis", m.cc.status, m.messages);
      if (m.factor != nullptr) cholmod_l_free_factor(&m.factor, &m.cc);
      return summary;
    }
  }
  const int ok = cholmod_l_factorize(&s, m.factor, &m.cc);
  if (m.cc.status == CHOLMOD_NOT_POSDEF) {
    char buffer[200];
    std::snprintf(buffer, sizeof(buffer),
                  "The reduced camera matrix is not positive definite (CHOLMOD: leading minor of order %lld).",
                  static_cast<long long>(m.factor->minor) + 1);
    summary.termination = LinearSolverTermination::kFailure;
    summary.message = buffer;
    return summary;
  }
  if (!ok || m.cc.status != CHOLMOD_OK) {
    summary.message = Error("numeric factorization", m.cc.status, m.messages);
    return summary;
  }
  m.factorized = true;
  summary.termination = LinearSolverTermination::kSuccess;
  return summary;
}

LinearSolverSummary SparseCameraCholesky::Solve(const double* b, double* x) {
  Impl& m = *impl_;
  CaptureErrors capture(&m.messages);
  LinearSolverSummary summary;
  summary.num_iterations = 1;
  summary.termination = LinearSolverTermination::kFatalError;
  const int64_t n = m.pattern.num_parameters();
  if (!m.factorized) {
    summary.message = "SparseCameraCholesky::Solve without a factorization.";
    return summary;
  }
  if (n > 0) {
    cholmod_dense rhs = {};
    rhs.nrow = static_cast<size_t>(n);
    rhs.ncol = 1;
    rhs.nzmax = static_cast<size_t>(n);
    rhs.d = static_cast<size_t>(n);
    rhs.x = const_cast<double*>(b);
    rhs.xtype = CHOLMOD_REAL;
    rhs.dtype = CHOLMOD_DOUBLE;
    if (!cholmod_l_solve2(CHOLMOD_A, m.factor, &rhs, nullptr, &m.x, nullptr, &m.y, &m.e, &m.cc) ||
        m.cc.status != CHOLMOD_OK) {
      summary.message = Error("solve", m.cc.status, m.messages);
      return summary;
    }
    const double* solution = static_cast<const double*>(m.x->x);
    std::copy(solution, solution + n, x);
  }
  summary.termination = LinearSolverTermination::kSuccess;
  return summary;
}

bool SparseCameraCholesky::GetSupernodalFactor(SupernodalFactor* factor) const {
  const Impl& m = *impl_;
  const int64_t n = m.pattern.num_parameters();
  if (!m.factorized) return false;
  if (n == 0) {
    *factor = SupernodalFactor();
    return true;
  }
  const cholmod_factor* l = m.factor;
  if (l == nullptr || !l->is_super || !l->is_ll || l->xtype != CHOLMOD_REAL || l->itype != CHOLMOD_LONG) return false;
  factor->n = n;
  factor->num_supernodes = static_cast<int64_t>(l->nsuper);
  factor->perm = static_cast<const int64_t*>(l->Perm);
  factor->super = static_cast<const int64_t*>(l->super);
  factor->row_begin = static_cast<const int64_t*>(l->pi);
  factor->rows = static_cast<const int64_t*>(l->s);
  factor->value_begin = static_cast<const int64_t*>(l->px);
  factor->values = static_cast<const double*>(l->x);
  return true;
}

std::string SparseCameraCholesky::Statistics() const {
  const Impl& m = *impl_;
  char buffer[256];
  if (m.factor == nullptr) return "CHOLMOD supernodal LL^T, not analysed";
  std::snprintf(buffer, sizeof(buffer),
                "CHOLMOD supernodal LL^T of the %lld x %lld reduced camera matrix (%lld nonzeros in its upper "
                "triangle): %zu supernodes, nnz(L) = %.0f, %zu values with padding, %.3g flops",
                static_cast<long long>(m.pattern.num_parameters()), static_cast<long long>(m.pattern.num_parameters()),
                static_cast<long long>(m.pattern.num_nonzeros()), m.factor->nsuper, m.cc.lnz, m.factor->xsize, m.cc.fl);
  return buffer;
}

}  // namespace internal
}  // namespace ceres_sqrtba
