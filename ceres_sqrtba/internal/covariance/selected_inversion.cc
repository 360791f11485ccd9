#include "ceres_sqrtba/internal/covariance/selected_inversion.h"

#include <algorithm>

#include "Eigen/Core"
#include "Eigen/Dense"

namespace ceres_sqrtba {
namespace internal {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;  // column-major, as CHOLMOD

namespace {

constexpr int64_t kPanel = 96;  // columns per task of the dense diagonal blocks

// x (n x n, leading dimension ldx) = L^-1 for the lower-triangular l (ldl),
// lower triangle only: panel by panel of columns, each L[j:, j:] X = I[j:,
// panel], in parallel (each panel's arithmetic is the same for any thread
// count). n^3 / 3 flops.
void TriangularInverse(const double* l, int64_t ldl, int64_t n, double* x, int64_t ldx, ParallelContext* context) {
  const int panels = static_cast<int>((n + kPanel - 1) / kPanel);
  auto panel = [&](int p) {
    const int64_t j = p * kPanel, b = std::min(kPanel, n - j);
    Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> lj(l + j * ldl + j, n - j, n - j, Eigen::OuterStride<>(ldl));
    Eigen::Map<Matrix, 0, Eigen::OuterStride<>> xj(x + j * ldx + j, n - j, b, Eigen::OuterStride<>(ldx));
    xj.setZero();
    xj.topRows(b).setIdentity();
    lj.triangularView<Eigen::Lower>().solveInPlace(xj);
  };
  if (context != nullptr && n > kPanel) {
    context->For(panels, 1, [&](int pb, int pe) {
      for (int p = pb; p < pe; ++p) panel(p);
    });
  } else {
    for (int p = 0; p < panels; ++p) panel(p);
  }
}

// In place, x's lower triangle: L^-1 (lower) -> L^-T L^-1 (lower), the
// top n rows of a column-major block with leading dimension ldx. Panels of
// columns in increasing order (panel j's result needs only columns >= j,
// which later panels overwrite), each split by rows over the threads.
// n^3 / 3 flops.
void InverseGram(int64_t n, double* x, int64_t ldx, ParallelContext* context) {
  Matrix copy;
  for (int64_t j = 0; j < n; j += kPanel) {
    const int64_t b = std::min(kPanel, n - j);
    Eigen::Map<Matrix, 0, Eigen::OuterStride<>> panel(x + j * ldx + j, n - j, b, Eigen::OuterStride<>(ldx));
    copy = panel;  // L^-1[j:, panel]
    const int pieces = static_cast<int>((n - j + kPanel - 1) / kPanel);
    auto piece = [&](int q) {
      const int64_t i0 = j + q * kPanel, rows = std::min(kPanel, n - i0);
      // Z[i0 .. i0+rows, panel] = L^-1[i0:, i0 .. i0+rows]^T L^-1[i0:, panel].
      Eigen::Map<Matrix, 0, Eigen::OuterStride<>> out(x + j * ldx + i0, rows, b, Eigen::OuterStride<>(ldx));
      if (q == 0) {
        out.noalias() = copy.transpose().topRows(rows) * copy;  // rows == b here
        return;
      }
      Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> left(x + i0 * ldx + i0, n - i0, rows, Eigen::OuterStride<>(ldx));
      out.noalias() = left.transpose() * copy.bottomRows(n - i0);
    };
    if (context != nullptr && pieces > 1) {
      context->For(pieces, 1, [&](int qb, int qe) {
        for (int q = qb; q < qe; ++q) piece(q);
      });
    } else {
      for (int q = 0; q < pieces; ++q) piece(q);
    }
  }
}

}  // namespace

int64_t SelectedInverse::RequiredBytes(int64_t factor_values, int64_t n) { return 8 * factor_values + 16 * n; }

int64_t SelectedInverse::Position(int64_t t, int64_t row) const {
  const int64_t* first = f_.rows + f_.row_begin[t];
  const int64_t* last = f_.rows + f_.row_begin[t + 1];
  const int64_t* it = std::lower_bound(first, last, row);
  return it != last && *it == row ? it - first : -1;
}

bool SelectedInverse::Compute(const SupernodalFactor& factor, ParallelContext* context, std::string* error) {
  f_ = factor;
  const int64_t n = f_.n;
  supernode_of_.assign(static_cast<size_t>(n), -1);
  inverse_perm_.assign(static_cast<size_t>(n), -1);
  if (n == 0) return true;
  for (int64_t k = 0; k < n; ++k) inverse_perm_[f_.perm[k]] = k;
  for (int64_t t = 0; t < f_.num_supernodes; ++t) {
    for (int64_t j = f_.super[t]; j < f_.super[t + 1]; ++j) supernode_of_[j] = t;
    const int64_t* rows = f_.rows + f_.row_begin[t];
    const int64_t count = f_.row_begin[t + 1] - f_.row_begin[t];
    for (int64_t r = 0; r < count; ++r) {
      const bool ok = r < f_.super[t + 1] - f_.super[t] ? rows[r] == f_.super[t] + r : rows[r] > rows[r - 1];
      if (!ok) {
        *error = "the Cholesky factor's supernodal rows are not sorted";
        return false;
      }
    }
  }
  const int64_t total = f_.value_begin[f_.num_supernodes];
  z_.reset(new double[static_cast<size_t>(std::max<int64_t>(1, total))]);

  Matrix z_ii, u, z_ij;
  for (int64_t s = f_.num_supernodes - 1; s >= 0; --s) {
    const int64_t ns = f_.super[s + 1] - f_.super[s];
    const int64_t nr = f_.row_begin[s + 1] - f_.row_begin[s];
    const int64_t m = nr - ns;
    Eigen::Map<const Matrix> l(f_.values + f_.value_begin[s], nr, ns);
    Eigen::Map<Matrix> z(z_.get() + f_.value_begin[s], nr, ns);
    const int64_t* below = f_.rows + f_.row_begin[s] + ns;
    // L_JJ^-1 into Z's diagonal block (its lower triangle).
    TriangularInverse(l.data(), nr, ns, z.data(), nr, context);
    if (m > 0) {
      // Z_II from the ancestors' columns: column b of Z_II is (a part of)
      // a column of the supernode that holds row below[b].
      z_ii.resize(m, m);
      for (int64_t b = 0; b < m; ++b) {
        const int64_t column = below[b];
        const int64_t t = supernode_of_[column];
        const int64_t ld = f_.row_begin[t + 1] - f_.row_begin[t];
        const double* zc = z_.get() + f_.value_begin[t] + (column - f_.super[t]) * ld;
        const int64_t* trows = f_.rows + f_.row_begin[t];
        int64_t position = column - f_.super[t];
        for (int64_t a = b; a < m; ++a) {
          const int64_t* it = std::lower_bound(trows + position, trows + ld, below[a]);
          if (it == trows + ld || *it != below[a]) {
            *error = "an entry of the inverse needed by the selected inversion is off the factor's pattern";
            return false;
          }
          position = it - trows;
          z_ii(a, b) = z_ii(b, a) = zc[position];
        }
      }
      // U = L_IJ L_JJ^-1, Z_IJ = -Z_II U.
      u.noalias() = l.bottomRows(m) * z.topRows(ns).triangularView<Eigen::Lower>();
      z_ij.noalias() = z_ii * u;
      z.bottomRows(m) = -z_ij;
    }
    // Z_JJ = L_JJ^-T L_JJ^-1 (- U^T Z_IJ), its lower triangle.
    InverseGram(ns, z.data(), nr, context);
    if (m > 0) z.topRows(ns).triangularView<Eigen::Lower>() += u.transpose() * z_ij;
  }
  return true;
}

bool SelectedInverse::Block(int64_t i0, int ni, int64_t j0, int nj, double* out, int ld) const {
  const int64_t pi = inverse_perm_[i0], pj = inverse_perm_[j0];
  for (int k = 1; k < ni; ++k) {
    if (inverse_perm_[i0 + k] != pi + k) return false;
  }
  for (int k = 1; k < nj; ++k) {
    if (inverse_perm_[j0 + k] != pj + k) return false;
  }
  if (pi < pj + nj && pj < pi + ni) return false;  // overlapping: entry by entry
  const bool below = pi > pj;  // the rows lie below the columns in the factor
  const int64_t row0 = below ? pi : pj, column0 = below ? pj : pi;
  const int rows = below ? ni : nj, columns = below ? nj : ni;
  for (int k = 0; k < columns; ++k) {
    const int64_t column = column0 + k;
    const int64_t t = supernode_of_[column];
    const int64_t position = Position(t, row0);
    const int64_t count = f_.row_begin[t + 1] - f_.row_begin[t];
    if (position < 0 || position + rows > count || f_.rows[f_.row_begin[t] + position + rows - 1] != row0 + rows - 1) {
      return false;
    }
    const double* z = z_.get() + f_.value_begin[t] + (column - f_.super[t]) * count + position;
    for (int r = 0; r < rows; ++r) {
      if (below) {
        out[r + k * ld] = z[r];
      } else {
        out[k + r * ld] = z[r];
      }
    }
  }
  return true;
}

bool SelectedInverse::Entry(int64_t i, int64_t j, double* value) const {
  const int64_t pi = inverse_perm_[i], pj = inverse_perm_[j];
  const int64_t row = std::max(pi, pj), column = std::min(pi, pj);
  const int64_t t = supernode_of_[column];
  const int64_t position = Position(t, row);
  if (position < 0) return false;
  const int64_t ld = f_.row_begin[t + 1] - f_.row_begin[t];
  *value = z_[f_.value_begin[t] + (column - f_.super[t]) * ld + position];
  return true;
}

}  // namespace internal
}  // namespace ceres_sqrtba
