// What the machine can give a solve, read before anything large is allocated.
#ifndef CERES_SQRTBA_INTERNAL_COMMON_MEMORY_H_
#define CERES_SQRTBA_INTERNAL_COMMON_MEMORY_H_

#include <cstdint>
#include <string>

namespace ceres_sqrtba {
namespace internal {

// MemAvailable from /proc/meminfo in bytes; 0 when it cannot be read.
int64_t AvailableMemoryBytes();

// "12.3 MiB"
std::string FormatBytes(int64_t bytes);

// Uninitialized storage for `bytes` bytes, released with std::free (see
// FreeDeleter). Large buffers are aligned to 2 MiB and marked for transparent
// huge pages (madvise(MADV_HUGEPAGE), Linux): the landmark blocks are first
// touched during the first evaluation, and with 4 KiB pages that costs one page
// fault per 4 KiB. nullptr if the allocation fails.
void* AllocateLarge(int64_t bytes);
struct FreeDeleter {
  void operator()(void* p) const;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_MEMORY_H_
