#!/usr/bin/env python3
"""COLMAP's EstimateBACovariance as released against the patched COLMAP's
(integrations/colmap/sqrtba.patch, SQRTBA_ENABLED: the pose blocks through
ceres_sqrtba::Covariance), side by side on the COLMAP scenes of
docs/covariance.md: time and peak memory of each, and how far apart their
pose blocks are.

  python3 benchmarks/colmap_covariance.py --out DIR [--colmap-images 400,800,1800] [--update-docs]

Needs scripts/build_colmap.sh's cache (stock/bin and sqrtba/bin
colmap_ba_covariance) and this clone's build/ (make_colmap_scene,
colmap_bundle_adjuster: the scenes are made and refined as
covariance_benchmarks.py makes them, into <out>/scenes, kept for later runs).
Each program runs in its own process on the same refined model, asked for
POSES_AND_POINTS with COLMAP's default damping, and writes every pose block;
the pose blocks are compared image by image in Frobenius norm relative to
stock's block. Results go to <out>/colmap_covariance.jsonl; --update-docs
rewrites the table between the markers in docs/colmap.md.
"""
import argparse
import json
import os
import subprocess
import sys

import covariance_benchmarks

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BEGIN, END = "<!-- colmap-covariance:begin -->", "<!-- colmap-covariance:end -->"


def read_poses(path):
    """{image id: (size, values)} of a --pose_covariances file."""
    poses = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            size = int(fields[1])
            values = [float(x) for x in fields[2:]]
            if len(values) != size * size:
                raise SystemExit("%s: image %s has %d values for a %d x %d block" %
                                 (path, fields[0], len(values), size, size))
            poses[int(fields[0])] = (size, values)
    return poses


def compare(stock, sqrtba):
    """Worst relative Frobenius difference of the pose blocks, and how many."""
    if set(stock) != set(sqrtba):
        return None, "the programs give blocks for different images"
    worst = 0.0
    for image_id, (size, a) in stock.items():
        size_b, b = sqrtba[image_id]
        if size != size_b:
            return None, "image %d: %d x %d against %d x %d" % (image_id, size, size, size_b, size_b)
        norm = sum(x * x for x in a) ** 0.5
        diff = sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5
        worst = max(worst, diff / norm if norm > 0 else diff)
    return worst, ""


def run(program, model, name, extra, poses_path):
    command = [program, "--input_path=" + model, "--name=" + name, "--pose_covariances=" + poses_path] + extra
    out = subprocess.run(command, capture_output=True, text=True)
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return {"ok": False, "message": "exit %d: %s" % (out.returncode, out.stderr.strip()[-300:])}
    return json.loads(lines[-1])


def table(results):
    rows = ["| scene (observations; poses, points) | COLMAP 4.1.1 as released: time, memory | patched, "
            "`use_sqrtba` (default): time, memory | sooner | pose blocks, worst relative difference |",
            "|---|---|---|---|---|"]
    for r in results:
        s, q = r["stock"], r["sqrtba"]
        cell = lambda x: ("%.3g s, %.0f MiB" % (x["seconds"], max(0.0, x["peak_mib"] - x["baseline_mib"]))
                          if x.get("ok") else "fails: " + x.get("message", ""))
        ratio = "%.3g×" % (s["seconds"] / q["seconds"]) if s.get("ok") and q.get("ok") else ""
        worst = "%.1e (%d blocks)" % (r["worst"], s["poses"]) if r.get("worst") is not None else r.get("why", "")
        rows.append("| %s (%s; %d, %d) | %s | %s | %s | %s |" % (
            r["problem"], format(s.get("observations", 0), ","), s.get("poses", 0), s.get("points", 0),
            cell(s), cell(q), ratio, worst))
    return "\n".join(rows) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--colmap-images", type=lambda s: [int(x) for x in s.split(",")], default=[400, 800, 1800])
    parser.add_argument("--colmap-cache", default=None,
                        help="scripts/build_colmap.sh's cache (default: its --if-built answer)")
    parser.add_argument("--threads", type=int, default=2, help="for refining the scenes")
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("--report-only", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results_path = os.path.join(args.out, "colmap_covariance.jsonl")
    if not args.report_only:
        cache = covariance_benchmarks.colmap_cache(args)
        if cache is None:
            raise SystemExit("no COLMAP build: run scripts/build_colmap.sh first")
        for images in args.colmap_images:
            model = covariance_benchmarks.colmap_scene(args, images)
            name = "colmap-scene-%d" % images
            paths = {k: os.path.join(args.out, "%s-%s-poses.txt" % (name, k)) for k in ("stock", "sqrtba")}
            stock = run(os.path.join(cache, "stock", "bin", "colmap_ba_covariance"), model, name, [],
                        paths["stock"])
            print(json.dumps(stock), flush=True)
            sqrtba = run(os.path.join(cache, "sqrtba", "bin", "colmap_ba_covariance"), model, name,
                         ["--use_sqrtba=1"], paths["sqrtba"])
            print(json.dumps(sqrtba), flush=True)
            result = {"problem": name, "stock": stock, "sqrtba": sqrtba}
            if stock.get("ok") and sqrtba.get("ok"):
                result["worst"], result["why"] = compare(read_poses(paths["stock"]), read_poses(paths["sqrtba"]))
            with open(results_path, "a") as f:
                f.write(json.dumps(result) + "\n")
    latest = {}
    if os.path.exists(results_path):
        with open(results_path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    latest[r["problem"]] = r
    text = table(list(latest.values()))
    print(text)
    if args.update_docs:
        covariance_benchmarks.replace_block(os.path.join(ROOT, "docs", "colmap.md"), BEGIN, END, text)


if __name__ == "__main__":
    sys.exit(main())
