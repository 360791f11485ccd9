#include "ceres_sqrtba/internal/memory.h"

#include <cstdio>
#include <fstream>
#include <sstream>

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

}  // namespace internal
}  // namespace ceres_sqrtba
