// The automatic choice of the blocks to eliminate (the landmarks) when the
// user gives no elimination ordering: a greedy maximal independent set of the
// parameter blocks' co-occurrence graph, as Ceres' Schur solvers choose their
// first elimination group (ComputeStableSchurOrdering): vertices are visited
// by increasing degree, ties in index order, and each vertex not adjacent to
// one already chosen is chosen. In bundle adjustment a point has far fewer
// neighbours than a camera, so the points are chosen.
#ifndef CERES_SQRTBA_INTERNAL_PROBLEM_INDEPENDENT_SET_H_
#define CERES_SQRTBA_INTERNAL_PROBLEM_INDEPENDENT_SET_H_

#include <vector>

namespace ceres_sqrtba {
namespace internal {

// The graph is given by hyperedges (residual blocks), each listing its
// vertices (parameter blocks): hyperedge e holds
// edge_vertices[edge_begin[e] .. edge_begin[e + 1]), so edge_begin has one
// entry more than there are hyperedges (or is empty: no hyperedges). Two
// vertices are adjacent when a hyperedge holds both; constant vertices are
// left out of the graph (no edges, never chosen). Vertices are in
// [0, num_vertices); is_constant has num_vertices entries.
//
// Returns, per vertex, whether it is in the set: no two chosen vertices are
// adjacent, and every variable vertex not chosen is adjacent to a chosen one.
std::vector<bool> EliminationIndependentSet(int num_vertices, const std::vector<bool>& is_constant,
                                            const std::vector<int>& edge_begin,
                                            const std::vector<int>& edge_vertices);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROBLEM_INDEPENDENT_SET_H_
