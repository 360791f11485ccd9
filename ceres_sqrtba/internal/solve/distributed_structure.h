// The checks that the shares of a solve spread over several processes
// (common/process_group.h) fit together. Every process holds every
// camera-side parameter block (the same blocks, listed in the same order,
// with the same values, sizes, manifolds' presence and bounds) and its own
// landmarks with their residual blocks; a residual block that touches no
// landmark is held by exactly one process. Each process reads its share
// with the cameras given (StructureOptions::camera_blocks): every other
// variable block is a landmark, and a process may hold none. Then:
//   - a failure on one process (a structure the square-root solver cannot
//     take, a value Ceres refuses) is every process's failure, with the
//     first failing rank's message;
//   - the cameras (count, order, sizes, values, bounds) and the options that
//     steer the solve must be the same on every process, else every process
//     fails with a message saying so.
#ifndef CERES_SQRTBA_INTERNAL_SOLVE_DISTRIBUTED_STRUCTURE_H_
#define CERES_SQRTBA_INTERNAL_SOLVE_DISTRIBUTED_STRUCTURE_H_

#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/process_group.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace internal {

// status, structure, *error: this process's BuildProblemStructure. Returns
// kOk on every process, or kInvalid on every process with the same *error:
// the first failing process's error, processes holding other cameras or
// given other options, or a landmark on two processes (SharedLandmarks).
// Every process must call it at the same point.
StructureStatus DistributedStructure(StructureStatus status, const Solver::Options& options,
                                     const ProcessGroup& processes, const ProblemStructure& structure,
                                     std::string* error);

// A landmark held by two processes: the message naming the two ranks, the
// same on every process, or empty. A landmark has no identity that survives
// across processes; it is known by its values (bit for bit) and, per
// residual block, the values of the block's cameras (constant or not: the
// same on every process), which a landmark given to two processes with its
// residual blocks keeps on both. Landmarks that only start at the same
// values (GLOMAP's scales, all 1) are seen by other cameras and pass; a
// landmark whose residual blocks are split between processes
// looks like two such landmarks and is not found. Each process hashes its
// landmarks and checks the hashes sent to it (a share of all landmarks);
// every process must call it at the same point.
std::string SharedLandmarks(const ProblemStructure& structure, const ProcessGroup& processes);

// The summary's problem sizes (original and reduced) and the landmark groups
// of its orderings (given and used) of the whole problem: each process's
// sizes added over the processes, the cameras (which every process holds)
// counted once. Every process must call it at the same point.
void RecordDistributedSizes(const ProblemStructure& structure, const std::vector<double*>& camera_blocks,
                            const ProcessGroup& processes, Solver::Summary* summary);

// What the solve spread over processes does not implement, as
// UnsupportedSqrtOption says it (empty: nothing).
std::string UnsupportedDistributedOption(const Solver::Options& options);
// Its first part, the linear solver (checked before the structure is read).
std::string UnsupportedDistributedSolverType(const Solver::Options& options);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVE_DISTRIBUTED_STRUCTURE_H_
