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

// Householder QR of the m x e row-major a in place: R in its first e rows
// (below the diagonal exact zeros, the reflectors discarded). Returns the
// smallest |R_kk| (0 when m < e).
double HouseholderInPlace(int m, int e, double* a) {
  double smallest = std::numeric_limits<double>::infinity();
  for (int k = 0; k < e; ++k) {
    if (k >= m) return 0.0;
    double norm2 = 0.0;
    for (int i = k; i < m; ++i) norm2 += a[i * e + k] * a[i * e + k];
    const double norm = std::sqrt(norm2);
    if (norm == 0.0) {
      smallest = 0.0;
      continue;
    }
    const double x0 = a[k * e + k];
    const double alpha = x0 >= 0.0 ? -norm : norm;
    const double v0 = x0 - alpha;  // v = x - alpha e_1, its tail in column k
    const double beta = norm2 - 2.0 * x0 * alpha + alpha * alpha;  // v^T v
    if (beta > 0.0) {
      for (int j = k + 1; j < e; ++j) {
        double dot = v0 * a[k * e + j];
        for (int i = k + 1; i < m; ++i) dot += a[i * e + k] * a[i * e + j];
        const double f = 2.0 * dot / beta;
        a[k * e + j] -= f * v0;
        for (int i = k + 1; i < m; ++i) a[i * e + j] -= f * a[i * e + k];
      }
    }
    a[k * e + k] = alpha;
    for (int i = k + 1; i < m; ++i) a[i * e + k] = 0.0;
    smallest = std::min(smallest, std::abs(alpha));
  }
  return smallest;
}

}  // namespace

class LandmarkFactorization::Writer : public JacobianWriter {
 public:
  explicit Writer(LandmarkFactorization* f) : f_(*f) {}
  void Write(int /*group*/, int /*position*/, int /*row*/, int residual, const double* /*residuals*/,
             const double* const* jacobians) override {
    const ResidualBlockInfo& rb = f_.s_.residual_blocks[residual];
    const int width = f_.row_width_[residual];
    double* rows = f_.values_.get() + f_.row_offset_[residual];
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const int column = f_.parameter_column_[rb.parameter_begin + i];
      if (column < 0) continue;
      const int size = f_.s_.parameter_blocks[f_.s_.residual_parameters[rb.parameter_begin + i]].tangent_size;
      for (int r = 0; r < rb.num_residuals; ++r) {
        double* out = rows + r * width + column;
        if (jacobians[i] == nullptr) {
          std::fill(out, out + size, 0.0);
        } else {
          std::copy(jacobians[i] + r * size, jacobians[i] + (r + 1) * size, out);
        }
      }
    }
  }

 private:
  LandmarkFactorization& f_;
};

LandmarkFactorization::LandmarkFactorization(const ProblemStructure& s, ParallelContext* context,
                                             double landmark_damping)
    : s_(s), context_(context), landmark_damping_(landmark_damping) {
  const int num_groups = static_cast<int>(s.groups.size());
  const int num_residual_blocks = static_cast<int>(s.residual_blocks.size());
  std::vector<int64_t> work(num_groups);
  row_offset_.assign(num_residual_blocks + 1, 0);
  row_width_.assign(num_residual_blocks, 0);
  factor_offset_.assign(num_groups + 1, 0);
  entry_column_.assign(s.group_cameras.size(), -1);
  parameter_column_.assign(s.residual_parameters.size(), -1);
  parameter_entry_.assign(s.residual_parameters.size(), -1);
  entry_residual_begin_.assign(s.group_cameras.size() + 1, 0);
  std::vector<int> entry_of(s.parameter_blocks.size(), -1);
  // Residual blocks are numbered group by group (problem_structure.h).
  for (int g = 0; g < num_groups; ++g) {
    const Group& group = s.groups[g];
    int column = 0;
    for (int c = group.camera_begin; c < group.camera_end; ++c) {
      entry_column_[c] = column;
      entry_of[s.group_cameras[c]] = c;
      column += s.parameter_blocks[s.group_cameras[c]].tangent_size;
    }
    int64_t group_work = 0;
    for (int k = group.residual_begin; k < group.residual_end; ++k) {
      const int r = s.group_residuals[k];
      const ResidualBlockInfo& rb = s.residual_blocks[r];
      int width = group.landmark_size;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const int p = s.residual_parameters[rb.parameter_begin + i];
        if (s.parameter_blocks[p].is_constant) continue;
        if (p == group.landmark) {
          parameter_column_[rb.parameter_begin + i] = 0;
        } else {
          parameter_column_[rb.parameter_begin + i] = width;
          parameter_entry_[rb.parameter_begin + i] = entry_of[p];
          ++entry_residual_begin_[entry_of[p] + 1];
          width += s.parameter_blocks[p].tangent_size;
        }
      }
      row_width_[r] = width;
      row_offset_[r + 1] = static_cast<int64_t>(rb.num_residuals) * width;
      group_work += row_offset_[r + 1];
    }
    for (int c = group.camera_begin; c < group.camera_end; ++c) entry_of[s.group_cameras[c]] = -1;
    factor_offset_[g + 1] = factor_offset_[g] + static_cast<int64_t>(group.landmark_size) *
                                                    (group.landmark_size + group.camera_columns);
    work[g] = std::max<int64_t>(1, group_work);
  }
  for (int r = 0; r < num_residual_blocks; ++r) row_offset_[r + 1] += row_offset_[r];
  for (size_t c = 0; c < s.group_cameras.size(); ++c) entry_residual_begin_[c + 1] += entry_residual_begin_[c];
  entry_residual_.resize(entry_residual_begin_.back());
  entry_residual_slot_.resize(entry_residual_begin_.back());
  std::vector<int64_t> fill(entry_residual_begin_.begin(), entry_residual_begin_.end() - 1);
  for (int r = 0; r < num_residual_blocks; ++r) {
    const ResidualBlockInfo& rb = s.residual_blocks[r];
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const int entry = parameter_entry_[rb.parameter_begin + i];
      if (entry < 0) continue;
      entry_residual_[fill[entry]] = r;
      entry_residual_slot_[fill[entry]++] = i;
    }
  }
  const int max_chunks = static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(kMaxChunks, row_offset_.back() / kMinChunkWork)));
  partition_ = WorkPartition(num_groups, work, max_chunks, kMinChunkWork);
  deficient_.assign(num_groups, 0);
  excluded_.assign(num_groups, 0);
  smallest_.assign(num_groups, std::numeric_limits<double>::infinity());
}

