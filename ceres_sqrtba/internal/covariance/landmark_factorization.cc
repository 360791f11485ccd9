#include "ceres_sqrtba/internal/covariance/landmark_factorization.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "Eigen/Core"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

constexpr int kMaxChunks = 64;
constexpr int64_t kMinChunkWork = 4096;

// Householder QR of the first e columns of the m x ld row-major block a,
// applied to all its columns in place; below R's diagonal the result is
// exact zeros. Returns the smallest |R_kk| (0 when m < e).
double HouseholderInPlace(int m, int e, int ld, double* a) {
  double smallest = std::numeric_limits<double>::infinity();
  for (int k = 0; k < e; ++k) {
    if (k >= m) return 0.0;
    double norm2 = 0.0;
    for (int i = k; i < m; ++i) norm2 += a[i * ld + k] * a[i * ld + k];
    const double norm = std::sqrt(norm2);
    if (norm == 0.0) {
      smallest = 0.0;
      continue;
    }
    const double x0 = a[k * ld + k];
    const double alpha = x0 >= 0.0 ? -norm : norm;
    // v = x - alpha e_1, stored in column k below the diagonal, v_0 aside.
    const double v0 = x0 - alpha;
    const double beta = norm2 - x0 * alpha - x0 * alpha + alpha * alpha;  // v^T v
    if (beta > 0.0) {
      for (int j = k + 1; j < ld; ++j) {
        double dot = v0 * a[k * ld + j];
        for (int i = k + 1; i < m; ++i) dot += a[i * ld + k] * a[i * ld + j];
        const double f = 2.0 * dot / beta;
        a[k * ld + j] -= f * v0;
        for (int i = k + 1; i < m; ++i) a[i * ld + j] -= f * a[i * ld + k];
      }
    }
    a[k * ld + k] = alpha;
    for (int i = k + 1; i < m; ++i) a[i * ld + k] = 0.0;
    smallest = std::min(smallest, std::abs(alpha));
  }
  return smallest;
}

}  // namespace

class LandmarkFactorization::Writer : public JacobianWriter {
 public:
  explicit Writer(LandmarkFactorization* f) : f_(*f) {}
  void Write(int group, int /*position*/, int row, int residual, const double* /*residuals*/,
             const double* const* jacobians) override {
    const ResidualBlockInfo& rb = f_.s_.residual_blocks[residual];
    const int ld = f_.stride(group);
    double* block = f_.values_.get() + f_.offset_[group] + static_cast<int64_t>(row) * ld;
    std::memset(block, 0, sizeof(double) * static_cast<size_t>(rb.num_residuals) * ld);
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const int column = f_.parameter_column_[rb.parameter_begin + i];
      if (column < 0 || jacobians[i] == nullptr) continue;
      const int size = f_.s_.parameter_blocks[f_.s_.residual_parameters[rb.parameter_begin + i]].tangent_size;
      for (int r = 0; r < rb.num_residuals; ++r) {
        std::copy(jacobians[i] + r * size, jacobians[i] + (r + 1) * size, block + r * ld + column);
      }
    }
  }

 private:
  LandmarkFactorization& f_;
};

LandmarkFactorization::LandmarkFactorization(const ProblemStructure& s, ParallelContext* context)
    : s_(s), context_(context) {
  const int num_groups = static_cast<int>(s.groups.size());
  std::vector<int64_t> work(num_groups);
  offset_.assign(num_groups + 1, 0);
  entry_column_.assign(s.group_cameras.size(), -1);
  parameter_column_.assign(s.residual_parameters.size(), -1);
  std::vector<int> column_of(s.parameter_blocks.size(), -1);
  for (int g = 0; g < num_groups; ++g) {
    const Group& group = s.groups[g];
    const int64_t size = static_cast<int64_t>(group.num_rows) * (group.landmark_size + group.camera_columns);
    offset_[g + 1] = offset_[g] + size;
    work[g] = std::max<int64_t>(1, size);
    int column = group.landmark_size;
    for (int c = group.camera_begin; c < group.camera_end; ++c) {
      entry_column_[c] = column;
      column_of[s.group_cameras[c]] = column;
      column += s.parameter_blocks[s.group_cameras[c]].tangent_size;
    }
    if (group.landmark >= 0) column_of[group.landmark] = 0;
    for (int r = group.residual_begin; r < group.residual_end; ++r) {
      const ResidualBlockInfo& rb = s.residual_blocks[s.group_residuals[r]];
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const int p = s.residual_parameters[rb.parameter_begin + i];
        if (!s.parameter_blocks[p].is_constant) parameter_column_[rb.parameter_begin + i] = column_of[p];
      }
    }
    for (int c = group.camera_begin; c < group.camera_end; ++c) column_of[s.group_cameras[c]] = -1;
    if (group.landmark >= 0) column_of[group.landmark] = -1;
  }
  const int max_chunks =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(kMaxChunks, offset_.back() / kMinChunkWork)));
  partition_ = WorkPartition(num_groups, work, max_chunks, kMinChunkWork);
  deficient_.assign(num_groups, 0);
}

LandmarkFactorization::~LandmarkFactorization() = default;

int64_t LandmarkFactorization::RequiredBytes(const ProblemStructure& s) {
  int64_t values = 0;
  for (const Group& g : s.groups) values += static_cast<int64_t>(g.num_rows) * (g.landmark_size + g.camera_columns);
  return 8 * values + 8 * static_cast<int64_t>(s.groups.size() + 1) + 4 * static_cast<int64_t>(s.group_cameras.size()) +
         4 * static_cast<int64_t>(s.residual_parameters.size()) + static_cast<int64_t>(s.groups.size());
}

