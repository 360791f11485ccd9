"""From run records and their trace files to per-problem results.

Everything the report, the plots, the target checks and the results checker
derive is computed here from runs.csv plus traces/, so a results folder can
always be re-analysed (--report-only) and checked independently of the run.
"""

import math
import os
from collections import OrderedDict, namedtuple

import bench_io
import perf_profiles
import solvers

# run: the runs.csv record; rows: parsed trace rows or None; trace: (t, cost)
# points or None.  Both None unless the run succeeded.
RunData = namedtuple("RunData", "run rows trace")

# runs: {solver: RunData} in solver order; analysis: perf_profiles.ProblemAnalysis;
# rounds: {solver: {repeat: solver seconds}} of the runs that succeeded, from
# repeats.csv (--repeat N: round i ran every solver once, back to back), or
# None for a single run.
ProblemResult = namedtuple("ProblemResult", "name kind num_observations runs analysis rounds",
                           defaults=(None,))


def load_run(out_dir, run):
    """RunData of one record; the trace of a run that did not succeed is ignored."""
    if run["status"] != bench_io.STATUS_OK:
        return RunData(run, None, None)
    rows = bench_io.read_trace_rows(os.path.join(out_dir, run["trace"]))
    return RunData(run, rows, bench_io.trace_points(rows))


def group_by_problem(runs):
    """{problem: [runs]} keeping the order in which problems were run."""
    groups = OrderedDict()
    for run in runs:
        groups.setdefault(run["problem"], []).append(run)
    return groups


def _num_observations(runs):
    counts = [r["num_observations"] for r in runs if r.get("num_observations")]
    return max(counts) if counts else None


def load_rounds(out_dir):
    """{problem: {solver: {repeat: solver seconds}}} of the repeats that
    succeeded, from out_dir's repeats.csv ({} without one)."""
    path = os.path.join(out_dir, bench_io.REPEATS_FILE)
    rounds = {}
    if not os.path.exists(path):
        return rounds
    for row in bench_io.read_repeats(path):
        try:
            repeat, seconds = int(row["repeat"]), float(row["solver_seconds"])
        except (KeyError, TypeError, ValueError):
            continue
        if row.get("status") == bench_io.STATUS_OK:
            rounds.setdefault(row["problem"], {}).setdefault(row["solver"], {})[repeat] = seconds
    return rounds


def analyse(out_dir, runs, taus=perf_profiles.TAUS):
    """One ProblemResult per problem, in run order."""
    results = []
    rounds = load_rounds(out_dir)
    for name, problem_runs in group_by_problem(runs).items():
        data = OrderedDict((r["solver"], load_run(out_dir, r)) for r in problem_runs)
        analysis = perf_profiles.analyse_problem(
            {solver: d.trace for solver, d in data.items()}, taus)
        results.append(ProblemResult(name, problem_runs[0]["kind"],
                                     _num_observations(problem_runs), data, analysis,
                                     rounds.get(name)))
    return results


def taus_of(results):
    """The tolerances analysed, largest first (the order of tables and panels)."""
    return sorted(results[0].analysis.times, reverse=True) if results else list(perf_profiles.TAUS)


def solvers_in(results):
    """Solver names appearing in any problem, in first-seen order."""
    names = []
    for result in results:
        names.extend(s for s in result.runs if s not in names)
    return names


def was_run(data):
    """False for a solver whose program was not available ("not run")."""
    return data is not None and data.run["status"] != bench_io.STATUS_NOT_RUN


def solvers_run(results):
    """Solver names that ran (ok or not) on some problem, in first-seen order:
    those of the profiles and plots."""
    return [s for s in solvers_in(results)
            if any(was_run(r.runs.get(s)) for r in results)]


def reference_solvers(result, family=solvers.REFERENCE_FAMILY):
    """The solvers of `family` that ran on this problem."""
    return [s for s in solvers.family_members(family, list(result.runs))
            if was_run(result.runs[s])]


def reference_time(times, result, family=solvers.REFERENCE_FAMILY, exclude=None):
    """The best (smallest) time among `times` of the family's solvers that ran
    on the problem (inf if none reached); None if none of them ran."""
    names = [s for s in reference_solvers(result, family) if s != exclude and s in times]
    if not names:
        return None
    return min(times[s] for s in names)


def iteration_zero_seconds(rows):
    """Cumulative time of the iteration-0 row: what a solver needs before its
    first step (for Ceres: preprocessing and the first evaluation)."""
    if not rows or rows[0]["iteration"] != 0:
        return None
    return rows[0]["cumulative_seconds"]


# Parts of the per-phase breakdown: (label, runs.csv field); "rest" is what
# the total has beyond them (preprocessing, the trust-region loop, ...).
PHASES = (("residual evaluation", "residual_evaluation_seconds"),
          ("Jacobian evaluation", "jacobian_evaluation_seconds"),
          ("linear solver", "linear_solver_seconds"))
REST = "rest"


def phase_seconds(run):
    """{label: seconds} of PHASES and REST, plus "total", for a run whose
    summary has the breakdown; None otherwise.  rest = total - the phases,
    at least 0 (the parts are printed to 6 decimals)."""
    total = run.get("solver_seconds")
    parts = [run.get(key) for _, key in PHASES]
    if total is None or any(p is None for p in parts):
        return None
    breakdown = {label: value for (label, _), value in zip(PHASES, parts)}
    breakdown[REST] = max(0.0, total - sum(parts))
    breakdown["total"] = total
    return breakdown


def first_iteration_at_or_below(rows, cost_threshold):
    """Iteration number of the first accepted row (or iteration 0) whose cost
    is <= cost_threshold; None if there is none."""
    if cost_threshold is None:
        return None
    for r in rows or ():
        if (r["iteration"] == 0 or r["step_accepted"]) and r["cost"] <= cost_threshold:
            return r["iteration"]
    return None


def seconds_per_iteration(rows):
    """Mean duration of an outer (LM) iteration, leaving out iteration 0's setup."""
    if not rows or len(rows) < 2:
        return None
    return (rows[-1]["cumulative_seconds"] - rows[0]["cumulative_seconds"]) / (len(rows) - 1)


def seconds_per_linear_iteration(rows):
    """Linear-solver time per CG/PCG iteration, over all iterations after 0.

    With the trace's step_solver_seconds (the linear solve of each iteration,
    Ceres' step_solver_time_in_seconds) this leaves out the cost function
    evaluations, which are the same code in every precision; it still
    includes each solve's setup (for sqrt solvers the landmark QR and the
    preconditioner, for Ceres the Schur eliminator's). Older traces without
    that column fall back to whole iterations.
    """
    if not rows or len(rows) < 2:
        return None
    linear = sum(r["linear_solver_iterations"] for r in rows[1:])
    if linear <= 0:
        return None
    if all("step_solver_seconds" in r for r in rows[1:]):
        return sum(r["step_solver_seconds"] for r in rows[1:]) / linear
    return (rows[-1]["cumulative_seconds"] - rows[0]["cumulative_seconds"]) / linear


def relative_gap(cost, f_star):
    """(cost - f*) / |f*|: how far a final cost is from the best one found."""
    if cost is None or f_star is None or not math.isfinite(cost):
        return None
    if f_star == 0:
        return 0.0 if cost == 0 else math.inf
    return (cost - f_star) / abs(f_star)
