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
cmake -S "$source_dir" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release "$@" > "$work/configure.log"
cmake --build "$work/build" -j2 > "$work/build.log"
"$work/build/consumer"
