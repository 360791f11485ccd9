// MPI for the example programs, only when a launcher started the process.
//
// bundle_adjuster and colmap_bundle_adjuster built with ceres_sqrtba_mpi
// (CERES_SQRTBA_EXAMPLES_MPI=1) spread one solve over the ranks of `mpirun
// -np N <program> ...` (docs/distributed.md). A plain run stays a plain
// process: MPI is initialized only when a launcher set its variables (Open
// MPI's mpirun OMPI_COMM_WORLD_SIZE, PMIx-based launchers PMIX_RANK, MPICH's
// PMI_RANK), so that the program runs where no MPI runtime is wanted and a
// sanitizer build does not see Open MPI's allocations.
#ifndef CERES_SQRTBA_EXAMPLES_MPI_LAUNCH_H_
#define CERES_SQRTBA_EXAMPLES_MPI_LAUNCH_H_

#include <cstdlib>
#include <vector>

#if CERES_SQRTBA_EXAMPLES_MPI
#include <mpi.h>
#endif

namespace ceres_sqrtba {
namespace examples {

inline bool StartedByMpiLauncher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_RANK") != nullptr;
}

// body() between MPI_Init and MPI_Finalize, with *rank and *ranks set, when a
// launcher started this process and the program was built with MPI; else
// body() alone (*rank = 0, *ranks = 1 as the caller left them). Returns
// body()'s status.
template <typename Body>
int RunWithMpiIfLaunched(int* argc, char*** argv, int* rank, int* ranks, Body body) {
#if CERES_SQRTBA_EXAMPLES_MPI
  if (StartedByMpiLauncher()) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, ranks);
    const int status = body();
    MPI_Finalize();
    return status;
  }
#else
  (void)argc;
  (void)argv;
  (void)rank;
  (void)ranks;
#endif
  return body();
}

#if CERES_SQRTBA_EXAMPLES_MPI
// After a solve spread over the ranks: every rank's landmarks to every rank.
// share[i] is landmark i's rank (each rank's share consecutive, as
// BalancedLandmarkShares makes them); landmark i's `size` values are at
// values + size * i on every rank.
inline void BroadcastLandmarkShares(const std::vector<int>& share, int size, double* values) {
  const int count = static_cast<int>(share.size());
  for (int begin = 0; begin < count;) {
    const int rank = share[begin];
    int end = begin;
    while (end < count && share[end] == rank) ++end;
    MPI_Bcast(values + static_cast<size_t>(size) * begin, size * (end - begin), MPI_DOUBLE, rank, MPI_COMM_WORLD);
    begin = end;
  }
}
#endif

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_MPI_LAUNCH_H_
