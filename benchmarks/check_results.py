#!/usr/bin/python3
"""Check a results folder written by run_benchmarks.py.

Verifies that results.md, runs.csv and the PNG figures exist, and that every
number in results.md's per-problem tables agrees with runs.csv and with the
times to each tau recomputed here from the raw trace CSVs (not from the
driver's analysis module).  Used by the ctest end-to-end test; also useful
after a long benchmark.  Exit status 0 if all checks pass.
"""

import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_io  # noqa: E402
import perf_profiles  # noqa: E402
import report  # noqa: E402
import solvers  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Relative tolerances matching the report's number formats (4 and 3
# significant digits, 7 for costs); memory is printed with one decimal.
TIME_RTOL, RATIO_RTOL, COST_RTOL, MEMORY_ATOL = 1e-3, 5e-3, 1e-6, 0.051


def close(a, b, rtol=0.0, atol=0.0):
    """a ~ b, where both infinite (same sign) or both missing also agree."""
    if a is None or b is None:
        return a is None and b is None
    if math.isinf(a) or math.isinf(b) or math.isnan(a) or math.isnan(b):
        return a == b or (math.isnan(a) and math.isnan(b))
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def problem_tables(markdown):
    """{problem name: [tables under its '### name' heading]} of results.md: the
    per-solver table first, then (if there is one) the per-phase table."""
    sections, name, lines = {}, None, []
    for line in markdown.splitlines() + ["## end"]:
        if line.startswith("## ") or line.startswith("### "):
            if name is not None:
                sections[name] = report.parse_md_tables("\n".join(lines))
            name = line[4:].strip() if line.startswith("### ") else None
            lines = []
        else:
            lines.append(line)
    return sections


def problem_sections(markdown):
    """{problem name: first table under its '### name' heading} of results.md."""
    return {name: (tables[0] if tables else []) for name, tables in problem_tables(markdown).items()}


def recompute(out_dir, runs):
    """{problem: ProblemAnalysis} straight from the trace files of ok runs."""
    by_problem = {}
    for run in runs:
        trace = None
        if run["status"] == bench_io.STATUS_OK:
            trace = bench_io.read_trace(os.path.join(out_dir, run["trace"]))
        by_problem.setdefault(run["problem"], {})[run["solver"]] = trace
    return {p: perf_profiles.analyse_problem(traces) for p, traces in by_problem.items()}


def first_row_seconds(out_dir, run):
    """Cumulative seconds of the trace's iteration-0 row (ok runs), else None."""
    if run["status"] != bench_io.STATUS_OK:
        return None
    rows = bench_io.read_trace_rows(os.path.join(out_dir, run["trace"]))
    return rows[0]["cumulative_seconds"] if rows[0]["iteration"] == 0 else None


def reference_times(runs_of_problem, times):
    """Fastest Ceres 2.2 time among the solvers of that family that ran; None
    if none ran."""
    ran = [r["solver"] for r in runs_of_problem
           if r["status"] != bench_io.STATUS_NOT_RUN and r["solver"] in solvers.solver_names()
           and solvers.by_name(r["solver"]).family == solvers.REFERENCE_FAMILY]
    return min((times[s] for s in ran), default=None)


def _check_png(path, errors):
    try:
        with open(path, "rb") as f:
            ok = f.read(8) == PNG_MAGIC
    except OSError:
        ok = False
    if not ok:
        errors.append("missing or not a PNG: %s" % path)


