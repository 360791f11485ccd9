#include "ceres_sqrtba/internal/evaluation/evaluator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

#include "ceres_sqrtba/internal/common/finite.h"
#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/evaluation/loss_correction.h"
#include "ceres_sqrtba/internal/evaluation/tangent_jacobian.h"

namespace ceres_sqrtba {
namespace internal {

struct Evaluator::Scratch {
  std::vector<double> residuals;
  std::vector<double> ambient;   // ambient Jacobians of manifold blocks
  std::vector<double> tangent;   // tangent Jacobians of all variable blocks
  std::vector<float> float_ambient;  // float Jacobians (FloatJacobians), ambient
  std::vector<float*> float_jacobians;
  std::vector<double> landmark_magnitude;  // the current group's landmark, sum |J|^T |r| of float blocks
  std::vector<const double*> parameters;
  std::vector<double*> cost_jacobians;      // what the cost function writes
  std::vector<const double*> out_jacobians;  // what the writer reads
};

namespace {

// Index of the first value that is not finite, n if all are.
int FirstNonFinite(const double* v, int n) {
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) return i;
  }
  return n;
}

bool AllFinite(const double* v, int n) { return FirstNonFinite(v, n) == n; }

std::string Format(const char* format, double a, double b = 0.0) {
  char buffer[256];
  std::snprintf(buffer, sizeof(buffer), format, a, b);
  return buffer;
}

// A cost function that returned false: Ceres' message, and false.
bool ReturnedFalse(const ResidualBlockInfo& rb, std::string* error) {
  *error = "The cost function of the " + NameOf(rb.id) + " returned false.";
  return false;
}

}  // namespace

Evaluator::Evaluator(const ProblemStructure& s, const WorkPartition& partition,
                     ParallelContext* context)
    : s_(s), partition_(partition), context_(context) {
  for (const ResidualBlockInfo& rb : s.residual_blocks) {
    max_residuals_ = std::max(max_residuals_, rb.num_residuals);
    max_parameter_blocks_ = std::max(max_parameter_blocks_, rb.num_parameter_blocks);
    int ambient = 0, tangent = 0;
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const ParameterBlockInfo& pb = s.parameter_blocks[s.residual_parameters[rb.parameter_begin + i]];
      ambient += rb.num_residuals * pb.size;
      tangent += rb.num_residuals * pb.tangent_size;
    }
    max_ambient_jacobian_ = std::max(max_ambient_jacobian_, ambient);
    max_tangent_jacobian_ = std::max(max_tangent_jacobian_, tangent);
  }
  plus_jacobian_offset_.assign(s.parameter_blocks.size(), -1);
  plus_jacobian_border_.assign(s.parameter_blocks.size(), PlusJacobianBorder());
  int total = 0;
  for (int p : s.variable_blocks) {
    const ParameterBlockInfo& pb = s.parameter_blocks[p];
    if (pb.manifold == nullptr) continue;
    plus_jacobian_offset_[p] = total;
    manifold_blocks_.push_back(p);
    total += pb.size * pb.tangent_size;
  }
  plus_jacobians_.resize(total);
  plus_jacobian_status_.resize(manifold_blocks_.size());
  const int chunks = partition.num_chunks();
  chunk_cost_.resize(chunks);
  chunk_error_.resize(chunks);
  chunk_float_fallback_.resize(chunks);
  chunk_camera_gradient_ = PerChunk<double>(chunks, s.num_camera_parameters);
  chunk_camera_magnitude_ = PerChunk<double>(chunks, s.num_camera_parameters);
  camera_magnitude_.resize(s.num_camera_parameters);
  chunk_landmark_magnitude_.resize(chunks);
  int max_landmark_size = 1;
  for (const Group& g : s.groups) max_landmark_size = std::max(max_landmark_size, g.landmark_size);
  scratch_.resize(chunks);
  for (Scratch& sc : scratch_) {
    sc.residuals.resize(std::max(1, max_residuals_));
    sc.ambient.resize(std::max(1, max_ambient_jacobian_));
    sc.float_ambient.resize(std::max(1, max_ambient_jacobian_));
    sc.float_jacobians.resize(std::max(1, max_parameter_blocks_));
    sc.landmark_magnitude.resize(max_landmark_size);
    sc.tangent.resize(std::max(1, max_tangent_jacobian_));
    sc.parameters.resize(std::max(1, max_parameter_blocks_));
    sc.cost_jacobians.resize(std::max(1, max_parameter_blocks_));
    sc.out_jacobians.resize(std::max(1, max_parameter_blocks_));
  }
}

