#!/usr/bin/env bash
# Installs what is missing, builds, and solves the example's built-in
# synthetic problem with the square-root solver in single precision.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_dependencies.sh
bash scripts/build.sh -DCERES_SQRTBA_BUILD_EXAMPLES=ON -DCERES_SQRTBA_BUILD_TESTS=OFF -DCERES_SQRTBA_BUILD_BENCHMARKS=OFF
"${BUILD_DIR:-build}"/examples/bundle_adjuster --linear_solver=sqrt_iterative_schur \
  --precision=single --num_iterations=20 --robustify --num_threads="$(nproc)" "$@"
echo
echo "demo: the solve stops at --num_iterations=20 on purpose: like Ceres' own bundle_adjuster, the example sets"
echo "demo: the function and gradient tolerances to 1e-16 so that every run takes the same iterations; the"
echo "demo: termination NO_CONVERGENCE above means that limit was reached, not a failure (compare the costs)."