LandmarkFactorization::~LandmarkFactorization() = default;

int64_t LandmarkFactorization::RequiredBytes(const ProblemStructure& s) {
  int64_t rows = 0, factors = 0;
  for (const ResidualBlockInfo& rb : s.residual_blocks) {
    int width = 0;
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const ParameterBlockInfo& pb = s.parameter_blocks[s.residual_parameters[rb.parameter_begin + i]];
      if (!pb.is_constant) width += pb.tangent_size;
    }
    rows += static_cast<int64_t>(rb.num_residuals) * width;
  }
  for (const Group& g : s.groups) factors += static_cast<int64_t>(g.landmark_size) * (g.landmark_size + g.camera_columns);
  return 8 * (rows + factors) + 20 * static_cast<int64_t>(s.residual_blocks.size()) +
         20 * static_cast<int64_t>(s.group_cameras.size()) + 8 * static_cast<int64_t>(s.residual_parameters.size()) +
         16 * static_cast<int64_t>(s.groups.size());
}

bool LandmarkFactorization::Compute(const ceres::Problem* problem, std::string* error) {
  values_.reset(new double[static_cast<size_t>(std::max<int64_t>(1, row_offset_.back()))]);
  factors_.reset(new double[static_cast<size_t>(std::max<int64_t>(1, factor_offset_.back()))]);
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
  int max_scratch = 1;
  const bool damped = landmark_damping_ > 0.0;
  for (const Group& g : s_.groups) {
    max_scratch = std::max(max_scratch, (g.num_rows + (damped ? g.landmark_size : 0)) * g.landmark_size);
  }
  std::vector<double> chunk_max(partition_.num_chunks(), 0.0);
  context_->ForChunks(partition_, [&](int chunk, int begin, int end) {
    std::vector<double> scratch(static_cast<size_t>(max_scratch));
    double largest = 0.0;
    for (int g = begin; g < end; ++g) {
      const Group& group = s_.groups[g];
      const int m = group.num_rows, e = group.landmark_size, n = group.camera_columns;
      if (e == 0) continue;
      // J_l of the group's rows, and H_lp = J_l^T J_p into W's storage.
      double* r_out = factors_.get() + factor_offset_[g];
      double* w_out = r_out + e * e;
      std::fill(w_out, w_out + static_cast<int64_t>(e) * n, 0.0);
      int row = 0;
      for (int k = group.residual_begin; k < group.residual_end; ++k) {
        const int r = s_.group_residuals[k];
        const ResidualBlockInfo& rb = s_.residual_blocks[r];
        const int width = row_width_[r];
        const double* jr = values_.get() + row_offset_[r];
        for (int i = 0; i < rb.num_residuals; ++i) std::copy(jr + i * width, jr + i * width + e, &scratch[(row + i) * e]);
        row += rb.num_residuals;
        for (int slot = 0; slot < rb.num_parameter_blocks; ++slot) {
          const int entry = parameter_entry_[rb.parameter_begin + slot];
          if (entry < 0) continue;
          const int column = parameter_column_[rb.parameter_begin + slot];
          const int size = s_.parameter_blocks[s_.group_cameras[entry]].tangent_size;
          const int wc = entry_column_[entry];
          for (int a = 0; a < e; ++a) {
            for (int b = 0; b < size; ++b) {
              double sum = 0.0;
              for (int i = 0; i < rb.num_residuals; ++i) sum += jr[i * width + a] * jr[i * width + column + b];
              w_out[a * n + wc + b] += sum;
            }
          }
        }
      }
      double column_norm = 0.0;
      for (int k = 0; k < e; ++k) {
        double n2 = 0.0;
        for (int i = 0; i < m; ++i) n2 += scratch[i * e + k] * scratch[i * e + k];
        column_norm = std::max(column_norm, std::sqrt(n2));
      }
      // The damping's rows sqrt(delta) I below J_l's (after the column norms:
      // the rank tolerance is the Jacobian's own).
      const int rows_qr = damped ? m + e : m;
      if (damped) {
        std::fill(scratch.data() + m * e, scratch.data() + rows_qr * e, 0.0);
        for (int k = 0; k < e; ++k) scratch[(m + k) * e + k] = std::sqrt(landmark_damping_);
      }
      const double smallest = HouseholderInPlace(rows_qr, e, scratch.data());
      smallest_[g] = smallest;
      const double tolerance = 20.0 * (m + e) * std::numeric_limits<double>::epsilon() * column_norm;
      deficient_[g] = (rows_qr < e || !(smallest > tolerance)) ? 1 : 0;
      largest = std::max(largest, column_norm);
      for (int a = 0; a < e; ++a) {
        for (int b = 0; b < e; ++b) r_out[a * e + b] = a < rows_qr && b >= a ? scratch[a * e + b] : 0.0;
      }
      if (deficient_[g]) {
        std::fill(w_out, w_out + static_cast<int64_t>(e) * n, 0.0);
        continue;
      }
      // W = R^-T H_lp.
      Eigen::Map<const RowMatrix> rr(r_out, e, e);
      Eigen::Map<RowMatrix> ww(w_out, e, n);
      rr.transpose().triangularView<Eigen::Lower>().solveInPlace(ww);
    }
    chunk_max[chunk] = largest;
  });
  // The cameras' column norms, summed over their residual blocks.
  std::vector<double> camera_max(s_.cameras.size(), 0.0);
  context_->For(static_cast<int>(s_.cameras.size()), 16, [&](int cb, int ce) {
    for (int c = cb; c < ce; ++c) {
      const int size = s_.parameter_blocks[s_.cameras[c]].tangent_size;
      std::vector<double> n2(static_cast<size_t>(size), 0.0);
      for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
        const int entry = s_.camera_group_entry[k];
        for (int64_t q = entry_residual_begin_[entry]; q < entry_residual_begin_[entry + 1]; ++q) {
          const int r = entry_residual_[q];
          const ResidualBlockInfo& rb = s_.residual_blocks[r];
          const int column = parameter_column_[rb.parameter_begin + entry_residual_slot_[q]];
          const int width = row_width_[r];
          const double* jr = values_.get() + row_offset_[r];
          for (int i = 0; i < rb.num_residuals; ++i) {
            for (int j = 0; j < size; ++j) n2[j] += jr[i * width + column + j] * jr[i * width + column + j];
          }
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
      // The entry of S's value (i, a) of block blk (row camera c2).
      auto add = [&](int64_t blk, int c2, int i, int a, double v) {
        if (c2 == c && i > a) return;  // the diagonal block: its upper triangle
        values[col_begin[column0 + a] + pattern.position(blk) + i] += v;
      };
      for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
        const int g = s_.camera_groups[k];
        if (excluded_[g]) continue;
        const Group& group = s_.groups[g];
        const int entry = s_.camera_group_entry[k];
        // J_p^T J_p: the residual blocks that touch c, with each of their
        // cameras c2 <= c.
        for (int64_t q = entry_residual_begin_[entry]; q < entry_residual_begin_[entry + 1]; ++q) {
          const int r = entry_residual_[q];
          const ResidualBlockInfo& rb = s_.residual_blocks[r];
          const int width = row_width_[r];
          const double* jr = values_.get() + row_offset_[r];
          const int jc = parameter_column_[rb.parameter_begin + entry_residual_slot_[q]];
          for (int slot = 0; slot < rb.num_parameter_blocks; ++slot) {
            const int other = parameter_entry_[rb.parameter_begin + slot];
            if (other < 0) continue;
            const int c2 = s_.parameter_blocks[s_.group_cameras[other]].camera_index;
            if (c2 > c) continue;
            const int64_t blk = pattern.FindBlock(c2, c);
            const int f2 = pattern.camera_size(c2);
            const int jo = parameter_column_[rb.parameter_begin + slot];
            for (int a = 0; a < fc; ++a) {
              for (int i = 0; i < f2; ++i) {
                double sum = 0.0;
                for (int t = 0; t < rb.num_residuals; ++t) sum += jr[t * width + jo + i] * jr[t * width + jc + a];
                add(blk, c2, i, a, sum);
              }
            }
          }
        }
        // - W^T W over the group's cameras c2 <= c.
        const int e = group.landmark_size;
        if (e == 0 || deficient_[g]) continue;
        const int n = group.camera_columns;
        const double* w = factors_.get() + factor_offset_[g] + e * e;
        const int wc = entry_column_[entry];
        for (int other = group.camera_begin; other < group.camera_end; ++other) {
          const int c2 = s_.parameter_blocks[s_.group_cameras[other]].camera_index;
          if (c2 > c) continue;
          const int64_t blk = pattern.FindBlock(c2, c);
          const int f2 = pattern.camera_size(c2);
          const int wo = entry_column_[other];
          for (int a = 0; a < fc; ++a) {
            for (int i = 0; i < f2; ++i) {
              double sum = 0.0;
              for (int t = 0; t < e; ++t) sum += w[t * n + wo + i] * w[t * n + wc + a];
              add(blk, c2, i, a, -sum);
            }
          }
        }
      }
    }
  });
}

