#!/usr/bin/env python3
"""Covariance benchmark: every pose and every point covariance of a problem,
by ceres_sqrtba::Covariance, ceres::Covariance (SPARSE_QR) and COLMAP 4.1.1's
method, side by side in one run; time and peak memory of each. COLMAP's
method twice: re-implemented in covariance_benchmark (every problem) and
COLMAP's own EstimateBACovariance (colmap_ba_covariance, COLMAP models only,
when scripts/build_colmap.sh has built it).

  python3 benchmarks/covariance_benchmarks.py --build build --out /tmp/cov [--update-docs]
      [--problems bal,synthetic,colmap] [--ceres-timeout 600]

Each (problem, method) runs as its own process of build/benchmarks/
covariance_benchmark (its peak memory is the method's: the process's peak
after the problem is built and solved, less what it held then). Results go to
<out>/results.jsonl (one JSON object per run, appended as they finish);
--update-docs rewrites the block between the markers of docs/covariance.md
with the table of <out>/results.jsonl. COLMAP scenes are written first by
make_colmap_scene into <out>/scenes and refined once by colmap_bundle_adjuster
(kept for later runs).

A method that runs out of time shows as "> T s" (it was stopped); one that
failed shows its message. ceres::Covariance's DENSE_SVD is not run here: it
forms the dense Jacobian (rows x columns doubles), listed in the table's
notes; the tests compare with it on small problems.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BEGIN, END = "<!-- covariance-results:begin -->", "<!-- covariance-results:end -->"
METHODS = ("sqrtba", "ceres_sparse_qr", "colmap", "colmap_own")
LABEL = {"sqrtba": "`ceres_sqrtba::Covariance`", "ceres_sparse_qr": "`ceres::Covariance` SPARSE_QR",
         "colmap": "COLMAP's method (re-implemented)",
         "colmap_own": "COLMAP 4.1.1's own `EstimateBACovariance`"}


def problems(args):
    bal = os.path.join(ROOT, "..", "shared", "bal")
    found = []
    kinds = args.problems.split(",")
    if "bal" in kinds:
        for name in ("problem-49-7776-pre", "problem-21-11315-pre", "problem-16-22106-pre"):
            path = os.path.join(bal, name + ".txt.bz2")
            if os.path.exists(path):
                found.append((name.replace("-pre", ""), ["--bal=" + path, "--solve_iterations=30"]))
            else:
                print("skipping %s: no %s" % (name, path), file=sys.stderr)
    if "synthetic" in kinds:
        for label, points, cameras in (("synthetic-100k", 20000, 100), ("synthetic-1M", 200000, 1000)):
            found.append((label, ["--synthetic_points=%d" % points, "--synthetic_cameras=%d" % cameras,
                                  "--solve_iterations=10"]))
    if "colmap" in kinds:
        for images in args.colmap_images:
            found.append(("colmap-scene-%d" % images, ["--colmap=" + colmap_scene(args, images)]))
    return found


def colmap_scene(args, images):
    """The COLMAP scene of `images` images (make_colmap_scene, 700
    observations per image), refined once by colmap_bundle_adjuster (30
    iterations of SQRT_AUTOMATIC, single precision) into <out>/scenes, kept
    for later runs: every method reads the refined model."""
    folder = os.path.join(args.out, "scenes", "colmap-%d" % images)
    refined = folder + "-refined"
    if not os.path.exists(os.path.join(refined, "points3D.bin")):
        os.makedirs(folder, exist_ok=True)
        os.makedirs(refined, exist_ok=True)
        subprocess.run([os.path.join(args.build, "examples", "make_colmap_scene"), "--output_path=" + folder,
                        "--num_images=%d" % images, "--observations=%d" % (700 * images)],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([os.path.join(args.build, "examples", "colmap_bundle_adjuster"),
                        "--input_path=" + folder, "--output_path=" + refined, "--sqrt_automatic",
                        "--precision=single", "--num_threads=%d" % args.threads,
                        "--BundleAdjustment.max_num_iterations=30"],
                       check=True, stdout=subprocess.DEVNULL)
    return refined


def colmap_cache(args):
    """The cache of scripts/build_colmap.sh's COLMAP build, or None (asked
    once per run: "" records that it is not built)."""
    if args.colmap_cache is None:
        out = subprocess.run(["bash", os.path.join(ROOT, "scripts", "build_colmap.sh"), "--if-built"],
                             capture_output=True, text=True)
        args.colmap_cache = out.stdout.strip() if out.returncode == 0 else ""
    return args.colmap_cache or None


def run(args, name, flags, method, timeout):
    if method == "colmap_own":
        # COLMAP's own estimator reads COLMAP models only; BAL problems keep
        # the re-implementation.
        model = [f[len("--colmap="):] for f in flags if f.startswith("--colmap=")]
        cache = colmap_cache(args)
        if not model or cache is None:
            return None
        command = [os.path.join(cache, "stock", "bin", "colmap_ba_covariance"), "--input_path=" + model[0],
                   "--name=" + name]
    else:
        binary = os.path.join(args.build, "benchmarks", "covariance_benchmark")
        command = [binary, "--method=" + method, "--name=" + name, "--num_threads=%d" % args.threads] + flags
    start = time.time()
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"problem": name, "method": method, "ok": False, "timeout": timeout,
                "message": "stopped after %d s" % timeout}
    lines = [l for l in out.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return {"problem": name, "method": method, "ok": False,
                "message": "exit %d: %s" % (out.returncode, out.stderr.strip()[-300:])}
    result = json.loads(lines[-1])
    result["process_seconds"] = time.time() - start
    if not result["ok"] and method == "ceres_sparse_qr":
        # Ceres says why in its log: its last warning or error line.
        for line in out.stderr.splitlines():
            if line[:1] in ("W", "E") and "] " in line:
                result["message"] = line.split("] ", 1)[-1]
    return result


def cell_time(r):
    if r is None:
        return "not run"
    if r.get("timeout"):
        return "> %d s (stopped)" % r["timeout"]
    if not r["ok"]:
        return "fails: " + r["message"].replace("|", "/")
    return "%.3g s" % r["seconds"]


def cell_memory(r):
    if r is None or not r.get("ok"):
        return ""
    return "%.0f MiB" % max(0.0, r["peak_mib"] - r["baseline_mib"])


def table(results):
    by = {}
    order = []
    for r in results:
        if r["problem"] not in by:
            order.append(r["problem"])
        by.setdefault(r["problem"], {})[r["method"]] = r
    rows = ["| problem (observations; poses, points) | %s | %s | %s | %s | sooner than Ceres | sooner than "
            "COLMAP's method | sooner than COLMAP's own | poses' trace sum, ours / COLMAP's own |"
            % tuple(LABEL[m] + ": time, memory" for m in METHODS),
            "|---|---|---|---|---|---|---|---|---|"]
    notes = []
    for name in order:
        runs = by[name]
        ours = runs.get("sqrtba")
        size = ""
        if ours is not None and "observations" in ours:
            size = " (%s; %d, %d)" % (format(ours["observations"], ","), ours["poses"], ours["points"])
            dense = 8.0 * ours["rows"] * ours["columns"] / 2 ** 30
            notes.append("%s: Ceres' DENSE_SVD would form a dense %d x %d Jacobian, %.1f GiB" %
                         (name, ours["rows"], ours["columns"], dense))
        cells = []
        for m in METHODS:
            r = runs.get(m)
            if r is None and m == "colmap_own":
                cells.append("(COLMAP models only)" if not name.startswith("colmap") else "not run")
                continue
            cells.append((cell_time(r) + (", " + cell_memory(r) if cell_memory(r) else "")))
        ratios = []
        for m in ("ceres_sparse_qr", "colmap", "colmap_own"):
            r = runs.get(m)
            if ours is None or not ours.get("ok") or r is None:
                ratios.append("")
            elif r.get("timeout"):
                ratios.append("> %.3g×" % (r["timeout"] / ours["seconds"]))
            elif r["ok"]:
                ratios.append("%.3g×" % (r["seconds"] / ours["seconds"]))
            else:
                ratios.append("(it fails)")
        own = runs.get("colmap_own")
        if ours is not None and ours.get("ok") and own is not None and own.get("ok") and "pose_trace_sum" in ours:
            ratios.append("%.9g / %.9g" % (ours["pose_trace_sum"], own["pose_trace_sum"]))
        else:
            ratios.append("")
        rows.append("| %s%s | %s | %s | %s | %s | %s | %s | %s | %s |" % tuple([name, size] + cells + ratios))
    return "\n".join(rows) + "\n\n" + "\n".join("- " + n for n in notes) + "\n"


def replace_block(path, begin, end, block):
    """Rewrites what lies between the markers begin and end in the file."""
    with open(path) as f:
        text = f.read()
    if begin not in text or end not in text:
        raise SystemExit("no %s ... %s block in %s" % (begin, end, path))
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path, "w") as f:
        f.write(head + begin + "\n" + block + end + tail)


def update_docs(results, path):
    replace_block(path, BEGIN, END, table(results))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", required=True)
    parser.add_argument("--problems", default="bal,synthetic,colmap")
    parser.add_argument("--colmap-images", type=lambda s: [int(x) for x in s.split(",")], default=[400, 800, 1800])
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--colmap-cache", default=None,
                        help="scripts/build_colmap.sh's cache (default: its --if-built answer)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ceres-timeout", type=int, default=600)
    parser.add_argument("--timeout", type=int, default=1800, help="for the other methods")
    parser.add_argument("--update-docs", action="store_true")
    parser.add_argument("--report-only", action="store_true", help="only rewrite the table from results.jsonl")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    results_path = os.path.join(args.out, "results.jsonl")
    if not args.report_only:
        for name, flags in problems(args):
            for method in args.methods.split(","):
                timeout = args.ceres_timeout if method.startswith("ceres") else args.timeout
                r = run(args, name, flags, method, timeout)
                if r is None:
                    continue
                print(json.dumps(r), flush=True)
                with open(results_path, "a") as f:
                    f.write(json.dumps(r) + "\n")
    results = []
    if os.path.exists(results_path):
        with open(results_path) as f:
            results = [json.loads(l) for l in f if l.strip()]
    # The latest run of each (problem, method).
    latest = {}
    for r in results:
        latest[(r["problem"], r["method"])] = r
    results = list(latest.values())
    print(table(results))
    if args.update_docs:
        update_docs(results, os.path.join(ROOT, "docs", "covariance.md"))


if __name__ == "__main__":
    main()
