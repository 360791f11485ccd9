"""The project's performance targets, checked on benchmark results.

Each target reduces the per-problem results to one number (the median over
problems, except the scaling slope which is fitted over synthetic sizes) and
compares it with a threshold.  The list mirrors docs/benchmarks.md, section
"Targets"; a target whose solvers were not run is reported as n/a.
"""

import math
import statistics
from collections import namedtuple

import analysis
import perf_profiles
import solvers

# measure(results) -> list of per-problem values (or one fitted value);
# op: ">=" or "<=" against threshold.
Target = namedtuple("Target", "key description measure op threshold")
TargetResult = namedtuple("TargetResult", "target median low high count verdict")

SCALING_SOLVER = "sqrt-single"
# "Linear in observations": the log-log slope of time per iteration may not
# exceed 1 by more than measurement noise; below 1 (fixed overheads) is fine.
MAX_SCALING_SLOPE = 1.2


def _run(result, solver):
    data = result.runs.get(solver)
    return data.run if data else None


def _times(result, tau):
    return result.analysis.times.get(tau, {})


def _reference_time(result, tau, reference, exclude):
    """Time of `reference` to tau; "fastest-ceres" is the best Ceres solver run."""
    times = _times(result, tau)
    if reference != "fastest-ceres":
        return times.get(reference)
    ceres = [s for s in solvers.family_members("ceres", list(times)) if s != exclude]
    return min((times[s] for s in ceres), default=None)


def speedup(solver, reference, tau):
    """Per problem: t_tau(reference) / t_tau(solver), i.e. "x times sooner"."""
    def measure(results):
        values = []
        for result in results:
            t = _times(result, tau).get(solver)
            t_ref = _reference_time(result, tau, reference, solver)
            if t is not None and t_ref is not None:
                values.append(perf_profiles.time_ratio(t_ref, t))
        return values
    return measure


def final_cost_gap(solver):
    """Per problem: (final cost - f*) / f*; a failed run is infinitely far."""
    def measure(results):
        values = []
        for result in results:
            run = _run(result, solver)
            if run is not None and result.analysis.f_star is not None:
                gap = analysis.relative_gap(run.get("final_cost"), result.analysis.f_star)
                values.append(math.inf if gap is None else gap)
        return values
    return measure


def _run_ratio(numerator, denominator, quantity):
    """Per problem: quantity(numerator run) / quantity(denominator run), both ok."""
    def measure(results):
        values = []
        for result in results:
            a, b = result.runs.get(numerator), result.runs.get(denominator)
            qa = quantity(a) if a and a.rows else None
            qb = quantity(b) if b and b.rows else None
            if qa is not None and qb:
                values.append(qa / qb)
        return values
    return measure


def linear_iteration_speedup(slow, fast):
    """Per problem: seconds per PCG iteration of `slow` / of `fast`."""
    return _run_ratio(slow, fast, lambda d: analysis.seconds_per_linear_iteration(d.rows))


def memory_ratio(solver, reference):
    """Per problem: peak resident memory of `solver` / of `reference`."""
    return _run_ratio(solver, reference, lambda d: d.run.get("peak_rss_mib"))


def scaling_points(results, solver):
    """(observations, seconds per iteration) of `solver` on synthetic problems."""
    points = []
    for result in results:
        data = result.runs.get(solver)
        if result.kind == "synthetic" and data and data.rows and result.num_observations:
            per_iteration = analysis.seconds_per_iteration(data.rows)
            if per_iteration:
                points.append((result.num_observations, per_iteration))
    return sorted(points)


def loglog_slope(points):
    """Least-squares slope of log(y) against log(x); None with < 2 distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return (sum((x - mx) * (y - my) for x, y in zip(xs, ys))
            / sum((x - mx) ** 2 for x in xs))


def scaling_slope(solver):
    """One value: the log-log slope of time per iteration vs observations."""
    def measure(results):
        slope = loglog_slope(scaling_points(results, solver))
        return [] if slope is None else [slope]
    return measure


TARGETS = (
    Target("single-vs-implicit-1e-2", "sqrt-single sooner than ceres-implicit, τ=1e-2 (x)",
           speedup("sqrt-single", "ceres-implicit", 1e-2), ">=", 2.0),
    Target("single-vs-implicit-1e-3", "sqrt-single sooner than ceres-implicit, τ=1e-3 (x)",
           speedup("sqrt-single", "ceres-implicit", 1e-3), ">=", 2.0),
    Target("single-vs-best-ceres-1e-2", "sqrt-single sooner than fastest Ceres solver, τ=1e-2 (x)",
           speedup("sqrt-single", "fastest-ceres", 1e-2), ">=", 1.5),
    Target("single-vs-best-ceres-1e-3", "sqrt-single sooner than fastest Ceres solver, τ=1e-3 (x)",
           speedup("sqrt-single", "fastest-ceres", 1e-3), ">=", 1.5),
    Target("double-vs-implicit-1e-2", "sqrt-double sooner than ceres-implicit, τ=1e-2 (x)",
           speedup("sqrt-double", "ceres-implicit", 1e-2), ">=", 1.3),
    Target("double-vs-implicit-1e-3", "sqrt-double sooner than ceres-implicit, τ=1e-3 (x)",
           speedup("sqrt-double", "ceres-implicit", 1e-3), ">=", 1.3),
    Target("single-accuracy", "sqrt-single final cost, relative gap to f*",
           final_cost_gap("sqrt-single"), "<=", 1e-4),
    Target("single-vs-double-per-pcg", "per-PCG-iteration speed, sqrt-single vs sqrt-double (x)",
           linear_iteration_speedup("sqrt-double", "sqrt-single"), ">=", 1.7),
    Target("single-memory", "peak memory, sqrt-single / ceres-implicit",
           memory_ratio("sqrt-single", "ceres-implicit"), "<=", 1.5),
    Target("single-scaling", "sqrt-single time/iteration vs observations, log-log slope",
           scaling_slope(SCALING_SOLVER), "<=", MAX_SCALING_SLOPE),
)


def _passes(value, op, threshold):
    return value >= threshold if op == ">=" else value <= threshold


def evaluate(target, results):
    """TargetResult of one target: median, range and pass/FAIL/n/a verdict."""
    values = [v for v in target.measure(results) if not math.isnan(v)]
    if not values:
        return TargetResult(target, None, None, None, 0, "n/a")
    median = statistics.median(values)
    verdict = "pass" if _passes(median, target.op, target.threshold) else "FAIL"
    return TargetResult(target, median, min(values), max(values), len(values), verdict)


def evaluate_all(results):
    """TargetResults of all TARGETS, in table order."""
    return [evaluate(t, results) for t in TARGETS]