Evaluator::~Evaluator() = default;

bool Evaluator::ComputePlusJacobians(const double* x, bool borders) {
  enum : char { kOk, kFailed, kNotFinite };
  // Each block's PlusJacobian is its own: computed in parallel (as Ceres 2.2
  // calls Manifold::Plus), the values are the same for any number of threads,
  // and the failure reported is the first in block order, as a serial loop
  // would find it. A problem with manifold landmarks (a SphereManifold per
  // point) has as many of these as points, every evaluation.
  const int n = static_cast<int>(manifold_blocks_.size());
  constexpr int kGrain = 64;
  context_->For(n, kGrain, [&](int begin, int end) {
    for (int k = begin; k < end; ++k) {
      const int p = manifold_blocks_[k];
      const ParameterBlockInfo& pb = s_.parameter_blocks[p];
      double* out = plus_jacobians_.data() + plus_jacobian_offset_[p];
      const int size = pb.size * pb.tangent_size;
      // As Ceres: an entry the manifold leaves unwritten is caught below, not
      // taken from the previous point.
      std::fill(out, out + size, std::numeric_limits<double>::quiet_NaN());
      if (!pb.manifold->PlusJacobian(x + pb.state_offset, out)) {
        plus_jacobian_status_[k] = kFailed;
      } else if (!AllFinite(out, size)) {
        plus_jacobian_status_[k] = kNotFinite;
      } else {
        plus_jacobian_status_[k] = kOk;
        // Only the Jacobian pass multiplies by them (tangent_jacobian.h).
        if (borders) plus_jacobian_border_[p] = BorderOf(out, pb.size, pb.tangent_size);
      }
    }
  });
  for (int k = 0; k < n; ++k) {
    if (plus_jacobian_status_[k] == kOk) continue;
    const ParameterBlockInfo& pb = s_.parameter_blocks[manifold_blocks_[k]];
    error_ = plus_jacobian_status_[k] == kFailed
                 ? "The manifold of the " + NameOf(pb.user_values) + " failed to compute its PlusJacobian."
                 : "The manifold of the " + NameOf(pb.user_values) +
                       " returned a PlusJacobian with a value that is not finite.";
    return false;
  }
  return true;
}

bool Evaluator::EvaluateCost(const double* x, double* cost) {
  return Pass(x, /*jacobian=*/false, /*new_evaluation_point=*/true, cost, nullptr, nullptr);
}

bool Evaluator::EvaluateJacobian(const double* x, bool new_evaluation_point, double* cost,
                                 double* gradient, JacobianWriter* writer) {
  return Pass(x, /*jacobian=*/true, new_evaluation_point, cost, gradient, writer);
}

bool Evaluator::Pass(const double* x, bool jacobian, bool new_evaluation_point, double* cost, double* gradient,
                     JacobianWriter* writer) {
  error_.clear();
  float_fallback_.clear();
  float_gradient_level_ = 0.0;
  bool ok = ComputePlusJacobians(x, /*borders=*/jacobian);
  if (ok) {
    if (notifier_ != nullptr) notifier_->Prepare(x, jacobian, new_evaluation_point);
    ok = Evaluate(x, cost, gradient, writer);
  }
  return Agree(ok) && Finish(cost, gradient, writer);
}

bool Evaluator::Agree(bool ok) {
  const ProcessGroup* processes = context_->processes();
  if (processes == nullptr) return ok;
  int from = 0;
  const std::string first = processes->FirstMessage(ok ? std::string() : error_.empty() ? "failed" : error_, &from);
  if (first.empty()) return true;
  error_ = Format("(rank %.0f) ", from) + first;
  return false;
}

