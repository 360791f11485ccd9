// How one linear solve ended, as Ceres' LinearSolver::Summary says it: the
// outcome decides what the trust-region loop does with the step (use it,
// shrink the radius and try again, or end the solve).
#ifndef CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_SUMMARY_H_
#define CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_SUMMARY_H_

#include <string>

#include "ceres_sqrtba/internal/common/process_group.h"

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

// Spread over processes (process_group.h; null: one process, the summary
// unchanged): the most severe of the processes' terminations, on every
// process. The processes factor the same matrix, which rounds alike only
// where their builds and instruction sets are alike; a process whose
// factorization failed must not take another branch than the others (and
// leave them waiting in a later sum).
inline LinearSolverSummary AgreeOnTermination(const ProcessGroup* processes, LinearSolverSummary summary) {
  if (processes == nullptr) return summary;
  const int own = static_cast<int>(summary.termination);
  const int agreed = static_cast<int>(processes->Max(static_cast<double>(own)));
  if (agreed > own) {
    summary.termination = static_cast<LinearSolverTermination>(agreed);
    summary.message = "The linear solve failed on another process.";
  }
  return summary;
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_LINEAR_LINEAR_SOLVER_SUMMARY_H_
