// Whether this build fuses multiply-adds: -march=native on a CPU with FMA
// (CMake option CERES_SQRTBA_NATIVE). Eigen's packet code then uses fused
// multiply-adds and the compiler contracts a * b + c in scalar code wherever
// it chooses, so two kernels that perform the same operations in the same
// order no longer round alike. The tests that check such kernels bit for
// bit check them to a rounding-level tolerance in that build instead; the
// portable build (the default, and CI's) keeps the bit-for-bit checks.
// docs/benchmarks.md, "The native build", says what else differs there.
#ifndef CERES_SQRTBA_TESTS_FUSED_MULTIPLY_ADD_H_
#define CERES_SQRTBA_TESTS_FUSED_MULTIPLY_ADD_H_

namespace ceres_sqrtba {
namespace testing {

#if defined(__FMA__)
constexpr bool kFusedMultiplyAdd = true;
#else
constexpr bool kFusedMultiplyAdd = false;
#endif

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_FUSED_MULTIPLY_ADD_H_
