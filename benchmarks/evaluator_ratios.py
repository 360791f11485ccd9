#!/usr/bin/python3
"""The evaluator against its floor: runs the Evaluate/ micro-benchmarks of
build/benchmarks/kernels_benchmark (or reads their JSON output) and prints
the ratios table of docs/benchmarks.md.

    /usr/bin/python3 benchmarks/evaluator_ratios.py [--binary build/benchmarks/kernels_benchmark]
    /usr/bin/python3 benchmarks/evaluator_ratios.py --json results/.../evaluator_benchmark.json

For every problem and thread count: the floor (the user's cost and loss
functions alone, kernels_benchmark.cc) and the evaluator's residual pass
(Evaluator::EvaluateCost) and Jacobian pass (Evaluator::EvaluateJacobian with
the gradient and the default linear solver's writer, single and double
precision), real time per pass, and evaluator / floor; and, as a yardstick,
Ceres' own evaluator on the same problem (residual pass and Jacobian pass as
ceres::Solve times them for ITERATIVE_SCHUR, the Ceres kernels_benchmark is
linked with) against the same floor.  Repetitions are
interleaved at random (Google Benchmark's random interleaving) and the
medians are used, so that a slow spell of the machine hits floor and
evaluator alike.  The benchmark runs in several processes (3 by default), one
after the other, and a pass's time is the median of the processes' medians:
one process gives every row a single memory layout and code placement of
the problem, and runs of one binary moved a row by up to 0.1 from one
process to the next.  The run takes about 3 minutes per process.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BINARY = os.path.join(REPO_ROOT, "build", "benchmarks", "kernels_benchmark")
FILTER = "^Evaluate/"
DEFAULT_REPETITIONS = 5
DEFAULT_PROCESSES = 3
JSON_NAME = "evaluator_benchmark.json"

_NAME = re.compile(r"^Evaluate/([^/]+)/([^/]+)/threads:(\d+)")
_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}

# (column, numerator pass, denominator pass)
RATIOS = (("residual", "evaluator_cost", "floor_residuals"),
          ("float_floor_speedup", "floor_jacobians", "floor_float_jacobians"),
          ("jacobian_single", "evaluator_jacobian_single", "floor_float_jacobians"),
          ("jacobian_single_speedup", "evaluator_jacobian_single_double_jacobians",
           "evaluator_jacobian_single"),
          ("jacobian_double", "evaluator_jacobian_double", "floor_jacobians"),
          ("ceres_residual", "ceres_cost", "floor_residuals"),
          ("ceres_jacobian_ratio", "ceres_jacobian", "floor_jacobians"))
PROBLEM_ORDER = ("bal", "synthetic", "manifold")
PASSES = ("floor_residuals", "evaluator_cost", "floor_jacobians", "floor_float_jacobians",
          "evaluator_jacobian_single", "evaluator_jacobian_single_double_jacobians",
          "evaluator_jacobian_double",
          "ceres_cost", "ceres_jacobian")


def run_benchmark(binary, json_path, repetitions=DEFAULT_REPETITIONS, min_time=None,
                  timeout=1800, processes=DEFAULT_PROCESSES):
    """Run the Evaluate/ benchmarks in `processes` processes, one after the
    other; their JSON documents are written to json_path as one, every
    benchmark entry tagged with its "process" (0, 1, ...).  CalledProcessError
    or OSError when a run fails."""
    command = [binary, "--benchmark_filter=" + FILTER,
               "--benchmark_repetitions=%d" % repetitions,
               "--benchmark_enable_random_interleaving=true",
               "--benchmark_report_aggregates_only=true",
               "--benchmark_out_format=json"]
    if min_time:
        command.append("--benchmark_min_time=%g" % min_time)
    combined = None
    for process in range(max(1, processes)):
        handle, part = tempfile.mkstemp(suffix=".json")
        os.close(handle)
        try:
            subprocess.run(command + ["--benchmark_out=" + part], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
            with open(part) as f:
                data = json.load(f)
        finally:
            os.remove(part)
        for b in data.get("benchmarks", []):
            b["process"] = process
        if combined is None:
            combined = data
        else:
            combined["benchmarks"].extend(data.get("benchmarks", []))
    with open(json_path, "w") as f:
        json.dump(combined, f, indent=1)
    return json_path


def _median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else 0.5 * (ordered[middle - 1] + ordered[middle])


def times_ms(data):
    """{(problem, pass, threads): real time per pass in ms} of a Google
    Benchmark JSON document (or of run_benchmark's processes): per process
    the median aggregate where there is one, the single run otherwise; then
    the median over the processes (entries without "process" are one)."""
    per_process = {}  # (key, process) -> value, in the order of the file
    for b in data.get("benchmarks", []):
        match = _NAME.match(b.get("run_name") or b.get("name", ""))
        if not match or "real_time" not in b:
            continue
        key = ((match.group(1), match.group(2), int(match.group(3))), b.get("process", 0))
        value = b["real_time"] * _TO_MS.get(b.get("time_unit", "ns"), 1e-6)
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                per_process[key] = value  # a median replaces a single run
        elif key not in per_process:
            per_process[key] = value
    collected = {}
    for (key, _), value in per_process.items():
        collected.setdefault(key, []).append(value)
    return {key: _median(values) for key, values in collected.items()}


def ratio_rows(data):
    """One row per (problem, threads): the pass times (ms) and the ratios
    (None where a pass is missing), in PROBLEM_ORDER and by threads."""
    times = times_ms(data)
    keys = []
    for problem, _, threads in times:
        if (problem, threads) not in keys:
            keys.append((problem, threads))
    # The benchmark's problem order (random interleaving shuffles the file),
    # then threads.
    keys.sort(key=lambda k: (PROBLEM_ORDER.index(k[0]) if k[0] in PROBLEM_ORDER
                             else len(PROBLEM_ORDER), k[0], k[1]))
    rows = []
    for problem, threads in keys:
        row = {"problem": problem, "threads": threads}
        for p in PASSES:
            row[p] = times.get((problem, p, threads))
        for column, numerator, denominator in RATIOS:
            a, b = row[numerator], row[denominator]
            row[column] = a / b if a is not None and b else None
        rows.append(row)
    return rows


def load(json_path):
    """ratio_rows of a JSON file; None if it is missing or unreadable."""
    try:
        with open(json_path) as f:
            return ratio_rows(json.load(f))
    except (OSError, ValueError):
        return None


HEADERS = ("problem", "threads", "floor, residuals [ms]", "residual pass [ms]",
           "residual / floor", "floor, Jacobians [ms]", "floor, float Jacobians [ms]",
           "floor double / float", "Jacobian pass, single [ms]", "Jacobian single / float floor",
           "Jacobian pass, single, double Jacobians [ms]", "single: double Jacobians / float",
           "Jacobian pass, double [ms]", "Jacobian double / floor",
           "Ceres' residual pass [ms]", "Ceres' residual / floor", "Ceres' Jacobian pass [ms]",
           "Ceres' Jacobian / floor")


def _fmt(value, spec):
    return "–" if value is None else spec % value


def table_rows(rows):
    """Cells of the markdown table, in HEADERS order."""
    return [[row["problem"], str(row["threads"]),
             _fmt(row["floor_residuals"], "%.3g"), _fmt(row["evaluator_cost"], "%.3g"),
             _fmt(row["residual"], "%.2f"),
             _fmt(row["floor_jacobians"], "%.3g"), _fmt(row["floor_float_jacobians"], "%.3g"),
             _fmt(row["float_floor_speedup"], "%.2f"),
             _fmt(row["evaluator_jacobian_single"], "%.3g"), _fmt(row["jacobian_single"], "%.2f"),
             _fmt(row["evaluator_jacobian_single_double_jacobians"], "%.3g"),
             _fmt(row["jacobian_single_speedup"], "%.2f"),
             _fmt(row["evaluator_jacobian_double"], "%.3g"), _fmt(row["jacobian_double"], "%.2f"),
             _fmt(row["ceres_cost"], "%.3g"), _fmt(row["ceres_residual"], "%.2f"),
             _fmt(row["ceres_jacobian"], "%.3g"), _fmt(row["ceres_jacobian_ratio"], "%.2f")]
            for row in rows]


def markdown(rows):
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=DEFAULT_BINARY,
                        help="kernels_benchmark (default: %(default)s)")
    parser.add_argument("--json", help="read this JSON output instead of running")
    parser.add_argument("--out", help="keep the JSON output of the run in this file "
                                      "(default: a temporary file, removed)")
    parser.add_argument("--repetitions", type=int, default=DEFAULT_REPETITIONS)
    parser.add_argument("--processes", type=int, default=DEFAULT_PROCESSES,
                        help="processes run one after the other (default %(default)s)")
    parser.add_argument("--min-time", type=float,
                        help="--benchmark_min_time of each repetition (seconds)")
    args = parser.parse_args(argv)
    path = args.json
    if path is None:
        if args.out:
            path = args.out
        else:
            handle, path = tempfile.mkstemp(suffix=".json")
            os.close(handle)
        try:
            run_benchmark(args.binary, path, args.repetitions, args.min_time,
                          processes=args.processes)
        except (OSError, subprocess.SubprocessError) as error:
            sys.exit("kernels_benchmark failed: %s" % error)
    rows = load(path)
    if args.json is None and args.out is None:
        os.remove(path)
    if not rows:
        sys.exit("no Evaluate/ benchmarks in %s" % path)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
