#!/usr/bin/env bash
# Runs a libFuzzer target for a bounded time on a fresh copy of the seed
# corpus (never in the source tree); ctest's "fuzz" tests call it.
#
#   run_fuzzer.sh <fuzzer> <work folder> <seed folder>... -- <libFuzzer flags>...
#
# The work folder is emptied and receives corpus/ (the seeds, then whatever
# the fuzzer adds) and artifacts/ (crash-*, timeout-*, oom-*, leak-* inputs).
# The exit status is the fuzzer's: non-zero when it found a crash, a hang, a
# leak, an out-of-memory or a sanitizer report. README.md in this folder says
# how to turn an artifact into a regression test.
set -uo pipefail
fuzzer=$1
work=$2
shift 2
seeds=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  seeds+=("$1")
  shift
done
[ $# -gt 0 ] && shift  # the "--"

case "$work" in
  ""|/) echo "run_fuzzer.sh: refusing work folder '$work'" >&2; exit 2 ;;
esac
rm -rf -- "$work"
mkdir -p -- "$work/corpus" "$work/artifacts"
for dir in "${seeds[@]}"; do
  [ -d "$dir" ] || continue
  prefix=$(basename -- "$dir")
  for file in "$dir"/*; do
    [ -f "$file" ] || continue
    case "$(basename -- "$file")" in README*) continue ;; esac
    cp -- "$file" "$work/corpus/${prefix}_$(basename -- "$file")"
  done
done
echo "run_fuzzer.sh: $(ls "$work/corpus" | wc -l) seed files in $work/corpus"

"$fuzzer" -artifact_prefix="$work/artifacts/" "$@" "$work/corpus"
status=$?

artifacts=$(ls -A "$work/artifacts")
if [ -n "$artifacts" ]; then
  echo "run_fuzzer.sh: inputs the fuzzer failed on (replay with: $fuzzer <file>):"
  for a in $artifacts; do echo "  $work/artifacts/$a"; done
  [ $status -eq 0 ] && status=1
fi
exit $status
