#!/usr/bin/env bash
# integrations/colmap/sqrtba.patch against the released COLMAP 4.1.1 source:
#   - it applies with no offset and no fuzz;
#   - it reads no environment variable (COLMAP's flags configure it);
#   - every C++ line it adds to COLMAP's files sits between
#     `#ifdef COLMAP_SQRTBA_ENABLED` and its `#endif` (so that with the CMake
#     option off COLMAP does what it does today), but for the lines listed in
#     lines_outside_option.txt with their reasons;
#   - with clang-format 14 (the version COLMAP's sources are clean for),
#     every C++ file it touches is formatted by COLMAP's .clang-format.
# Usage: colmap_patch_test.sh <patch> <folder of colmap-4.1.1.tar.xz>
# Exit 77 (skipped) when the COLMAP source is not there.
set -euo pipefail
patch_file=$(realpath "$1")
src_dir=$2
if [ ! -f "$src_dir/colmap-4.1.1.tar.xz" ]; then
  echo "colmap_patch_test: skipped: no colmap-4.1.1.tar.xz in $src_dir"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xf "$src_dir/colmap-4.1.1.tar.xz" -C "$work"
tree=$work/colmap-4.1.1
fail=0

out=$(cd "$tree" && patch -p1 --forward -F0 < "$patch_file" 2>&1) || {
  echo "$out"
  echo "FAIL: the patch does not apply to COLMAP 4.1.1"
  exit 1
}
if echo "$out" | grep -qi "offset\|fuzz"; then
  echo "$out"
  echo "FAIL: the patch applies only with offsets or fuzz"
  fail=1
fi

if grep -n '^+.*getenv' "$patch_file"; then
  echo "FAIL: the patch reads environment variables"
  fail=1
fi

# Added lines of changed (not new) C++ files outside the option's #ifdef,
# except those listed, each once, in lines_outside_option.txt (lines that
# with the option off do what COLMAP does today, each with its reason there).
allowed=$(dirname "$0")/lines_outside_option.txt
awk -v allowed="$allowed" '
  BEGIN {
    while ((getline line < allowed) > 0) if (line !~ /^#/ && line != "") ok[line] = 1
  }
  /^\+\+\+ / { file = $2; cxx = (file ~ /\.(h|cc)$/); depth = 0; next }
  /^@@ -0,0 / { cxx = 0; next }  # a new file: all of it is the option
  !cxx { next }
  /^[ +]#ifdef COLMAP_SQRTBA_ENABLED/ { depth = 1; next }
  /^[ +]#(if|ifdef|ifndef)/ { if (depth) depth++; next }
  /^[ +]#endif/ { if (depth) depth--; next }
  /^\+/ && depth == 0 {
    line = substr($0, 2)
    if (line ~ /^[ \t]*$/ || (file ":" line) in ok) next
    printf "%s: added outside #ifdef COLMAP_SQRTBA_ENABLED: %s\n", file, line
    bad = 1
  }
  END { exit bad }' "$patch_file" || { echo "FAIL: C++ added outside the option"; fail=1; }

if command -v clang-format >/dev/null 2>&1 &&
   clang-format --version | grep -q "version 14\."; then
  for f in $(grep '^+++ b/' "$patch_file" | sed 's|^+++ b/||' | grep -E '\.(h|cc)$'); do
    if ! clang-format --style=file "$tree/$f" | cmp -s - "$tree/$f"; then
      clang-format --style=file "$tree/$f" | diff "$tree/$f" - | head -20
      echo "FAIL: $f is not formatted by COLMAP's .clang-format"
      fail=1
    fi
  done
else
  echo "colmap_patch_test: clang-format 14 not found; formatting not checked"
fi
[ "$fail" = 0 ] && echo "colmap_patch_test: the patch applies to COLMAP 4.1.1 as COLMAP's conventions want"
exit "$fail"
