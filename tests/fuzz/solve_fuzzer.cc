// libFuzzer target: a BAL file (plain text or bzip2) read, built into a
// ceres::Problem by the example's BuildProblem and solved by
// ceres_sqrtba::Solve (SQRT_ITERATIVE_SCHUR, 2 iterations, double and single
// precision, 1 and 2 threads). Problems with more than a few hundred
// observations are skipped so that every input is fast. See
// fuzz_entry_points.h for what is checked and tests/fuzz/README.md for how to
// run it.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ceres_sqrtba::fuzz::FuzzSolve(data, size);
  return 0;
}
