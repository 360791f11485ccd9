// How one linear solve ended, as Ceres' LinearSolver::Summary says it: the
// outcome decides what the trust-region loop does with the step (use it,
// shrink the radius and try again, or end the solve).
#ifndef CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_SUMMARY_H_
#define CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_SUMMARY_H_

#include <string>

namespace ceres_sqrtba {
namespace internal {

enum class LinearSolverTermination {
  kSuccess,        // converged to the requested accuracy
  kNoConvergence,  // iteration limit or loss of progress: the step is usable
  kFailure,        // numerical failure: retry with more damping
  kFatalError,     // cannot continue
};

struct LinearSolverSummary {
  LinearSolverTermination termination = LinearSolverTermination::kFailure;
  int num_iterations = 0;
  std::string message;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_SUMMARY_H_
