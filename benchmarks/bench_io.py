"""Reading and writing the benchmark's CSV files.

Two kinds of files: those the example binary writes (per-iteration trace via
--csv, one-row summary via --summary_csv; their headers are the binary's
contract and are checked here; the driver writes the same two files for Ceres
2.2's example from what that prints), and runs.csv, the driver's
one-row-per-run record from which every report can be rebuilt (--report-only).
"""

import csv

TRACE_COLUMNS = ("iteration", "cumulative_seconds", "cost", "cost_change",
                 "gradient_max_norm", "trust_region_radius",
                 "linear_solver_iterations", "step_accepted")

# Written by newer binaries; traces without them still read.
OPTIONAL_TRACE_COLUMNS = ("step_solver_seconds",)

SUMMARY_COLUMNS = ("solver", "precision", "problem", "num_cameras", "num_points",
                   "num_observations", "initial_cost", "final_cost", "iterations",
                   "linear_solver_iterations_total", "total_seconds", "termination")

# Written by newer binaries (and for Ceres 2.2's runs): the iteration at which
# single precision switched to double (-1: never), and the time breakdown of
# Ceres' FullReport ("Time (in seconds)"), in seconds.
PHASE_COLUMNS = ("preprocessor_seconds", "residual_evaluation_seconds",
                 "jacobian_evaluation_seconds", "linear_solver_seconds",
                 "minimizer_seconds", "postprocessor_seconds")
OPTIONAL_SUMMARY_COLUMNS = ("precision_switch_iteration",) + PHASE_COLUMNS

# runs.csv columns and how to parse them back; the order is the file's order.
RUN_FIELDS = (
    ("problem", str), ("kind", str), ("input", str), ("solver", str),
    ("status", str), ("exit_code", int), ("error", str),
    ("num_cameras", int), ("num_points", int), ("num_observations", int),
    ("initial_cost", float), ("final_cost", float), ("iterations", int),
    ("linear_solver_iterations_total", int), ("solver_seconds", float),
    ("wall_seconds", float), ("peak_rss_mib", float), ("driver_rss_mib", float),
    ("termination", str),
    ("precision", str), ("threads", int), ("trace", str), ("summary", str),
    ("log", str), ("command", str),
    # Added later: older runs.csv files read without them.
    ("precision_switch_iteration", int),
) + tuple((name, float) for name in PHASE_COLUMNS)
RUN_COLUMNS = tuple(name for name, _ in RUN_FIELDS)
REQUIRED_RUN_COLUMNS = RUN_COLUMNS[:RUN_COLUMNS.index("precision_switch_iteration")]

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_TIMEOUT = "timeout"
# A solver whose program is not available (Ceres 2.2's example not built):
# listed, but it neither fails nor counts as a reference.
STATUS_NOT_RUN = "not run"

_TRUE_WORDS = {"1", "true", "yes", "y", "t"}


class CsvFormatError(ValueError):
    """A CSV written by the binary does not follow the contract."""


def parse_bool(text):
    """Accept 1/0 and true/false spellings: the contract does not fix one."""
    return text.strip().lower() in _TRUE_WORDS


def _read_rows(path, required):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in required if c not in (reader.fieldnames or ())]
        if missing:
            raise CsvFormatError("%s: missing column(s) %s" % (path, ", ".join(missing)))
        return list(reader)


def read_trace_rows(path):
    """Per-iteration rows of a --csv file, numbers parsed, in iteration order."""
    rows = []
    for raw in _read_rows(path, TRACE_COLUMNS):
        row = {c: float(raw[c]) for c in TRACE_COLUMNS if c != "step_accepted"}
        row["iteration"] = int(row["iteration"])
        row["linear_solver_iterations"] = int(row["linear_solver_iterations"])
        row["step_accepted"] = parse_bool(raw["step_accepted"])
        for c in OPTIONAL_TRACE_COLUMNS:
            if raw.get(c) not in (None, ""):
                row[c] = float(raw[c])
        rows.append(row)
    if not rows:
        raise CsvFormatError("%s: no iterations" % path)
    rows.sort(key=lambda r: r["iteration"])
    return rows


def trace_points(rows):
    """(cumulative_seconds, cost) points at which the solver holds that cost.

    Iteration 0 is the initial point; later rows count only if their step was
    accepted, so that a binary which logs a rejected candidate's cost cannot
    make a solver look like it reached a cost it then discarded.
    """
    return [(r["cumulative_seconds"], r["cost"]) for r in rows
            if r["iteration"] == 0 or r["step_accepted"]]


def read_trace(path):
    """The trace (see perf_profiles) of a --csv file."""
    return trace_points(read_trace_rows(path))


def read_summary(path):
    """The single row of a --summary_csv file as a dict of strings."""
    rows = _read_rows(path, SUMMARY_COLUMNS)
    if len(rows) != 1:
        raise CsvFormatError("%s: expected 1 row, found %d" % (path, len(rows)))
    return rows[0]


def write_trace_rows(path, rows):
    """Write per-iteration rows (dicts as read_trace_rows returns them) in the
    binary's --csv layout; a missing optional value is an empty cell."""
    columns = TRACE_COLUMNS + OPTIONAL_TRACE_COLUMNS
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        for row in rows:
            cells = []
            for c in columns:
                value = row.get(c)
                if c == "step_accepted":
                    value = int(bool(value))
                cells.append(format_run_value(value))
            writer.writerow(cells)


def write_summary(path, summary):
    """Write a --summary_csv file (header and one row) from a dict."""
    columns = SUMMARY_COLUMNS + OPTIONAL_SUMMARY_COLUMNS
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerow([format_run_value(summary.get(c)) for c in columns])


def format_run_value(value):
    """runs.csv cell text: floats with full precision (repr), None empty."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def write_runs(path, runs):
    """Write runs.csv: one row per run dict, columns RUN_COLUMNS."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(RUN_COLUMNS)
        for run in runs:
            writer.writerow([format_run_value(run.get(c)) for c in RUN_COLUMNS])


def _parse_cell(text, kind):
    if text == "":
        return None
    if kind is int:
        return int(float(text))
    return kind(text)


# Every run of every repeat (--repeat N), beside runs.csv.
REPEATS_FILE = "repeats.csv"


def read_repeats(path):
    """repeats.csv's rows as written (strings)."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_runs(path):
    """runs.csv back as a list of run dicts with typed values (None if empty
    or, for the columns added later, absent)."""
    return [{name: _parse_cell(raw.get(name) or "", kind) for name, kind in RUN_FIELDS}
            for raw in _read_rows(path, REQUIRED_RUN_COLUMNS)]

