// What the machine can give a solve, read before anything large is allocated.
#ifndef CERES_SQRTBA_INTERNAL_MEMORY_H_
#define CERES_SQRTBA_INTERNAL_MEMORY_H_

#include <cstdint>
#include <string>

namespace ceres_sqrtba {
namespace internal {

// MemAvailable from /proc/meminfo in bytes; 0 when it cannot be read.
int64_t AvailableMemoryBytes();

// "12.3 MiB"
std::string FormatBytes(int64_t bytes);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MEMORY_H_
