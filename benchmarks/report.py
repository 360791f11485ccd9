"""Markdown report of benchmark results (results.md and the docs section).

The same generator writes results.md and the results section of
docs/benchmarks.md; the heading level and the image folder differ, and the
docs section holds results only: the target checks (targets.py) are printed
by the driver and kept in the results folder (results.md, targets.csv), not
written into the docs.  Column headers and number formats are defined once
here; check_results.py parses the tables back through the same helpers.
"""

import csv
import datetime
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import markdown_tables  # noqa: E402
import analysis
import bench_io
import evaluator_ratios
import perf_profiles
import solvers
import targets

DOCS_BEGIN = "<!-- results:begin -->"
DOCS_END = "<!-- results:end -->"
MACHINE_JSON = "machine.json"
# Figures written by plots.py and linked from the report.
PROFILES_PNG = "profiles.png"
MEMORY_PNG = "memory.png"
SCALING_PNG = "scaling.png"


def _file_stem(problem_name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", problem_name)


def convergence_png(problem_name):
    """File name of a problem's convergence plot (problem names are file stems)."""
    return "convergence_%s.png" % _file_stem(problem_name)


def phases_png(problem_name):
    """File name of a problem's per-phase stacked bars."""
    return "phases_%s.png" % _file_stem(problem_name)


NEVER = "∞"      # threshold never reached
NO_VALUE = "–"   # not applicable (failed run, no baseline run, ...)
SECONDS = "%.4g"
RATIO = "%.3g"
COST = "%.6e"
MEBIBYTES = "%.1f"
TABLE_LEGEND = (
    "t iter 0: seconds (cumulative solver time) of the iteration-0 row, i.e. before the "
    "first step.  t τ: seconds of the first iteration whose cost is ≤ f(τ); {never}: never "
    "reached; {none}: failed or not run, or no Ceres 2.2 solver ran.  t/t({ref}): against "
    "the fastest Ceres 2.2 solver of the problem at that τ; < 1: faster.  Switch to double: "
    "the iteration from which a single precision solve ran in double ({none}: never)."
).format(never=NEVER, none=NO_VALUE, ref=solvers.REFERENCE_LABEL)
PHASE_LEGEND = (
    "Seconds per phase of the whole run, from each solver's report (Ceres' FullReport "
    "\"Time (in seconds)\"): residual evaluation (\"Residual only evaluation\"), Jacobian "
    "evaluation (\"Jacobian & residual evaluation\"), linear solver, and the rest of the "
    "total (preprocessing, the trust-region loop's own work, postprocessing)."
)


# ---------------------------------------------------------------- formatting

def fmt_tau(tau):
    """1e-2 -> '1e-2' (powers of ten as in the paper), else %g."""
    exponent = math.log10(tau)
    return "1e%d" % round(exponent) if abs(exponent - round(exponent)) < 1e-9 else "%g" % tau


def fmt_number(value, spec):
    """value formatted with `spec`; inf as NEVER, None/nan as NO_VALUE."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NO_VALUE
    if isinstance(value, float) and math.isinf(value):
        return NEVER
    return spec % value


def parse_number(text):
    """Inverse of fmt_number for checking: NEVER -> inf, NO_VALUE -> None."""
    text = text.strip()
    if text == NEVER:
        return math.inf
    if text == NO_VALUE:
        return None
    return float(text)


def time_header(tau):
    return "t τ=%s [s]" % fmt_tau(tau)


def ratio_header(tau):
    return "t/t(%s) τ=%s" % (solvers.REFERENCE_LABEL, fmt_tau(tau))


ITERATION_ZERO_HEADER = "t iter 0 [s]"


def md_table(headers, rows):
    """A markdown table (list of lines)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def parse_md_tables(text):
    """All markdown tables in `text`, as lists of {header: cell} dicts, in order."""
    return [[dict(zip(header, row)) for _, row in rows] for header, rows in markdown_tables.tables(text)]


# -------------------------------------------------------------- machine info

def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _ceres_version():
    """Version of the installed Ceres headers the example was built against."""
    for include in ("/usr/local/include", "/usr/include"):
        try:
            with open(os.path.join(include, "ceres", "version.h")) as f:
                text = f.read()
        except OSError:
            continue
        parts = [re.search(r"#define CERES_VERSION_%s (\d+)" % k, text)
                 for k in ("MAJOR", "MINOR", "REVISION")]
        if all(parts):
            return ".".join(m.group(1) for m in parts)
    return "unknown"


def _git_commit(repo_root):
    try:
        out = subprocess.run(["git", "-C", repo_root, "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def _display_path(path, repo_root):
    """path relative to the repository if inside it: the docs must not show
    one machine's absolute paths."""
    relative = os.path.relpath(os.path.abspath(path), repo_root)
    return path if relative.startswith("..") else relative


def _memory_gib():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return "%.1f GiB" % (int(line.split()[1]) / 1024.0 ** 2)
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def collect_machine_info(threads, binary, repo_root, common_flags, ceres22_binary=None,
                         ceres22_flags=(), ceres22_note=""):
    """Where and how the runs were made; stored as machine.json next to runs.csv
    so that --report-only can rebuild the report without re-running."""
    info = {
        "cpu": _cpu_model(),
        "logical cores": os.cpu_count(),
        "memory": _memory_gib(),
        "threads used": threads,
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "ceres version": _ceres_version(),
        "commit": _git_commit(repo_root),
        "binary": _display_path(binary, repo_root),
        "common flags": "`%s`" % " ".join(common_flags),
    }
    if ceres22_binary:
        info["ceres 2.2 binary"] = _display_path(ceres22_binary, repo_root)
        info["ceres 2.2 common flags"] = "`%s --input=<plain-text BAL>`" % " ".join(ceres22_flags)
    elif ceres22_note:
        info["ceres 2.2 binary"] = ceres22_note
    return info


def describe_baseline(binary, repo_root):
    """The baseline binary and the commit of the checkout it was built in
    (the git work tree holding it, if any)."""
    commit = _git_commit(os.path.dirname(os.path.abspath(binary)))
    return "%s (commit %s)" % (_display_path(binary, repo_root), commit)


def save_machine_info(out_dir, info):
    with open(os.path.join(out_dir, MACHINE_JSON), "w") as f:
        json.dump(info, f, indent=1)


def load_machine_info(out_dir):
    try:
        with open(os.path.join(out_dir, MACHINE_JSON)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"note": "machine.json missing"}


# ------------------------------------------------------------------- tables

def ratio_to_reference(result, tau, solver):
    """t_tau(solver) / t_tau(best Ceres 2.2) on a problem; None where the solver
    or every Ceres 2.2 solver was not run."""
    times = result.analysis.times[tau]
    if not analysis.was_run(result.runs.get(solver)):
        return None
    reference = analysis.reference_time(times, result)
    if reference is None:
        return None
    return perf_profiles.time_ratio(times[solver], reference)


def switch_value(run):
    """The switch iteration to show: None (shown as NO_VALUE) when there was none."""
    value = run.get("precision_switch_iteration")
    return None if value is None or value < 0 else value


# (header, runs.csv field, format) of the per-run statistics in a problem table.
RUN_STAT_COLUMNS = (
    ("final cost", "final_cost", COST),
    ("iterations", "iterations", "%d"),
    ("PCG iterations", "linear_solver_iterations_total", "%d"),
    ("switch to double", "precision_switch_iteration", "%d"),
    ("peak memory [MiB]", "peak_rss_mib", MEBIBYTES),
)
WALL_HEADER = "wall [s]"


def problem_headers(taus):
    return (["solver", "status", ITERATION_ZERO_HEADER] + [time_header(t) for t in taus]
            + [ratio_header(t) for t in taus]
            + [header for header, _, _ in RUN_STAT_COLUMNS] + [WALL_HEADER])


def _stat(data, key, spec):
    if data.rows is None:
        return NO_VALUE
    if key == "precision_switch_iteration":
        return fmt_number(switch_value(data.run), spec)
    return fmt_number(data.run.get(key), spec)


def problem_row(result, solver, taus):
    """One table row: a solver's times, ratios and run statistics on a problem.
    Statistics of a failed run are not shown: they would be the binary's
    guesses; a solver that was not run shows nothing."""
    data = result.runs[solver]
    ran = analysis.was_run(data)
    return ([solver, data.run["status"],
             fmt_number(analysis.iteration_zero_seconds(data.rows), SECONDS)]
            + [fmt_number(result.analysis.times[tau][solver] if ran else None, SECONDS)
               for tau in taus]
            + [fmt_number(ratio_to_reference(result, tau, solver), RATIO) for tau in taus]
            + [_stat(data, key, spec) for _, key, spec in RUN_STAT_COLUMNS]
            + [fmt_number(data.run.get("wall_seconds"), SECONDS)])


PHASE_HEADERS = tuple("%s [s]" % label for label, _ in analysis.PHASES) + (
    "%s [s]" % analysis.REST, "total [s]")


def phase_rows(result):
    """(solver, cells) of the problem's phase table: ok runs with a breakdown."""
    rows = []
    for solver, data in result.runs.items():
        breakdown = analysis.phase_seconds(data.run) if data.rows is not None else None
        if breakdown:
            rows.append([solver] + [fmt_number(breakdown[label], SECONDS) for label, _ in
                                    analysis.PHASES]
                        + [fmt_number(breakdown[analysis.REST], SECONDS),
                           fmt_number(breakdown["total"], SECONDS)])
    return rows


def _problem_size(result):
    runs = [d.run for d in result.runs.values() if d.rows is not None]
    if not runs:
        return "no successful run"
    r = runs[0]
    return "%d cameras, %d points, %d observations" % (
        r["num_cameras"], r["num_points"], r["num_observations"])


def _thresholds_line(result, taus):
    a = result.analysis
    parts = ["f0 = %s" % fmt_number(a.f0, COST), "f* = %s" % fmt_number(a.f_star, COST)]
    parts += ["f(τ=%s) = %s" % (fmt_tau(t), fmt_number(a.thresholds[t], COST)) for t in taus]
    return ", ".join(parts)


def problem_section(result, taus, heading, images=(), image_dir=""):
    """Heading, size, thresholds, the per-solver table of one problem, and its
    per-phase table (with the stacked bars when they were drawn)."""
    description = "%s (%s). %s." % (result.kind, _problem_size(result),
                                     _thresholds_line(result, taus))
    lines = ["%s %s" % (heading, result.name), "", description, ""]
    lines += md_table(problem_headers(taus), [problem_row(result, s, taus) for s in result.runs])
    phases = phase_rows(result)
    if phases:
        lines += ["", "Time per phase:", ""]
        lines += md_table(("solver",) + PHASE_HEADERS, phases)
        if phases_png(result.name) in images:
            lines += ["", _image(phases_png(result.name), image_dir)]
    return lines


TARGET_HEADERS = ("target", "value", "median", "range", "problems", "required", "verdict")


def targets_table(target_results):
    """The target checks as a markdown table (also printed by the driver).
    value: what is compared with the requirement (the median, or the worst
    value for targets that must hold on every problem)."""
    rows = []
    for tr in target_results:
        rng = NO_VALUE if tr.low is None else "%s … %s" % (
            fmt_number(tr.low, "%.3g"), fmt_number(tr.high, "%.3g"))
        rows.append([tr.target.description, fmt_number(tr.value, "%.3g"),
                     fmt_number(tr.median, "%.3g"), rng, tr.count,
                     targets.required_text(tr.target), tr.verdict])
    return md_table(TARGET_HEADERS, rows)


def _machine_table(machine):
    return md_table(("", ""), [(k, v) for k, v in machine.items()])


def _flags_table(solver_names):
    programs = {solvers.SQRTBA: "this project's bundle_adjuster",
                solvers.CERES22: "Ceres 2.2's bundle_adjuster",
                solvers.BASELINE: "this project's bundle_adjuster, earlier build (baseline binary)"}
    rows = [(n, programs[solvers.by_name(n).program], "`%s`" % " ".join(solvers.by_name(n).flags))
            for n in solver_names if n in solvers.solver_names()]
    return md_table(("solver", "program", "flags (added to its program's common flags above)"),
                    rows)


def evaluator_section(evaluator_rows, heading):
    """The micro-benchmark's evaluator / floor table, if it was run."""
    if not evaluator_rows:
        return []
    return ["%s Evaluator against its floor (micro-benchmark)" % heading, "",
            "Real time per pass (median of the repetitions of each process, then of the processes; `kernels_benchmark "
            "--benchmark_filter=^Evaluate/`, see benchmarks/evaluator_ratios.py).", ""] + \
        evaluator_ratios.markdown(evaluator_rows).splitlines() + [""]


def _failures(results):
    rows = [(r.name, d.run["solver"], d.run["status"], d.run.get("error") or "",
             d.run["log"] if analysis.was_run(d) else NO_VALUE)
            for r in results for d in r.runs.values() if d.rows is None]
    return md_table(("problem", "solver", "status", "error", "log"), rows) if rows else []


def _image(name, image_dir):
    return "![%s](%s)" % (os.path.splitext(name)[0], image_dir + name)


def results_markdown(results, target_results, machine, images, solver_names,
                     level=1, image_dir="", title="Benchmark results", evaluator_rows=None,
                     with_targets=True):
    """Full report.  level: markdown level of the title (subsections one
    deeper); image_dir: prefix of image links (relative to the markdown file);
    title None: no title line, for embedding under an existing heading;
    with_targets False: no target checks (the docs section: results only)."""
    taus = analysis.taus_of(results)
    h = lambda n: "#" * (level + n)  # noqa: E731
    out = ["%s %s" % (h(0), title), ""] if title else []
    out += ["%s Machine" % h(1), ""]
    out += _machine_table(machine) + [""]
    if with_targets:
        out += ["%s Targets" % h(1), ""] + targets_table(target_results) + [""]
    if PROFILES_PNG in images:
        out += ["%s Performance profiles" % h(1), "", _image(PROFILES_PNG, image_dir), ""]
    out += ["%s Problems" % h(1), "", TABLE_LEGEND, "", PHASE_LEGEND, ""]
    for result in results:
        out += problem_section(result, taus, h(2), images, image_dir) + [""]
        if convergence_png(result.name) in images:
            out += [_image(convergence_png(result.name), image_dir), ""]
    for heading, png in (("Peak memory", MEMORY_PNG), ("Scaling", SCALING_PNG)):
        if png in images:
            out += ["%s %s" % (h(1), heading), "", _image(png, image_dir), ""]
    out += evaluator_section(evaluator_rows, h(1))
    failures = _failures(results)
    if failures:
        out += ["%s Failed or not run" % h(1), ""] + failures + [""]
    out += ["%s Solver flags" % h(1), ""] + _flags_table(solver_names) + [""]
    return "\n".join(out)


# --------------------------------------------------------------------- docs

def replace_between_markers(text, section):
    """text with everything between DOCS_BEGIN and DOCS_END replaced by section."""
    begin, end = text.find(DOCS_BEGIN), text.find(DOCS_END)
    if begin < 0 or end < begin:
        raise ValueError("markers %s / %s not found" % (DOCS_BEGIN, DOCS_END))
    return text[: begin + len(DOCS_BEGIN)] + "\n" + section.rstrip() + "\n" + text[end:]


def update_docs(docs_path, out_dir, images, render):
    """Copy images next to the docs page and rewrite its results section.

    render(image_dir) returns the section markdown with links under image_dir.
    Old PNGs in the image folder are removed so the docs never link stale ones.
    """
    docs_dir = os.path.dirname(os.path.abspath(docs_path))
    image_subdir = os.path.splitext(os.path.basename(docs_path))[0]  # docs/benchmarks/
    image_dir = os.path.join(docs_dir, image_subdir)
    os.makedirs(image_dir, exist_ok=True)
    for old in os.listdir(image_dir):
        if old.endswith(".png"):
            os.remove(os.path.join(image_dir, old))
    for name in images:
        shutil.copy(os.path.join(out_dir, name), os.path.join(image_dir, name))
    with open(docs_path) as f:
        text = f.read()
    with open(docs_path, "w") as f:
        f.write(replace_between_markers(text, render(image_subdir + "/")))


def write_results_md(out_dir, markdown):
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(markdown)


def write_targets_csv(out_dir, target_results):
    """targets.csv: the target checks, machine-readable (key as in targets.TARGETS)."""
    with open(os.path.join(out_dir, "targets.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["target", "value", "median", "min", "max", "problems", "aggregate",
                         "op", "threshold", "verdict"])
        for tr in target_results:
            writer.writerow([bench_io.format_run_value(v) for v in (
                tr.target.key, tr.value, tr.median, tr.low, tr.high, tr.count,
                tr.target.aggregate, tr.target.op, tr.target.threshold, tr.verdict)])


def write_time_to_tau_csv(out_dir, results):
    """time_to_tau.csv: the derived numbers of the tables, for further analysis."""
    rows = []
    for result in results:
        a = result.analysis
        for tau in analysis.taus_of([result]):
            for solver, t in a.times[tau].items():
                if not analysis.was_run(result.runs[solver]):
                    continue
                rows.append([result.name, solver, fmt_tau(tau), a.f0, a.f_star, a.thresholds[tau],
                             t, ratio_to_reference(result, tau, solver)])
    with open(os.path.join(out_dir, "time_to_tau.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["problem", "solver", "tau", "f0", "f_star", "f_tau", "seconds",
                         "ratio_to_best_ceres22"])
        writer.writerows([[bench_io.format_run_value(v) for v in row] for row in rows])
