#include "ceres_sqrtba/internal/common/memory.h"

#include <sys/resource.h>

#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

int64_t MappedBytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmSize:") {
      int64_t kilobytes = 0;
      in >> kilobytes;
      return kilobytes * 1024;
    }
  }
  return -1;
}

// Under `ulimit -v` the memory a solve may take is what the limit leaves,
// however much the machine has free: a limit 256 MiB above what the process
// maps now gives about 256 MiB.
TEST(AvailableMemory, AnAddressSpaceLimitBoundsIt) {
  rlimit original;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &original), 0);
  const int64_t mapped = MappedBytes();
  if (mapped < 0) GTEST_SKIP() << "no VmSize in /proc/self/status";
  constexpr int64_t kHeadroom = int64_t{256} << 20;
  const rlim_t limit = static_cast<rlim_t>(mapped + kHeadroom);
  if (original.rlim_cur != RLIM_INFINITY && original.rlim_cur < limit) GTEST_SKIP() << "already limited below";
  const int64_t unlimited = AvailableMemoryBytes();
  rlimit lowered = original;
  lowered.rlim_cur = limit;
  ASSERT_EQ(setrlimit(RLIMIT_AS, &lowered), 0);
  const int64_t limited = AvailableMemoryBytes();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &original), 0);
  // Within what the process maps or unmaps meanwhile (reading /proc: small
  // buffers from the heap), far less than what it maps already (several
  // MiB, which the limit must not be taken for).
  constexpr int64_t kSlack = int64_t{1} << 20;
  ASSERT_GT(mapped, 2 * kSlack);
  EXPECT_LT(limited, kHeadroom + kSlack);
  EXPECT_GT(limited, kHeadroom - kSlack);
  if (unlimited > 0) EXPECT_LE(limited, unlimited);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