bool LandmarkFactorization::Compute(const ceres::Problem* problem, std::string* error) {
  values_.reset(new double[static_cast<size_t>(std::max<int64_t>(1, offset_.back()))]);
  Evaluator evaluator(s_, partition_, context_);
  EvaluationNotifier notifier(problem, s_);
  evaluator.SetNotifier(&notifier);
  std::vector<double> state = StateFromUser(s_);
  std::vector<double> gradient(static_cast<size_t>(s_.num_effective_parameters));
  Writer writer(this);
  double cost = 0.0;
  if (!evaluator.EvaluateJacobian(state.data(), true, &cost, gradient.data(), &writer)) {
    *error = evaluator.error();
    return false;
  }
  // Column norms of J before the QR: the landmark's within its group, the
  // cameras' summed over their groups (below, from the orthogonally
  // transformed columns, whose norms are the same).
  std::vector<double> chunk_max(partition_.num_chunks(), 0.0);
  context_->ForChunks(partition_, [&](int chunk, int begin, int end) {
    double largest = 0.0;
    for (int g = begin; g < end; ++g) {
      const int m = rows(g), e = landmark_size(g), ld = stride(g);
      if (e == 0) continue;
      double* a = values_.get() + offset_[g];
      double column_norm = 0.0;
      for (int k = 0; k < e; ++k) {
        double n2 = 0.0;
        for (int i = 0; i < m; ++i) n2 += a[i * ld + k] * a[i * ld + k];
        column_norm = std::max(column_norm, std::sqrt(n2));
      }
      const double smallest = HouseholderInPlace(m, e, ld, a);
      const double tolerance = 20.0 * (m + e) * std::numeric_limits<double>::epsilon() * column_norm;
      deficient_[g] = (m < e || !(smallest > tolerance)) ? 1 : 0;
      largest = std::max(largest, column_norm);
    }
    chunk_max[chunk] = largest;
  });
  std::vector<double> camera_max(s_.cameras.size(), 0.0);
  context_->For(static_cast<int>(s_.cameras.size()), 16, [&](int cb, int ce) {
    for (int c = cb; c < ce; ++c) {
      const int size = s_.parameter_blocks[s_.cameras[c]].tangent_size;
      std::vector<double> n2(static_cast<size_t>(size), 0.0);
      for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
        const int g = s_.camera_groups[k];
        const int column = entry_column_[s_.camera_group_entry[k]];
        const double* a = block(g);
        const int ld = stride(g);
        for (int i = 0; i < rows(g); ++i) {
          for (int j = 0; j < size; ++j) n2[j] += a[i * ld + column + j] * a[i * ld + column + j];
        }
      }
      double largest = 0.0;
      for (double v : n2) largest = std::max(largest, std::sqrt(v));
      camera_max[c] = largest;
    }
  });
  max_column_norm_ = 0.0;
  for (double v : chunk_max) max_column_norm_ = std::max(max_column_norm_, v);
  for (double v : camera_max) max_column_norm_ = std::max(max_column_norm_, v);
  return true;
}

void LandmarkFactorization::AssembleReducedCameraMatrix(const ReducedCameraPattern& pattern,
                                                        const std::vector<int64_t>& col_begin,
                                                        double* values) const {
  std::fill(values, values + pattern.num_nonzeros(), 0.0);
  context_->For(pattern.num_cameras(), 4, [&](int cb, int ce) {
    for (int c = cb; c < ce; ++c) {
      const int fc = pattern.camera_size(c);
      const int64_t column0 = pattern.camera_offset(c);
      for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
        const int g = s_.camera_groups[k];
        const Group& group = s_.groups[g];
        const int e = group.landmark_size, ld = stride(g), m = rows(g);
        const double* b = block(g) + static_cast<int64_t>(e) * ld;  // the reduced rows
        const int reduced_rows = m - std::min(m, e);
        const int jc = entry_column_[s_.camera_group_entry[k]];
        for (int other = group.camera_begin; other < group.camera_end; ++other) {
          const int c2 = s_.parameter_blocks[s_.group_cameras[other]].camera_index;
          if (c2 > c) continue;
          const int64_t blk = pattern.FindBlock(c2, c);
          const int f2 = pattern.camera_size(c2);
          const int jo = entry_column_[other];
          const int position = pattern.position(blk);
          for (int a = 0; a < fc; ++a) {
            double* out = values + col_begin[column0 + a] + position;
            const int last = c2 == c ? a + 1 : f2;  // the diagonal block: its upper triangle
            for (int i = 0; i < last; ++i) {
              double sum = 0.0;
              for (int r = 0; r < reduced_rows; ++r) sum += b[r * ld + jo + i] * b[r * ld + jc + a];
              out[i] += sum;
            }
          }
        }
      }
    }
  });
}

void LandmarkFactorization::Marginalization(int g, double* k) const {
  const Group& group = s_.groups[g];
  const int e = group.landmark_size, ld = stride(g), n = group.camera_columns;
  const double* a = block(g);
  Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>> all(a, e, ld, Eigen::OuterStride<>(ld));
  Eigen::Map<RowMatrix> out(k, e, n);
  out = all.rightCols(n);
  all.leftCols(e).triangularView<Eigen::Upper>().solveInPlace(out);
}

void LandmarkFactorization::LandmarkInverse(int g, double* c) const {
  const int e = landmark_size(g), ld = stride(g);
  Eigen::Map<const RowMatrix, 0, Eigen::OuterStride<>> r(block(g), e, e, Eigen::OuterStride<>(ld));
  RowMatrix r_inverse = RowMatrix::Identity(e, e);
  r.triangularView<Eigen::Upper>().solveInPlace(r_inverse);
  Eigen::Map<RowMatrix>(c, e, e) = r_inverse * r_inverse.transpose();
}

}  // namespace internal
}  // namespace ceres_sqrtba
