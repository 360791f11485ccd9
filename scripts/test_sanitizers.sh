#!/usr/bin/env bash
# Builds ceres_sqrtba with clang under AddressSanitizer + UndefinedBehavior-
# Sanitizer (LeakSanitizer on) in ./build-asan, fuzzers included, and runs the
# whole test suite there, then each fuzzer for a bounded time (ctest label
# "fuzz"). Fails when a test fails or when any sanitizer reported anything,
# also from a process whose exit status a test ignores: every report is
# written to build-asan/sanitizer-logs/ and printed at the end.
#
# Excluded: tests with the label "no_sanitizers" (the distributed tests under
# mpiexec: Open MPI leaves its own allocations at MPI_Finalize). Give a test
# that label only when it cannot run under ASan at all, and say why next to it.
# The micro-benchmarks are not built (scripts/test.sh builds and smoke-tests
# them); the fuzzers link the tests' sanitized library, with a coverage-
# instrumented copy of the readers only (tests/fuzz/CMakeLists.txt).
#
#   test_sanitizers.sh              against Debian's Ceres 2.1
#   test_sanitizers.sh --ceres22    against Ceres 2.2.0 (scripts/build_ceres22.sh)
#
# Environment: BUILD_DIR (default build-asan, build-asan-ceres22 with
# --ceres22), JOBS (default: nproc), FUZZ_SECONDS (default 25, per fuzzer),
# CERES_SQRTBA_TEST_JITTER (passed to the tests: tests/rounding_jitter.h).
set -euo pipefail
cd "$(dirname "$0")/.."
ceres_args=()
default_dir=build-asan
case "${1:-}" in
  --ceres22) ;;
  "") ;;
  *) echo "usage: test_sanitizers.sh [--ceres22]" >&2; exit 2 ;;
esac
bash scripts/install_dependencies.sh
if [ "${1:-}" = --ceres22 ]; then
  prefix=$(bash scripts/build_ceres22.sh)
  ceres_args=(-DCMAKE_PREFIX_PATH="$prefix" -DCeres_DIR="$prefix/lib/cmake/Ceres")
  default_dir=build-asan-ceres22
fi
source scripts/cmake_common.sh

BUILD_DIR=${BUILD_DIR:-$default_dir}
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-25}
SANITIZE="-fsanitize=address,undefined"
FLAGS="$SANITIZE -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
SUPPRESSIONS=$PWD/scripts/sanitizers

seconds() { date +%s; }
start=$(seconds)
sqrtba_cmake_args "$BUILD_DIR"
# Line tables are what a report's stack trace needs (and a fifth of -g's
# object size); the build folder's path is not hashed, so that another
# clone's build finds ccache's entries.
export CCACHE_NOHASHDIR=true
# Debug without NDEBUG (assertions of Eigen, glog's DCHECK on), at -O1.
CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" "${SQRTBA_CMAKE_ARGS[@]}" "${ceres_args[@]}" \
  -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS="$FLAGS" \
  -DCMAKE_EXE_LINKER_FLAGS="$SANITIZE" \
  -DCMAKE_SHARED_LINKER_FLAGS="$SANITIZE" \
  -DCERES_SQRTBA_BUILD_BENCHMARKS=OFF \
  -DCERES_SQRTBA_BUILD_FUZZERS=ON \
  -DCERES_SQRTBA_FUZZ_SECONDS="$FUZZ_SECONDS"
cmake --build "$BUILD_DIR" -j"$JOBS"
built=$(seconds)

logs=$PWD/$BUILD_DIR/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:halt_on_error=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:log_path=$logs/asan:log_exe_name=1"
export LSAN_OPTIONS="suppressions=$SUPPRESSIONS/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$SUPPRESSIONS/ubsan.supp:log_path=$logs/ubsan:log_exe_name=1"

status=0
# Everything but the fuzzers first: timing-sensitive tests must not share the
# machine with them.
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" --timeout 1800 \
  -LE '^(fuzz|no_sanitizers)$' || status=1
tested=$(seconds)
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" -L '^fuzz$' -LE '^no_sanitizers$' || status=1
fuzzed=$(seconds)

if [ -n "$(ls -A "$logs")" ]; then
  echo "test_sanitizers.sh: sanitizer reports:"
  for report in "$logs"/*; do
    echo "----- $report"
    cat "$report"
  done
  status=1
fi
echo "test_sanitizers.sh: build $((built - start)) s, tests $((tested - built)) s," \
     "fuzzers $((fuzzed - tested)) s; $( [ $status -eq 0 ] && echo passed || echo FAILED)"
exit $status
