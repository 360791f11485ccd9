// What a benchmark process reports about itself: its peak memory (Linux
// /proc/self/status, reset through /proc/self/clear_refs so that the peak
// after a reset is one method's own) and JSON-safe strings. Shared by
// covariance_benchmark and integrations/colmap/ba_covariance (built against
// COLMAP, outside the project's build), hence header-only and standard C++.
#ifndef CERES_SQRTBA_BENCHMARKS_PROCESS_STATUS_H_
#define CERES_SQRTBA_BENCHMARKS_PROCESS_STATUS_H_

#include <cstring>
#include <fstream>
#include <string>

namespace ceres_sqrtba {
namespace benchmarks {

// From now on VmHWM counts from the process's current resident size.
inline void ResetPeak() { std::ofstream("/proc/self/clear_refs") << "5"; }

// VmHWM (peak) or VmRSS (now) of this process, MiB; -1 when not found.
inline double StatusMiB(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::strlen(field))) / 1024.0;
  }
  return -1.0;
}

// s inside a JSON string: quotes and backslashes escaped, newlines as spaces.
inline std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

}  // namespace benchmarks
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_BENCHMARKS_PROCESS_STATUS_H_
