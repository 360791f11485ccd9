#include "ceres_sqrtba/distributed_solver.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "ceres_sqrtba/internal/common/wall_time.h"
#include "ceres_sqrtba/internal/distributed/mpi_process_group.h"
#include "ceres_sqrtba/internal/solve/distributed_structure.h"
#include "ceres_sqrtba/internal/solve/options_validation.h"
#include "ceres_sqrtba/internal/solve/square_root_solve.h"
#include "ceres_sqrtba/internal/solve/summary_report.h"

namespace ceres_sqrtba {

void SolveDistributed(const Solver::Options& options, MPI_Comm communicator,
                      const std::vector<double*>& camera_blocks, ceres::Problem* problem, Solver::Summary* summary,
                      DistributedStatistics* statistics) {
  const double start_time = internal::WallTimeInSeconds();
  internal::MpiProcessGroup processes(communicator);
  Solver::Options rank_options = options;
  if (processes.rank() != 0) {
    rank_options.logging_type = ceres::SILENT;
    rank_options.minimizer_progress_to_stdout = false;
  }
  // What fails before the solve's own agreement points fails on every rank.
  std::string error;
  if (problem == nullptr) {
    error = "ceres_sqrtba::SolveDistributed was called with a null problem.";
  } else if (!internal::UnsupportedDistributedSolverType(rank_options).empty()) {
    // Before the values' validation, which reads a resolved solver type.
    error = "Invalid configuration. " + internal::UnsupportedDistributedSolverType(rank_options);
  } else if (!internal::ValidateSqrtOptionValues(rank_options, &error)) {
  } else if (rank_options.minimizer_type != ceres::TRUST_REGION) {
    error = "Invalid configuration. A solve spread over processes needs Solver::Options::minimizer_type = "
            "TRUST_REGION.";
  } else {
    error.clear();
  }
  const std::string first = processes.FirstError(error);
  if (!first.empty()) {
    *summary = Solver::Summary();
    internal::RecordFailure(rank_options, first, start_time, summary);
    if (statistics != nullptr) statistics->bytes_sent = processes.bytes_sent();
    return;
  }
  try {
    internal::SolveSquareRoot(rank_options, problem, summary, &processes, &camera_blocks);
  } catch (const std::exception& e) {
    // Memory that ran out on this process after every check passed: the
    // others wait in a collective step that this one will not reach, so the
    // whole job ends, with the reason.
    std::fprintf(stderr, "ceres_sqrtba::SolveDistributed: rank %d: out of memory (%s); aborting every rank.\n",
                 processes.rank(), e.what());
    std::fflush(stderr);
    MPI_Abort(communicator, 1);
  }
  if (statistics != nullptr) statistics->bytes_sent = processes.bytes_sent();
}

std::vector<int> BalancedLandmarkShares(const std::vector<int>& observations, int num_ranks) {
  const int n = static_cast<int>(observations.size());
  std::vector<int> rank(n, 0);
  if (num_ranks <= 1 || n == 0) return rank;
  if (n <= num_ranks) {
    for (int i = 0; i < n; ++i) rank[i] = i;
    return rank;
  }
  std::vector<double> prefix(n + 1, 0.0);  // observations before landmark i
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + std::max(0, observations[i]);
  if (prefix[n] <= 0.0) {
    // No observations to balance: balance the landmarks' count.
    return BalancedLandmarkShares(std::vector<int>(n, 1), num_ranks);
  }
  const double total = prefix[n];
  // Rank k starts at the first landmark whose middle lies at or past k/N of
  // the observations, kept at least one landmark after rank k-1's start and
  // early enough to leave one to every later rank (when there are enough).
  const int spare = 1;
  int begin = 0, i = 0;
  for (int k = 1; k <= num_ranks; ++k) {
    int end = n;
    if (k < num_ranks) {
      const double target = total * k / num_ranks;
      while (i < n && prefix[i] + 0.5 * std::max(0, observations[i]) < target) ++i;
      end = std::min(std::max(i, begin + spare), n - spare * (num_ranks - k));
      i = std::max(i, end);
    }
    for (int j = begin; j < end; ++j) rank[j] = k - 1;
    begin = end;
  }
  return rank;
}

}  // namespace ceres_sqrtba
