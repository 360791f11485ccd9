#!/usr/bin/env bash
# `mpirun -np N bundle_adjuster` against the one-process run (docs/distributed.md).
# Double precision: the same iterations and CG counts, costs within 1e-10
# relative, and the same solved cameras and points in --final_ply within
# 1e-6 relative (printed to 9 digits; the sums' other order, carried by the
# iterations, moves most the points along weakly determined directions:
# 2.2e-7 seen on problem-49 after 10 iterations). Single precision (--precision=
# single): float sums added in another order move the steps at float's
# rounding, which PCG's stopping test and the steps carry forward: the same
# number of iterations and final costs within 1e-6 relative (as single
# against double precision, tests/solver_test.cc); the solutions then differ
# along the weakly determined directions, and are not compared.
#   mpirun_bundle_adjuster_test.sh BUNDLE_ADJUSTER MPIEXEC RANKS [flags]
set -euo pipefail
source "$(dirname "$0")/mpirun_lib.sh"
program=$1
mpiexec=$2
ranks=$3
shift 3
for flag in "$@"; do
  case "$flag" in
    --input=*)
      if [ ! -f "${flag#--input=}" ]; then
        echo "skipped: ${flag#--input=} is not there (the shared BAL problems)"
        exit 77
      fi ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(--linear_solver=sqrt_iterative_schur --robustify --num_iterations=8 --synthetic_num_points=3000 "$@")
"$program" "${flags[@]}" --csv="$work/one.csv" --final_ply="$work/one.ply" > "$work/one.log" 2>&1
mpirun_spread "$mpiexec" "$ranks" "$work/spread.log" \
  "$program" "${flags[@]}" --csv="$work/spread.csv" --final_ply="$work/spread.ply"
single=$(is_single "$@")
/usr/bin/python3 - "$work" "$single" <<'PY'
import csv, sys
work, single = sys.argv[1], sys.argv[2] == "1"
def rows(name):
    with open(f"{work}/{name}.csv") as f:
        return list(csv.DictReader(f))
one, spread = rows("one"), rows("spread")
assert len(one) == len(spread), (len(one), len(spread))
for a, b in zip(one, spread):
    ca, cb = float(a["cost"]), float(b["cost"])
    if single:
        continue
    assert a["linear_solver_iterations"] == b["linear_solver_iterations"], (a, b)
    assert a["step_accepted"] == b["step_accepted"], (a, b)
    assert abs(ca - cb) <= 1e-10 * abs(ca), (a["iteration"], ca, cb)
final_one = min(float(r["cost"]) for r in one)
final_spread = min(float(r["cost"]) for r in spread)
assert abs(final_one - final_spread) <= (1e-6 if single else 1e-10) * final_one, (final_one, final_spread)
def values(name):
    with open(f"{work}/{name}.ply") as f:
        lines = f.read().split("end_header\n", 1)[1].split("\n")
    return [float(v) for line in lines if line for v in line.split()[:3]]
va, vb = values("one"), values("spread")
assert len(va) == len(vb), (len(va), len(vb))
worst = max(abs(a - b) / max(abs(a), 1e-3) for a, b in zip(va, vb))
assert single or worst <= 1e-6, worst
print(f"{len(one)} iterations alike, {len(va) // 3} vertices within {worst:.1e} relative")
PY
