// libFuzzer target: the BAL reader of the bundle_adjuster example, on plain
// text and bzip2 input (the input is the content of a file). See
// fuzz_entry_points.h for what is checked and tests/fuzz/README.md for how to
// run it.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ceres_sqrtba::fuzz::FuzzBalReader(data, size);
  return 0;
}
