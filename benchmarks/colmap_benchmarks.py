#!/usr/bin/python3
"""COLMAP benchmarks: COLMAP models (the shared statue-of-liberty model and
synthetic scenes written by make_colmap_scene) refined by
colmap_bundle_adjuster with the square-root solvers, with the Ceres solver
COLMAP picks for the model's number of images, and with Ceres 2.2's Schur
solvers (a second build of colmap_bundle_adjuster linked with Ceres 2.2);
then the time to reach f(tau) = f* + tau (f0 - f*) per solver, as
run_benchmarks.py defines it.  See docs/benchmarks.md, section "COLMAP models".

Reuses the driver's pieces: runner.run_one (one process per run, peak RSS by
os.wait4, the binary's --csv / --summary_csv), run_benchmarks.representative
(--repeat), analysis.analyse and perf_profiles (f0, f*, f(tau), t(tau)).
Every run holds an exclusive flock(2) on --lock (default /work/bench.lock
when it exists, as `flock /work/bench.lock <cmd>` would) so that no other
benchmark on the machine is timed at the same time.

Run with Debian's /usr/bin/python3; only the standard library is used.
"""

import argparse
import collections
import csv
import datetime
import fcntl
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import analysis  # noqa: E402
import bench_io  # noqa: E402
import perf_profiles  # noqa: E402
import report  # noqa: E402
import run_benchmarks  # noqa: E402
import runner  # noqa: E402
import solvers  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BINARY = os.path.join(REPO_ROOT, "build", "examples", "colmap_bundle_adjuster")
DEFAULT_CERES22_BINARY = os.path.join(REPO_ROOT, "build-ceres22", "examples",
                                      "colmap_bundle_adjuster")
DEFAULT_SCENE_BINARY = os.path.join(REPO_ROOT, "build", "examples", "make_colmap_scene")
DEFAULT_COLMAP_DIR = os.environ.get("CERES_SQRTBA_COLMAP_DIR") or os.path.normpath(
    os.path.join(REPO_ROOT, "..", "shared", "colmap"))
DEFAULT_LOCK = "/work/bench.lock"
TAUS = (1e-2, 1e-3)

# program: which build runs the solver ("ours": linked with the default Ceres,
# Debian's 2.1; "ceres22": the build linked with Ceres 2.2).
Solver = collections.namedtuple("Solver", "name family flags program build")
OURS, CERES22 = "ours", "ceres22"
SOLVERS = (
    Solver("sqrt-single", "sqrt", ("--linear_solver=sqrt_iterative_schur", "--precision=single"),
           solvers.SQRTBA, OURS),
    Solver("sqrt-sparse", "sqrt", ("--linear_solver=sqrt_sparse_schur", "--precision=double"),
           solvers.SQRTBA, OURS),
    # What COLMAP runs: its rule by the number of images, with the Ceres the
    # build links (Debian's 2.1, as Debian's COLMAP).
    Solver("colmap-pick", "colmap", ("--linear_solver=automatic",), solvers.SQRTBA, OURS),
    Solver("ceres22-dense-schur", "ceres22", ("--linear_solver=dense_schur",), solvers.SQRTBA,
           CERES22),
    Solver("ceres22-sparse-schur", "ceres22", ("--linear_solver=sparse_schur",), solvers.SQRTBA,
           CERES22),
    Solver("ceres22-iterative-schur", "ceres22",
           ("--linear_solver=iterative_schur", "--preconditioner=schur_jacobi"), solvers.SQRTBA,
           CERES22),
)
SOLVER_NAMES = tuple(s.name for s in SOLVERS)
# DENSE_SCHUR factors the dense reduced camera matrix (6 columns per image and
# the intrinsics) every iteration: above this many images it is not run (COLMAP
# itself never picks it above 50).
DENSE_SCHUR_MAX_IMAGES = 1000

