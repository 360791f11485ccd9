#include "ceres_sqrtba/internal/minimizer/coordinate_descent_minimizer.h"

#include <tbb/enumerable_thread_specific.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/internal/evaluation/loss_correction.h"
#include "ceres_sqrtba/internal/evaluation/tangent_jacobian.h"
#include "ceres_sqrtba/internal/minimizer/dense_qr_solver.h"
#include "ceres_sqrtba/internal/minimizer/levenberg_marquardt_strategy.h"
#include "ceres_sqrtba/internal/minimizer/termination.h"
#include "ceres_sqrtba/internal/minimizer/trust_region_step_evaluator.h"
#include "ceres_sqrtba/internal/problem/independent_set.h"
#include "ceres_sqrtba/internal/problem/inner_iteration_ordering.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// The residual blocks as hyperedges over the parameter blocks (independent_set.h).
void Hyperedges(const ProblemStructure& s, std::vector<int>* edge_begin, std::vector<int>* edge_vertices) {
  edge_begin->clear();
  edge_vertices->clear();
  for (const ResidualBlockInfo& rb : s.residual_blocks) {
    edge_begin->push_back(static_cast<int>(edge_vertices->size()));
    edge_vertices->insert(edge_vertices->end(), s.residual_parameters.begin() + rb.parameter_begin,
                          s.residual_parameters.begin() + rb.parameter_begin + rb.num_parameter_blocks);
  }
  if (!edge_begin->empty()) edge_begin->push_back(static_cast<int>(edge_vertices->size()));
}

}  // namespace

std::vector<std::vector<int>> RecursiveIndependentSetOrdering(const ProblemStructure& s) {
  const int n = static_cast<int>(s.parameter_blocks.size());
  std::vector<bool> removed(n);
  int remaining = 0;
  for (int i = 0; i < n; ++i) {
    removed[i] = s.parameter_blocks[i].is_constant;
    remaining += removed[i] ? 0 : 1;
  }
  std::vector<int> edge_begin, edge_vertices;
  Hyperedges(s, &edge_begin, &edge_vertices);
  std::vector<std::vector<int>> rounds;
  // A set taken out leaves the graph; its neighbours' degrees drop, and the
  // next set is chosen greedily on what is left (each round takes at least
  // the remaining vertex of least degree).
  while (remaining > 0) {
    const std::vector<bool> in_set = EliminationIndependentSet(n, removed, edge_begin, edge_vertices);
    std::vector<int> set;
    for (int p : s.variable_blocks) {
      if (!removed[p] && in_set[p]) set.push_back(p);
    }
    CHECK(!set.empty());
    for (int p : set) removed[p] = true;
    remaining -= static_cast<int>(set.size());
    rounds.push_back(std::move(set));
  }
  // Ceres reverses the rounds: the last (the cameras in BA) is visited first.
  std::reverse(rounds.begin(), rounds.end());
  return rounds;
}

bool SetUpInnerIterations(const ProblemStructure& s, const ceres::ParameterBlockOrdering* given,
                          bool has_evaluation_callback, InnerIterationSetup* setup, std::string* error) {
  *setup = InnerIterationSetup();
  if (has_evaluation_callback) {
    *error = "Inner iterations cannot be used with EvaluationCallbacks";
    return false;
  }
  if (given != nullptr) {
    for (const auto& group : given->group_to_elements()) setup->ordering_used.push_back(static_cast<int>(group.second.size()));
  }
  if (s.variable_blocks.size() == 1) {
    LOG(WARNING) << "Reduced problem only contains one parameter block.Disabling inner iterations.";
    return true;
  }
  if (given == nullptr) {
    setup->sets = RecursiveIndependentSetOrdering(s);
  } else {
    // Ceres drops the constant and unused blocks from the ordering, then
    // checks that each group is an independent set of the reduced problem.
    // A pointer that is no parameter block of the problem would crash Ceres;
    // it is refused here.
    std::vector<int> group_of(s.parameter_blocks.size(), -1);
    for (const auto& group : given->group_to_elements()) {
      std::vector<int> set;
      for (double* block : group.second) {
        const auto it = s.index_of.find(block);
        if (it == s.index_of.end()) {
          *error = InnerIterationBlockNotInProblem(block);
          return false;
        }
        if (s.parameter_blocks[it->second].is_constant) continue;
        set.push_back(it->second);
      }
      if (set.empty()) continue;
      // The problem's order (first use), as the state vector: the sub-solves
      // of one set are independent, so the order only spreads the work.
      std::sort(set.begin(), set.end(), [&](int a, int b) {
        return s.parameter_blocks[a].state_offset < s.parameter_blocks[b].state_offset;
      });
      for (int p : set) group_of[p] = group.first;
      setup->sets.push_back(std::move(set));
    }
    setup->ordering_used.clear();
    for (const auto& set : setup->sets) setup->ordering_used.push_back(static_cast<int>(set.size()));
    if (setup->sets.empty()) {
      LOG(WARNING) << "No remaining elements in the inner iteration ordering.";
      return true;
    }
    std::vector<int> edge_begin, edge_vertices;
    Hyperedges(s, &edge_begin, &edge_vertices);
    if (!InnerIterationGroupsAreIndependent(edge_begin, edge_vertices, group_of, error)) return false;
  }
  if (given == nullptr) {
    for (const auto& set : setup->sets) setup->ordering_used.push_back(static_cast<int>(set.size()));
  }
  setup->used = true;
  return true;
}

