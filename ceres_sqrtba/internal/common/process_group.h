// The processes of one solve spread over several (MPI ranks, or any other
// transport), as the solve's parts see them: a few collective operations,
// each called by every process at the same point of the solve, in the same
// order. One process has none (ParallelContext::processes() is null) and
// every part then works on what it holds.
//
// In a solve spread over processes every process holds all camera-side
// parameter blocks (the same values on each) and its own share of the
// landmarks with their residual blocks. A sum over the landmark blocks (the
// gradient's camera part, the reduced camera system's products and
// right-hand side, the preconditioner's blocks, the column norms, the cost)
// is each process's own sum, added over the processes by Sum; everything
// computed from such sums alone (PCG's iterates, the step's camera part, the
// trust-region decisions) is then the same on every process without further
// communication.
//
// Determinism: Sum adds the processes' values in rank order, the same way on
// every process, so that every process gets the same bits, and a solve on a
// given number of processes gives the same bits every time.
#ifndef CERES_SQRTBA_INTERNAL_COMMON_PROCESS_GROUP_H_
#define CERES_SQRTBA_INTERNAL_COMMON_PROCESS_GROUP_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ceres_sqrtba {
namespace internal {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // v[0, n) on every process := the sum over processes of their v[0, n),
  // added in rank order (the first process's value plus the second's, ...).
  virtual void Sum(double* v, int64_t n) const = 0;
  virtual void Sum(float* v, int64_t n) const = 0;

  // The largest of the processes' values.
  virtual double Max(double value) const = 0;

  // The message of the lowest rank whose message is not empty (its rank in
  // *from, if not null), or empty when every process passed an empty one:
  // how a failure on one process becomes the same failure on all.
  virtual std::string FirstMessage(const std::string& message, int* from) const = 0;

  // True on every process when every process passed the same value (a
  // fingerprint: the processes hold the same cameras, the same options).
  virtual bool AllEqual(uint64_t value) const = 0;
  // Every process sends to[r] to process r (to.size() == size()); then
  // *received holds what the processes sent this one, in rank order, and
  // (*from)[i] the rank that sent (*received)[i]: how a check over all
  // landmarks is split among the processes.
  virtual void Exchange(const std::vector<std::vector<uint64_t>>& to, std::vector<uint64_t>* received,
                        std::vector<int>* from) const = 0;

  // The sum and the least of the values of the processes that share this
  // one's machine (its memory; MPI: MPI_COMM_TYPE_SHARED), on each of them:
  // the memory check of processes that share a machine's available memory.
  virtual int64_t SumOnMachine(int64_t value) const = 0;
  virtual int64_t MinOnMachine(int64_t value) const = 0;

  // True on every process when one passed true.
  bool Any(bool value) const { return Max(value ? 1.0 : 0.0) > 0.0; }

  // Empty on every process when every error is empty; otherwise the first
  // failing rank's error, as "Rank <r>: <error>".
  std::string FirstError(const std::string& error) const {
    int from = 0;
    const std::string first = FirstMessage(error, &from);
    return first.empty() ? first : "Rank " + std::to_string(from) + ": " + first;
  }
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_PROCESS_GROUP_H_
