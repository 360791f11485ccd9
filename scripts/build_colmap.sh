#!/usr/bin/env bash
# Builds COLMAP 4.1.1 from ../shared/colmap-src, offline, once per machine,
# into a cache outside the clone, as three programs and COLMAP's own tests:
#
#   <cache>/stock/bin/colmap     COLMAP as released (Debian's Ceres 2.1)
#   <cache>/stock/bin/colmap_ba_covariance   COLMAP's own EstimateBACovariance
#                                on a model (integrations/colmap/ba_covariance)
#   <cache>/sqrtba/bin/colmap    COLMAP with integrations/colmap/sqrtba.patch
#                                and -DSQRTBA_ENABLED=ON, linked against this
#                                clone's ceres_sqrtba: its bundle adjusters and
#                                global positioning solve with square-root BA
#                                (flags BundleAdjustmentCeres.use_sqrtba,
#                                Mapper.ba_use_sqrtba, GlobalMapper.gp_use_sqrtba,
#                                ... and their *_sqrtba_precision)
#   <cache>/{stock,sqrtba}/bin/colmap_reprojection_benchmark   the Jacobian
#                                cost of COLMAP's reprojection error per camera
#                                model (analytical, autodiff double and float)
#   <cache>/sqrtba/bin/colmap_ba_covariance   the same program against the
#                                patched COLMAP: EstimateBACovariance through
#                                ceres_sqrtba::Covariance (--use_sqrtba 0: as
#                                released)
#   <cache>/sqrtba-off/bin/colmap   the patched source with the option off,
#                                which must behave exactly as stock
#   <cache>/sqrtba/tests, <cache>/sqrtba-off/tests
#                                COLMAP's estimator, cost function, sfm and
#                                controller tests of each patched build
#                                (scripts/colmap_tests.sh runs them)
#
# and prints <cache> on stdout. The patched builds are incremental rebuilds of
# a tree that ccache has seen, redone whenever the patch or this clone's
# ceres_sqrtba sources change (a hash of them keys each build).
#
#   cache=$(bash scripts/build_colmap.sh)
#   "$cache/stock/bin/colmap" bundle_adjuster --input_path ... --output_path ...
#   "$cache/sqrtba/bin/colmap" mapper --Mapper.ba_sqrtba_precision DOUBLE ...
#
# With --if-built it only prints the cache of a completed build of all three
# (exit 3 when there is none), without building. The sources:
# $CERES_SQRTBA_COLMAP_SRC, else ../shared/colmap-src beside the source tree
# (colmap-4.1.1.tar.xz, poselib-a69263d.tar.xz, faiss-1.14.1.tar.xz, checked
# against its SHA256SUMS). CUDA, the GUI, OpenGL, ONNX, CGAL and downloads are
# off; the Debian packages COLMAP needs beyond the project's are installed when
# missing. Cold, on 2 cores: about 30 minutes for stock COLMAP, about as long
# again for each patched build (the patch touches sensor/models.h, which
# nearly every file includes) and a few minutes when only ceres_sqrtba changed.
#
# Environment: JOBS (default nproc), CERES_SQRTBA_CACHE (as build_ceres22.sh).
# Progress goes to stderr.
set -euo pipefail
if_built=0
case "${1:-}" in
  --if-built) if_built=1 ;;
  "") ;;
  *) echo "usage: build_colmap.sh [--if-built]" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")/.." && pwd)
src_dir=${CERES_SQRTBA_COLMAP_SRC:-$here/../shared/colmap-src}
patch_file=$here/integrations/colmap/sqrtba.patch
for f in colmap-4.1.1.tar.xz poselib-a69263d.tar.xz faiss-1.14.1.tar.xz; do
  if [ ! -f "$src_dir/$f" ]; then
    echo "build_colmap.sh: no $f in $src_dir (set CERES_SQRTBA_COLMAP_SRC to the folder of the" \
         "COLMAP 4.1.1, PoseLib and faiss tarballs)" >&2
    exit 1
  fi
done
if [ -f "$src_dir/SHA256SUMS" ]; then
  (cd "$src_dir" && sha256sum --quiet -c SHA256SUMS) >&2 || {
    echo "build_colmap.sh: $src_dir does not match its SHA256SUMS" >&2
    exit 1
  }