bool Evaluator::Finish(double* cost, double* gradient, JacobianWriter* writer) {
  const bool float_jacobians = writer != nullptr && writer->KeepsFloatJacobians();
  const int nc = s_.num_camera_parameters;
  const ProcessGroup* processes = context_->processes();
  if (processes != nullptr) {
    processes->Sum(cost, 1);
    int from = 0;
    const std::string fallback = processes->FirstMessage(float_fallback_, &from);
    float_fallback_ = fallback.empty() ? fallback : Format("(rank %.0f) ", from) + fallback;
  }
  if (!std::isfinite(*cost)) {
    error_ = Format("The cost is not finite (%g): the residuals are too large to square and sum.", *cost);
    return false;
  }
  if (gradient != nullptr && nc > 0) {
    chunk_camera_gradient_.SumInto(context_, nc, gradient + s_.camera_tangent_begin);
  }
  if (gradient != nullptr && float_jacobians) {
    // The largest |J|^T |r| of any variable, times float's unit roundoff:
    // the size of the gradient's entries that the float Jacobians' rounding
    // can make (their relative error is about that of one operation per
    // product, 2^-24; more for functors of many operations).
    double largest = 0.0;
    for (int c = 0; c < partition_.num_chunks(); ++c) largest = std::max(largest, chunk_landmark_magnitude_[c]);
    if (processes != nullptr) largest = processes->Max(largest);
    if (nc > 0) {
      chunk_camera_magnitude_.SumInto(context_, nc, camera_magnitude_.data());
      for (double v : camera_magnitude_) largest = std::max(largest, v);
    }
    float_gradient_level_ = largest * (std::numeric_limits<float>::epsilon() / 2);
  }
  return true;
}

bool Evaluator::EvaluateFixedCost(double* cost) {
  error_.clear();
  *cost = 0.0;
  if (s_.fixed_residual_blocks.empty()) {
    if (!Agree(true)) return false;
    if (context_->processes() != nullptr) context_->processes()->Sum(cost, 1);
    return true;
  }
  if (notifier_ != nullptr) notifier_->PrepareForFixedCost();
  // A process of a solve spread over several may hold no group (no chunk).
  Scratch own;
  Scratch& sc = scratch_.empty() ? own : scratch_.front();
  std::vector<double> residuals;
  for (size_t k = 0; k < s_.fixed_residual_blocks.size(); ++k) {
    const FixedResidualBlock& fixed = s_.fixed_residual_blocks[k];
    const int m = fixed.cost_function->num_residuals();
    residuals.assign(m, std::numeric_limits<double>::quiet_NaN());
    sc.parameters.resize(std::max<size_t>(sc.parameters.size(), fixed.parameters.size()));
    for (size_t i = 0; i < fixed.parameters.size(); ++i) sc.parameters[i] = fixed.parameters[i];
    double block_cost = std::numeric_limits<double>::quiet_NaN();
    if (fixed.cost_function->Evaluate(sc.parameters.data(), residuals.data(), nullptr) &&
        AllFinite(residuals.data(), m)) {
      double squared_norm = 0.0;
      for (double r : residuals) squared_norm += r * r;
      double rho[3] = {squared_norm, 1.0, 0.0};
      if (fixed.loss_function != nullptr) fixed.loss_function->Evaluate(squared_norm, rho);
      block_cost = 0.5 * rho[0];
    }
    if (!std::isfinite(block_cost)) {
      // Ceres' message, which names the block by its index in the problem.
      error_ = Format("Evaluation of the residual %.0f failed during removal of fixed residual blocks.",
                      fixed.index);
      return Agree(false);
    }
    *cost += block_cost;
  }
  if (!Agree(true)) return false;
  if (context_->processes() != nullptr) context_->processes()->Sum(cost, 1);
  return true;
}

namespace {

// The per-block work around the user's cost function, on rows x cols values
// (a block of the residual's Jacobian): with both sizes known at compile time
// (2-row residuals and the camera/landmark sizes of fixed_size_dispatch.h)
// the loops unroll and vectorize; the values and their order of operations
// are the same either way.
template <int kRows, int kCols>
struct BlockOps {
  int rows, cols;
  int Rows() const { return kRows != kDynamic ? kRows : rows; }
  int Cols() const { return kCols != kDynamic ? kCols : cols; }
  int Size() const { return Rows() * Cols(); }

