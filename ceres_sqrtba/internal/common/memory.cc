#include "ceres_sqrtba/internal/common/memory.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ceres_sqrtba {
namespace internal {

int64_t AvailableMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t value = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return value * 1024;
  }
  return 0;
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
      << " bytes) may be used (Solver::Options::memory_limit_in_bytes = " << option_
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