fi
sha=$(cat "$src_dir/colmap-4.1.1.tar.xz" "$src_dir/poselib-a69263d.tar.xz" \
          "$src_dir/faiss-1.14.1.tar.xz" | sha256sum | cut -c1-16)
cache=${CERES_SQRTBA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ceres_sqrtba}/colmap-4.1.1-$sha
# What the patched program depends on: the patch and ceres_sqrtba's sources.
sqrtba_key=$( (cat "$patch_file"; cd "$here" && find ceres_sqrtba cmake CMakeLists.txt -type f \
               ! -name '*_test.cc' -print0 | sort -z | xargs -0 cat) | sha256sum | cut -c1-16)
patch_key=$(sha256sum < "$patch_file" | cut -c1-16)
stock_stamp=$cache/stock/.complete
sqrtba_stamp=$cache/sqrtba/.complete
off_stamp=$cache/sqrtba-off/.complete
if [ "$if_built" = 1 ]; then
  if [ -f "$stock_stamp" ] && [ -f "$sqrtba_stamp" ] && grep -q "key=$sqrtba_key" "$sqrtba_stamp" &&
     [ -f "$off_stamp" ] && grep -q "key=$patch_key" "$off_stamp" &&
     [ -x "$cache/stock/bin/colmap_ba_covariance" ] && [ -x "$cache/sqrtba/bin/colmap_ba_covariance" ]; then
    echo "$cache"
    exit 0
  fi
  echo "build_colmap.sh: COLMAP 4.1.1 (stock, and patched for this ceres_sqrtba with the option on" \
       "and off) is not built in" \
       "$cache" >&2
  exit 3
fi