  // Poisoned so that a cost function that leaves an entry unwritten is
  // caught, as Ceres does.
  void Poison(double* v) const {
    for (int i = 0; i < Size(); ++i) v[i] = std::numeric_limits<double>::quiet_NaN();
  }
  // d = f, every value (exact: a float is a double).
  void FromFloat(const float* __restrict f, double* __restrict d) const {
    for (int i = 0; i < Size(); ++i) d[i] = static_cast<double>(f[i]);
  }
  // Every value times zero is zero exactly when all are finite; Eigen sums
  // the products in SIMD packets (any order gives zero, or NaN).
  bool Finite(const double* v) const {
    using Values = Eigen::Array<double, (kRows == kDynamic || kCols == kDynamic) ? kDynamic : kRows * kCols, 1>;
    return (Eigen::Map<const Values>(v, Size()) * 0.0).sum() == 0.0;
  }
  // g (cols) += J^T r, row by row: the additions into each g[c] in the
  // rows' order.
  void AddTransposeTimes(const double* __restrict j, const double* __restrict r, double* __restrict g) const {
    for (int rr = 0; rr < Rows(); ++rr) {
      const double w = r[rr];
      const double* __restrict jr = j + rr * Cols();
      for (int c = 0; c < Cols(); ++c) g[c] += jr[c] * w;
    }
  }
  // a (cols) += |J|^T |r|: the scale of the rounding errors of J^T r.
  void AddAbsTransposeTimes(const double* __restrict j, const double* __restrict r, double* __restrict a) const {
    for (int rr = 0; rr < Rows(); ++rr) {
      const double w = std::fabs(r[rr]);
      const double* __restrict jr = j + rr * Cols();
      for (int c = 0; c < Cols(); ++c) a[c] += std::fabs(jr[c]) * w;
    }
  }
};

// Calls fn(BlockOps<R, C>) with the sizes fixed where they are common: the
// tangent sizes of fixed_size_dispatch.h, and for the cost function's own
// (ambient) Jacobians the ambient sizes of the manifolds of
// DispatchManifoldSizes (a quaternion, a pose, a quaternion camera).
template <typename Fn>
inline void WithBlockOps(int rows, int cols, Fn&& fn) {
  if (rows == 2) {
    switch (cols) {
      case 4: return fn(BlockOps<2, 4>{rows, cols});
      case 10: return fn(BlockOps<2, 10>{rows, cols});
      default: break;
    }
  }
  DispatchResidualBlockSize(rows, cols, [&](auto sizes) {
    using Sizes = decltype(sizes);
    fn(BlockOps<Sizes::kRow, Sizes::kF>{rows, cols});
  });
}

// The cost function objects are the user's, one heap object per residual
// block: in the Jacobian pass, reading the next ones' virtual tables ahead
// hides a cache miss per residual block that otherwise stalls the
// evaluation. The residual pass is short enough per block for the processor
// to run ahead by itself (prefetching there measured 1-3% slower).
constexpr int kPrefetchDistance = 4;

}  // namespace

