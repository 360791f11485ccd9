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

#if defined(__linux__)
#if defined(MADV_POPULATE_WRITE)
constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kPopulateWrite = 23;  // <linux/mman.h> since Linux 5.14
#endif

// Whether the kernel may back a madvise'd region with transparent huge pages
// ("always" or "madvise" selected). Without them populating would take the
// 4 KiB pages serially in the allocating thread, where first touch spreads
// them over the evaluating threads.
[[maybe_unused]] bool HugePagesOnRequest() {
  static const bool available = [] {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string modes;
    std::getline(in, modes);
    return modes.find("[always]") != std::string::npos || modes.find("[madvise]") != std::string::npos;
  }();
  return available;
}
#endif

// Why populated. Every scalar of these buffers is written by the first
// evaluation, so their pages are all needed at once; taking them one fault at
// a time from the evaluating threads cost more than asking the kernel for
// all of them up front (MADV_POPULATE_WRITE, Linux 5.14; ignored where
// unknown). Measured with bundle_adjuster, time at iteration 0, medians of
// 8-10 interleaved runs against first touch: problem-49 13.8 -> 13.4 ms,
// problem-21 16.4 -> 15.8 ms, dubrovnik-16 40.8 -> 34.6 ms, synthetic 1M
// observations 498 -> 440 ms (explicit storage 663 -> 523 ms).
// Populating 4 KiB pages instead (buffers under 4 MiB left as they were)
// was slower than first touch on problem-49 (13.8 -> 14.4 ms), so only
// buffers the kernel may give huge pages are populated.
void* AllocateLargeOrNull(int64_t bytes) {
  constexpr int64_t kHugePage = int64_t{2} << 20;
  if (bytes < kHugePage / 2) return std::malloc(static_cast<size_t>(std::max<int64_t>(bytes, 1)));
  const int64_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(static_cast<size_t>(kHugePage), static_cast<size_t>(rounded));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  // Hints: without transparent huge pages (or with "never") the first has no
  // effect and the second is not made; on kernels that do not know it, it
  // fails harmlessly (the pages are then taken at first touch).
  if (p != nullptr) {
    madvise(p, static_cast<size_t>(rounded), MADV_HUGEPAGE);
    if (HugePagesOnRequest()) madvise(p, static_cast<size_t>(rounded), kPopulateWrite);
  }
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
