#!/usr/bin/env bash
# `mpirun -np N colmap_bundle_adjuster` against the one-process run on a
# synthetic COLMAP scene (make_colmap_scene, 20k observations, 3 cameras
# shared by 29 images, text model), SQRT_ITERATIVE_SCHUR, run to COLMAP's
# convergence (docs/distributed.md).
# Double precision:
#   - iterations 0 to 3 alike (accepted steps, CG counts) with costs
#     within 1e-10 relative. After them the steps are nearly Gauss-Newton
#     steps (radius 8e5) of a system whose shared intrinsics are weakly
#     determined: the sums' other order, at double's rounding, moves the
#     truncated CG step by ~1e-7 relative (4.7e-7 seen in the cost at
#     iteration 4), and the tail of near-zero cost changes ends after
#     another number of iterations;
#   - the final costs within 1e-10 relative (seen: 1.6e-15);
#   - the written model, each value relative to its norm: every pose and
#     every camera's parameter vector within 1e-9 of the one-process model's
#     (seen: 8.3e-13 and 4.8e-13; a tangential distortion coefficient of 4e-4
#     alone differed by 1.8e-12, 4.8e-9 of itself), every point within 5e-9
#     (seen: 1.8e-11 on 2 ranks, 1.6e-9 on 3: the runs stop where the cost's
#     changes are below double's resolution, and there a weakly determined
#     mode moves most points together by 1.4e-9 units), and each point's mean
#     reprojection error within 3e-6 px (a 5e-9 move of a point at depth ~3
#     seen with focal lengths ~1 000-1 650 px moves its projections by at
#     most ~3e-6 px; seen: 3.7e-10 px on 2 ranks, 2.7e-8 px on 3).
# Single precision (--precision=single): float sums added in another order
# move the steps at float's rounding; the final costs within 1e-6 relative
# (as single against double precision, tests/solver_test.cc).
#   mpirun_colmap_bundle_adjuster_test.sh COLMAP_BUNDLE_ADJUSTER MAKE_COLMAP_SCENE MPIEXEC RANKS [flags]
set -euo pipefail
source "$(dirname "$0")/mpirun_lib.sh"
program=$1
make_scene=$2
mpiexec=$3
ranks=$4
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/in" "$work/one" "$work/spread"
"$make_scene" --output_path "$work/in" --observations=20k --output_type TXT > "$work/scene.log"
flags=(--input_path "$work/in" --linear_solver sqrt_iterative_schur --num_threads 1 "$@")
"$program" "${flags[@]}" --output_path "$work/one" --csv "$work/one.csv" > "$work/one.log" 2>&1 || {
  cat "$work/one.log" >&2
  exit 1
}
mpirun_spread "$mpiexec" "$ranks" "$work/spread.log" \
  "$program" "${flags[@]}" --output_path "$work/spread" --csv "$work/spread.csv"
single=$(is_single "$@")
/usr/bin/python3 - "$work" "$single" <<'PY'
import csv, math, sys
work, single = sys.argv[1], sys.argv[2] == "1"
def rows(name):
    with open(f"{work}/{name}.csv") as f:
        return list(csv.DictReader(f))
one, spread = rows("one"), rows("spread")
if not single:
    for a, b in zip(one[:4], spread[:4]):
        assert a["linear_solver_iterations"] == b["linear_solver_iterations"], (a, b)
        assert a["step_accepted"] == b["step_accepted"], (a, b)
        ca, cb = float(a["cost"]), float(b["cost"])
        assert abs(ca - cb) <= 1e-10 * abs(ca), (a["iteration"], ca, cb)
final_one = min(float(r["cost"]) for r in one)
final_spread = min(float(r["cost"]) for r in spread)
assert abs(final_one - final_spread) <= (1e-6 if single else 1e-10) * final_one, (final_one, final_spread)
if single:
    print(f"final costs {final_one} and {final_spread}")
    sys.exit(0)

def table(name, file):
    out = {}
    with open(f"{work}/{name}/{file}") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            out.setdefault(line.split()[0], []).append(line.split())
    return out

def relative(a, b):
    return math.dist(a, b) / max(math.hypot(*a), 1e-12)

worst = {"intrinsics": 0.0, "poses": 0.0, "points": 0.0, "point errors [px]": 0.0}
ca, cb = table("one", "cameras.txt"), table("spread", "cameras.txt")
assert ca.keys() == cb.keys()
for k in ca:
    pa, pb = [float(v) for v in ca[k][0][4:]], [float(v) for v in cb[k][0][4:]]
    worst["intrinsics"] = max(worst["intrinsics"], relative(pa, pb))
ia, ib = table("one", "images.txt"), table("spread", "images.txt")
assert ia.keys() == ib.keys()
for k in ia:
    # Every image has a line of its pose, then one of its 2D points.
    qa, qb = [float(v) for v in ia[k][0][1:8]], [float(v) for v in ib[k][0][1:8]]
    worst["poses"] = max(worst["poses"], relative(qa[:4], qb[:4]), relative(qa[4:], qb[4:]))
pa, pb = table("one", "points3D.txt"), table("spread", "points3D.txt")
assert pa.keys() == pb.keys()
for k in pa:
    xa, xb = [float(v) for v in pa[k][0][1:4]], [float(v) for v in pb[k][0][1:4]]
    worst["points"] = max(worst["points"], relative(xa, xb))
    worst["point errors [px]"] = max(worst["point errors [px]"],
                                     abs(float(pa[k][0][7]) - float(pb[k][0][7])))
limits = {"intrinsics": 1e-9, "poses": 1e-9, "points": 5e-9, "point errors [px]": 3e-6}
for key, value in worst.items():
    assert value <= limits[key], (key, value)
print(f"{len(one)} / {len(spread)} iterations, final costs {final_one} / {final_spread}; worst: " +
      ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))
PY