bool Evaluator::Evaluate(const double* x, double* cost, double* gradient,
                         JacobianWriter* writer) {
  const bool jacobians = writer != nullptr || gradient != nullptr;
  // The storage keeps float: the cost functions that can evaluate their
  // Jacobians in float (FloatJacobians) do.
  const bool float_jacobians = writer != nullptr && writer->KeepsFloatJacobians();
  const int nc = s_.num_camera_parameters;
  if (gradient != nullptr) {
    std::fill(gradient, gradient + s_.num_effective_parameters, 0.0);
  }
  // The chunk's work, with "Jacobians or not" fixed at compile time: the
  // residual pass (every candidate point) carries none of the Jacobian
  // pass's branches.
  auto evaluate_chunk = [&](auto jacobian_pass, int chunk, int gbegin, int gend) {
    constexpr bool want_jacobian = decltype(jacobian_pass)::value;
    Scratch& sc = scratch_[chunk];
    double* camera_gradient = want_jacobian && gradient != nullptr ? chunk_camera_gradient_[chunk] : nullptr;
    if (camera_gradient != nullptr) std::fill(camera_gradient, camera_gradient + nc, 0.0);
    // With float Jacobians, the magnitudes whose rounding they carry into
    // the gradient: cameras per chunk, each landmark's within its group.
    double* camera_magnitude =
        camera_gradient != nullptr && float_jacobians ? chunk_camera_magnitude_[chunk] : nullptr;
    if (camera_magnitude != nullptr) std::fill(camera_magnitude, camera_magnitude + nc, 0.0);
    double& landmark_magnitude_max = chunk_landmark_magnitude_[chunk];
    landmark_magnitude_max = 0.0;
    double chunk_cost = 0.0;
    std::string& error = chunk_error_[chunk];
    error.clear();
    std::string& float_fallback = chunk_float_fallback_[chunk];
    float_fallback.clear();
    bool ok = true;
    const int* order = s_.group_residuals.data();
    const int kend = gend > gbegin ? s_.groups[gend - 1].residual_end : 0;
    for (int g = gbegin; g < gend && ok; ++g) {
      const Group& group = s_.groups[g];
      int row = 0;
      if (camera_magnitude != nullptr) std::fill(sc.landmark_magnitude.begin(), sc.landmark_magnitude.end(), 0.0);
      for (int k = group.residual_begin; k < group.residual_end; ++k) {
        if (want_jacobian && k + kPrefetchDistance < kend) {
          // The residual blocks are read in group order, the problem's order
          // shuffled (COLMAP adds them image by image): the block info
          // itself is a miss, so it is fetched twice as far ahead as the
          // cost function object it points to.
          if (k + 2 * kPrefetchDistance < kend) {
            __builtin_prefetch(&s_.residual_blocks[order[k + 2 * kPrefetchDistance]]);
          }
          const ResidualBlockInfo& ahead = s_.residual_blocks[order[k + kPrefetchDistance]];
          // Two lines: a cost function's members often straddle the first.
          __builtin_prefetch(ahead.cost_function);
          __builtin_prefetch(reinterpret_cast<const char*>(ahead.cost_function) + 64);
          if (ahead.loss_function != nullptr) __builtin_prefetch(ahead.loss_function);
          __builtin_prefetch(s_.residual_parameters.data() + ahead.parameter_begin);
        }
        const int r = order[k];
        const ResidualBlockInfo& rb = s_.residual_blocks[r];
        const int m = rb.num_residuals;
        const int* blocks = s_.residual_parameters.data() + rb.parameter_begin;
        const bool in_float = want_jacobian && float_jacobians && rb.float_jacobians != nullptr;
        // The Jacobians are known to be finite (the float ones, checked as
        // they are widened).
        bool jacobians_finite = false;
        int ambient_used = 0, tangent_used = 0;
        for (int i = 0; i < rb.num_parameter_blocks; ++i) {
          const ParameterBlockInfo& pb = s_.parameter_blocks[blocks[i]];
          sc.parameters[i] = pb.is_constant ? pb.user_values : x + pb.state_offset;
          if (!want_jacobian) continue;
          sc.cost_jacobians[i] = nullptr;
          sc.out_jacobians[i] = nullptr;
          if (pb.is_constant) continue;
          double* tangent = sc.tangent.data() + tangent_used;
          tangent_used += m * pb.tangent_size;
          sc.out_jacobians[i] = tangent;
          if (pb.manifold == nullptr) {
            sc.cost_jacobians[i] = tangent;
          } else {
            sc.cost_jacobians[i] = sc.ambient.data() + ambient_used;
            ambient_used += m * pb.size;
          }
          // The float evaluation poisons its own values below.
          if (!in_float) WithBlockOps(m, pb.size, [&](auto ops) { ops.Poison(sc.cost_jacobians[i]); });
        }
        double* res = sc.residuals.data();
        for (int i = 0; i < m; ++i) res[i] = std::numeric_limits<double>::quiet_NaN();
        if (in_float) {
          // Each wanted block's float values, poisoned as above, then
          // widened into cost_jacobians[i] (a float NaN stays NaN).
          int float_used = 0;
          for (int i = 0; i < rb.num_parameter_blocks; ++i) {
            sc.float_jacobians[i] = nullptr;
            if (sc.cost_jacobians[i] == nullptr) continue;
            float* f = sc.float_ambient.data() + float_used;
            const int size = m * s_.parameter_blocks[blocks[i]].size;
            std::fill(f, f + size, std::numeric_limits<float>::quiet_NaN());
            sc.float_jacobians[i] = f;
            float_used += size;
          }
          if (!rb.float_jacobians->EvaluateFloatJacobians(sc.parameters.data(), res, sc.float_jacobians.data())) {
            ok = ReturnedFalse(rb, &error);
            break;
          }
          bool finite = true;
          for (int i = 0; i < rb.num_parameter_blocks; ++i) {
            if (sc.cost_jacobians[i] == nullptr) continue;
            WithBlockOps(m, s_.parameter_blocks[blocks[i]].size, [&](auto ops) {
              ops.FromFloat(sc.float_jacobians[i], sc.cost_jacobians[i]);
              finite = finite && ops.Finite(sc.cost_jacobians[i]);
            });
          }
          jacobians_finite = finite;
          if (!finite) {
            // Float cannot carry this block's Jacobian (an overflow, or a
            // function that float rounds into its singularity): the double
            // evaluation decides, as without FloatJacobians, and the solve
            // is told (float_jacobian_fallback()).
            if (float_fallback.empty()) {
              float_fallback = "a float Jacobian of the " + NameOf(rb.id) +
                               " is not finite (the double one is used for it)";
            }
            for (int i = 0; i < rb.num_parameter_blocks; ++i) {
              if (sc.cost_jacobians[i] == nullptr) continue;
              WithBlockOps(m, s_.parameter_blocks[blocks[i]].size, [&](auto ops) { ops.Poison(sc.cost_jacobians[i]); });
            }
            for (int i = 0; i < m; ++i) res[i] = std::numeric_limits<double>::quiet_NaN();
            if (!rb.cost_function->Evaluate(sc.parameters.data(), res, sc.cost_jacobians.data())) {
              ok = ReturnedFalse(rb, &error);
              break;
            }
          }
        } else if (!rb.cost_function->Evaluate(sc.parameters.data(), res,
                                               want_jacobian ? sc.cost_jacobians.data() : nullptr)) {
          ok = ReturnedFalse(rb, &error);
          break;
        }
        // The squared norm is finite only if every residual is (a NaN or an
        // infinity stays in the sum): one test per residual block, and the
        // per-value test only when it fails, as finite residuals can still
        // overflow their squares (which the cost check below reports).
        double squared_norm = 0.0;
        for (int i = 0; i < m; ++i) squared_norm += res[i] * res[i];
        if (!std::isfinite(squared_norm) && !AllFiniteBits(res, m)) {
          const int bad = FirstNonFinite(res, m);
          error = "The " + NameOf(rb.id) + " has a residual that is not finite or was not written (" +
                  Format("residual %.0f = %g).", bad, res[bad]);
          ok = false;
          break;
        }
        for (int i = 0; i < rb.num_parameter_blocks && want_jacobian; ++i) {
          if (sc.cost_jacobians[i] == nullptr) continue;
          const int p = blocks[i];
          const ParameterBlockInfo& pb = s_.parameter_blocks[p];
          bool finite = jacobians_finite;
          if (!finite) WithBlockOps(m, pb.size, [&](auto ops) { finite = ops.Finite(sc.cost_jacobians[i]); });
          if (!finite) {
            const int bad = FirstNonFinite(sc.cost_jacobians[i], m * pb.size);
            error = "The Jacobian of the " + NameOf(rb.id) + " with respect to the " + NameOf(pb.user_values) +
                    " has a value that is not finite or was not written (" +
                    Format("row %.0f, column %.0f).", bad / pb.size, bad % pb.size);
            ok = false;
            break;
          }
          if (pb.manifold != nullptr) {
            // Tangent Jacobian = ambient Jacobian * PlusJacobian, through the
            // PlusJacobian's identity borders (tangent_jacobian.h).
            TangentJacobian(m, pb.size, pb.tangent_size, plus_jacobian_border_[p], sc.cost_jacobians[i],
                            plus_jacobians_.data() + plus_jacobian_offset_[p],
                            const_cast<double*>(sc.out_jacobians[i]));
          }
        }
        if (!ok) break;
        if (rb.loss_function == nullptr) {
          chunk_cost += 0.5 * squared_norm;
        } else {
          double rho[3];
          rb.loss_function->Evaluate(squared_norm, rho);
          if (!std::isfinite(rho[0])) {
            error = "The loss function of the " + NameOf(rb.id) +
                    Format(" returned rho(s) = %g at s = %g.", rho[0], squared_norm);
            ok = false;
            break;
          }
          chunk_cost += 0.5 * rho[0];
          if (want_jacobian && !LossCorrection::IsDefined(squared_norm, rho)) {
            error = "The loss function of the " + NameOf(rb.id) +
                    Format(" has rho'(s) = %g, rho''(s) = %g", rho[1], rho[2]) +
                    Format(" at s = %g; a robust loss needs rho' >= 0, and rho' > 0 where rho'' > 0.",
                           squared_norm);
            ok = false;
            break;
          }
          // An inlier of a robust loss (rho' = 1, rho'' = 0) is corrected by
          // a scale of 1: nothing to do.
          if (want_jacobian && !(rho[1] == 1.0 && rho[2] == 0.0)) {
            const LossCorrection correction(squared_norm, rho);
            for (int i = 0; i < rb.num_parameter_blocks; ++i) {
              if (sc.out_jacobians[i] == nullptr) continue;
              const ParameterBlockInfo& pb = s_.parameter_blocks[blocks[i]];
              // At the fixed sizes the loops unroll (the same products).
              WithBlockOps(m, pb.tangent_size, [&](auto ops) {
                correction.CorrectJacobian(ops.Rows(), ops.Cols(), res, const_cast<double*>(sc.out_jacobians[i]));
              });
            }
            correction.CorrectResiduals(m, res);
          }
        }
        if (want_jacobian && gradient != nullptr) {
          for (int i = 0; i < rb.num_parameter_blocks; ++i) {
            if (sc.out_jacobians[i] == nullptr) continue;
            const ParameterBlockInfo& pb = s_.parameter_blocks[blocks[i]];
            double* g = pb.is_landmark ? gradient + pb.tangent_offset
                                       : camera_gradient + (pb.tangent_offset - s_.camera_tangent_begin);
            double* a = !in_float || camera_magnitude == nullptr ? nullptr
                        : pb.is_landmark ? sc.landmark_magnitude.data()
                                         : camera_magnitude + (pb.tangent_offset - s_.camera_tangent_begin);
            WithBlockOps(m, pb.tangent_size, [&](auto ops) {
              ops.AddTransposeTimes(sc.out_jacobians[i], res, g);
              if (a != nullptr) ops.AddAbsTransposeTimes(sc.out_jacobians[i], res, a);
            });
          }
        }
        if (want_jacobian && writer != nullptr) {
          writer->Write(g, k - group.residual_begin, row, r, res, sc.out_jacobians.data());
        }
        row += m;
      }
      if (camera_magnitude != nullptr) {
        for (int k = 0; k < group.landmark_size; ++k) {
          landmark_magnitude_max = std::max(landmark_magnitude_max, sc.landmark_magnitude[k]);
        }
      }
    }
    chunk_cost_[chunk] = chunk_cost;
  };
  context_->ForChunks(partition_, [&](int chunk, int gbegin, int gend) {
    if (jacobians) {
      evaluate_chunk(std::true_type(), chunk, gbegin, gend);
    } else {
      evaluate_chunk(std::false_type(), chunk, gbegin, gend);
    }
  });
  double total = 0.0;
  // The first failure in chunk order: the same message for any number of
  // threads.
  for (int c = 0; c < partition_.num_chunks(); ++c) {
    if (!chunk_error_[c].empty()) {
      error_ = chunk_error_[c];
      return false;
    }
    if (float_fallback_.empty()) float_fallback_ = chunk_float_fallback_[c];
    total += chunk_cost_[c];
  }
  *cost = total;
  return true;
}

