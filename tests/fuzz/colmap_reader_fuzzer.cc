// libFuzzer target: the COLMAP model reader of the colmap_bundle_adjuster
// example, on text and binary models (an input packs the three files; see
// PackColmapInput in fuzz_entry_points.h). tests/fuzz/README.md says how to
// run it.
#include <cstddef>
#include <cstdint>

#include "fuzz_entry_points.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ceres_sqrtba::fuzz::FuzzColmapReader(data, size);
  return 0;
}