# name -> make_colmap_scene flags (None: the shared model of that name;
# "{colmap_dir}" is replaced by --colmap-dir). The shared model is COLMAP's own
# result, already at its optimum: its perturbed copy gives the solvers work.
SCENES = collections.OrderedDict((
    ("statue-of-liberty", None),
    ("statue-of-liberty-perturbed", ("--input_path={colmap_dir}/statue-of-liberty",
                                     "--perturbation=1", "--seed=1")),
    ("colmap-synthetic-100k", ("--observations=100k", "--seed=1")),
    ("colmap-synthetic-1M", ("--observations=1M", "--seed=1")),
    ("colmap-long-track-1M", ("--observations=1M", "--long_tracks", "--seed=1")),
))


def common_flags(num_iterations, threads):
    """The same iteration cap, tolerances and threads for every run (COLMAP's
    tolerances: gradient 1e-4, function and parameter 0)."""
    return ("--num_iterations=%d" % num_iterations, "--BundleAdjustment.function_tolerance=0",
            "--BundleAdjustment.gradient_tolerance=1e-4",
            "--BundleAdjustment.parameter_tolerance=0", "--num_threads=%d" % threads)


class Lock:
    """An exclusive flock(2) on a file for the duration of a run (no-op without one)."""

    def __init__(self, path):
        self.path = path
        self.handle = None

    def __enter__(self):
        if self.path:
            self.handle = open(self.path, "a")
            fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.handle:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
            self.handle.close()
            self.handle = None


def prepare_problem(name, args, out_dir):
    """(problems.Problem-like record, number of images) of a scene; synthetic
    scenes are written into out_dir/scenes/<name> (binary) once."""
    flags = SCENES[name]
    if flags is None:
        model = os.path.join(args.colmap_dir, name)
        kind = "colmap"
    else:
        model = os.path.join(out_dir, "scenes", name)
        kind = "colmap-perturbed" if "--input_path" in flags[0] else "colmap-synthetic"
        if not os.path.exists(os.path.join(model, "points3D.bin")):
            os.makedirs(model, exist_ok=True)
            command = [args.scene_binary, "--output_path=%s" % model] + [
                f.format(colmap_dir=args.colmap_dir) for f in flags]
            done = subprocess.run(command, capture_output=True, text=True)
            with open(os.path.join(out_dir, "scenes", name + ".log"), "w") as f:
                f.write(" ".join(command) + "\n" + done.stdout + done.stderr)
            if done.returncode != 0:
                sys.exit("make_colmap_scene failed for %s: %s" % (name, done.stderr.strip()))
    refined = os.path.join(out_dir, "refined", name)
    os.makedirs(refined, exist_ok=True)
    problem = collections.namedtuple("Problem", "name kind input flags num_observations")(
        name, kind, model, ("--input_path=%s" % model, "--output_path=%s" % refined), None)
    return problem, num_images(model)


def num_images(model):
    """Images in a binary model (images.bin starts with their uint64 count)."""
    with open(os.path.join(model, "images.bin"), "rb") as f:
        return int.from_bytes(f.read(8), "little")


def colmap_choice(images):
    if images <= 50:
        return "dense_schur"
    if images <= 1000:
        return "sparse_schur"
    return "iterative_schur+schur_jacobi"