// Per thread: everything one sub-solve needs, sized for the largest block
// once, so that sub-solves allocate nothing.
struct CoordinateDescentMinimizer::Scratch {
  std::vector<double> jacobian;            // rows x tangent, row-major (scaled)
  std::vector<double> residuals;           // rows (corrected), at the current point
  std::vector<double> candidate_residuals;  // one residual block's, at a candidate
  std::vector<double> ambient;             // one residual block's ambient Jacobian
  std::vector<double> plus_jacobian;       // ambient x tangent
  std::vector<const double*> parameters;   // one residual block's
  std::vector<double*> jacobians;          // one residual block's (only p's non-null)
  std::vector<double> x, candidate, projected, previous, gradient, scale, y, step, delta;
  // The one Levenberg-Marquardt of the trust-region loop, over the block's
  // dense QR (its radius and damping restart for every block).
  std::unique_ptr<LevenbergMarquardtStrategy> strategy;
  std::unique_ptr<DenseQrSolver> solver;
};

struct CoordinateDescentMinimizer::ThreadScratch {
  tbb::enumerable_thread_specific<Scratch> per_thread;
};

CoordinateDescentMinimizer::CoordinateDescentMinimizer(const ProblemStructure& s,
                                                       std::vector<std::vector<int>> sets,
                                                       ParallelContext* context)
    : s_(s), sets_(std::move(sets)), context_(context), scratch_(std::make_unique<ThreadScratch>()) {
  options_.levenberg_marquardt.max_radius = kInnerIterationMaxRadius;  // ceres_version.h
  const int n = static_cast<int>(s.parameter_blocks.size());
  residual_begin_.assign(n + 1, 0);
  rows_.assign(n, 0);
  for (const ResidualBlockInfo& rb : s.residual_blocks) {
    max_residuals_ = std::max(max_residuals_, rb.num_residuals);
    max_parameter_blocks_ = std::max(max_parameter_blocks_, rb.num_parameter_blocks);
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const int p = s.residual_parameters[rb.parameter_begin + i];
      if (s.parameter_blocks[p].is_constant) continue;
      ++residual_begin_[p + 1];
      rows_[p] += rb.num_residuals;
    }
  }
  std::partial_sum(residual_begin_.begin(), residual_begin_.end(), residual_begin_.begin());
  residuals_.resize(residual_begin_[n]);
  position_.resize(residual_begin_[n]);
  std::vector<int> fill(residual_begin_.begin(), residual_begin_.end() - 1);
  for (int r = 0; r < static_cast<int>(s.residual_blocks.size()); ++r) {
    const ResidualBlockInfo& rb = s.residual_blocks[r];
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const int p = s.residual_parameters[rb.parameter_begin + i];
      if (s.parameter_blocks[p].is_constant) continue;
      residuals_[fill[p]] = r;
      position_[fill[p]++] = i;
    }
  }
  for (const auto& set : sets_) {
    for (int p : set) {
      max_rows_ = std::max(max_rows_, rows_[p]);
      max_size_ = std::max(max_size_, s.parameter_blocks[p].size);
      max_tangent_ = std::max(max_tangent_, s.parameter_blocks[p].tangent_size);
    }
  }
}

CoordinateDescentMinimizer::~CoordinateDescentMinimizer() = default;

