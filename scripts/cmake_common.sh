# Sourced by the build scripts: what every configuration of the project is
# configured with beyond its own options.
#
#   source scripts/cmake_common.sh
#   sqrtba_cmake_args <build folder>      # sets the array SQRTBA_CMAKE_ARGS
#
# - Ninja (Debian's ninja-build) for a new build folder, when installed; a
#   folder configured before keeps its generator (CMake refuses to change it).
# - ccache (Debian's ccache) as the compiler launcher, when installed and
#   CERES_SQRTBA_CCACHE is not 0. Its cache is outside the clone
#   (${CCACHE_DIR:-~/.cache/ccache}); CCACHE_BASEDIR is the clone, so that
#   another clone of the same sources (CI's fresh one) finds the same
#   entries; translation units that include no Ceres header are shared
#   between the Ceres 2.1 and 2.2 builds of one compiler and flags.
sqrtba_cmake_args() {
  local dir=$1
  SQRTBA_CMAKE_ARGS=()
  if [ ! -f "$dir/CMakeCache.txt" ] && command -v ninja >/dev/null 2>&1; then
    SQRTBA_CMAKE_ARGS+=(-G Ninja)
  fi
  if [ "${CERES_SQRTBA_CCACHE:-1}" != 0 ] && command -v ccache >/dev/null 2>&1; then
    SQRTBA_CMAKE_ARGS+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd -P)}
  else
    SQRTBA_CMAKE_ARGS+=(-UCMAKE_CXX_COMPILER_LAUNCHER)
  fi
}