def run_all(args, out_dir):
    os.makedirs(os.path.join(out_dir, runner.TRACES_DIR), exist_ok=True)
    common = common_flags(args.num_iterations, args.threads)
    binaries = {OURS: args.binary, CERES22: args.ceres22_binary}
    runs, all_runs, notes = [], [], {}
    for name in args.problems:
        problem, images = prepare_problem(name, args, out_dir)
        notes[name] = {"images": images, "colmap_choice": colmap_choice(images)}
        names = [s for s in args.solvers
                 if not (s == "ceres22-dense-schur" and images > DENSE_SCHUR_MAX_IMAGES)]
        tries = {s: [] for s in names}
        for rep in range(args.first_repeat, args.first_repeat + args.repeat):
            run_dir = os.path.join(out_dir, "repeat-%d" % rep)
            os.makedirs(os.path.join(run_dir, runner.TRACES_DIR), exist_ok=True)
            for solver_name in names:  # round robin, as run_benchmarks.py
                solver = next(s for s in SOLVERS if s.name == solver_name)
                with Lock(args.lock):
                    run = runner.run_one(binaries[solver.build], problem, solver, common, run_dir,
                                         args.threads, args.timeout)
                tries[solver_name].append((rep, run_dir, run))
                # Every run's record as soon as it ends, so that an interrupted
                # benchmark keeps them (--recover rebuilds runs.csv from them).
                write_repeats(os.path.join(out_dir, bench_io.REPEATS_FILE), all_runs + [
                    dict(r, repeat=k, chosen="") for t in tries.values() for k, _, r in t])
                print("[%s rep %d] %s: %s, %.2f s, %.0f MiB" % (
                    name, rep, solver_name, run["status"], run.get("solver_seconds") or 0.0,
                    run.get("peak_rss_mib") or 0.0), flush=True)
        for solver_name in names:
            tried = tries[solver_name]
            chosen = run_benchmarks.representative(
                [r for _, _, r in tried],
                [run_benchmarks._trace_rows(d, r) for _, d, r in tried])
            for rep, run_dir, run in tried:
                all_runs.append(dict(run, repeat=rep, chosen=int(run is chosen)))
                if run is chosen:
                    run_benchmarks._copy_run_files(run_dir, run, out_dir)
            runs.append(chosen)
        bench_io.write_runs(os.path.join(out_dir, "runs.csv"), runs)
        write_repeats(os.path.join(out_dir, bench_io.REPEATS_FILE), all_runs)
        with open(os.path.join(out_dir, "problems.csv"), "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["problem", "images", "colmap_choice"])
            for problem_name, note in notes.items():
                writer.writerow([problem_name, note["images"], note["colmap_choice"]])
    return runs


def write_repeats(path, all_runs):
    """Every run of every repeat: its runs.csv fields, the repeat and whether it
    was chosen as the representative (empty while its problem is running)."""
    fields = ["repeat", "chosen"] + list(bench_io.RUN_COLUMNS)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for run in all_runs:
            writer.writerow(run)


def recover(out_dir):
    """runs.csv from repeats.csv after an interrupted benchmark: per (problem,
    solver) the representative of the repeats that ended (their files copied
    to traces/), as run_all chooses it."""
    rows = bench_io.read_repeats(os.path.join(out_dir, bench_io.REPEATS_FILE))
    typed = []
    for row in rows:
        run = {}
        for name, kind in bench_io.RUN_FIELDS:
            run[name] = bench_io._parse_cell(row.get(name, ""), kind)
        run["repeat"] = int(row["repeat"])
        typed.append(run)
    groups = collections.OrderedDict()
    for run in typed:
        groups.setdefault((run["problem"], run["solver"]), []).append(run)
    runs, all_runs = [], []
    for tried in groups.values():
        dirs = [os.path.join(out_dir, "repeat-%d" % r["repeat"]) for r in tried]
        chosen = run_benchmarks.representative(
            tried, [run_benchmarks._trace_rows(d, r) for d, r in zip(dirs, tried)])
        for run_dir, run in zip(dirs, tried):
            all_runs.append(dict(run, chosen=int(run is chosen)))
            if run is chosen:
                run_benchmarks._copy_run_files(run_dir, run, out_dir)
        runs.append(chosen)
    bench_io.write_runs(os.path.join(out_dir, "runs.csv"), runs)
    write_repeats(os.path.join(out_dir, bench_io.REPEATS_FILE), all_runs)
    return runs


def read_problem_notes(out_dir):
    with open(os.path.join(out_dir, "problems.csv")) as f:
        return {row["problem"]: row for row in csv.DictReader(f)}


def repeat_tau_times(out_dir, repeats, result):
    """{solver: {tau: [t_tau of each repeat]}} with the problem's f(tau)."""
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    for row in repeats:
        if row["problem"] != result.name or row["status"] != bench_io.STATUS_OK:
            continue
        trace_path = os.path.join(out_dir, "repeat-%s" % row["repeat"], row["trace"])
        try:
            trace = bench_io.read_trace(trace_path)
        except (OSError, ValueError, KeyError):
            continue
        for tau in TAUS:
            times[row["solver"]][tau].append(
                perf_profiles.time_to_threshold(trace, result.analysis.thresholds[tau]))
    return times


def fmt(value, spec="%.3g"):
    return report.fmt_number(value, spec)


def ratio(t, reference):
    return perf_profiles.time_ratio(t, reference) if reference is not None else None


def best_of(times, names):
    """(time, solver) of the fastest of `names` that has a time; (None, None) if none ran."""
    present = [(times[n], n) for n in names if n in times]
    return min(present) if present else (None, None)


def problem_markdown(result, note, repeats, out_dir, heading):
    taus = TAUS
    reps = repeat_tau_times(out_dir, repeats, result)
    ceres22 = [s for s in result.runs if s.startswith("ceres22-")]
    runs = [d.run for d in result.runs.values() if d.rows is not None]
    size = ("%d images, %d points, %d observations" % (
        runs[0]["num_cameras"], runs[0]["num_points"], runs[0]["num_observations"])
        if runs else "no successful run")
    a = result.analysis
    lines = ["%s %s" % (heading, result.name), "",
             "%s; COLMAP's pick: `%s`. f0 = %s, f* = %s, %s." % (
                 size, note["colmap_choice"], fmt(a.f0, "%.6e"), fmt(a.f_star, "%.6e"),
                 ", ".join("f(τ=%s) = %s" % (report.fmt_tau(t), fmt(a.thresholds[t], "%.6e"))
                           for t in taus)), ""]
    best = {tau: best_of(a.times[tau], ceres22) for tau in taus}
    lines.append("Best Ceres 2.2 solver: " + ", ".join(
        "τ=%s `%s`" % (report.fmt_tau(t), best[t][1] or "–") for t in taus) + ".")
    lines.append("")
    headers = (["solver", "status"] + ["t τ=%s [s]" % report.fmt_tau(t) for t in taus]
               + ["t τ=%s range over repeats [s]" % report.fmt_tau(taus[-1])]
               + ["×COLMAP pick τ=%s" % report.fmt_tau(t) for t in taus]
               + ["×best 2.2 τ=%s" % report.fmt_tau(t) for t in taus]
               + ["final cost", "iterations", "total [s]", "peak memory [MiB]"])
    rows = []
    for solver, data in result.runs.items():
        run = data.run
        ok = data.rows is not None
        t = {tau: a.times[tau].get(solver) if ok else None for tau in taus}
        spread = reps.get(solver, {}).get(taus[-1], [])
        rows.append([solver, run["status"]] + [fmt(t[tau], "%.4g") for tau in taus]
                    + [("%s–%s" % (fmt(min(spread), "%.3g"), fmt(max(spread), "%.3g"))
                        if spread else "–")]
                    + [fmt(ratio(t[tau], a.times[tau].get("colmap-pick"))) for tau in taus]
                    + [fmt(ratio(t[tau], best[tau][0])) for tau in taus]
                    + [fmt(run.get("final_cost") if ok else None, "%.6e"),
                       fmt(run.get("iterations") if ok else None, "%d"),
                       fmt(run.get("solver_seconds") if ok else None, "%.4g"),
                       fmt(run.get("peak_rss_mib"), "%.0f")])
    lines += report.md_table(headers, rows)
    return lines


def make_report(out_dir, runs):
    results = analysis.analyse(out_dir, runs, TAUS)
    repeats = bench_io.read_repeats(os.path.join(out_dir, bench_io.REPEATS_FILE))
    notes = read_problem_notes(out_dir)
    machine = report.load_machine_info(out_dir)
    out = ["# COLMAP benchmark results", "", "## Machine", ""]
    out += report.md_table(("", ""), list(machine.items())) + [""]
    out += ["## Problems", "",
            "t τ: solver seconds (the binary's cumulative time) of the first iteration whose "
            "cost is ≤ f(τ) = f* + τ (f0 − f*), f* the best final cost of all solvers on the "
            "problem (∞: never reached); the representative of the repeats (the run closest to "
            "the per-iteration median). ×COLMAP pick, ×best 2.2: t τ over that of "
            "`colmap-pick` / of the fastest Ceres 2.2 solver at that τ (< 1: faster). Peak "
            "memory: ru_maxrss of the process.", ""]
    for result in results:
        out += problem_markdown(result, notes.get(result.name, {"colmap_choice": "?"}), repeats,
                                out_dir, "###") + [""]
    out += ["## Solver flags", ""]
    out += report.md_table(("solver", "build", "flags"), [
        (s.name, "Ceres 2.2" if s.build == CERES22 else "default (Debian's Ceres 2.1)",
         "`%s`" % " ".join(s.flags)) for s in SOLVERS])
    text = "\n".join(out) + "\n"
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(text)
    return text


def build_parser():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=DEFAULT_BINARY,
                        help="colmap_bundle_adjuster linked with the default Ceres (2.1)")
    parser.add_argument("--ceres22-binary", default=DEFAULT_CERES22_BINARY,
                        help="colmap_bundle_adjuster linked with Ceres 2.2")
    parser.add_argument("--scene-binary", default=DEFAULT_SCENE_BINARY,
                        help="make_colmap_scene")
    parser.add_argument("--colmap-dir", default=DEFAULT_COLMAP_DIR,
                        help="folder of the shared COLMAP models")
    parser.add_argument("--problems", default=",".join(SCENES),
                        help="comma-separated subset of: " + ", ".join(SCENES))
    parser.add_argument("--solvers", default=",".join(SOLVER_NAMES),
                        help="comma-separated subset of: " + ", ".join(SOLVER_NAMES))
    parser.add_argument("--num-iterations", type=int, default=8)
    parser.add_argument("--threads", type=int, default=run_benchmarks.available_cores())
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--first-repeat", type=int, default=1,
                        help="number of the first repeat (repeat-<i>/ folders), to add repeats "
                             "to an earlier run's folder afterwards (then --recover there)")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--lock", default=DEFAULT_LOCK if os.path.exists(DEFAULT_LOCK) else "",
                        help="file to hold an exclusive flock on during each run ('' for none)")
    parser.add_argument("--out", help="results folder (default results/colmap-<date>)")
    parser.add_argument("--report-only", action="store_true",
                        help="rebuild results.md from an existing --out folder")
    parser.add_argument("--recover", action="store_true",
                        help="after an interrupted run: rebuild runs.csv of --out from the runs "
                             "recorded in its repeats.csv, then the report")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    args.problems = [p for p in args.problems.split(",") if p]
    args.solvers = [s for s in args.solvers.split(",") if s]
    for p in args.problems:
        if p not in SCENES:
            sys.exit("unknown problem %r (known: %s)" % (p, ", ".join(SCENES)))
    for s in args.solvers:
        if s not in SOLVER_NAMES:
            sys.exit("unknown solver %r (known: %s)" % (s, ", ".join(SOLVER_NAMES)))
    out_dir = os.path.abspath(args.out or os.path.join(
        REPO_ROOT, "results", "colmap-" + datetime.date.today().isoformat()))
    if args.recover:
        runs = recover(out_dir)
    elif args.report_only:
        runs = bench_io.read_runs(os.path.join(out_dir, "runs.csv"))
    else:
        for path in (args.binary, args.ceres22_binary, args.scene_binary):
            if not os.path.exists(path):
                sys.exit("binary not found: %s (build it, see docs/benchmarks.md)" % path)
        os.makedirs(out_dir, exist_ok=True)
        info = report.collect_machine_info(args.threads, os.path.abspath(args.binary), REPO_ROOT,
                                           common_flags(args.num_iterations, args.threads))
        info["ceres 2.2 binary"] = os.path.relpath(os.path.abspath(args.ceres22_binary),
                                                   REPO_ROOT)
        info["repeats"] = args.repeat
        info["load average at start"] = " ".join("%.2f" % v for v in os.getloadavg())
        report.save_machine_info(out_dir, info)
        runs = run_all(args, out_dir)
        info["load average at end"] = " ".join("%.2f" % v for v in os.getloadavg())
        report.save_machine_info(out_dir, info)
    print(make_report(out_dir, runs))
    print("results in %s" % out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
