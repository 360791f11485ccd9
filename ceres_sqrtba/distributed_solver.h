// One square-root solve spread over the ranks of an MPI communicator
// (library ceres_sqrtba::ceres_sqrtba_mpi, built when CMake finds MPI).
//
// Every rank builds its own ceres::Problem:
//   - every camera-side parameter block (poses, intrinsics, rigs: whatever is
//     not a landmark), on every rank, with the same values, sizes,
//     manifolds, constness and bounds, listed in camera_blocks in the same
//     order on every rank (Ceres keeps no order of its own that a program
//     could read: Problem::GetParameterBlocks lists blocks by address);
//   - its share of the landmarks (every other variable block), each landmark
//     on exactly one rank, with all of that landmark's residual blocks;
//   - each residual block that touches no landmark (a prior, a pose-graph
//     term) on exactly one rank (rank 0, say).
// A rank may hold no landmark: its problem then holds the camera-side
// blocks alone (and such residual blocks).
//
// SolveDistributed runs Levenberg-Marquardt exactly as the one-process
// ceres_sqrtba::Solve (SQRT_ITERATIVE_SCHUR, projected storage; JACOBI,
// SCHUR_JACOBI, IDENTITY, CLUSTER_JACOBI or CLUSTER_TRIDIAGONAL
// preconditioning, the clusters the whole problem's; or SQRT_SPARSE_SCHUR, the
// reduced camera matrix summed over the ranks and factored on each; single
// or double precision): the sums over landmarks (cost, gradient, the
// reduced camera system's right-hand side and products or matrix, the
// preconditioner, the column norms) are
// each rank's own sums added over the ranks in rank order, so every rank
// takes the same decisions, ends with the same camera blocks and the same
// iterations in its summary, and writes its own landmarks. A run on a given
// number of ranks gives the same bits every time; against one process, the
// sums are added in another order, so costs agree to rounding.
//
// Call it on every rank of the communicator with the same options. What the
// one-process solve refuses, a rank whose share does not fit the others
// (other cameras, other options), a cost function failing on one rank: every
// rank fails with the same message, naming the rank where it began. The
// summary's problem sizes are the whole problem's (the cameras counted once),
// the same on every rank.
#ifndef CERES_SQRTBA_DISTRIBUTED_SOLVER_H_
#define CERES_SQRTBA_DISTRIBUTED_SOLVER_H_

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {

// What the ranks exchanged, for scaling studies.
struct DistributedStatistics {
  int64_t bytes_sent = 0;  // by this rank, through the solve's collectives
};

// options.sqrt_linear_solver_type must be SQRT_ITERATIVE_SCHUR or
// SQRT_SPARSE_SCHUR. On ranks
// other than 0 the solve is silent (no progress table, no log lines).
void SolveDistributed(const Solver::Options& options, MPI_Comm communicator,
                      const std::vector<double*>& camera_blocks, ceres::Problem* problem, Solver::Summary* summary,
                      DistributedStatistics* statistics = nullptr);

// Landmarks split into num_ranks contiguous shares of about equal numbers of
// observations: observations[i] is landmark i's; returns the rank of each
// landmark (non-decreasing, each rank's share consecutive). Every rank gets
// at least one landmark when there are at least num_ranks of them.
std::vector<int> BalancedLandmarkShares(const std::vector<int>& observations, int num_ranks);

}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_DISTRIBUTED_SOLVER_H_
