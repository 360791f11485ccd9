#!/usr/bin/env bash
# Installs what is missing, builds, and solves the example's built-in
# synthetic problem with the square-root solver in single precision.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_dependencies.sh
bash scripts/build.sh -DCERES_SQRTBA_BUILD_EXAMPLES=ON -DCERES_SQRTBA_BUILD_TESTS=OFF -DCERES_SQRTBA_BUILD_BENCHMARKS=OFF
"${BUILD_DIR:-build}"/examples/bundle_adjuster --linear_solver=sqrt_iterative_schur \
  --precision=single --num_iterations=20 --robustify --num_threads="$(nproc)" "$@"
