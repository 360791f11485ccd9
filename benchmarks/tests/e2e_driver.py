#!/usr/bin/python3
"""End-to-end test of the benchmark driver on one small problem.

Runs run_benchmarks.py (as a separate process, exactly as a user would) with
a reduced solver set and few iterations on ladybug-49 if the BAL file is
available (CERES_SQRTBA_BAL_DIR, else --default-bal-dir), otherwise on a
small synthetic problem; --update-docs goes to a copy of docs/benchmarks.md
inside the results folder.  Then check_results.py verifies the folder, and
the Ceres 2.2 output parser is checked against our binary's own progress
table and CSVs (the same formats; the CSVs are exact).
Used by ctest with the real bundle_adjuster and by test_driver_fake.py with
the fake one.

Ceres 2.2's example joins the solvers (ceres22-implicit) when --ceres22-binary
names one, or "auto" finds a completed build of scripts/build_ceres22.sh
(--if-built: a test never starts the half-hour build).
"""

import argparse
import math
import os
import shutil
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH_DIR)

import bench_io  # noqa: E402
import ceres22_output  # noqa: E402
import check_results  # noqa: E402

DRIVER = os.path.join(BENCH_DIR, "run_benchmarks.py")
BUILD_CERES22 = os.path.join(os.path.dirname(BENCH_DIR), "scripts", "build_ceres22.sh")
DOCS_PAGE = os.path.join(os.path.dirname(BENCH_DIR), "docs", "benchmarks.md")
E2E_PROBLEM = "problem-49-7776-pre"
E2E_BAL_FILE = E2E_PROBLEM + ".txt.bz2"
FALLBACK_SYNTHETIC = "20k"
DEFAULT_SOLVERS = "sqrt-single,sqrt-double,ceres-implicit"
CERES22_SOLVER = "ceres22-implicit"
DEFAULT_ITERATIONS = 10


def find_ceres22(option):
    """Path of Ceres 2.2's bundle_adjuster: the option itself, or with "auto" a
    completed build of scripts/build_ceres22.sh; None when there is none."""
    if option and option not in ("auto", "none"):
        return option
    if option != "auto":
        return None
    try:
        done = subprocess.run(["bash", BUILD_CERES22, "--if-built"], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    binary = os.path.join(done.stdout.strip(), "bin", "bundle_adjuster")
    return binary if done.returncode == 0 and os.path.isfile(binary) else None


def bal_dir_from_environment(default):
    """CERES_SQRTBA_BAL_DIR if set (as for the GoogleTest suite), else default."""
    return os.environ.get("CERES_SQRTBA_BAL_DIR") or default


def problem_args(bal_dir):
    """Driver flags selecting ladybug-49 if present, else a small synthetic problem."""
    if bal_dir and os.path.isfile(os.path.join(bal_dir, E2E_BAL_FILE)):
        return ["--bal-dir", bal_dir, "--problems", E2E_PROBLEM]
    return ["--no-bal", "--synthetic", FALLBACK_SYNTHETIC]


MARKER = ".e2e_driver"  # marks folders this script may empty again


def fresh_dir(path):
    """An empty results folder; only a folder made by this script is ever deleted."""
    if os.path.isdir(path) and os.listdir(path):
        if not os.path.isfile(os.path.join(path, MARKER)):
            raise SystemExit("refusing to empty %s: not made by %s" % (path, __file__))
        shutil.rmtree(path)
    os.makedirs(path, exist_ok=True)
    open(os.path.join(path, MARKER), "w").close()


def docs_copy(out_dir):
    """A copy of docs/benchmarks.md for --update-docs, so tests never edit the tree."""
    target = os.path.join(out_dir, "docs", "benchmarks.md")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy(DOCS_PAGE, target)
    return target


def run_driver(binary, out_dir, args, env=None):
    """run_benchmarks.py as a child process; returns the CompletedProcess.
    Without --ceres22-binary in args the ceres22-* solvers are not run (no
    test may start the Ceres 2.2 build), and the evaluator micro-benchmark
    is left out unless --kernels-binary is given."""
    args = list(args)
    if "--ceres22-binary" not in args:
        args += ["--ceres22-binary", "none"]
    if "--kernels-binary" not in args:
        args += ["--no-evaluator-benchmark"]
    command = [sys.executable, DRIVER, "--binary", binary, "--out", out_dir] + args
    return subprocess.run(command, capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))


