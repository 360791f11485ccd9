#include "ceres_sqrtba/internal/covariance/selected_inversion.h"

#include <algorithm>

#include "Eigen/Core"
#include "Eigen/Dense"

namespace ceres_sqrtba {
namespace internal {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic>;  // column-major, as CHOLMOD

int64_t SelectedInverse::RequiredBytes(int64_t factor_values, int64_t n) { return 8 * factor_values + 16 * n; }

int64_t SelectedInverse::Position(int64_t t, int64_t row) const {
  const int64_t* first = f_.rows + f_.row_begin[t];
  const int64_t* last = f_.rows + f_.row_begin[t + 1];
  const int64_t* it = std::lower_bound(first, last, row);
  return it != last && *it == row ? it - first : -1;
}

bool SelectedInverse::Compute(const SupernodalFactor& factor, std::string* error) {
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

  Matrix z_ii, u, l_inverse, z_ij;
  for (int64_t s = f_.num_supernodes - 1; s >= 0; --s) {
    const int64_t ns = f_.super[s + 1] - f_.super[s];
    const int64_t nr = f_.row_begin[s + 1] - f_.row_begin[s];
    const int64_t m = nr - ns;
    Eigen::Map<const Matrix> l(f_.values + f_.value_begin[s], nr, ns);
    Eigen::Map<Matrix> z(z_.get() + f_.value_begin[s], nr, ns);
    const int64_t* below = f_.rows + f_.row_begin[s] + ns;
    l_inverse.setIdentity(ns, ns);
    l.topRows(ns).triangularView<Eigen::Lower>().solveInPlace(l_inverse);
    if (m == 0) {
      z.noalias() = l_inverse.transpose() * l_inverse;
      continue;
    }
    // Z_II from the ancestors' columns: column b of Z_II is (a part of) a
    // column of the supernode that holds row below[b].
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
    // U = L_IJ L_JJ^-1, Z_IJ = -Z_II U, Z_JJ = L_JJ^-T L_JJ^-1 - U^T Z_IJ.
    u.noalias() = l.bottomRows(m) * l_inverse.triangularView<Eigen::Lower>();
    z_ij.noalias() = z_ii * u;
    z_ij = -z_ij;
    z.bottomRows(m) = z_ij;
    z.topRows(ns).noalias() = l_inverse.transpose() * l_inverse;
    z.topRows(ns).noalias() -= u.transpose() * z_ij;
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
