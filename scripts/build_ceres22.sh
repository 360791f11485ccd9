#!/usr/bin/env bash
# Builds Ceres Solver 2.2.0 from its source tarball, once per machine, into a
# cache outside the clone, and prints the installed prefix on stdout.
#
#   prefix=$(bash scripts/build_ceres22.sh)
#   cmake -S . -B build-ceres22 -DCMAKE_PREFIX_PATH="$prefix"
#   "$prefix/bin/bundle_adjuster" ...        # Ceres 2.2's own example
#
# With --if-built it only prints the prefix of a completed build, and exits
# with status 3 (saying so on stderr) when there is none, without building:
# for tests that may use Ceres 2.2 but must not spend half an hour on it.
#
# The tarball: $CERES_SQRTBA_CERES22_TARBALL, else ../shared/ceres/ beside the
# source tree. Its SHA-256 is checked against the SHA256SUMS file beside it
# (when there is one) and keys the cache:
#   ${CERES_SQRTBA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres_sqrtba}/ceres-2.2.0-<sha256[0:16]>
# A prefix is reused when its stamp file says the build completed; concurrent
# runs wait for each other (flock). Ceres is built Release with its fixed-size
# Schur specializations (BAL problems use them), SuiteSparse, Eigen's sparse
# Cholesky, without CUDA; `bundle_adjuster` is built beside the library and
# copied into <prefix>/bin. Cold: about 10-14 minutes on 2 cores (852 s in
# the last CI run). It compiles through ccache when installed, so a rebuild
# on a machine that kept ccache's objects hits them (not timed yet).
#
# Environment: JOBS (default nproc). Progress goes to stderr.
set -euo pipefail
if_built=0
case "${1:-}" in
  --if-built) if_built=1 ;;
  "") ;;
  *) echo "usage: build_ceres22.sh [--if-built]" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")/.." && pwd)
tarball=${CERES_SQRTBA_CERES22_TARBALL:-$here/../shared/ceres/ceres-solver-2.2.0.tar.xz}
if [ ! -f "$tarball" ]; then
  echo "build_ceres22.sh: no Ceres 2.2.0 source at $tarball" \
       "(set CERES_SQRTBA_CERES22_TARBALL to the ceres-solver-2.2.0.tar.xz file)" >&2
  exit 1
fi
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
sha=$(sha256sum "$tarball" | cut -d' ' -f1)
sums=$(dirname "$tarball")/SHA256SUMS
if [ -f "$sums" ]; then
  expected=$(awk -v f="$(basename "$tarball")" '$2 == f || $2 == "*" f {print $1}' "$sums")
  if [ -n "$expected" ] && [ "$expected" != "$sha" ]; then
    echo "build_ceres22.sh: $tarball has SHA-256 $sha, but $sums says $expected" >&2
    exit 1
  fi
fi

cache=${CERES_SQRTBA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres_sqrtba}
prefix=$cache/ceres-2.2.0-${sha:0:16}
stamp=$prefix/.complete
# --if-built never waits for (or starts) a build.
if [ "$if_built" = 1 ]; then
  if [ -f "$stamp" ]; then
    echo "$prefix"
    exit 0
  fi
  echo "build_ceres22.sh: Ceres 2.2.0 is not built yet (expected in $prefix)" >&2
  exit 3
fi
mkdir -p "$cache"
exec 9>"$cache/.ceres-2.2.0-${sha:0:16}.lock"
flock 9
if [ -f "$stamp" ]; then
  echo "$prefix"
  exit 0
fi

JOBS=${JOBS:-$(nproc)}
work=$cache/.work-${sha:0:16}
rm -rf "$work" "$prefix"
mkdir -p "$work"
start=$(date +%s)
echo "build_ceres22.sh: building Ceres 2.2.0 into $prefix (takes a while; once per machine)" >&2
tar xf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'ceres-solver*' | head -n 1)
# ccache (when installed) keeps the objects outside this cache, for a second
# machine-local build (a removed cache, another cache folder).
launcher=()
if [ "${CERES_SQRTBA_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$work
fi
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" \
  -DBUILD_TESTING=OFF -DBUILD_EXAMPLES=ON -DBUILD_BENCHMARKS=OFF \
  -DBUILD_DOCUMENTATION=OFF -DUSE_CUDA=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >&2
cmake --build "$work/build" -j"$JOBS" --target ceres bundle_adjuster >&2
cmake --install "$work/build" >&2
mkdir -p "$prefix/bin"
cp "$work/build/bin/bundle_adjuster" "$prefix/bin/bundle_adjuster"
rm -rf "$work"
echo "sha256=$sha built=$(date -u +%FT%TZ) seconds=$(( $(date +%s) - start ))" > "$stamp"
echo "build_ceres22.sh: done in $(( $(date +%s) - start )) s" >&2
echo "$prefix"
