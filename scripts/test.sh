#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_dependencies.sh
bash scripts/build.sh -DCERES_SQRTBA_BUILD_TESTS=ON -DCERES_SQRTBA_BUILD_EXAMPLES=ON -DCERES_SQRTBA_BUILD_BENCHMARKS=ON
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)" --timeout 900
