// One square-root solve, end to end:
//
//   options check -> ProblemStructure (landmarks, cameras, groups)
//     -> LinearSolverFactory (storage, work partition, memory plan)
//     -> PrecisionPolicy (the linear solver, float or double)
//     -> Evaluator (the user's cost functions) -> trust-region loop
//     -> Solver::Summary, and the user's parameter blocks.
//
// A problem with nothing to eliminate goes to ceres::Solve instead
// (ceres_pass_through.h). Everything that cannot be solved ends with FAILURE,
// a message naming the reason, and the user's parameter blocks untouched.
#ifndef CERES_SQRTBA_INTERNAL_SOLVE_SQUARE_ROOT_SOLVE_H_
#define CERES_SQRTBA_INTERNAL_SOLVE_SQUARE_ROOT_SOLVE_H_

#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/process_group.h"
#include "ceres_sqrtba/internal/minimizer/minimizer_options.h"
#include "ceres_sqrtba/internal/solvers/linear_solver_factory.h"
#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace internal {

// processes: the other processes of a solve spread over several
// (common/process_group.h: each holds every camera-side block and its own
// landmarks), or null for a solve in one process. camera_blocks: the
// camera-side blocks in the same order on every process (a solve spread over
// processes needs them; solve/distributed_structure.h); null: the landmarks
// are chosen as usual.
void SolveSquareRoot(const Solver::Options& options, ceres::Problem* problem,
                     Solver::Summary* summary, const ProcessGroup* processes = nullptr,
                     const std::vector<double*>* camera_blocks = nullptr);

// What the linear solver factory reads of the options (the fields of the
// same names).
LinearSolverOptions LinearSolverOptionsOf(const Solver::Options& options);

// What the trust-region loop reads of the options (the fields of the same
// names; use_nonmonotonic_steps = false makes
// max_consecutive_nonmonotonic_steps 0).
MinimizerOptions MinimizerOptionsOf(const Solver::Options& options);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVE_SQUARE_ROOT_SOLVE_H_
