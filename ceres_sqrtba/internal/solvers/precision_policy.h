// Which precision the linear algebra of a solve runs in, and the one-way
// switch from single to double precision.
//
// Single precision (paper section 6: the square-root form keeps the reduced
// camera system well conditioned enough for float) can still meet what float
// cannot carry: Jacobian or residual values beyond its range, a numerical
// failure of PCG, steps that stop decreasing the model because the gradient
// fell to float's rounding level near a minimum, or steps the true cost keeps
// rejecting. The trust-region loop reports such events; this object decides
// whether the solve continues in double precision and builds that solver:
//
//   - only a single precision solve switches, and at most once for good (a
//     failed trial, below, is undone);
//   - the single precision solver is freed before the double one is built, so
//     the peak memory is the double solver's, which must fit the budget
//     (Fits); when it does not, the switch is refused and the solve goes on
//     (or ends) as Ceres would;
//   - a refused switch is not tried again;
//   - a run of rejected steps is first put to a trial: the step that would
//     have made kMaxRejectionsInSinglePrecision in a row is computed again in
//     double precision, at the same radius. If the true cost rejects the
//     double step too, precision was not the cause (a first trust region
//     far too large for the problem is rejected in any precision, as by
//     Ceres): the solve returns to single precision (ReturnToSingle) and the
//     next trial needs a run twice as long.
//
// The iteration and the reason of the switch end up in the summary.
#ifndef CERES_SQRTBA_INTERNAL_SOLVERS_PRECISION_POLICY_H_
#define CERES_SQRTBA_INTERNAL_SOLVERS_PRECISION_POLICY_H_

#include <functional>
#include <memory>
#include <string>

#include "ceres_sqrtba/internal/linear/linear_solver.h"
#include "ceres_sqrtba/types.h"

namespace ceres_sqrtba {
namespace internal {

class PrecisionPolicy {
 public:
  // Builds the solver of one precision.
  using MakeSolver = std::function<std::unique_ptr<LinearSolver>(Precision)>;
  // Whether the solver of one precision fits in memory; false with the
  // reason otherwise.
  using FitsInMemory = std::function<bool(Precision, std::string* why)>;

  // Single precision solves try double precision after this many
  // unsuccessful steps in a row: float may have lost the precision the
  // problem needs (e.g. a badly scaled problem without Jacobi scaling).
  static constexpr int kMaxRejectionsInSinglePrecision = 5;

  // Builds the solver of `requested` precision.
  PrecisionPolicy(Precision requested, MakeSolver make, FitsInMemory fits);

  LinearSolver* solver() const { return solver_.get(); }
  Precision requested() const { return requested_; }
  Precision current() const { return current_; }
  // Single precision, and double precision not tried yet.
  bool CanSwitchToDouble() const { return current_ == SINGLE_PRECISION && !switch_tried_; }

  // Counts an unsuccessful step; a successful step resets the count.
  void StepRejected() { ++consecutive_rejections_; }
  void StepAccepted() { consecutive_rejections_ = 0; }
  // Whether one more unsuccessful step would complete the run that puts
  // single precision to the trial (kMaxRejectionsInSinglePrecision in a row,
  // twice as many after each trial that double precision failed too), and
  // a switch is still possible.
  bool NextRejectionIsTrial() const {
    return CanSwitchToDouble() && consecutive_rejections_ + 1 >= rejections_before_trial_;
  }
  int rejections_before_trial() const { return rejections_before_trial_; }

  // Continues in double precision from iteration `iteration` because of
  // `reason`. False (with *why) when the switch is not possible: not single
  // precision, already tried, or double precision does not fit in memory;
  // the current solver then stays.
  bool SwitchToDouble(const std::string& reason, int iteration, std::string* why);

  // Undoes a switch whose trial failed (double precision rejected the step
  // as well): frees the double precision solver, builds the single precision
  // one again (it fitted before), and forgets the switch; the next trial
  // needs twice as many rejections in a row. Only after a switch from a
  // single precision request.
  void ReturnToSingle();
  int failed_trials() const { return failed_trials_; }

  int switch_iteration() const { return switch_iteration_; }
  const std::string& switch_reason() const { return switch_reason_; }

 private:
  MakeSolver make_;
  FitsInMemory fits_;
  Precision requested_;
  Precision current_;
  std::unique_ptr<LinearSolver> solver_;
  bool switch_tried_ = false;
  int consecutive_rejections_ = 0;
  int rejections_before_trial_ = kMaxRejectionsInSinglePrecision;
  int failed_trials_ = 0;
  int switch_iteration_ = -1;
  std::string switch_reason_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVERS_PRECISION_POLICY_H_
