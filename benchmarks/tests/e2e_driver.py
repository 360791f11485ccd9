#!/usr/bin/python3
"""End-to-end test of the benchmark driver on one small problem.

Runs run_benchmarks.py (as a separate process, exactly as a user would) with
a reduced solver set and few iterations on ladybug-49 if the BAL file is
available (CERES_SQRTBA_BAL_DIR, else --default-bal-dir), otherwise on a
small synthetic problem; --update-docs goes to a copy of docs/benchmarks.md
inside the results folder.  Then check_results.py verifies the folder.
Used by ctest with the real bundle_adjuster and by test_driver_fake.py with
the fake one.
"""

import argparse
import os
import shutil
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH_DIR)

import check_results  # noqa: E402

DRIVER = os.path.join(BENCH_DIR, "run_benchmarks.py")
DOCS_PAGE = os.path.join(os.path.dirname(BENCH_DIR), "docs", "benchmarks.md")
E2E_PROBLEM = "problem-49-7776-pre"
E2E_BAL_FILE = E2E_PROBLEM + ".txt.bz2"
FALLBACK_SYNTHETIC = "20k"
DEFAULT_SOLVERS = "sqrt-single,sqrt-double,ceres-implicit"
DEFAULT_ITERATIONS = 10


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
    """run_benchmarks.py as a child process; returns the CompletedProcess."""
    command = [sys.executable, DRIVER, "--binary", binary, "--out", out_dir] + list(args)
    return subprocess.run(command, capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))


def run_e2e(binary, out_dir, bal_dir, solvers=DEFAULT_SOLVERS, iterations=DEFAULT_ITERATIONS,
            threads=2, require_ok=True, env=None):
    """Driver then checker; returns (errors, warnings, driver CompletedProcess)."""
    fresh_dir(out_dir)
    docs = docs_copy(out_dir)
    args = problem_args(bal_dir) + ["--solvers", solvers, "--num-iterations", str(iterations),
                                    "--threads", str(threads), "--update-docs", "--docs", docs]
    completed = run_driver(binary, out_dir, args, env)
    if completed.returncode != 0:
        return (["driver exited with %d" % completed.returncode], [], completed)
    errors, warnings = check_results.check(out_dir, require_ok=require_ok, docs_path=docs)
    return errors, warnings, completed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="bundle_adjuster (or a fake *.py)")
    parser.add_argument("--out", required=True, help="results folder (emptied first)")
    parser.add_argument("--default-bal-dir", default="",
                        help="BAL folder if CERES_SQRTBA_BAL_DIR is not set")
    parser.add_argument("--solvers", default=DEFAULT_SOLVERS)
    parser.add_argument("--num-iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    errors, warnings, completed = run_e2e(
        args.binary, os.path.abspath(args.out), bal_dir_from_environment(args.default_bal_dir),
        args.solvers, args.num_iterations, args.threads)
    sys.stdout.write(completed.stdout + completed.stderr)
    for line in warnings:
        print("warning: " + line)
    for line in errors:
        print("error: " + line)
    print("e2e: %d error(s), %d warning(s)" % (len(errors), len(warnings)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
