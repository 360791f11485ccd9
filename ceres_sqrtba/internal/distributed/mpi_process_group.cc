#include "ceres_sqrtba/internal/distributed/mpi_process_group.h"

#include <algorithm>
#include <limits>

namespace ceres_sqrtba {
namespace internal {

MpiProcessGroup::MpiProcessGroup(MPI_Comm communicator) : communicator_(communicator) {
  MPI_Comm_rank(communicator_, &rank_);
  MPI_Comm_size(communicator_, &size_);
  MPI_Comm_split_type(communicator_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &machine_);
}

MpiProcessGroup::~MpiProcessGroup() {
  if (machine_ != MPI_COMM_NULL) MPI_Comm_free(&machine_);
}

int64_t MpiProcessGroup::SumOnMachine(int64_t value) const {
  int64_t sum = value;
  MPI_Allreduce(&value, &sum, 1, MPI_INT64_T, MPI_SUM, machine_);  // integers: exact in any order
  return sum;
}

int64_t MpiProcessGroup::MinOnMachine(int64_t value) const {
  int64_t least = value;
  MPI_Allreduce(&value, &least, 1, MPI_INT64_T, MPI_MIN, machine_);
  return least;
}

template <typename T>
void MpiProcessGroup::SumOf(T* v, int64_t n, MPI_Datatype type, std::vector<T>* gathered) const {
  if (size_ == 1 || n == 0) return;
  // In pieces that MPI's int counts can name.
  constexpr int64_t kPiece = std::numeric_limits<int>::max() / 64;
  for (int64_t begin = 0; begin < n; begin += kPiece) {
    const int count = static_cast<int>(std::min(kPiece, n - begin));
    if (size_ >= 3 && count >= 2 * size_) {
      SumBySlices(v + begin, count, type, gathered);
      continue;
    }
    gathered->resize(static_cast<size_t>(count) * size_);
    MPI_Allgather(v + begin, count, type, gathered->data(), count, type, communicator_);
    bytes_sent_ += static_cast<int64_t>(count) * (size_ - 1) * sizeof(T);
    for (int i = 0; i < count; ++i) {
      T sum = (*gathered)[i];
      for (int r = 1; r < size_; ++r) sum += (*gathered)[static_cast<size_t>(r) * count + i];
      v[begin + i] = sum;
    }
  }
}

template <typename T>
void MpiProcessGroup::SumBySlices(T* v, int count, MPI_Datatype type, std::vector<T>* received) const {
  // Slice r of v: slice_offsets_[r], slice_counts_[r] elements.
  slice_counts_.resize(size_);
  slice_offsets_.resize(size_);
  receive_counts_.resize(size_);
  receive_offsets_.resize(size_);
  for (int r = 0, offset = 0; r < size_; ++r) {
    slice_counts_[r] = count / size_ + (r < count % size_ ? 1 : 0);
    slice_offsets_[r] = offset;
    offset += slice_counts_[r];
  }
  const int mine = slice_counts_[rank_];
  for (int r = 0; r < size_; ++r) {
    receive_counts_[r] = mine;
    receive_offsets_[r] = r * mine;
  }
  // Every process's copy of this process's slice, in rank order ...
  received->resize(static_cast<size_t>(mine) * size_);
  MPI_Alltoallv(v, slice_counts_.data(), slice_offsets_.data(), type, received->data(), receive_counts_.data(),
                receive_offsets_.data(), type, communicator_);
  // ... added in rank order, as the allgather's sum adds them ...
  T* slice = v + slice_offsets_[rank_];
  for (int i = 0; i < mine; ++i) {
    T sum = (*received)[i];
    for (int r = 1; r < size_; ++r) sum += (*received)[static_cast<size_t>(r) * mine + i];
    slice[i] = sum;
  }
  // ... and the summed slices to every process.
  MPI_Allgatherv(MPI_IN_PLACE, 0, type, v, slice_counts_.data(), slice_offsets_.data(), type, communicator_);
  bytes_sent_ += static_cast<int64_t>(count - mine + static_cast<int64_t>(mine) * (size_ - 1)) * sizeof(T);
}

void MpiProcessGroup::Sum(double* v, int64_t n) const { SumOf(v, n, MPI_DOUBLE, &doubles_); }
void MpiProcessGroup::Sum(float* v, int64_t n) const { SumOf(v, n, MPI_FLOAT, &floats_); }

double MpiProcessGroup::Max(double value) const {
  double result = value;
  MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, communicator_);
  bytes_sent_ += sizeof(double);
  return result;
}

std::string MpiProcessGroup::FirstMessage(const std::string& message, int* from) const {
  const int length = static_cast<int>(std::min<size_t>(message.size(), 1 << 20));
  std::vector<int> lengths(size_);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, communicator_);
  bytes_sent_ += sizeof(int);
  int root = -1;
  for (int r = 0; r < size_ && root < 0; ++r) {
    if (lengths[r] > 0) root = r;
  }
  if (from != nullptr) *from = root;
  if (root < 0) return std::string();
  std::string text = rank_ == root ? message.substr(0, length) : std::string(lengths[root], '\0');
  MPI_Bcast(&text[0], lengths[root], MPI_CHAR, root, communicator_);
  if (rank_ == root) bytes_sent_ += lengths[root];
  return text;
}

bool MpiProcessGroup::AllEqual(uint64_t value) const {
  std::vector<uint64_t> values(size_);
  MPI_Allgather(&value, 1, MPI_UINT64_T, values.data(), 1, MPI_UINT64_T, communicator_);
  bytes_sent_ += sizeof(uint64_t);
  return std::all_of(values.begin(), values.end(), [&](uint64_t v) { return v == values[0]; });
}

void MpiProcessGroup::Exchange(const std::vector<std::vector<uint64_t>>& to, std::vector<uint64_t>* received,
                               std::vector<int>* from) const {
  std::vector<int> send_counts(size_), send_offsets(size_), receive_counts(size_), receive_offsets(size_);
  std::vector<uint64_t> send;
  for (int r = 0; r < size_; ++r) {
    send_offsets[r] = static_cast<int>(send.size());
    send_counts[r] = static_cast<int>(to[r].size());
    send.insert(send.end(), to[r].begin(), to[r].end());
  }
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, communicator_);
  int total = 0;
  for (int r = 0; r < size_; ++r) {
    receive_offsets[r] = total;
    total += receive_counts[r];
  }
  received->assign(total, 0);
  MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), MPI_UINT64_T, received->data(),
                receive_counts.data(), receive_offsets.data(), MPI_UINT64_T, communicator_);
  bytes_sent_ += static_cast<int64_t>(size_ * sizeof(int) + send.size() * sizeof(uint64_t));
  from->clear();
  for (int r = 0; r < size_; ++r) from->insert(from->end(), receive_counts[r], r);
}

}  // namespace internal
}  // namespace ceres_sqrtba
