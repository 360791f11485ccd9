#!/usr/bin/env bash
# Builds COLMAP 4.1.1 from ../shared/colmap-src, offline, once per machine,
# into a cache outside the clone, as two programs:
#
#   <cache>/stock/bin/colmap     COLMAP as released (Debian's Ceres 2.1)
#   <cache>/stock/bin/colmap_ba_covariance   COLMAP's own EstimateBACovariance
#                                on a model (integrations/colmap/ba_covariance)
#   <cache>/sqrtba/bin/colmap    the same with integrations/colmap/sqrtba.patch:
#                                its bundle adjustment and global positioning
#                                solve through ceres_sqrtba::Solve
#                                (SQRT_AUTOMATIC), linked against this clone's
#                                ceres_sqrtba
#
# and prints <cache> on stdout. The patched program is an incremental rebuild
# of the stock tree (the patch touches two translation units, a header of its
# own and two CMake files), redone whenever this clone's ceres_sqrtba sources
# change (a hash of the library's sources and the patch keys it).
#
#   cache=$(bash scripts/build_colmap.sh)
#   "$cache/stock/bin/colmap" bundle_adjuster --input_path ... --output_path ...
#   COLMAP_SQRTBA_PRECISION=double "$cache/sqrtba/bin/colmap" mapper ...
#
# With --if-built it only prints the cache of a completed build of both (exit
# 3 when there is none), without building. The sources: $CERES_SQRTBA_COLMAP_SRC,
# else ../shared/colmap-src beside the source tree (colmap-4.1.1.tar.xz,
# poselib-a69263d.tar.xz, faiss-1.14.1.tar.xz, checked against its
# SHA256SUMS). CUDA, the GUI, OpenGL, ONNX, CGAL, downloads and tests are off;
# the Debian packages COLMAP needs beyond the project's are installed when
# missing. Cold, on 2 cores: about 20-25 minutes for COLMAP, a few minutes for
# the patched rebuild.
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
stock_stamp=$cache/stock/.complete
sqrtba_stamp=$cache/sqrtba/.complete
if [ "$if_built" = 1 ]; then
  if [ -f "$stock_stamp" ] && [ -f "$sqrtba_stamp" ] && grep -q "key=$sqrtba_key" "$sqrtba_stamp" &&
     [ -x "$cache/stock/bin/colmap_ba_covariance" ]; then
    echo "$cache"
    exit 0
  fi
  echo "build_colmap.sh: COLMAP 4.1.1 (stock and patched for this ceres_sqrtba) is not built in" \
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
configure() {
  cmake -G Ninja -S "$tree/colmap-4.1.1" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    "${launcher[@]}" \
    -DFETCHCONTENT_FULLY_DISCONNECTED=ON \
    -DFETCHCONTENT_SOURCE_DIR_POSELIB="$tree/poselib" \
    -DFETCHCONTENT_SOURCE_DIR_FAISS="$tree/faiss" \
    -DCUDA_ENABLED=OFF -DGUI_ENABLED=OFF -DOPENGL_ENABLED=OFF -DTESTS_ENABLED=OFF \
    -DDOWNLOAD_ENABLED=OFF -DONNX_ENABLED=OFF -DCASPAR_ENABLED=OFF -DCGAL_ENABLED=OFF \
    -DGIT_COMMIT_ID=a0d785f -DGIT_COMMIT_DATE=2026-07-17 "$@" >&2
}

start=$(date +%s)
if [ ! -f "$stock_stamp" ]; then
  echo "build_colmap.sh: building stock COLMAP 4.1.1 into $cache (once per machine)" >&2
  rm -rf "$tree" "$build" "$cache/stock" "$cache/sqrtba"
  mkdir -p "$tree/poselib" "$tree/faiss"
  tar xf "$src_dir/colmap-4.1.1.tar.xz" -C "$tree"
  tar xf "$src_dir/poselib-a69263d.tar.xz" -C "$tree/poselib" --strip-components=1
  tar xf "$src_dir/faiss-1.14.1.tar.xz" -C "$tree/faiss" --strip-components=1
  configure
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
driver_key=$(cat "$driver_src"/* "$here/benchmarks/process_status.h" | sha256sum | cut -c1-16)
driver_stamp=$cache/stock/.ba_covariance
if [ ! -f "$driver_stamp" ] || ! grep -q "key=$driver_key" "$driver_stamp"; then
  if [ ! -d "$cache/stock/install" ]; then
    # A cache from before the install step: build stock COLMAP again.
    echo "build_colmap.sh: $cache/stock has no install; rebuilding stock COLMAP" >&2
    rm -f "$stock_stamp" "$tree/.patched"
    exec bash "$0"
  fi
  rm -rf "$cache/ba_covariance-build"
  cmake -G Ninja -S "$driver_src" -B "$cache/ba_covariance-build" -DCMAKE_BUILD_TYPE=Release \
    "${launcher[@]}" -DCMAKE_PREFIX_PATH="$cache/stock/install" >&2
  cmake --build "$cache/ba_covariance-build" -j"$JOBS" >&2
  cp "$cache/ba_covariance-build/colmap_ba_covariance" "$cache/stock/bin/colmap_ba_covariance"
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
  # The patch on the stock tree (once; it stays applied), checked to apply
  # to the released source unchanged: no fuzz, no offsets.
  if [ ! -f "$tree/.patched" ]; then
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
    touch "$tree/.patched"
  else
    cp "$patch_file" "$tree/.patch-now"
    if ! cmp -s "$tree/.patch-now" "$tree/.patch-applied"; then
      # Another version of the patch: start again from the released source.
      rm -f "$tree/.patched" "$stock_stamp"
      exec bash "$0"
    fi
  fi
  cp "$patch_file" "$tree/.patch-applied"
  configure -DCMAKE_PREFIX_PATH="$prefix"
  cmake --build "$build" -j"$JOBS" --target colmap >&2
  mkdir -p "$cache/sqrtba/bin"
  cp "$build/src/colmap/exe/colmap" "$cache/sqrtba/bin/colmap"
  echo "key=$sqrtba_key commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo none)" \
       "built=$(date -u +%FT%TZ) seconds=$(( $(date +%s) - patched_start ))" > "$sqrtba_stamp"
  echo "build_colmap.sh: patched COLMAP in $(( $(date +%s) - patched_start )) s" >&2
fi
echo "$cache"