def check_parser_on_own_logs(out_dir):
    """Errors of the Ceres 2.2 output parser on our binary's logs, which print
    Ceres' progress table and report: every row must agree with the exact
    CSVs (costs to the 7 printed digits, times to the 3 printed ones, the same
    accepted steps) and the report's total with the summary.  Logs without a
    table (a fake binary) are skipped."""
    errors = []
    for run in bench_io.read_runs(os.path.join(out_dir, "runs.csv")):
        if run["status"] != bench_io.STATUS_OK or not run["solver"].startswith("sqrt-"):
            continue
        try:
            output = ceres22_output.read(os.path.join(out_dir, run["log"]))
        except ceres22_output.ParseError:
            continue
        exact = bench_io.read_trace_rows(os.path.join(out_dir, run["trace"]))
        where = "parser on %s" % run["log"]
        if len(output.rows) != len(exact):
            errors.append("%s: %d rows, the CSV has %d" % (where, len(output.rows), len(exact)))
            continue
        for parsed, row in zip(output.rows, exact):
            for key, rtol, atol in (("cost", 5e-7, 0.0), ("cumulative_seconds", 5e-3, 5e-5)):
                if not check_results.close(parsed[key], row[key], rtol, atol):
                    errors.append("%s, iteration %d: %s %r, CSV %r"
                                  % (where, row["iteration"], key, parsed[key], row[key]))
            if parsed["step_accepted"] != row["step_accepted"] or \
                    parsed["linear_solver_iterations"] != row["linear_solver_iterations"]:
                errors.append("%s, iteration %d: accepted/ls_iter differ" % (where,
                                                                            row["iteration"]))
        if not math.isclose(output.report["total_seconds"], run["solver_seconds"],
                            rel_tol=1e-5, abs_tol=2e-6):
            errors.append("%s: total %r, summary %r" % (where, output.report["total_seconds"],
                                                         run["solver_seconds"]))
        for key in bench_io.PHASE_COLUMNS:
            if key in output.report and run.get(key) is not None and not math.isclose(
                    output.report[key], run[key], rel_tol=1e-5, abs_tol=2e-6):
                errors.append("%s: %s %r, summary %r" % (where, key, output.report[key],
                                                          run[key]))
    return errors


def run_e2e(binary, out_dir, bal_dir, solvers=DEFAULT_SOLVERS, iterations=DEFAULT_ITERATIONS,
            threads=2, require_ok=True, env=None, ceres22_binary=None, extra_args=()):
    """Driver then checker; returns (errors, warnings, driver CompletedProcess).
    With ceres22_binary, ceres22-implicit is added to the solvers."""
    fresh_dir(out_dir)
    docs = docs_copy(out_dir)
    if ceres22_binary:
        solvers += "," + CERES22_SOLVER
    args = problem_args(bal_dir) + ["--solvers", solvers, "--num-iterations", str(iterations),
                                    "--threads", str(threads), "--update-docs", "--docs", docs]
    if ceres22_binary:
        args += ["--ceres22-binary", ceres22_binary]
    completed = run_driver(binary, out_dir, args + list(extra_args), env)
    if completed.returncode != 0:
        return (["driver exited with %d" % completed.returncode], [], completed)
    errors, warnings = check_results.check(out_dir, require_ok=require_ok, docs_path=docs)
    return errors + check_parser_on_own_logs(out_dir), warnings, completed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="bundle_adjuster (or a fake *.py)")
    parser.add_argument("--out", required=True, help="results folder (emptied first)")
    parser.add_argument("--default-bal-dir", default="",
                        help="BAL folder if CERES_SQRTBA_BAL_DIR is not set")
    parser.add_argument("--solvers", default=DEFAULT_SOLVERS)
    parser.add_argument("--num-iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--ceres22-binary", default="auto",
                        help="Ceres 2.2's bundle_adjuster, 'auto' (a completed build of "
                             "scripts/build_ceres22.sh, never building) or 'none'")
    args = parser.parse_args(argv)
    ceres22 = find_ceres22(args.ceres22_binary)
    print("e2e: Ceres 2.2 binary: %s" % (ceres22 or "none"))
    errors, warnings, completed = run_e2e(
        args.binary, os.path.abspath(args.out), bal_dir_from_environment(args.default_bal_dir),
        args.solvers, args.num_iterations, args.threads, ceres22_binary=ceres22)
    sys.stdout.write(completed.stdout + completed.stderr)
    for line in warnings:
        print("warning: " + line)
    for line in errors:
        print("error: " + line)
    print("e2e: %d error(s), %d warning(s)" % (len(errors), len(warnings)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