def check_files(out_dir, runs, errors):
    """The report, machine info, every run's files and the expected figures exist."""
    for name in ("results.md", "runs.csv", report.MACHINE_JSON, "time_to_tau.csv", "targets.csv"):
        if not os.path.isfile(os.path.join(out_dir, name)):
            errors.append("missing %s" % name)
    for run in runs:
        if run["status"] == bench_io.STATUS_OK:
            for key in ("trace", "summary"):
                if not os.path.isfile(os.path.join(out_dir, run[key])):
                    errors.append("missing %s of an ok run: %s" % (key, run[key]))
    problems = {r["problem"] for r in runs}
    for png in [report.PROFILES_PNG, report.MEMORY_PNG] + [
            report.convergence_png(p) for p in sorted(problems)]:
        _check_png(os.path.join(out_dir, png), errors)
    synthetic_sizes = {r["num_observations"] for r in runs
                       if r["kind"] == "synthetic" and r["status"] == bench_io.STATUS_OK}
    if len(synthetic_sizes) >= 2:
        _check_png(os.path.join(out_dir, report.SCALING_PNG), errors)
    for p in sorted({r["problem"] for r in runs if r["status"] == bench_io.STATUS_OK
                     and r.get("linear_solver_seconds") is not None}):
        _check_png(os.path.join(out_dir, report.phases_png(p)), errors)


def _expected_cells(out_dir, run, runs_of_problem, analysis, taus):
    """(header, expected value, rtol, atol) of one run's row in its problem table."""
    times = analysis.times
    ran = run["status"] != bench_io.STATUS_NOT_RUN
    reference = {tau: reference_times(runs_of_problem, times[tau]) for tau in taus}
    cells = [(report.ITERATION_ZERO_HEADER, first_row_seconds(out_dir, run), TIME_RTOL, 0.0)]
    cells += [(report.time_header(tau), times[tau][run["solver"]] if ran else None, TIME_RTOL,
               0.0) for tau in taus]
    cells += [(report.ratio_header(tau),
               None if reference[tau] is None or not ran else _nan_to_none(
                   perf_profiles.time_ratio(times[tau][run["solver"]], reference[tau])),
               RATIO_RTOL, 0.0) for tau in taus]
    ok = run["status"] == bench_io.STATUS_OK
    tolerances = {"final_cost": (COST_RTOL, 0.0), "peak_rss_mib": (0.0, MEMORY_ATOL)}
    for header, key, _ in report.RUN_STAT_COLUMNS:
        rtol, atol = tolerances.get(key, (0.0, 0.0))
        value = run.get(key) if ok else None
        if key == "precision_switch_iteration" and value is not None and value < 0:
            value = None  # shown as "never"
        cells.append((header, value, rtol, atol))
    cells.append((report.WALL_HEADER, run["wall_seconds"], TIME_RTOL, 0.0))
    return cells


def check_phase_table(tables, run, where, errors):
    """The run's row of the per-phase table agrees with runs.csv (ok runs with
    a breakdown have exactly one row; others none)."""
    phase_table = tables[1] if len(tables) > 1 else []
    rows = [r for r in phase_table if r.get("solver") == run["solver"]]
    parts = [run.get(key) for key in ("residual_evaluation_seconds",
                                      "jacobian_evaluation_seconds", "linear_solver_seconds")]
    has = run["status"] == bench_io.STATUS_OK and run.get("solver_seconds") is not None \
        and all(p is not None for p in parts)
    if not has:
        if rows:
            errors.append("%s: a phase row without a breakdown in runs.csv" % where)
        return
    if len(rows) != 1:
        errors.append("%s: %d rows in the phase table (expected 1)" % (where, len(rows)))
        return
    total = run["solver_seconds"]
    expected = parts + [max(0.0, total - sum(parts)), total]
    for header, value in zip(report.PHASE_HEADERS, expected):
        try:
            shown = report.parse_number(rows[0][header])
        except (KeyError, ValueError):
            errors.append("%s: phase column %r missing or not a number" % (where, header))
            continue
        # 4 significant digits, or the 1e-6 s resolution of Ceres' report.
        if not close(shown, value, TIME_RTOL, 2e-6):
            errors.append("%s: phase %s shows %s, expected %r" % (where, header,
                                                                  rows[0][header], value))


def _nan_to_none(value):
    return None if value is not None and math.isnan(value) else value