bool Evaluator::Plus(const double* x, const double* delta, double* x_plus_delta) {
  const int n = static_cast<int>(s_.variable_blocks.size());
  bool ok = true;
  // Manifold Plus is cheap; a serial loop keeps failure reporting simple and
  // costs far less than one cost evaluation.
  for (int i = 0; i < n; ++i) {
    const ParameterBlockInfo& pb = s_.parameter_blocks[s_.variable_blocks[i]];
    const double* xb = x + pb.state_offset;
    const double* db = delta + pb.tangent_offset;
    double* out = x_plus_delta + pb.state_offset;
    if (pb.manifold == nullptr) {
      for (int k = 0; k < pb.size; ++k) out[k] = xb[k] + db[k];
    } else if (!pb.manifold->Plus(xb, db, out)) {
      ok = false;
      continue;
    }
    if (pb.bounds_offset < 0) continue;
    const double* lower = s_.lower_bounds.data() + pb.bounds_offset;
    const double* upper = s_.upper_bounds.data() + pb.bounds_offset;
    for (int k = 0; k < pb.size; ++k) out[k] = std::min(std::max(out[k], lower[k]), upper[k]);
  }
  if (context_->processes() != nullptr) ok = !context_->processes()->Any(!ok);
  return ok;
}

}  // namespace internal
}  // namespace ceres_sqrtba