int64_t CoordinateDescentMinimizer::ScratchBytesPerThread(const ProblemStructure& s) {
  std::vector<int64_t> rows(s.parameter_blocks.size(), 0);
  int64_t max_residuals = 0, max_blocks = 0;
  for (const ResidualBlockInfo& rb : s.residual_blocks) {
    max_residuals = std::max<int64_t>(max_residuals, rb.num_residuals);
    max_blocks = std::max<int64_t>(max_blocks, rb.num_parameter_blocks);
    for (int i = 0; i < rb.num_parameter_blocks; ++i) rows[s.residual_parameters[rb.parameter_begin + i]] += rb.num_residuals;
  }
  int64_t max_rows = 0, max_size = 0, max_tangent = 0;
  for (int p : s.variable_blocks) {
    max_rows = std::max(max_rows, rows[p]);
    max_size = std::max<int64_t>(max_size, s.parameter_blocks[p].size);
    max_tangent = std::max<int64_t>(max_tangent, s.parameter_blocks[p].tangent_size);
  }
  // Jacobian, QR copy, residuals, right-hand side, J y; one residual block's
  // ambient Jacobian and residuals at a candidate, a PlusJacobian; the
  // block-sized vectors.
  const int64_t doubles = max_rows * max_tangent + (max_rows + max_tangent) * max_tangent + 3 * max_rows +
                          max_tangent + max_residuals * (max_size + 1) + max_size * max_tangent + 4 * max_size +
                          7 * max_tangent;
  return doubles * 8 + 2 * max_blocks * 8;
}

int64_t CoordinateDescentMinimizer::IndexBytes(const ProblemStructure& s) {
  // residual_begin_, rows_ per block; residuals_, position_ per (residual
  // block, variable block) pair; the sets.
  return int64_t{8} * s.parameter_blocks.size() + int64_t{8} * s.residual_parameters.size() +
         int64_t{4} * s.variable_blocks.size();
}

void CoordinateDescentMinimizer::Minimize(double* x) {
  std::atomic<int> iterations{0};
  for (const std::vector<int>& set : sets_) {
    const int n = static_cast<int>(set.size());
    context_->For(n, 1, [&](int begin, int end) {
      Scratch& scratch = scratch_->per_thread.local();
      int local = 0;
      for (int k = begin; k < end; ++k) local += SolveBlock(set[k], x, &scratch);
      iterations += local;
    });
  }
  last_round_iterations_ = iterations.load();
}

