#!/usr/bin/env bash
# Installs the built library into a scratch prefix and builds the consumer
# project against it with find_package(ceres_sqrtba). Further arguments go to
# the consumer's cmake configure step (the build's compiler and flags).
set -euo pipefail
build_dir=$1
source_dir=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log"
# Only the public headers (solver.h, the types.h it includes, covariance.h,
# autodiff_cost_function.h and the float_jacobians.h it includes; with MPI,
# distributed_solver.h) and the package files are installed: no internal
# header, no example binary.
installed=$(cd "$work/prefix" && find . -type f | sort)
unexpected=$(echo "$installed" | grep -v -e '^./include/ceres_sqrtba/solver.h$' \
  -e '^./include/ceres_sqrtba/types.h$' -e '^./include/ceres_sqrtba/covariance.h$' \
  -e '^./include/ceres_sqrtba/autodiff_cost_function.h$' -e '^./include/ceres_sqrtba/float_jacobians.h$' \
  -e '^./include/ceres_sqrtba/distributed_solver.h$' -e '^./lib[^/]*/libceres_sqrtba_mpi\.' \
  -e '^./lib[^/]*/libceres_sqrtba\.' -e '^./lib[^/]*/cmake/ceres_sqrtba/' || true)
if [ -n "$unexpected" ]; then
  echo "run_consumer_test.sh: cmake --install put files the package should not contain:" >&2
  echo "$unexpected" >&2
  exit 1
fi
for header in solver.h types.h covariance.h autodiff_cost_function.h float_jacobians.h; do
  if [ ! -f "$work/prefix/include/ceres_sqrtba/$header" ]; then
    echo "run_consumer_test.sh: cmake --install did not install include/ceres_sqrtba/$header" >&2
    exit 1
  fi
done
cmake -S "$source_dir" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release "$@" > "$work/configure.log"
cmake --build "$work/build" -j2 > "$work/build.log"
"$work/build/consumer"
# With MPI: the distributed solve's library and header, one process. Built
# in a sanitizer build too, but not run there: Open MPI's own allocations,
# never freed by MPI_Finalize, are reported as leaks.
if [ -f "$work/prefix/include/ceres_sqrtba/distributed_solver.h" ]; then
  test -x "$work/build/consumer_mpi"
  case "$*" in
    *-fsanitize*) ;;
    *) OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$work/build/consumer_mpi" ;;
  esac
fi
