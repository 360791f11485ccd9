// Step quality for monotonic and non-monotonic trust-region steps, as Ceres'
// TrustRegionStepEvaluator (Conn, Gould & Toint, "Trust Region Methods",
// algorithm 10.1.2): the quality of a step is the better of its ratio of
// actual to predicted decrease relative to the current cost and relative to a
// reference cost that may lag behind for up to max_consecutive_nonmonotonic
// accepted steps. With 0 such steps it is the plain ratio.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_STEP_EVALUATOR_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_STEP_EVALUATOR_H_

#include <algorithm>
#include <limits>

namespace ceres_sqrtba {
namespace internal {

class TrustRegionStepEvaluator {
 public:
  TrustRegionStepEvaluator(double initial_cost, int max_consecutive_nonmonotonic_steps)
      : max_nonmonotonic_(max_consecutive_nonmonotonic_steps),
        minimum_cost_(initial_cost),
        current_cost_(initial_cost),
        reference_cost_(initial_cost),
        candidate_cost_(initial_cost) {}

  double StepQuality(double cost, double model_cost_change) const {
    // A failed evaluation is reported as the largest cost: no division.
    if (cost >= std::numeric_limits<double>::max()) {
      return std::numeric_limits<double>::lowest();
    }
    const double relative = (current_cost_ - cost) / model_cost_change;
    const double historical = (reference_cost_ - cost) /
                              (accumulated_reference_model_change_ + model_cost_change);
    return std::max(relative, historical);
  }

  void StepAccepted(double cost, double model_cost_change) {
    current_cost_ = cost;
    accumulated_candidate_model_change_ += model_cost_change;
    accumulated_reference_model_change_ += model_cost_change;
    if (current_cost_ < minimum_cost_) {
      minimum_cost_ = current_cost_;
      num_nonmonotonic_ = 0;
      candidate_cost_ = current_cost_;
      accumulated_candidate_model_change_ = 0.0;
    } else {
      ++num_nonmonotonic_;
      if (current_cost_ > candidate_cost_) {
        candidate_cost_ = current_cost_;
        accumulated_candidate_model_change_ = 0.0;
      }
    }
    // Resetting on every step when max_nonmonotonic_ is 0 makes the
    // monotonic case fall out of the same rule.
    if (num_nonmonotonic_ == max_nonmonotonic_) {
      reference_cost_ = candidate_cost_;
      accumulated_reference_model_change_ = accumulated_candidate_model_change_;
    }
  }

 private:
  int max_nonmonotonic_;
  double minimum_cost_;
  double current_cost_;
  double reference_cost_;
  double candidate_cost_;
  double accumulated_reference_model_change_ = 0.0;
  double accumulated_candidate_model_change_ = 0.0;
  int num_nonmonotonic_ = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_TRUST_REGION_STEP_EVALUATOR_H_
