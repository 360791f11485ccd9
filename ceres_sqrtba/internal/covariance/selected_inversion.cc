#include "ceres_sqrtba/internal/covariance/selected_inversion.h"

#include <algorithm>

#include "Eigen/Core"
#include "ceres_sqrtba/internal/common/dense_blas.h"
#include "ceres_sqrtba/internal/common/memory.h"

namespace ceres_sqrtba {
namespace internal {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;  // column-major, as CHOLMOD

int64_t SelectedInverse::RequiredBytes(int64_t factor_values, int64_t n) { return 8 * factor_values + 16 * n; }

int64_t SelectedInverse::Position(int64_t t, int64_t row) const {
  const int64_t* first = f_.rows + f_.row_begin[t];
  const int64_t* last = f_.rows + f_.row_begin[t + 1];
  if (contiguous_[t]) return row >= *first && row <= last[-1] ? row - *first : -1;
  const int64_t* it = std::lower_bound(first, last, row);
  return it != last && *it == row ? it - first : -1;
}

const double* SelectedInverse::ColumnSegment(int64_t column, int64_t row0, int rows) const {
  const int64_t t = supernode_of_[column];
  const int64_t position = Position(t, row0);
  const int64_t count = f_.row_begin[t + 1] - f_.row_begin[t];
  if (position < 0 || position + rows > count || f_.rows[f_.row_begin[t] + position + rows - 1] != row0 + rows - 1) {
    return nullptr;
  }
  return z_.get() + f_.value_begin[t] + (column - f_.super[t]) * count + position;
}

bool SelectedInverse::Compute(const SupernodalFactor& factor, std::string* error) {
  f_ = factor;
  const int64_t n = f_.n;
  supernode_of_.assign(static_cast<size_t>(n), -1);
  inverse_perm_.assign(static_cast<size_t>(n), -1);
  contiguous_.assign(static_cast<size_t>(f_.num_supernodes), 0);
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
    contiguous_[t] = count > 0 && rows[count - 1] - rows[0] == count - 1;
  }
  const int64_t total = f_.value_begin[f_.num_supernodes];
  // Huge pages (AllocateLarge): the blocks phase reads this array at
  // random, 6 columns per camera pair, and with 4 KiB pages nearly every one
  // of those reads is a TLB miss once the array is larger than the TLB's
  // reach.
  try {
    z_.reset(static_cast<double*>(AllocateLarge(8 * std::max<int64_t>(1, total))));
  } catch (const AllocationFailure& failure) {
    *error = failure.what();
    return false;
  }

  Matrix z_ii, u, w;
  for (int64_t s = f_.num_supernodes - 1; s >= 0; --s) {
    const int64_t ns = f_.super[s + 1] - f_.super[s];
    const int64_t nr = f_.row_begin[s + 1] - f_.row_begin[s];
    const int64_t m = nr - ns;
    const double* l = f_.values + f_.value_begin[s];
    double* z = z_.get() + f_.value_begin[s];
    const int64_t* below = f_.rows + f_.row_begin[s] + ns;
    // L_JJ^-1 into Z's diagonal block (its lower triangle; the upper one
    // zero, as the last product adds to it).
    for (int64_t c = 0; c < ns; ++c) {
      std::fill(z + c * nr, z + c * nr + c, 0.0);
      std::copy(l + c * nr + c, l + c * nr + ns, z + c * nr + c);
    }
    if (!InvertLowerTriangular(static_cast<int>(ns), z, static_cast<int>(nr))) {
      *error = "the Cholesky factor of the reduced camera matrix has a zero pivot";
      return false;
    }
    if (m > 0) {
      // Z_II (its lower triangle) from the ancestors' columns: column b of
      // Z_II is (a part of) a column of the supernode that holds row
      // below[b].
      z_ii.resize(m, m);
      for (int64_t b = 0; b < m; ++b) {
        const int64_t column = below[b];
        const int64_t t = supernode_of_[column];
        const int64_t ld = f_.row_begin[t + 1] - f_.row_begin[t];
        const double* zc = z_.get() + f_.value_begin[t] + (column - f_.super[t]) * ld;
        const int64_t* trows = f_.rows + f_.row_begin[t];
        int64_t position = column - f_.super[t];
        for (int64_t a = b; a < m; ++a) {
          // The rows of both are sorted: a linear merge, with a search
          // only where the ancestor's rows skip ahead.
          if (position >= ld || trows[position] != below[a]) {
            const int64_t* it = std::lower_bound(trows + position, trows + ld, below[a]);
            if (it == trows + ld || *it != below[a]) {
              *error = "an entry of the inverse needed by the selected inversion is off the factor's pattern";
              return false;
            }
            position = it - trows;
          }
          z_ii(a, b) = zc[position++];
        }
      }
      // U = L_IJ L_JJ^-1, W = Z_II U, Z_IJ = -W.
      u.resize(m, ns);
      for (int64_t c = 0; c < ns; ++c) std::copy(l + c * nr + ns, l + c * nr + nr, u.data() + c * m);
      TimesLowerTriangular(static_cast<int>(m), static_cast<int>(ns), z, static_cast<int>(nr), u.data(),
                           static_cast<int>(m));
      w.resize(m, ns);
      SymmetricTimes(static_cast<int>(m), static_cast<int>(ns), 1.0, z_ii.data(), static_cast<int>(m), u.data(),
                     static_cast<int>(m), w.data(), static_cast<int>(m));
      for (int64_t c = 0; c < ns; ++c) {
        for (int64_t r = 0; r < m; ++r) z[c * nr + ns + r] = -w(r, c);
      }
    }
    // Z_JJ = L_JJ^-T L_JJ^-1 + U^T W (its lower triangle is what is read;
    // the product writes the whole block).
    LowerTransposeTimesLower(static_cast<int>(ns), z, static_cast<int>(nr));
    if (m > 0) {
      AddTransposeTimes(static_cast<int>(ns), static_cast<int>(ns), static_cast<int>(m), 1.0, u.data(),
                        static_cast<int>(m), w.data(), static_cast<int>(m), z, static_cast<int>(nr));
    }
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
  if (i0 == j0 && ni == nj) {
    // A diagonal block: its lower triangle in the factor's order, both
    // triangles out.
    for (int k = 0; k < nj; ++k) {
      const double* z = ColumnSegment(pj + k, pj + k, nj - k);
      if (z == nullptr) return false;
      for (int r = 0; r < nj - k; ++r) out[k + r + k * ld] = out[k + (k + r) * ld] = z[r];
    }
    return true;
  }
  if (pi < pj + nj && pj < pi + ni) return false;  // overlapping otherwise: entry by entry
  const bool below = pi > pj;  // the rows lie below the columns in the factor
  const int64_t row0 = below ? pi : pj, column0 = below ? pj : pi;
  const int rows = below ? ni : nj, columns = below ? nj : ni;
  for (int k = 0; k < columns; ++k) {
    const double* z = ColumnSegment(column0 + k, row0, rows);
    if (z == nullptr) return false;
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
