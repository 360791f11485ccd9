#!/usr/bin/env bash
# Configures and builds ceres_sqrtba (Release) in ./build (BUILD_DIR), with
# Ninja and ccache when installed (scripts/cmake_common.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/cmake_common.sh
BUILD_DIR=${BUILD_DIR:-build}
sqrtba_cmake_args "$BUILD_DIR"
cmake -S . -B "$BUILD_DIR" "${SQRTBA_CMAKE_ARGS[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$BUILD_DIR" -j"${JOBS:-$(nproc)}"
