// Tells the user's Problem::Options::evaluation_callback about every
// evaluation, as Ceres' evaluator does: before each evaluation the point is
// written into the user's parameter blocks and PrepareForEvaluation is called
// with (evaluate_jacobians, new_evaluation_point). A callback may compute
// state its cost functions then read (shared intermediate results, caches
// between a residual and a Jacobian evaluation at the same point).
//
// The calls of a solve, as Ceres makes them (trust-region minimizer, both
// versions):
//   once before the fixed cost, if some residual block is all constant  (false, true)
//   iteration 0                                                        (true,  true)
//   the cost at every candidate point                                  (false, true)
//   the Jacobian at an accepted candidate (the same point)             (true,  false)
//   every trial point of the projected line search (bounded problems)  (true,  true)
// A switch to double precision re-evaluates the Jacobian at the current
// point: (true, false) when that was the last point prepared, (true, true)
// when a candidate was evaluated since. The notifier remembers the last
// point it prepared and never says "same point" for another one, whatever
// its caller asks.
//
// Ceres 2.2 lets us read the callback (Problem::options()). Ceres 2.1 does not;
// there the notifier writes the point to the user's blocks and has Ceres call
// the callback, whatever it is, through Problem::EvaluateResidualBlock (new
// point) or EvaluateResidualBlockAssumingParametersUnchanged (same point) on
// one residual block, asking for its Jacobians when Jacobians are about to be
// evaluated: Ceres passes (jacobians != nullptr, new_point) to the callback
// before it evaluates that block. The price on 2.1: one residual block
// evaluation per evaluation, and the user's
// blocks hold the point being evaluated during the solve (as they do in Ceres
// whenever a callback is set). The solve writes the result (or, when it
// failed, the initial values) back at the end either way.
#ifndef CERES_SQRTBA_INTERNAL_EVALUATION_EVALUATION_NOTIFIER_H_
#define CERES_SQRTBA_INTERNAL_EVALUATION_EVALUATION_NOTIFIER_H_

#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class EvaluationNotifier {
 public:
  // problem may be null (no notifications; tests of the evaluator alone).
  EvaluationNotifier(const ceres::Problem* problem, const ProblemStructure& s);

  // Before an evaluation at state x (ambient state vector).
  // new_evaluation_point = false is honoured only when x is the point of the
  // last call.
  void Prepare(const double* x, bool evaluate_jacobians, bool new_evaluation_point);
  // Before the fixed cost: the user's blocks already hold the point.
  void PrepareForFixedCost();

  // True when the problem has an evaluation callback and the linked Ceres
  // lets us see it (2.2); false when it has none or we cannot tell (2.1).
  bool KnownToHaveCallback() const { return known_ && callback_ != nullptr; }

 private:
  void Call(bool evaluate_jacobians, bool new_evaluation_point);
  bool Active() const;

  const ceres::Problem* problem_;
  const ProblemStructure& s_;
  ceres::EvaluationCallback* callback_ = nullptr;
  bool known_ = false;                       // the callback could be read
  ceres::ResidualBlockId trigger_ = nullptr;  // 2.1: the block that makes Ceres call it
  std::vector<double*> jacobians_;  // 2.1: the trigger's Jacobians (null for constant blocks)
  std::vector<double> jacobian_values_;
  std::vector<double> last_point_;  // the state of the last Prepare (empty: none)
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EVALUATION_EVALUATION_NOTIFIER_H_
