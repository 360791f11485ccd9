// What the machine can give a solve, read before anything large is allocated.
#ifndef CERES_SQRTBA_INTERNAL_COMMON_MEMORY_H_
#define CERES_SQRTBA_INTERNAL_COMMON_MEMORY_H_

#include <cstdint>
#include <new>
#include <string>

namespace ceres_sqrtba {
namespace internal {

// The files AvailableMemoryBytes reads (Linux's; tests point them elsewhere).
struct MemorySources {
  const char* meminfo = "/proc/meminfo";
  const char* status = "/proc/self/status";
  const char* cgroup_max = "/sys/fs/cgroup/memory.max";
  const char* cgroup_current = "/sys/fs/cgroup/memory.current";
};

// What this process may still take, in bytes: the least of the machine's
// available memory (MemAvailable of /proc/meminfo), the address space its
// `ulimit -v` leaves, and a cgroup v2 memory limit less the cgroup's use; 0
// when none can be read (ceres_sqrtba::AvailableMemoryInBytes).
int64_t AvailableMemoryBytes(const MemorySources& sources = MemorySources());

// "12.3 MiB"
std::string FormatBytes(int64_t bytes);

// Bytes a vector holds on the heap (its capacity).
template <typename Vector>
int64_t VectorBytes(const Vector& v) {
  return static_cast<int64_t>(v.capacity()) * static_cast<int64_t>(sizeof(typename Vector::value_type));
}

// The memory one solve may take: Solver::Options::memory_limit_in_bytes, or
// (0) the memory available when the solve starts, read once so that every
// later check (a switch to double precision) uses the same limit.
class MemoryBudget {
 public:
  // option: how messages name the option the limit comes from.
  explicit MemoryBudget(int64_t memory_limit_in_bytes,
                        const char* option = "Solver::Options::memory_limit_in_bytes")
      : option_(memory_limit_in_bytes),
        option_name_(option),
        limit_(memory_limit_in_bytes > 0 ? memory_limit_in_bytes : AvailableMemoryBytes()) {}
  // 0: unknown (no limit is enforced).
  int64_t limit() const { return limit_; }
  // True when `bytes` fit; otherwise false and *why: "<what> need X MiB (n
  // bytes) but only Y MiB (m bytes) may be used (Solver::Options::...)".
  bool Fits(int64_t bytes, const std::string& what, std::string* why) const;

 private:
  int64_t option_;
  const char* option_name_;
  int64_t limit_;
};

// A large allocation that failed. ceres_sqrtba::Solve turns it into FAILURE
// with a message naming the bytes (it never lets an exception out).
class AllocationFailure : public std::bad_alloc {
 public:
  explicit AllocationFailure(int64_t bytes);
  int64_t bytes() const { return bytes_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  int64_t bytes_;
  std::string what_;
};

// Uninitialized storage for `bytes` bytes, released with std::free (see
// FreeDeleter). Large buffers are aligned to 2 MiB and marked for transparent
// huge pages (madvise(MADV_HUGEPAGE), Linux): the landmark blocks are first
// touched during the first evaluation, and with 4 KiB pages that costs one page
// fault per 4 KiB. Throws AllocationFailure when the memory is not there.
void* AllocateLarge(int64_t bytes);

// Tests: AllocateLarge fails for every request larger than `bytes` (negative:
// the default, never).
void SetAllocationFailureAboveForTesting(int64_t bytes);
struct FreeDeleter {
  void operator()(void* p) const;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_MEMORY_H_
