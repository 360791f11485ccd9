#!/usr/bin/env bash
# Installs the Debian 12 packages ceres_sqrtba needs, when they are missing.
# Run as root (or with sudo). Nothing is downloaded from anywhere but Debian.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  # faster builds (scripts/cmake_common.sh): Ninja, and ccache's cache
  # outside the clone
  ninja-build ccache
  libceres-dev libeigen3-dev libgoogle-glog-dev libgflags-dev
  libsuitesparse-dev liblapack-dev libblas-dev
  # an optimized BLAS and LAPACK behind libblas.so.3 / liblapack.so.3, for
  # CHOLMOD and the covariance's dense blocks (Debian's own alternatives
  # otherwise pick ATLAS's generic build or the reference BLAS)
  libopenblas0-pthread
  libtbb-dev libgtest-dev libbenchmark-dev libbz2-dev
  python3 python3-matplotlib
  # the solve spread over MPI ranks (ceres_sqrtba_mpi) and its tests under
  # mpiexec: Open MPI
  libopenmpi-dev openmpi-bin
  # scripts/build_ceres22.sh: the Ceres 2.2 source tarball
  xz-utils
  # scripts/test_sanitizers.sh: clang, its sanitizer and libFuzzer runtimes,
  # llvm-symbolizer for readable reports
  clang libclang-rt-14-dev llvm
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
