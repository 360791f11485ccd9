// Reading a ceres::Problem through Ceres' public API, once, before anything
// else: the parameter blocks (sizes, manifolds, constancy, bounds) and the
// residual blocks (cost and loss functions, sizes, parameter blocks).
//
// Every Ceres query is a lookup in Ceres' maps or a visit to a residual
// block's own heap object: the queries run in parallel, each residual block
// is visited once, and the order of the result depends on the problem only
// (never on addresses or thread count), so that the work partition and every
// sum built on it are the same in every run.
//
// Parameter blocks are numbered in order of first use by the residual blocks
// (Ceres' program order for blocks created by AddResidualBlock), then the
// unused ones in the order Problem::GetParameterBlocks lists them. Residual
// blocks whose parameter blocks are all constant only add to the fixed cost
// (ProblemStructure::fixed_residual_blocks), as Ceres removes them from its
// reduced program; variable blocks that no residual block uses are marked
// constant and keep their values, as Ceres removes them too.
#ifndef CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_READER_H_
#define CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_READER_H_

#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class ParallelContext;

// Fills s->parameter_blocks, s->index_of, the bounds, s->residual_parameters
// and s->fixed_residual_blocks, and returns the residual blocks with a
// variable parameter block. False, with Ceres' own message, when a parameter
// value is not finite or a box is infeasible (Ceres refuses such problems
// before it solves). context (optional): runs the queries in parallel.
bool ReadProblem(const ceres::Problem& problem, ParallelContext* context, ProblemStructure* s,
                 std::vector<ResidualBlockInfo>* residuals, std::string* error);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_READER_H_
