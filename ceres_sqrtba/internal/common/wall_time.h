// Wall-clock time for the summary's timers, from a monotonic clock.
#ifndef CERES_SQRTBA_INTERNAL_COMMON_WALL_TIME_H_
#define CERES_SQRTBA_INTERNAL_COMMON_WALL_TIME_H_

#include <chrono>

namespace ceres_sqrtba {
namespace internal {

inline double WallTimeInSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_WALL_TIME_H_
