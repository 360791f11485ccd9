// Ceres' checks of a given Solver::Options::inner_iteration_ordering, with
// Ceres' messages, for both places that need them: the square-root solve's
// inner iterations (minimizer/coordinate_descent_minimizer.h) and the
// problems passed on to ceres::Solve, where Ceres' own check comes too late
// for its Schur solvers (solve/ceres_pass_through.h).
//
// Ceres drops constant blocks (and blocks no residual block uses) from the
// ordering, then requires each group to be an independent set of the
// reduced problem: no residual block holds two blocks of one group. It
// checks the groups in increasing id and names the first that fails.
#ifndef CERES_SQRTBA_INTERNAL_PROBLEM_INNER_ITERATION_ORDERING_H_
#define CERES_SQRTBA_INTERNAL_PROBLEM_INNER_ITERATION_ORDERING_H_

#include <string>
#include <vector>

namespace ceres_sqrtba {
namespace internal {

// The message for a block of the ordering that is not a parameter block of
// the problem (Ceres would read past a map's end).
std::string InnerIterationBlockNotInProblem(const double* block);

// The residual blocks as hyperedges over vertices (independent_set.h's
// layout: edge e holds edge_vertices[edge_begin[e] .. edge_begin[e + 1]));
// group_of: per vertex, its group id in the ordering, or -1 when it is in no
// group or constant. False with Ceres' message in *error when a group is
// not an independent set.
bool InnerIterationGroupsAreIndependent(const std::vector<int>& edge_begin,
                                        const std::vector<int>& edge_vertices,
                                        const std::vector<int>& group_of, std::string* error);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROBLEM_INNER_ITERATION_ORDERING_H_
