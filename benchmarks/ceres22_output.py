"""What Ceres 2.2's examples/bundle_adjuster prints, read into the driver's
trace and summary structures.

That binary writes no CSV.  With minimizer_progress_to_stdout (always on in
the example) Ceres prints one row per minimizer iteration,

    iter      cost      cost_change  |gradient|   |step|    tr_ratio  tr_radius  ls_iter  iter_time  total_time
       0  1.206505e+05    0.00e+00    2.86e+05   0.00e+00   0.00e+00  1.00e+04        0    1.83e-02    7.51e-02

and the example ends with Solver::Summary::FullReport(), whose "Time (in
seconds)" block gives the phases (preprocessor, residual only evaluation,
Jacobian & residual evaluation, linear solver, minimizer, postprocessor,
total).  Costs are printed with 7 significant digits, per-iteration times
with 3; the report's times with 6 decimals.

Which rows are accepted steps: Ceres accepts a step when its relative
decrease (tr_ratio) exceeds min_relative_decrease (1e-3, which the example
keeps); a rejected step's row shows the rejected candidate's cost, an invalid
step's row the current cost with tr_ratio 0.  A printed ratio within the
rounding of the threshold (1.00e-03) is decided by the gradient column: Ceres
repeats the previous gradient for a rejected step and evaluates a new one
for an accepted step.

Our own bundle_adjuster prints the same table and report (the square-root
solver's FullReport follows Ceres' layout), so the parser can be checked
against that binary's exact CSV files (benchmarks/tests/e2e_driver.py).
"""

import math
import os
import re
from collections import namedtuple

# Ceres' Solver::Options::min_relative_decrease (the example keeps the default).
MIN_RELATIVE_DECREASE = 1e-3
# Half a unit in the last printed digit of tr_ratio at the threshold (%.2e).
_RATIO_ROUNDING = 0.005e-3

HEADER_WORDS = ("iter", "cost", "cost_change", "|gradient|", "|step|", "tr_ratio",
                "tr_radius", "ls_iter", "iter_time", "total_time")

_NUMBER = r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan)"
_ROW = re.compile(r"^\s*(\d+)" + r"\s+(%s)" % _NUMBER * 6 + r"\s+(\d+)" +
                  r"\s+(%s)" % _NUMBER * 2 + r"\s*$", re.IGNORECASE)

# FullReport lines: (key, regex).  The time lines carry a count in brackets
# where Ceres prints one.
_REPORT_LINES = (
    ("preprocessor_seconds", r"^Preprocessor\s+(%s)\s*$" % _NUMBER),
    ("residual_evaluation_seconds",
     r"^\s+Residual only evaluation\s+(%s)\s+\((\d+)\)\s*$" % _NUMBER),
    ("jacobian_evaluation_seconds",
     r"^\s+Jacobian & residual evaluation\s+(%s)\s+\((\d+)\)\s*$" % _NUMBER),
    ("linear_solver_seconds", r"^\s+Linear solver\s+(%s)\s+\((\d+)\)\s*$" % _NUMBER),
    ("minimizer_seconds", r"^Minimizer\s+(%s)\s*$" % _NUMBER),
    ("postprocessor_seconds", r"^Postprocessor\s+(%s)\s*$" % _NUMBER),
    ("total_seconds", r"^Total\s+(%s)\s*$" % _NUMBER),
    ("initial_cost", r"^Initial\s+(%s)\s*$" % _NUMBER),
    ("final_cost", r"^Final\s+(%s)\s*$" % _NUMBER),
)
_REPORT_PATTERNS = tuple((key, re.compile(pattern, re.IGNORECASE))
                         for key, pattern in _REPORT_LINES)
_TERMINATION = re.compile(r"^Termination:\s+(\S+)\s*(?:\((.*)\))?\s*$")
# "Linear solver   ITERATIVE_SCHUR   ITERATIVE_SCHUR" (given, used), likewise
# the preconditioner and the threads.
_GIVEN_USED = re.compile(r"^(Linear solver|Preconditioner|Threads)\s+(\S+)\s+(\S+)\s*$")

REQUIRED_REPORT_KEYS = ("total_seconds", "initial_cost", "final_cost", "termination")

Output = namedtuple("Output", "rows report")


class ParseError(ValueError):
    """The output is not what Ceres' example prints (or the run died early)."""


def _float(text):
    return float(text)


