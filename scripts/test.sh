#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_dependencies.sh
bash scripts/build.sh
cd "${BUILD_DIR:-build}"
ctest --output-on-failure -j"$(nproc)" --timeout 900
