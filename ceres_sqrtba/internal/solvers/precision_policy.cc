#include "ceres_sqrtba/internal/solvers/precision_policy.h"

#include <algorithm>
#include <utility>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

PrecisionPolicy::PrecisionPolicy(Precision requested, MakeSolver make, FitsInMemory fits)
    : make_(std::move(make)),
      fits_(std::move(fits)),
      requested_(requested),
      current_(requested),
      solver_(make_(requested)) {}

bool PrecisionPolicy::SwitchToDouble(const std::string& reason, int iteration, std::string* why) {
  if (current_ != SINGLE_PRECISION) {
    *why = "the solve is already in double precision.";
    return false;
  }
  if (switch_tried_) {
    *why = "double precision was already found not to fit in memory.";
    return false;
  }
  switch_tried_ = true;
  if (!fits_(DOUBLE_PRECISION, why)) return false;
  // The single precision solver is not used again: free it first, so that
  // the peak is the double precision solver's, as the memory check assumes.
  solver_.reset();
  solver_ = make_(DOUBLE_PRECISION);
  current_ = DOUBLE_PRECISION;
  switch_iteration_ = iteration;
  switch_reason_ = reason;
  return true;
}

void PrecisionPolicy::ReturnToSingle() {
  CHECK(requested_ == SINGLE_PRECISION && current_ == DOUBLE_PRECISION);
  solver_.reset();
  solver_ = make_(SINGLE_PRECISION);
  current_ = SINGLE_PRECISION;
  switch_tried_ = false;
  switch_iteration_ = -1;
  switch_reason_.clear();
  consecutive_rejections_ = 0;
  ++failed_trials_;
  rejections_before_trial_ = std::min(2 * rejections_before_trial_, 1 << 20);
}

}  // namespace internal
}  // namespace ceres_sqrtba
