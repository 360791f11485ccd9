#!/usr/bin/python3
"""Benchmark driver: every BAL problem in a folder (and optional synthetic and
long-track sizes) through every solver configuration, each run in its own
process of the example binary or of Ceres 2.2's own bundle_adjuster; then
the evaluator micro-benchmark; then time-to-accuracy tables, performance
profiles, per-phase times, plots and the project's target checks.  See
docs/benchmarks.md.

Run with Debian's /usr/bin/python3 (it has matplotlib); only the standard
library is used otherwise.
"""

import argparse
import csv
import datetime
import math
import os
import shutil
import shlex
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import analysis  # noqa: E402
import bench_io  # noqa: E402
import evaluator_ratios  # noqa: E402
import problems  # noqa: E402
import report  # noqa: E402
import runner  # noqa: E402
import solvers  # noqa: E402
import targets  # noqa: E402

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BINARY = os.path.join(REPO_ROOT, "build", "examples", "bundle_adjuster")
DEFAULT_BAL_DIR = os.environ.get("CERES_SQRTBA_BAL_DIR") or os.path.normpath(
    os.path.join(REPO_ROOT, "..", "shared", "bal"))
DEFAULT_DOCS = os.path.join(REPO_ROOT, "docs", "benchmarks.md")
DEFAULT_SEED = 38401  # the example's (and Ceres' bundle_adjuster's) default seed
BUILD_CERES22 = os.path.join(REPO_ROOT, "scripts", "build_ceres22.sh")
DEFAULT_KERNELS_BINARY = os.path.join(REPO_ROOT, "build", "benchmarks", "kernels_benchmark")
INPUTS_DIR = "inputs"  # plain-text BAL files for Ceres 2.2, removed after each problem


