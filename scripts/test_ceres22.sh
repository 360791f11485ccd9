#!/usr/bin/env bash
# Builds ceres_sqrtba against Ceres 2.2.0 (built once per machine from the
# source tarball into a cache outside the clone: scripts/build_ceres22.sh) in
# ./build-ceres22 and runs every test there. scripts/test.sh does the same
# against Debian's Ceres 2.1.
#
# Environment: BUILD_DIR (default build-ceres22), JOBS (default nproc), and
# those of scripts/build_ceres22.sh (CERES_SQRTBA_CERES22_TARBALL,
# CERES_SQRTBA_CACHE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_dependencies.sh
prefix=$(bash scripts/build_ceres22.sh)
source scripts/cmake_common.sh
BUILD_DIR=${BUILD_DIR:-build-ceres22}
JOBS=${JOBS:-$(nproc)}
sqrtba_cmake_args "$BUILD_DIR"
cmake -S . -B "$BUILD_DIR" "${SQRTBA_CMAKE_ARGS[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  -DCERES_SQRTBA_BUILD_TESTS=ON -DCERES_SQRTBA_BUILD_EXAMPLES=ON -DCERES_SQRTBA_BUILD_BENCHMARKS=ON
grep -q "Ceres_DIR:PATH=$prefix" "$BUILD_DIR/CMakeCache.txt" || {
  echo "test_ceres22.sh: $BUILD_DIR is configured with another Ceres:" >&2
  grep "Ceres_DIR" "$BUILD_DIR/CMakeCache.txt" >&2
  exit 1
}
cmake --build "$BUILD_DIR" -j"$JOBS"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$JOBS" --timeout 900
