#include "ceres_sqrtba/internal/common/memory.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
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
  // Once before measuring: what reading /proc maps the first time (under
  // AddressSanitizer its allocator maps whole regions) is then mapped.
  const int64_t unlimited = AvailableMemoryBytes();
  const int64_t mapped = MappedBytes();
  if (mapped < 0) GTEST_SKIP() << "no VmSize in /proc/self/status";
  constexpr int64_t kHeadroom = int64_t{256} << 20;
  const rlim_t limit = static_cast<rlim_t>(mapped + kHeadroom);
  if (original.rlim_cur != RLIM_INFINITY && original.rlim_cur < limit) GTEST_SKIP() << "already limited below";
  rlimit lowered = original;
  lowered.rlim_cur = limit;
  ASSERT_EQ(setrlimit(RLIMIT_AS, &lowered), 0);
  const int64_t limited = AvailableMemoryBytes();
  const int64_t mapped_after = MappedBytes();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &original), 0);
  // The limit less what the process mapped when it looked, which lies
  // between the two readings around it (within a page-sized slack for the
  // readings' own buffers); far less than the limit itself, which must not
  // be taken for what is available.
  constexpr int64_t kSlack = int64_t{1} << 20;
  ASSERT_GT(mapped, 2 * kSlack);
  EXPECT_LT(limited, kHeadroom + kSlack);
  EXPECT_LE(limited, static_cast<int64_t>(limit) - mapped + kSlack);
  EXPECT_GE(limited, static_cast<int64_t>(limit) - mapped_after - kSlack);
  if (unlimited > 0) EXPECT_LE(limited, unlimited);
}

// Files standing in for /proc and the cgroup's, in a fresh folder.
class FakeSources {
 public:
  FakeSources() {
    char folder[] = "/tmp/memory_test_XXXXXX";
    folder_ = mkdtemp(folder) != nullptr ? folder : "";
  }
  ~FakeSources() {
    for (const std::string& file : files_) std::remove(file.c_str());
    if (!folder_.empty()) rmdir(folder_.c_str());
  }
  bool ok() const { return !folder_.empty(); }
  const char* Write(const std::string& name, const std::string& text) {
    files_.push_back(folder_ + "/" + name);
    std::ofstream(files_.back()) << text;
    return files_.back().c_str();
  }
  const char* Absent() { return "/nonexistent/memory_test"; }

 private:
  std::string folder_;
  std::deque<std::string> files_;  // stable addresses for the c_str()s
};

// A container's limit less its use bounds the machine's figure; "max" (no
// limit) and absent files leave it; nothing readable: 0, unknown.
TEST(AvailableMemory, CgroupLimitLessItsUseBoundsTheMachinesFigure) {
  FakeSources fake;
  ASSERT_TRUE(fake.ok());
  MemorySources sources;
  sources.meminfo = fake.Write("meminfo", "MemTotal:       32000000 kB\nMemFree:  1 kB\nMemAvailable:    8000000 kB\n");
  sources.status = fake.Write("status", "Name:\tmemory_test\nVmSize:\t  100 kB\n");
  sources.cgroup_max = fake.Write("memory.max", "1073741824\n");
  sources.cgroup_current = fake.Write("memory.current", "268435456\n");
  rlimit address_space;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &address_space), 0);
  if (address_space.rlim_cur != RLIM_INFINITY) GTEST_SKIP() << "an address-space limit is set";
  EXPECT_EQ(AvailableMemoryBytes(sources), int64_t{768} << 20);
  // Over its limit already: nothing left.
  sources.cgroup_current = fake.Write("memory.current.over", "2147483648\n");
  EXPECT_EQ(AvailableMemoryBytes(sources), 0);
  sources.cgroup_max = fake.Write("memory.max.unlimited", "max\n");
  EXPECT_EQ(AvailableMemoryBytes(sources), int64_t{8000000} * 1024);
  sources.cgroup_max = fake.Absent();
  EXPECT_EQ(AvailableMemoryBytes(sources), int64_t{8000000} * 1024);
  sources.meminfo = fake.Absent();
  EXPECT_EQ(AvailableMemoryBytes(sources), 0);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
