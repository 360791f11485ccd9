#include "ceres_sqrtba/internal/common/memory.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#if defined(__linux__)
#include <sys/mman.h>
#include <sys/resource.h>
#endif

namespace ceres_sqrtba {
namespace internal {

namespace {

// The value of the line starting with `key` in a /proc file of "key: value
// kB" lines, in bytes; -1 when absent. Line by line: other lines need not hold
// numbers (/proc/self/status starts with "Name:").
int64_t ProcKilobytes(const char* path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::istringstream fields(line.substr(key.size()));
    int64_t kilobytes = 0;
    return fields >> kilobytes ? kilobytes * 1024 : -1;
  }
  return -1;
}

// The number in a cgroup file; -1 when absent or "max".
int64_t CgroupValue(const char* path) {
  std::ifstream in(path);
  int64_t value = -1;
  if (!(in >> value)) return -1;
  return value;
}

}  // namespace

int64_t AvailableMemoryBytes(const MemorySources& sources) {
  int64_t available = -1;
  auto take = [&](int64_t bytes) {
    if (bytes >= 0 && (available < 0 || bytes < available)) available = bytes;
  };
  take(ProcKilobytes(sources.meminfo, "MemAvailable:"));
#if defined(__linux__)
  // Under `ulimit -v` a process runs out of address space long before the
  // machine runs out of memory: what it may still map.
  rlimit address_space;
  if (getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
    const int64_t mapped = std::max<int64_t>(0, ProcKilobytes(sources.status, "VmSize:"));
    take(std::max<int64_t>(0, static_cast<int64_t>(address_space.rlim_cur) - mapped));
  }
  // A container's memory limit (cgroup v2, at the root of its namespace),
  // which MemAvailable, the host's figure, does not show: past it the kernel
  // kills the process rather than failing an allocation.
  const int64_t cgroup_max = CgroupValue(sources.cgroup_max);
  if (cgroup_max >= 0) {
    take(std::max<int64_t>(0, cgroup_max - std::max<int64_t>(0, CgroupValue(sources.cgroup_current))));
  }
#endif
  return std::max<int64_t>(0, available);
}

std::string FormatBytes(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

bool MemoryBudget::Fits(int64_t bytes, const std::string& what, std::string* why) const {
  if (limit_ <= 0 || bytes <= limit_) return true;
  std::ostringstream msg;
  msg << what << " need " << FormatBytes(bytes) << " (" << bytes << " bytes) but only "
      << FormatBytes(limit_) << " (" << limit_
      << " bytes) may be used (" << option_name_ << " = " << option_
      << ", 0 meaning the memory available).";
  *why = msg.str();
  return false;
}

namespace {

std::atomic<int64_t> fail_above{-1};

void* AllocateLargeOrNull(int64_t bytes) {
  constexpr int64_t kHugePage = int64_t{2} << 20;
  if (bytes < 2 * kHugePage) return std::malloc(static_cast<size_t>(std::max<int64_t>(bytes, 1)));
  const int64_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(static_cast<size_t>(kHugePage), static_cast<size_t>(rounded));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // A hint: without transparent huge pages (or with "never") it has no effect.
  if (p != nullptr) madvise(p, static_cast<size_t>(rounded), MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace

AllocationFailure::AllocationFailure(int64_t bytes)
    : bytes_(bytes), what_("could not allocate " + FormatBytes(bytes) + " (" + std::to_string(bytes) + " bytes)") {}

void SetAllocationFailureAboveForTesting(int64_t bytes) { fail_above.store(bytes); }

void* AllocateLarge(int64_t bytes) {
  const int64_t limit = fail_above.load();
  void* p = limit >= 0 && bytes > limit ? nullptr : AllocateLargeOrNull(bytes);
  if (p == nullptr) throw AllocationFailure(bytes);
  return p;
}

void FreeDeleter::operator()(void* p) const { std::free(p); }

}  // namespace internal
}  // namespace ceres_sqrtba
