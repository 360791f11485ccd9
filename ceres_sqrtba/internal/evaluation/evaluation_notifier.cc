#include "ceres_sqrtba/internal/evaluation/evaluation_notifier.h"

#include <algorithm>

#include "ceres_sqrtba/internal/common/ceres_version.h"

namespace ceres_sqrtba {
namespace internal {

EvaluationNotifier::EvaluationNotifier(const ceres::Problem* problem, const ProblemStructure& s)
    : problem_(problem), s_(s) {
  if (problem == nullptr) return;
  callback_ = ProblemEvaluationCallback(*problem, &known_);
  if (known_) return;
  // Ceres sets each variable block's state (and its PlusJacobian) from the
  // user's values before it evaluates a block: prefer a block without
  // manifolds. Its Jacobians are computed into our buffers when Ceres is to
  // say "Jacobians" (a cost function gets what Ceres itself passes: buffers
  // for variable blocks, null for constant ones).
  const ResidualBlockInfo* best = nullptr;
  for (const ResidualBlockInfo& rb : s.residual_blocks) {
    bool manifold = false;
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const ParameterBlockInfo& pb = s.parameter_blocks[s.residual_parameters[rb.parameter_begin + i]];
      manifold |= !pb.is_constant && pb.manifold != nullptr;
    }
    if (best == nullptr || !manifold) best = &rb;
    if (!manifold) break;
  }
  if (best == nullptr) return;
  trigger_ = best->id;
  int total = 0;
  for (int i = 0; i < best->num_parameter_blocks; ++i) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.residual_parameters[best->parameter_begin + i]];
    if (!pb.is_constant) total += best->num_residuals * pb.tangent_size;
  }
  jacobian_values_.resize(std::max(1, total));
  jacobians_.assign(best->num_parameter_blocks, nullptr);
  int offset = 0;
  for (int i = 0; i < best->num_parameter_blocks; ++i) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.residual_parameters[best->parameter_begin + i]];
    if (pb.is_constant) continue;
    jacobians_[i] = jacobian_values_.data() + offset;
    offset += best->num_residuals * pb.tangent_size;
  }
}

void EvaluationNotifier::Call(bool evaluate_jacobians, bool new_evaluation_point) {
  if (known_) {
    callback_->PrepareForEvaluation(evaluate_jacobians, new_evaluation_point);
    return;
  }
  double cost = 0.0;
  double** jacobians = evaluate_jacobians ? jacobians_.data() : nullptr;
  // The block's own result does not matter: only the call Ceres makes first.
  if (new_evaluation_point) {
    problem_->EvaluateResidualBlock(trigger_, false, &cost, nullptr, jacobians);
  } else {
    problem_->EvaluateResidualBlockAssumingParametersUnchanged(trigger_, false, &cost, nullptr, jacobians);
  }
}

bool EvaluationNotifier::Active() const {
  return problem_ != nullptr && (known_ ? callback_ != nullptr : trigger_ != nullptr);
}

void EvaluationNotifier::Prepare(const double* x, bool evaluate_jacobians, bool new_evaluation_point) {
  if (!Active()) return;
  const bool same = !last_point_.empty() && std::equal(last_point_.begin(), last_point_.end(), x);
  if (!same) last_point_.assign(x, x + s_.num_parameters);
  StateToUser(s_, x);
  Call(evaluate_jacobians, new_evaluation_point || !same);
}

void EvaluationNotifier::PrepareForFixedCost() {
  if (!Active()) return;
  last_point_.clear();  // the user's values, not a state vector
  Call(false, true);
}

}  // namespace internal
}  // namespace ceres_sqrtba