# Debian packages COLMAP needs beyond the project's own (../shared/colmap-src/
# README.md); OpenImageIO's CMake config needs its tools and OpenCV's core
# headers.
bash "$here/scripts/install_dependencies.sh" >&2
packages=(libboost-graph-dev libboost-program-options-dev libboost-system-dev libfreeimage-dev
          libmetis-dev libglew-dev libgl-dev libsqlite3-dev libopenimageio-dev openimageio-tools
          libopencv-core-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "build_colmap.sh: installing ${missing[*]}" >&2
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9
JOBS=${JOBS:-$(nproc)}
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
tree=$cache/source
build=$cache/build
configure() {  # build directory, then extra CMake arguments
  local dir=$1
  shift
  cmake -G Ninja -S "$tree/colmap-4.1.1" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
    "${launcher[@]}" \
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    -DFETCHCONTENT_SOURCE_DIR_POSELIB="$tree/poselib" \
    -DFETCHCONTENT_SOURCE_DIR_FAISS="$tree/faiss" \
    -DCUDA_ENABLED=OFF -DGUI_ENABLED=OFF -DOPENGL_ENABLED=OFF \
    -DDOWNLOAD_ENABLED=OFF -DONNX_ENABLED=OFF -DCASPAR_ENABLED=OFF -DCGAL_ENABLED=OFF \
    -DGIT_COMMIT_ID=a0d785f -DGIT_COMMIT_DATE=2026-07-17 "$@" >&2
}
# The released source, with fresh modification times (tar -m) so that ninja
# rebuilds whatever an earlier patch had changed; ccache makes that cheap.
fresh_tree() {
  rm -rf "$tree"
  mkdir -p "$tree/poselib" "$tree/faiss"
  tar xmf "$src_dir/colmap-4.1.1.tar.xz" -C "$tree"
  tar xmf "$src_dir/poselib-a69263d.tar.xz" -C "$tree/poselib" --strip-components=1
  tar xmf "$src_dir/faiss-1.14.1.tar.xz" -C "$tree/faiss" --strip-components=1
}
# The patch on the released tree, checked to apply unchanged: no fuzz, no
# offsets. It stays applied until the patch changes.
ensure_patched() {
  if [ -f "$tree/.patch-applied" ] && cmp -s "$patch_file" "$tree/.patch-applied"; then
    return
  fi
  if [ -f "$tree/.patch-applied" ]; then
    fresh_tree
  fi
  local out
  out=$(cd "$tree/colmap-4.1.1" && patch -p1 --forward -F0 < "$patch_file") || {
    echo "$out" >&2
    echo "build_colmap.sh: $patch_file does not apply to COLMAP 4.1.1" >&2
    exit 1
  }
  if echo "$out" | grep -q "offset\|fuzz"; then
    echo "$out" >&2
    echo "build_colmap.sh: $patch_file applies only with offsets" >&2
    exit 1
  fi
  cp "$patch_file" "$tree/.patch-applied"
}
# COLMAP's tests that solve, or build what is solved, built with each patched
# program: the estimators (bundle adjustment, covariance, global
# positioning), the cost functions, the mappers and the controllers that run
# them, and the option manager that registers the flags.
colmap_tests=(
  estimators/alignment_test estimators/bundle_adjustment_test estimators/bundle_adjustment_ceres_test
  estimators/covariance_test estimators/generalized_pose_test estimators/global_positioning_test
  estimators/gravity_refinement_test estimators/pose_test estimators/rotation_averaging_test
  estimators/view_graph_calibration_test
  estimators/cost_functions/alignment_test estimators/cost_functions/calibration_test
  estimators/cost_functions/motion_averaging_test estimators/cost_functions/pose_prior_test
  estimators/cost_functions/reprojection_error_test estimators/cost_functions/sampson_error_test
  estimators/cost_functions/utils_test
  sfm/global_mapper_test sfm/incremental_mapper_test sfm/incremental_triangulator_test
  controllers/bundle_adjustment_test controllers/global_pipeline_test
  controllers/incremental_pipeline_test controllers/hierarchical_pipeline_test
  controllers/option_manager_test
)
# Builds the program and the tests (src/colmap/<folder>/<name>, target
# colmap_<folder with _>_<name>) in a build directory; copies them to
# $2/bin/colmap and $2/tests/<folder with _>_<name>.
build_program_and_tests() {
  local dir=$1 dest=$2
  shift 2
  local tests=("${colmap_tests[@]}" "$@") targets=(colmap) t name
  for t in "${tests[@]}"; do
    name=$(dirname "$t" | tr / _)_$(basename "$t")
    targets+=("colmap_$name")
  done
  cmake --build "$dir" -j"$JOBS" --target "${targets[@]}" >&2
  rm -rf "$dest/bin" "$dest/tests"
  mkdir -p "$dest/bin" "$dest/tests"
  cp "$dir/src/colmap/exe/colmap" "$dest/bin/colmap"
  for t in "${tests[@]}"; do
    name=$(dirname "$t" | tr / _)_$(basename "$t")
    cp "$dir/src/colmap/$t" "$dest/tests/$name"
  done
}

start=$(date +%s)
if [ ! -f "$stock_stamp" ]; then
  echo "build_colmap.sh: building stock COLMAP 4.1.1 into $cache (once per machine)" >&2
  rm -rf "$build" "$cache/stock" "$cache/sqrtba" "$cache/sqrtba-off"
  fresh_tree
  configure "$build" -DTESTS_ENABLED=OFF
  cmake --build "$build" -j"$JOBS" --target colmap >&2
  mkdir -p "$cache/stock/bin"
  cp "$build/src/colmap/exe/colmap" "$cache/stock/bin/colmap"
  # Stock COLMAP's libraries and headers too, for programs that call COLMAP
  # itself (integrations/colmap/ba_covariance), installed before the patch
  # touches the tree.
  rm -rf "$cache/stock/install"
  cmake --build "$build" -j"$JOBS" >&2  # what the install takes: the libraries beside the program
  cmake --install "$build" --prefix "$cache/stock/install" >&2
  echo "built=$(date -u +%FT%TZ) seconds=$(( $(date +%s) - start ))" > "$stock_stamp"
  echo "build_colmap.sh: stock COLMAP in $(( $(date +%s) - start )) s" >&2
fi

# COLMAP's own covariance estimator as a program (benchmarks/
# covariance_benchmarks.py), against the stock install.
driver_src=$here/integrations/colmap/ba_covariance
build_driver() {  # build folder (in the cache), CMAKE_PREFIX_PATH, destination bin folder
  rm -rf "${cache:?}/$1"
  cmake -G Ninja -S "$driver_src" -B "$cache/$1" -DCMAKE_BUILD_TYPE=Release \
    "${launcher[@]}" -DCMAKE_PREFIX_PATH="$2" >&2
  cmake --build "$cache/$1" -j"$JOBS" >&2
  cp "$cache/$1/colmap_ba_covariance" "$cache/$1/colmap_reprojection_benchmark" "$3/"
}
driver_key=$(cat "$driver_src"/* "$here/benchmarks/process_status.h" | sha256sum | cut -c1-16)
driver_stamp=$cache/stock/.ba_covariance
if [ ! -f "$driver_stamp" ] || ! grep -q "key=$driver_key" "$driver_stamp"; then
  if [ ! -d "$cache/stock/install" ]; then
    # A cache from before the install step: build stock COLMAP again.
    echo "build_colmap.sh: $cache/stock has no install; rebuilding stock COLMAP" >&2
    rm -f "$stock_stamp"
    exec bash "$0"
  fi
  build_driver ba_covariance-build "$cache/stock/install" "$cache/stock/bin"
  echo "key=$driver_key built=$(date -u +%FT%TZ)" > "$driver_stamp"
fi

if [ ! -f "$sqrtba_stamp" ] || ! grep -q "key=$sqrtba_key" "$sqrtba_stamp"; then
  patched_start=$(date +%s)
  echo "build_colmap.sh: building COLMAP with ceres_sqrtba (integrations/colmap/sqrtba.patch)" >&2
  # This clone's ceres_sqrtba, installed into the cache (library only).
  prefix=$cache/ceres_sqrtba
  rm -rf "$prefix" "$cache/ceres_sqrtba-build"
  cmake -G Ninja -S "$here" -B "$cache/ceres_sqrtba-build" -DCMAKE_BUILD_TYPE=Release \
    "${launcher[@]}" -DCMAKE_INSTALL_PREFIX="$prefix" -DCERES_SQRTBA_BUILD_TESTS=OFF \
    -DCERES_SQRTBA_BUILD_EXAMPLES=OFF -DCERES_SQRTBA_BUILD_BENCHMARKS=OFF >&2
  cmake --build "$cache/ceres_sqrtba-build" -j"$JOBS" >&2
  cmake --install "$cache/ceres_sqrtba-build" >&2
  ensure_patched
  configure "$build" -DSQRTBA_ENABLED=ON -DTESTS_ENABLED=ON -DCMAKE_PREFIX_PATH="$prefix"
  build_program_and_tests "$build" "$cache/sqrtba" estimators/bundle_adjustment_sqrtba_test
  # Its libraries and headers (what the program and tests built; the tests
  # are not installed), for colmap_ba_covariance below.
  rm -rf "$cache/sqrtba/install"
  cmake --install "$build" --prefix "$cache/sqrtba/install" >&2
  echo "key=$sqrtba_key commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo none)" \
       "built=$(date -u +%FT%TZ) seconds=$(( $(date +%s) - patched_start ))" > "$sqrtba_stamp"
  echo "build_colmap.sh: patched COLMAP in $(( $(date +%s) - patched_start )) s" >&2
fi

# COLMAP's EstimateBACovariance on the square root (the patch's default) and
# as released (--use_sqrtba 0), one program against the patched install.
sqrtba_driver_stamp=$cache/sqrtba/.ba_covariance
if [ ! -f "$sqrtba_driver_stamp" ] || ! grep -q "key=$driver_key-$sqrtba_key" "$sqrtba_driver_stamp"; then
  build_driver ba_covariance-sqrtba-build "$cache/sqrtba/install;$cache/ceres_sqrtba" "$cache/sqrtba/bin"
  echo "key=$driver_key-$sqrtba_key built=$(date -u +%FT%TZ)" > "$sqrtba_driver_stamp"
fi

# The patched source with the option off: COLMAP as released, in behaviour.
if [ ! -f "$off_stamp" ] || ! grep -q "key=$patch_key" "$off_stamp"; then
  off_start=$(date +%s)
  echo "build_colmap.sh: building patched COLMAP with SQRTBA_ENABLED=OFF" >&2
  ensure_patched
  configure "$cache/build-off" -DSQRTBA_ENABLED=OFF -DTESTS_ENABLED=ON
  build_program_and_tests "$cache/build-off" "$cache/sqrtba-off"
  echo "key=$patch_key built=$(date -u +%FT%TZ) seconds=$(( $(date +%s) - off_start ))" > "$off_stamp"
  echo "build_colmap.sh: patched COLMAP, option off, in $(( $(date +%s) - off_start )) s" >&2
fi
echo "$cache"
