// Finiteness of many doubles at once, for the checks that run on every value
// the user's cost functions write and every value the storages convert: a
// double is NaN or infinite exactly when its 11 exponent bits are all ones,
// an integer test that vectorizes (std::isfinite per value with an early exit
// does not, and a floating point probe sum is a serial dependency chain).
#ifndef CERES_SQRTBA_INTERNAL_COMMON_FINITE_H_
#define CERES_SQRTBA_INTERNAL_COMMON_FINITE_H_

#include <cstdint>
#include <cstring>

namespace ceres_sqrtba {
namespace internal {

inline bool IsNonFiniteBits(double v) {
  constexpr uint64_t kExponent = 0x7ff0000000000000ULL;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return (bits & kExponent) == kExponent;
}

// The bits of |v|: for doubles that are not NaN their order is the order of
// the magnitudes, and NaN and inf compare above every finite value, so
// "AbsBits(v) > AbsBits(limit)" flags values beyond a limit and values that
// are not finite in one integer comparison.
inline uint64_t AbsBits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits & 0x7fffffffffffffffULL;
}

inline bool AllFiniteBits(const double* v, int n) {
  bool bad = false;
  for (int i = 0; i < n; ++i) bad |= IsNonFiniteBits(v[i]);
  return !bad;
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_FINITE_H_