def check_tables(out_dir, markdown, runs, analyses, errors):
    """Every run has a row in its problem's table, and every cell agrees; the
    same for the per-phase table."""
    all_tables = problem_tables(markdown)
    for run in runs:
        tables = all_tables.get(run["problem"], [])
        rows = [r for r in (tables[0] if tables else []) if r.get("solver") == run["solver"]]
        where = "%s/%s" % (run["problem"], run["solver"])
        if len(rows) != 1:
            errors.append("%s: %d rows in results.md (expected 1)" % (where, len(rows)))
            continue
        row = rows[0]
        if row.get("status") != run["status"]:
            errors.append("%s: status %r, runs.csv says %r"
                          % (where, row.get("status"), run["status"]))
        taus = sorted(analyses[run["problem"]].times, reverse=True)
        check_phase_table(tables, run, where, errors)
        same_problem = [r for r in runs if r["problem"] == run["problem"]]
        for header, expected, rtol, atol in _expected_cells(out_dir, run, same_problem,
                                                            analyses[run["problem"]], taus):
            try:
                shown = report.parse_number(row[header])
            except (KeyError, ValueError):
                errors.append("%s: column %r missing or not a number" % (where, header))
                continue
            if not close(shown, expected, rtol, atol):
                errors.append("%s: %s shows %s, expected %r"
                              % (where, header, row[header], expected))


def check_consistency(out_dir, runs, warnings):
    """The binary's summary agrees with its own trace (first and last cost)."""
    for run in runs:
        if run["status"] != bench_io.STATUS_OK:
            continue
        trace = bench_io.read_trace(os.path.join(out_dir, run["trace"]))
        for key, cost in (("initial_cost", trace[0][1]), ("final_cost", trace[-1][1])):
            if not close(run[key], cost, 1e-6):
                warnings.append("%s/%s: summary %s %r but trace says %r"
                                % (run["problem"], run["solver"], key, run[key], cost))


def check_docs(docs_path, errors):
    """Every image linked in the docs' results section exists."""
    with open(docs_path) as f:
        text = f.read()
    begin, end = text.find(report.DOCS_BEGIN), text.find(report.DOCS_END)
    if begin < 0 or end < begin:
        errors.append("%s: results markers missing" % docs_path)
        return
    for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text[begin:end]):
        _check_png(os.path.join(os.path.dirname(docs_path), link), errors)


def check(out_dir, require_ok=False, docs_path=None):
    """(errors, warnings) of a results folder; no errors means it is consistent."""
    errors, warnings = [], []
    try:
        runs = bench_io.read_runs(os.path.join(out_dir, "runs.csv"))
        with open(os.path.join(out_dir, "results.md")) as f:
            markdown = f.read()
    except (OSError, ValueError) as error:
        return ["cannot read results: %s" % error], warnings
    if not runs:
        errors.append("runs.csv has no runs")
    if require_ok:
        errors += ["%s/%s: %s (%s)" % (r["problem"], r["solver"], r["status"], r["error"])
                   for r in runs if r["status"] != bench_io.STATUS_OK]
    check_files(out_dir, runs, errors)
    try:
        analyses = recompute(out_dir, runs)
    except (OSError, ValueError) as error:
        return errors + ["cannot read traces: %s" % error], warnings
    check_tables(out_dir, markdown, runs, analyses, errors)
    check_consistency(out_dir, runs, warnings)
    if docs_path:
        check_docs(docs_path, errors)
    return errors, warnings


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="results folder (contains runs.csv)")
    parser.add_argument("--require-ok", action="store_true",
                        help="also fail if any run failed, timed out or was not run")
    parser.add_argument("--docs", help="also check the image links of this docs page")
    args = parser.parse_args(argv)
    errors, warnings = check(args.results, args.require_ok, args.docs)
    for line in warnings:
        print("warning: " + line)
    for line in errors:
        print("error: " + line)
    print("%s: %d error(s), %d warning(s)" % (args.results, len(errors), len(warnings)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