template <typename LandmarkFn, typename CameraFn>
void LandmarkFactorization::VisitRows(int g, const LandmarkFn& landmark, const CameraFn& camera) const {
  const Group& group = s_.groups[g];
  const int e = group.landmark_size;
  int row = 0;
  for (int k = group.residual_begin; k < group.residual_end; ++k) {
    const int r = s_.group_residuals[k];
    const ResidualBlockInfo& rb = s_.residual_blocks[r];
    const Eigen::Map<const RowMatrix> jr(values_.get() + row_offset_[r], rb.num_residuals, row_width_[r]);
    if (e > 0) landmark(row, rb.num_residuals, jr.leftCols(e));
    for (int slot = 0; slot < rb.num_parameter_blocks; ++slot) {
      const int entry = parameter_entry_[rb.parameter_begin + slot];
      if (entry < 0) continue;
      const int size = s_.parameter_blocks[s_.group_cameras[entry]].tangent_size;
      camera(row, rb.num_residuals, jr.middleCols(parameter_column_[rb.parameter_begin + slot], size),
             entry_column_[entry], size);
    }
    row += rb.num_residuals;
  }
}

Eigen::MatrixXd LandmarkFactorization::Times(int g, const Eigen::MatrixXd& xl, const Eigen::MatrixXd& xc) const {
  const int p = static_cast<int>(std::max(xl.cols(), xc.cols()));
  Eigen::MatrixXd out = Eigen::MatrixXd::Zero(s_.groups[g].num_rows, p);
  VisitRows(
      g, [&](int row, int n, const auto& jl) { out.middleRows(row, n).noalias() += jl * xl; },
      [&](int row, int n, const auto& jc, int column, int size) {
        out.middleRows(row, n).noalias() += jc * xc.middleRows(column, size);
      });
  return out;
}