def parse_rows(lines):
    """Per-iteration rows (dicts with the keys of bench_io.read_trace_rows,
    plus iteration_seconds, step_norm and relative_decrease) of the progress
    table, in order.  Lines before the table's header and lines that are not
    table rows (glog messages, the report) are skipped."""
    rows, in_table = [], False
    for line in lines:
        if not in_table:
            in_table = line.split() == list(HEADER_WORDS)
            continue
        match = _ROW.match(line)
        if not match:
            continue
        g = match.groups()
        rows.append({
            "iteration": int(g[0]), "cost": _float(g[1]), "cost_change": _float(g[2]),
            "gradient_max_norm": _float(g[3]), "step_norm": _float(g[4]),
            "relative_decrease": _float(g[5]), "trust_region_radius": _float(g[6]),
            "linear_solver_iterations": int(g[7]), "iteration_seconds": _float(g[8]),
            "cumulative_seconds": _float(g[9]),
        })
    mark_accepted(rows)
    return rows


def mark_accepted(rows):
    """Set step_accepted on every row (iteration 0 counts as accepted)."""
    previous_gradient = None
    for row in rows:
        if row["iteration"] == 0:
            accepted = True
        else:
            ratio = row["relative_decrease"]
            if abs(ratio - MIN_RELATIVE_DECREASE) <= _RATIO_ROUNDING:
                accepted = row["gradient_max_norm"] != previous_gradient
            else:
                accepted = ratio > MIN_RELATIVE_DECREASE
            accepted = accepted and math.isfinite(row["cost"])
        row["step_accepted"] = accepted
        previous_gradient = row["gradient_max_norm"]


def parse_report(lines):
    """The FullReport's numbers: the keys of _REPORT_LINES (and counts as
    <key>_count), termination and termination_message, and the used linear
    solver, preconditioner and threads.  Missing lines are missing keys."""
    report = {}
    for line in lines:
        for key, pattern in _REPORT_PATTERNS:
            match = pattern.match(line)
            if match:
                report[key] = _float(match.group(1))
                if match.lastindex and match.lastindex > 1:
                    report[key + "_count"] = int(match.group(2))
                break
        else:
            match = _TERMINATION.match(line)
            if match:
                report["termination"] = match.group(1)
                report["termination_message"] = match.group(2) or ""
                continue
            match = _GIVEN_USED.match(line)
            if match:
                report[match.group(1).lower().replace(" ", "_") + "_used"] = match.group(3)
    return report


def parse(text):
    """Output(rows, report) of a whole log; ParseError when the table or the
    report's essential lines are missing."""
    lines = text.splitlines()
    rows = parse_rows(lines)
    if not rows or rows[0]["iteration"] != 0:
        raise ParseError("no progress table starting at iteration 0")
    report = parse_report(lines)
    missing = [k for k in REQUIRED_REPORT_KEYS if k not in report]
    if missing:
        raise ParseError("no FullReport (missing %s)" % ", ".join(missing))
    return Output(rows, report)


def read(path):
    with open(path, errors="replace") as f:
        return parse(f.read())


def solver_label(report):
    """Our binary's spelling of the solver: linear solver in lower case, with
    the preconditioner after a '+' for iterative_schur and cgnr."""
    solver = report.get("linear_solver_used", "unknown").lower()
    if solver in ("iterative_schur", "cgnr") and "preconditioner_used" in report:
        solver += "+" + report["preconditioner_used"].lower()
    return solver


def summary_row(output, problem_name, counts):
    """A --summary_csv row (dict of the bench_io summary columns) for a run.

    counts: (cameras, points, observations) of the input, which the report
    does not give separately.
    """
    rows, report = output.rows, output.report
    summary = {
        "solver": solver_label(report), "precision": "double", "problem": problem_name,
        "num_cameras": counts[0], "num_points": counts[1], "num_observations": counts[2],
        "initial_cost": report["initial_cost"], "final_cost": report["final_cost"],
        "iterations": rows[-1]["iteration"],
        "linear_solver_iterations_total": sum(r["linear_solver_iterations"] for r in rows),
        "total_seconds": report["total_seconds"], "termination": report["termination"],
        "precision_switch_iteration": -1,
    }
    for key in ("preprocessor_seconds", "residual_evaluation_seconds",
                "jacobian_evaluation_seconds", "linear_solver_seconds", "minimizer_seconds",
                "postprocessor_seconds"):
        summary[key] = report.get(key)
    return summary


def failure_reason(output):
    """Why a parsed run does not count as a solve (as our binary exits 1 for
    these), or "" for a usable one."""
    report = output.report
    if report["termination"] == "FAILURE":
        return "Ceres 2.2: FAILURE (%s)" % report.get("termination_message", "")
    if not math.isfinite(report["final_cost"]):
        return "Ceres 2.2: the final cost is not finite"
    return ""


def input_name(path):
    """The problem column of a summary: the input file's name."""
    return os.path.basename(path)
