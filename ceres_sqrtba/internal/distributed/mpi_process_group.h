// ProcessGroup (common/process_group.h) over an MPI communicator: the
// collective operations of a solve spread over MPI ranks. Built only into
// the ceres_sqrtba_mpi library.
//
// Sum gathers every rank's vector on every rank (MPI_Allgather) and adds
// them in rank order there, rather than MPI_Allreduce, whose order of
// additions MPI leaves to the implementation: every rank gets the same bits,
// and a run gets the same bits on the same number of ranks. The vectors are
// camera-sized (9 doubles per camera, or its preconditioner's blocks), so
// gathering N of them costs little beside the landmarks' work.
#ifndef CERES_SQRTBA_INTERNAL_DISTRIBUTED_MPI_PROCESS_GROUP_H_
#define CERES_SQRTBA_INTERNAL_DISTRIBUTED_MPI_PROCESS_GROUP_H_

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/process_group.h"

namespace ceres_sqrtba {
namespace internal {

class MpiProcessGroup final : public ProcessGroup {
 public:
  explicit MpiProcessGroup(MPI_Comm communicator);
  ~MpiProcessGroup() override;
  MpiProcessGroup(const MpiProcessGroup&) = delete;
  MpiProcessGroup& operator=(const MpiProcessGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void Sum(double* v, int64_t n) const override;
  void Sum(float* v, int64_t n) const override;
  double Max(double value) const override;
  std::string FirstMessage(const std::string& message, int* from) const override;
  bool AllEqual(uint64_t value) const override;
  void Exchange(const std::vector<std::vector<uint64_t>>& to, std::vector<uint64_t>* received,
                std::vector<int>* from) const override;
  int64_t SumOnMachine(int64_t value) const override;
  int64_t MinOnMachine(int64_t value) const override;

  // Bytes this process sent through the collectives so far (the sums: what
  // it sends to the other processes, P - 1 copies of its vector through the
  // allgather, 2 (P - 1) / P of it by slices).
  int64_t bytes_sent() const { return bytes_sent_; }

 private:
  template <typename T>
  void SumOf(T* v, int64_t n, MPI_Datatype type, std::vector<T>* gathered) const;
  // From 3 processes on, a vector of at least 2 values per process: each
  // process sums one slice (every process's copy of it, added in rank order,
  // the same bits as the allgather's sum) and gathers the others' summed
  // slices. Each process sends 2 (P - 1) / P of the vector instead of
  // (P - 1) times it.
  template <typename T>
  void SumBySlices(T* v, int count, MPI_Datatype type, std::vector<T>* received) const;

  MPI_Comm communicator_;
  MPI_Comm machine_ = MPI_COMM_NULL;  // the processes of this one's machine
  int rank_ = 0;
  int size_ = 1;
  mutable std::vector<double> doubles_;
  mutable std::vector<float> floats_;
  mutable std::vector<int> slice_counts_, slice_offsets_, receive_counts_, receive_offsets_;
  mutable int64_t bytes_sent_ = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DISTRIBUTED_MPI_PROCESS_GROUP_H_