void LandmarkFactorization::TransposeTimes(int g, const Eigen::MatrixXd& t, Eigen::MatrixXd* yl,
                                           Eigen::MatrixXd* yc) const {
  yl->setZero(s_.groups[g].landmark_size, t.cols());
  yc->setZero(s_.groups[g].camera_columns, t.cols());
  VisitRows(
      g, [&](int row, int n, const auto& jl) { yl->noalias() += jl.transpose() * t.middleRows(row, n); },
      [&](int row, int n, const auto& jc, int column, int size) {
        yc->middleRows(column, size).noalias() += jc.transpose() * t.middleRows(row, n);
      });
}

void LandmarkFactorization::Marginalization(int g, double* k) const {
  const int e = landmark_size(g), n = camera_columns(g);
  Eigen::Map<RowMatrix> out(k, e, n);
  out = Eigen::Map<const RowMatrix>(w(g), e, n);
  Eigen::Map<const RowMatrix>(r(g), e, e).triangularView<Eigen::Upper>().solveInPlace(out);
}

void LandmarkFactorization::LandmarkInverse(int g, double* c) const {
  const int e = landmark_size(g);
  RowMatrix r_inverse = RowMatrix::Identity(e, e);
  Eigen::Map<const RowMatrix>(r(g), e, e).triangularView<Eigen::Upper>().solveInPlace(r_inverse);
  Eigen::Map<RowMatrix>(c, e, e) = r_inverse * r_inverse.transpose();
}

}  // namespace internal
}  // namespace ceres_sqrtba