int CoordinateDescentMinimizer::SolveBlock(int p, double* x, Scratch* sc) const {
  const ParameterBlockInfo& pb = s_.parameter_blocks[p];
  const int size = pb.size, t = pb.tangent_size, rows = rows_[p];
  if (sc->jacobian.size() < static_cast<size_t>(std::max(1, max_rows_ * max_tangent_))) {
    sc->jacobian.resize(std::max(1, max_rows_ * max_tangent_));
    sc->residuals.resize(std::max(1, max_rows_));
    sc->candidate_residuals.resize(std::max(1, max_residuals_));
    sc->ambient.resize(std::max(1, max_residuals_ * max_size_));
    sc->plus_jacobian.resize(std::max(1, max_size_ * max_tangent_));
    sc->parameters.resize(std::max(1, max_parameter_blocks_));
    sc->jacobians.resize(std::max(1, max_parameter_blocks_));
    for (auto* v : {&sc->x, &sc->candidate, &sc->projected, &sc->previous}) v->resize(std::max(1, max_size_));
    for (auto* v : {&sc->gradient, &sc->scale, &sc->y, &sc->step, &sc->delta}) {
      v->resize(std::max(1, max_tangent_));
    }
    sc->strategy = std::make_unique<LevenbergMarquardtStrategy>(max_tangent_, options_.levenberg_marquardt);
    sc->solver = std::make_unique<DenseQrSolver>(max_rows_, max_tangent_);
  }
  const double* lower = pb.bounds_offset >= 0 ? s_.lower_bounds.data() + pb.bounds_offset : nullptr;
  const double* upper = pb.bounds_offset >= 0 ? s_.upper_bounds.data() + pb.bounds_offset : nullptr;
  // x (+) delta, projected onto the bounds (Ceres' ParameterBlock::Plus).
  auto plus = [&](const double* xb, const double* delta, double* out) {
    if (pb.manifold == nullptr) {
      for (int k = 0; k < size; ++k) out[k] = xb[k] + delta[k];
    } else if (!pb.manifold->Plus(xb, delta, out)) {
      return false;
    }
    if (lower != nullptr) {
      for (int k = 0; k < size; ++k) out[k] = std::min(std::max(out[k], lower[k]), upper[k]);
    }
    return true;
  };
  // Cost of p's residual blocks at xb; with `jacobian`, also the corrected
  // residuals, the tangent Jacobian (unscaled) and the gradient J^T r.
  auto evaluate = [&](const double* xb, bool jacobian, double* cost) {
    PlusJacobianBorder border;
    if (pb.manifold != nullptr) {
      // As Ceres, which computes it whenever it sets the state.
      double* pj = sc->plus_jacobian.data();
      std::fill(pj, pj + size * t, std::numeric_limits<double>::quiet_NaN());
      if (!pb.manifold->PlusJacobian(xb, pj)) return false;
      for (int k = 0; k < size * t; ++k) {
        if (!std::isfinite(pj[k])) return false;
      }
      if (jacobian) border = BorderOf(pj, size, t);
    }
    double total = 0.0;
    int row = 0;
    for (int k = residual_begin_[p]; k < residual_begin_[p + 1]; ++k) {
      const ResidualBlockInfo& rb = s_.residual_blocks[residuals_[k]];
      const int m = rb.num_residuals;
      const int* blocks = s_.residual_parameters.data() + rb.parameter_begin;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const ParameterBlockInfo& other = s_.parameter_blocks[blocks[i]];
        sc->parameters[i] = other.is_constant ? other.user_values : x + other.state_offset;
        sc->jacobians[i] = nullptr;
      }
      sc->parameters[position_[k]] = xb;
      double* tangent_jacobian = sc->jacobian.data() + row * t;
      double* ambient_jacobian = pb.manifold == nullptr ? tangent_jacobian : sc->ambient.data();
      if (jacobian) {
        sc->jacobians[position_[k]] = ambient_jacobian;
        std::fill(ambient_jacobian, ambient_jacobian + m * size, std::numeric_limits<double>::quiet_NaN());
      }
      // A cost alone (a candidate's) must not overwrite the current point's
      // residuals: the next step after a rejection is computed from them.
      double* res = jacobian ? sc->residuals.data() + row : sc->candidate_residuals.data();
      std::fill(res, res + m, std::numeric_limits<double>::quiet_NaN());
      if (!rb.cost_function->Evaluate(sc->parameters.data(), res, jacobian ? sc->jacobians.data() : nullptr)) {
        return false;
      }
      double squared_norm = 0.0;
      for (int i = 0; i < m; ++i) squared_norm += res[i] * res[i];
      if (!std::isfinite(squared_norm)) return false;
      if (jacobian) {
        for (int i = 0; i < m * size; ++i) {
          if (!std::isfinite(ambient_jacobian[i])) return false;
        }
        if (pb.manifold != nullptr) {
          TangentJacobian(m, size, t, border, ambient_jacobian, sc->plus_jacobian.data(), tangent_jacobian);
        }
      }
      if (rb.loss_function == nullptr) {
        total += 0.5 * squared_norm;
      } else {
        double rho[3];
        rb.loss_function->Evaluate(squared_norm, rho);
        if (!std::isfinite(rho[0])) return false;
        total += 0.5 * rho[0];
        if (jacobian) {
          if (!LossCorrection::IsDefined(squared_norm, rho)) return false;
          if (!(rho[1] == 1.0 && rho[2] == 0.0)) {
            const LossCorrection correction(squared_norm, rho);
            correction.CorrectJacobian(m, t, res, tangent_jacobian);
            correction.CorrectResiduals(m, res);
          }
        }
      }
      row += m;
    }
    if (!std::isfinite(total)) return false;
    *cost = total;
    if (jacobian) {
      double* g = sc->gradient.data();
      std::fill(g, g + t, 0.0);
      const double* J = sc->jacobian.data();
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < t; ++c) g[c] += J[r * t + c] * sc->residuals[r];
      }
    }
    return true;
  };

  const MinimizerOptions& o = options_;
  double* xb = sc->x.data();
  double* candidate = sc->candidate.data();
  double* scale = sc->scale.data();
  double* xp = x + pb.state_offset;
  std::copy(xp, xp + size, xb);
  DenseQrSolver& solver = *sc->solver;
  solver.Bind(rows, t, sc->jacobian.data(), sc->residuals.data());

  double cost = 0.0;
  // After a Jacobian at xb: the column scale (from the first), the scaled
  // Jacobian, and whether the projected gradient meets the tolerance.
  bool scale_computed = false;
  auto finish_jacobian = [&](bool* gradient_converged) {
    if (o.jacobi_scaling) {
      if (!scale_computed) {
        solver.SquaredColumnNorms(scale);
        for (int c = 0; c < t; ++c) scale[c] = 1.0 / (1.0 + std::sqrt(scale[c]));
        scale_computed = true;
      }
      solver.ScaleColumns(scale);
    } else {
      std::fill(scale, scale + t, 1.0);
    }
    for (int c = 0; c < t; ++c) sc->step[c] = -sc->gradient[c];
    if (!plus(xb, sc->step.data(), sc->projected.data())) return false;
    double max_norm = 0.0;
    for (int k = 0; k < size; ++k) max_norm = std::max(max_norm, std::abs(xb[k] - sc->projected[k]));
    *gradient_converged = GradientToleranceMet(max_norm, o.gradient_tolerance, nullptr);
    return true;
  };

  bool converged = false;
  if (!evaluate(xb, true, &cost) || !finish_jacobian(&converged)) return 0;  // the block stays
  // xb is the best point so far; it is written back at the end.
  if (converged) return 0;
  // The trust-region loop's Levenberg-Marquardt and step quality, and
  // Ceres' termination tests, on the block's sub-problem.
  LevenbergMarquardtStrategy& strategy = *sc->strategy;
  strategy.Reset(t);
  TrustRegionStepEvaluator step_evaluator(cost, o.max_consecutive_nonmonotonic_steps);
  bool had_success = false;
  int invalid_steps = 0, iteration = 0;
  double* y = sc->y.data();
  double* delta = sc->delta.data();
  while (true) {
    ++iteration;
    double jy_squared_norm = 0.0;
    const LinearSolverSummary ls = strategy.ComputeStep(&solver, o.eta, y, &jy_squared_norm);
    // -(J step)^T (r + J step / 2) with step = -y.
    const double model_cost_change = solver.ResidualDotJy() - 0.5 * jy_squared_norm;
    const bool valid = ls.termination == LinearSolverTermination::kSuccess &&
                       std::isfinite(model_cost_change) && model_cost_change > 0.0;
    bool accepted = false;
    if (!valid) {
      if (++invalid_steps >= o.max_num_consecutive_invalid_steps) break;
      strategy.StepIsInvalid();
    } else {
      invalid_steps = 0;
      for (int c = 0; c < t; ++c) delta[c] = -y[c] * scale[c];
      double candidate_cost = std::numeric_limits<double>::max();
      if (!plus(xb, delta, candidate) || !evaluate(candidate, false, &candidate_cost)) {
        candidate_cost = std::numeric_limits<double>::max();
      }
      if (had_success) {
        double step_norm2 = 0.0, x_norm2 = 0.0;
        for (int k = 0; k < size; ++k) {
          step_norm2 += (xb[k] - candidate[k]) * (xb[k] - candidate[k]);
          x_norm2 += xb[k] * xb[k];
        }
        if (ParameterToleranceMet(std::sqrt(step_norm2), std::sqrt(x_norm2), o.parameter_tolerance, nullptr)) {
          break;
        }
      }
      if (FunctionToleranceMet(cost - candidate_cost, cost, o.function_tolerance, nullptr)) break;
      const double relative_decrease = step_evaluator.StepQuality(candidate_cost, model_cost_change);
      if (relative_decrease > o.min_relative_decrease) {
        // Move, then the Jacobian there; a failure ends the sub-solve at the
        // previous point (the best so far).
        double new_cost = 0.0;
        std::copy(xb, xb + size, sc->previous.data());
        std::copy(candidate, candidate + size, xb);
        if (!evaluate(xb, true, &new_cost) || !finish_jacobian(&converged)) {
          std::copy(sc->previous.data(), sc->previous.data() + size, xb);
          break;
        }
        had_success = true;
        accepted = true;
        cost = new_cost;
        strategy.StepAccepted(relative_decrease);
        step_evaluator.StepAccepted(new_cost, model_cost_change);
      } else {
        strategy.StepRejected();
      }
    }
    if (MaxIterationsMet(iteration, o.max_num_iterations, nullptr)) break;
    if (accepted && converged) break;
    if (MinTrustRegionRadiusMet(strategy.Radius(), o.min_trust_region_radius, nullptr)) break;
  }
  // Monotonic steps: the last accepted point is the one of least cost.
  std::copy(xb, xb + size, xp);
  return iteration;
}

}  // namespace internal
}  // namespace ceres_sqrtba