def available_cores():
    """Cores this process may run on (respects taskset/cgroup affinity)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _csv_list(parse):
    """argparse type for comma-separated values, each parsed by `parse`."""
    def convert(text):
        try:
            return [parse(item.strip()) for item in text.split(",") if item.strip()]
        except (KeyError, ValueError) as error:
            raise argparse.ArgumentTypeError(str(error).strip("'\""))
    return convert


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1: %s" % text)
    return value


def _solver_epilog():
    """--help text listing the solver table, so the help never disagrees with it."""
    lines = ["every run of our binary gets: " + " ".join(solvers.common_flags("N", "T")),
             "every run of Ceres 2.2's gets: --input=<plain-text BAL> " + " ".join(
                 solvers.common_flags("N", "T", solvers.CERES22)), "solvers:"]
    marks = {solvers.CERES22: "[2.2] ", solvers.BASELINE: "[--baseline-binary] "}
    lines += ["  %-22s %s%s" % (s.name, marks.get(s.program, ""), " ".join(s.flags))
              for s in solvers.SOLVERS]
    return "\n".join(lines)


def build_parser():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=_solver_epilog())
    runs = parser.add_argument_group("what to run")
    runs.add_argument("--binary", default=DEFAULT_BINARY,
                      help="example binary (default: %(default)s); a *.py file runs "
                           "under this Python (test stand-ins)")
    runs.add_argument("--bal-dir", default=DEFAULT_BAL_DIR,
                      help="folder of BAL problems (*.txt, *.bal, optionally .bz2/.gz); "
                           "default $CERES_SQRTBA_BAL_DIR or ../shared/bal next to the "
                           "repository (%(default)s)")
    runs.add_argument("--no-bal", action="store_true",
                      help="run no BAL files (e.g. only --synthetic problems)")
    runs.add_argument("--problems", nargs="+", metavar="PATTERN",
                      help="only problems whose name matches a glob or contains a pattern, "
                           "e.g. --problems 'problem-49*' synthetic")
    runs.add_argument("--synthetic", type=_csv_list(problems.parse_count), default=[],
                      metavar="SIZES",
                      help="also run the binary's synthetic problem at these approximate "
                           "observation counts, e.g. 100k,1M (%d observations per point, "
                           "%d points per camera)" % (problems.SYNTHETIC_OBSERVATIONS_PER_POINT,
                                                       problems.SYNTHETIC_POINTS_PER_CAMERA))
    runs.add_argument("--long-track", type=_csv_list(problems.parse_count), default=[],
                      metavar="SIZES",
                      help="also run the synthetic problem with long tracks at these "
                           "approximate observation counts, e.g. 1M (%d cameras, every point "
                           "seen by %d to %d of them)" % (problems.LONG_TRACK_CAMERAS,
                                                          problems.LONG_TRACK_MIN_OBSERVATIONS,
                                                          problems.LONG_TRACK_MAX_OBSERVATIONS))
    runs.add_argument("--seed", type=int, default=DEFAULT_SEED,
                      help="--random_seed of synthetic problems (default %(default)s)")
    runs.add_argument("--solvers", type=_csv_list(lambda n: solvers.by_name(n).name),
                      default=list(solvers.DEFAULT_SOLVERS), metavar="NAMES",
                      help="comma-separated subset of the solvers below (default: %s)"
                           % ",".join(solvers.DEFAULT_SOLVERS))
    runs.add_argument("--ceres22-binary", metavar="PATH",
                      help="Ceres 2.2's bundle_adjuster for the ceres22-* solvers (default: "
                           "<prefix>/bin/bundle_adjuster of scripts/build_ceres22.sh, which "
                           "builds Ceres 2.2 once per machine, about 10 minutes, if it is not "
                           "cached yet); 'none': report the ceres22-* solvers as not run")
    runs.add_argument("--baseline-binary", metavar="PATH",
                      help="an earlier build of the example binary for the baseline-* "
                           "solvers (run with our flags, interleaved with ours: 'no slower "
                           "than before' within one run); without it they are not run")
    runs.add_argument("--keep-inputs", action="store_true",
                      help="keep the plain-text BAL files written for Ceres 2.2 (inputs/ in "
                           "the results folder; removed after each problem otherwise)")
    runs.add_argument("--threads", type=_positive_int, default=available_cores(),
                      help="--num_threads of every run (default: available cores, %(default)s)")
    runs.add_argument("--num-iterations", type=_positive_int,
                      default=solvers.DEFAULT_NUM_ITERATIONS,
                      help="--num_iterations of every run (default %(default)s)")
    runs.add_argument("--repeat", type=_positive_int, default=1, metavar="N",
                      help="run every (problem, solver) pair N times, solvers interleaved, "
                           "and keep the run whose trace is closest to the per-iteration "
                           "median (with 2, the faster; all runs are listed in repeats.csv; "
                           "this machine's timings vary by 5-10%%)")
    runs.add_argument("--timeout", type=float, default=3600.0,
                      help="seconds after which a run is killed and recorded as timeout "
                           "(default %(default)s; 0 = never)")
    runs.add_argument("--dry-run", action="store_true",
                      help="print the problems and the command of each run, run nothing")
    micro = parser.add_argument_group("evaluator micro-benchmark (after the runs)")
    micro.add_argument("--kernels-binary", default=DEFAULT_KERNELS_BINARY,
                       help="kernels_benchmark, whose Evaluate/ benchmarks give the evaluator "
                            "targets (default: %(default)s; skipped if it does not exist)")
    micro.add_argument("--no-evaluator-benchmark", action="store_true",
                       help="do not run it (its targets are then n/a)")
    micro.add_argument("--evaluator-repetitions", type=_positive_int,
                       default=evaluator_ratios.DEFAULT_REPETITIONS,
                       help="repetitions of each Evaluate/ benchmark (default %(default)s)")
    micro.add_argument("--evaluator-processes", type=_positive_int,
                       default=evaluator_ratios.DEFAULT_PROCESSES,
                       help="processes of the Evaluate/ benchmarks, one after the other; the "
                            "median over them is used (default %(default)s)")
    out = parser.add_argument_group("results")
    out.add_argument("--out", help="results folder (default: results/<date>_<time> in the "
                                   "repository)")
    out.add_argument("--report-only", action="store_true",
                     help="run nothing: rebuild the report and plots from --out's runs.csv "
                          "and traces/")
    out.add_argument("--update-docs", action="store_true",
                     help="also rewrite the results section of --docs and copy the plots "
                          "next to it")
    out.add_argument("--docs", default=DEFAULT_DOCS,
                     help="markdown page updated by --update-docs (default: %(default)s)")
    return parser


def collect_problems(args):
    """The problems to run, BAL files first (smallest first), then synthetic sizes."""
    found = [] if args.no_bal else problems.discover_bal(args.bal_dir)
    found += [problems.synthetic_problem(n, args.seed) for n in sorted(args.synthetic)]
    found += [problems.long_track_problem(n, args.seed) for n in sorted(args.long_track)]
    return problems.select(found, args.problems)


def default_out_dir():
    return os.path.join(REPO_ROOT, "results",
                        datetime.datetime.now().strftime("%Y-%m-%d_%H%M%S"))


def find_ceres22_binary(args, solver_names):
    """(path, note) of Ceres 2.2's bundle_adjuster: --ceres22-binary, else the
    one scripts/build_ceres22.sh builds (or has cached).  path None when it
    is not available (or not needed), note saying why."""
    if not any(solvers.program_of(n) == solvers.CERES22 for n in solver_names):
        return None, "no ceres22-* solver selected"
    if args.ceres22_binary:
        if args.ceres22_binary == "none":
            return None, "not run (--ceres22-binary none)"
        if not os.path.exists(args.ceres22_binary):
            return None, "not run: %s does not exist" % args.ceres22_binary
        return os.path.abspath(args.ceres22_binary), ""
    print("Ceres 2.2: running %s (builds Ceres 2.2 once per machine if it is not cached; "
          "about 10 minutes)" % os.path.relpath(BUILD_CERES22), flush=True)
    try:
        done = subprocess.run(["bash", BUILD_CERES22], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    except OSError as error:
        return None, "not run: cannot run build_ceres22.sh: %s" % error
    prefix = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    binary = os.path.join(prefix, "bin", "bundle_adjuster") if prefix else ""
    if done.returncode != 0 or not os.path.exists(binary):
        reason = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None, "not run: build_ceres22.sh failed (exit %d): %s" % (done.returncode, reason)
    return binary, ""


def _progress(index, total, run):
    detail = ("%.2f s, %.0f MiB" % (run["wall_seconds"], run["peak_rss_mib"])
              if run["status"] == bench_io.STATUS_OK else run["error"])
    print("[%d/%d] %s %s: %s (%s)" % (index, total, run["problem"], run["solver"],
                                      run["status"], detail), flush=True)


def representative(runs, traces=None):
    """The run that stands for repeated runs of one (problem, solver) pair: a failed
    or timed-out run if there is one (a pair that fails once is not reliable).
    Otherwise, with three or more repeats and their traces (per-iteration rows,
    in the order of runs), the run whose trace is closest to the per-iteration
    median (trace_distances; of equally close runs, the faster); without traces,
    or with fewer repeats, the run with the median solver time (the lower median
    for an even count).

    Why the trace: a trace is what t(tau) and the time at iteration 0 are read
    from, and a machine's hiccup at the start of one repeat delays every later
    iteration of that repeat without changing its total much; the run of median
    total time can be that repeat. The median over three repeats at every
    iteration is set by the undisturbed two, so the run closest to it is one of
    them."""
    bad = [r for r in runs if r["status"] != bench_io.STATUS_OK]
    if bad:
        return bad[0]
    by_time = sorted(runs, key=lambda r: r["solver_seconds"])
    if traces is not None and len(runs) >= 3:
        distances = trace_distances(traces)
        if distances is not None:
            best = min(range(len(runs)), key=lambda i: (distances[i], runs[i]["solver_seconds"]))
            return runs[best]
    return by_time[(len(by_time) - 1) // 2]


def trace_distances(traces):
    """Per trace, the mean over the iterations all traces reached of
    |ln(t_i / m_i)|, t_i its cumulative seconds at iteration i and m_i the
    median of the traces' at i; None if a trace is missing or has no positive
    time to compare."""
    if any(not rows for rows in traces):
        return None
    length = min(len(rows) for rows in traces)
    medians = [statistics.median(rows[i]["cumulative_seconds"] for rows in traces) for i in range(length)]
    used = [i for i in range(length)
            if medians[i] > 0 and all(rows[i]["cumulative_seconds"] > 0 for rows in traces)]
    if not used:
        return None
    return [statistics.fmean(abs(math.log(rows[i]["cumulative_seconds"] / medians[i])) for i in used)
            for rows in traces]


def _trace_rows(run_dir, run):
    """A run's per-iteration rows, None if its trace cannot be read."""
    try:
        return bench_io.read_trace_rows(os.path.join(run_dir, run["trace"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _copy_run_files(src_dir, run, out_dir):
    for key in ("trace", "summary", "log"):
        src = os.path.join(src_dir, run[key])
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(out_dir, run[key]))


def _common_flags(args):
    return {program: solvers.common_flags(args.num_iterations, args.threads, program)
            for program in (solvers.SQRTBA, solvers.CERES22, solvers.BASELINE)}


def find_baseline_binary(args, solver_names):
    """(path, note) of the earlier build for the baseline-* solvers; path None
    when it is not available (or not needed), note saying why."""
    if not any(solvers.program_of(n) == solvers.BASELINE for n in solver_names):
        return None, "no baseline-* solver selected"
    if not args.baseline_binary:
        return None, "not run: no --baseline-binary given"
    if not os.path.exists(args.baseline_binary):
        return None, "not run: --baseline-binary %s does not exist" % args.baseline_binary
    return os.path.abspath(args.baseline_binary), ""


def _prepare_input(args, problem, out_dir, names, ceres22_binary):
    """(plain-text BAL path or None, error) for the problem's Ceres 2.2 runs."""
    if ceres22_binary is None or not any(
            solvers.program_of(n) == solvers.CERES22 for n in names):
        return None, ""
    try:
        return problems.prepare_plain_bal(problem, os.path.join(out_dir, INPUTS_DIR),
                                          args.binary, args.timeout or None), ""
    except (OSError, ValueError, EOFError) as error:
        return None, "no plain-text BAL file for Ceres 2.2: %s" % error


def run_all(args, problem_list, out_dir):
    """Run every (problem, solver) pair; runs.csv is rewritten after each run so
    an interrupted benchmark still leaves a usable (partial) results folder.
    With --repeat N every pair runs N times (round robin over the solvers, so
    that a slow spell of the machine hits all of them), each repetition in
    repeat-<i>/, and the representative run's files are copied to traces/.
    Ceres 2.2's runs read a plain-text BAL file written into inputs/ before
    the problem's runs and removed after them (--keep-inputs keeps it)."""
    os.makedirs(os.path.join(out_dir, runner.TRACES_DIR), exist_ok=True)
    common = _common_flags(args)
    ceres22_binary, ceres22_note = find_ceres22_binary(args, args.solvers)
    if ceres22_note and ceres22_binary is None and "selected" not in ceres22_note:
        print("Ceres 2.2: %s" % ceres22_note, flush=True)
    baseline_binary, baseline_note = find_baseline_binary(args, args.solvers)
    binaries = {solvers.SQRTBA: args.binary, solvers.CERES22: ceres22_binary,
                solvers.BASELINE: baseline_binary}
    notes = {solvers.CERES22: ceres22_note, solvers.BASELINE: baseline_note}
    machine = report.collect_machine_info(
        args.threads, os.path.abspath(args.binary), REPO_ROOT, common[solvers.SQRTBA],
        ceres22_binary, common[solvers.CERES22], ceres22_note)
    if baseline_binary:
        machine["baseline binary"] = report.describe_baseline(baseline_binary, REPO_ROOT)
    report.save_machine_info(out_dir, machine)
    repeat = args.repeat
    total = len(problem_list) * len(args.solvers) * repeat
    runs, all_runs, index = [], [], 0
    for problem in problem_list:
        tries = {name: [] for name in args.solvers}
        plain_bal, input_error = _prepare_input(args, problem, out_dir, args.solvers,
                                                ceres22_binary)
        for rep in range(1, repeat + 1):
            run_dir = out_dir if repeat == 1 else os.path.join(out_dir, "repeat-%d" % rep)
            os.makedirs(os.path.join(run_dir, runner.TRACES_DIR), exist_ok=True)
            for name in args.solvers:
                solver = solvers.by_name(name)
                binary = binaries[solver.program]
                if binary is None:
                    run = runner.not_run(problem, solver, args.threads, notes.get(solver.program, ""))
                elif solver.program == solvers.CERES22 and plain_bal is None:
                    run = runner.not_run(problem, solver, args.threads, input_error,
                                         bench_io.STATUS_FAILED)
                else:
                    run = runner.run_one(binary, problem, solver, common[solver.program],
                                         run_dir, args.threads, args.timeout or None, plain_bal)
                tries[name].append((rep, run_dir, run))
                index += 1
                _progress(index, total, run)
        if not args.keep_inputs:
            problems.remove_plain_bal(problem, plain_bal)
        for name in args.solvers:
            tried = tries[name]
            chosen = representative([run for _, _, run in tried],
                                    [_trace_rows(run_dir, run) for _, run_dir, run in tried])
            for rep, run_dir, run in tried:
                all_runs.append(dict(run, repeat=rep, chosen=int(run is chosen)))
                if run is chosen and run_dir != out_dir:
                    _copy_run_files(run_dir, run, out_dir)
            runs.append(chosen)
        bench_io.write_runs(os.path.join(out_dir, "runs.csv"), runs)
        if repeat > 1:
            _write_repeats(os.path.join(out_dir, bench_io.REPEATS_FILE), all_runs)
    inputs = os.path.join(out_dir, INPUTS_DIR)
    if os.path.isdir(inputs) and not os.listdir(inputs):
        os.rmdir(inputs)
    return runs


def _write_repeats(path, all_runs):
    fields = ["problem", "solver", "repeat", "chosen", "status", "solver_seconds",
              "wall_seconds", "peak_rss_mib", "final_cost"]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for run in all_runs:
            writer.writerow(run)


def run_evaluator_benchmark(args, out_dir):
    """The Evaluate/ micro-benchmarks into evaluator_benchmark.json (after all
    solver runs, never beside them); skipped when there is no binary."""
    if args.no_evaluator_benchmark:
        return
    if not os.path.exists(args.kernels_binary):
        print("evaluator micro-benchmark skipped: %s not found" % args.kernels_binary)
        return
    print("evaluator micro-benchmark: %s --benchmark_filter=%s, %d processes (about 3 minutes each)"
          % (args.kernels_binary, evaluator_ratios.FILTER, args.evaluator_processes), flush=True)
    try:
        evaluator_ratios.run_benchmark(args.kernels_binary,
                                       os.path.join(out_dir, evaluator_ratios.JSON_NAME),
                                       args.evaluator_repetitions,
                                       processes=args.evaluator_processes)
    except (OSError, subprocess.SubprocessError) as error:
        print("evaluator micro-benchmark failed: %s" % error)


def make_report(out_dir, runs, docs_path=None):
    """Analyse runs, write plots, results.md, time_to_tau.csv and targets.csv,
    print the target checks; with docs_path also update the docs' results
    section (results and plots, without the target checks)."""
    import plots  # matplotlib only now: see the note in runner.execute on peak memory

    results = analysis.analyse(out_dir, runs)
    solver_names = analysis.solvers_run(results)
    evaluator_rows = evaluator_ratios.load(os.path.join(out_dir, evaluator_ratios.JSON_NAME))
    target_results = targets.evaluate_all(results, evaluator_rows)
    images = plots.plot_all(results, solver_names, out_dir)
    machine = report.load_machine_info(out_dir)

    def render(**layout):
        return report.results_markdown(results, target_results, machine, images,
                                       solver_names, evaluator_rows=evaluator_rows, **layout)

    markdown = render()
    report.write_results_md(out_dir, markdown)
    report.write_time_to_tau_csv(out_dir, results)
    report.write_targets_csv(out_dir, target_results)
    print("\n".join(report.targets_table(target_results)))
    if docs_path:  # embedded under the page's "## Results" heading, results only
        report.update_docs(docs_path, out_dir, images,
                           lambda image_dir: render(level=2, image_dir=image_dir, title=None,
                                                    with_targets=False))
        print("updated %s" % docs_path)


def _dry_run(args, problem_list):
    common = _common_flags(args)
    ceres22 = args.ceres22_binary or "<ceres-2.2 prefix>/bin/bundle_adjuster"
    binaries = {solvers.SQRTBA: args.binary, solvers.CERES22: ceres22,
                solvers.BASELINE: args.baseline_binary or "<--baseline-binary>"}
    for problem in problem_list:
        plain_bal = problems.plain_bal_path(problem, os.path.join(args.out or "<out>", INPUTS_DIR))
        for name in args.solvers:
            solver = solvers.by_name(name)
            print(shlex.join(runner.build_command(binaries[solver.program], problem, solver,
                                                  common[solver.program],
                                                  plain_bal=plain_bal)))


def parse_args(argv):
    """Parsed arguments, with the checks argparse cannot express."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.report_only and not args.out:
        parser.error("--report-only needs --out (the results folder to re-analyse)")
    if not args.solvers:
        parser.error("--solvers: no solver given")
    return args


def main(argv=None):
    args = parse_args(argv)
    out_dir = os.path.abspath(args.out or default_out_dir())
    if args.report_only:
        runs = bench_io.read_runs(os.path.join(out_dir, "runs.csv"))
    else:
        problem_list = collect_problems(args)
        if not problem_list:
            sys.exit("no problems: no BAL files in %s and no --synthetic sizes (or none "
                     "matched --problems)" % args.bal_dir)
        if args.dry_run:
            _dry_run(args, problem_list)
            return 0
        if not os.path.exists(args.binary):
            sys.exit("binary not found: %s (build it, or pass --binary)" % args.binary)
        runs = run_all(args, problem_list, out_dir)
        run_evaluator_benchmark(args, out_dir)
    make_report(out_dir, runs, args.docs if args.update_docs else None)
    failed = sum(1 for r in runs if r["status"] not in (bench_io.STATUS_OK,
                                                        bench_io.STATUS_NOT_RUN))
    not_run = sum(1 for r in runs if r["status"] == bench_io.STATUS_NOT_RUN)
    print("%d runs, %d failed, %d not run; results in %s" % (len(runs), failed, not_run,
                                                              out_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
