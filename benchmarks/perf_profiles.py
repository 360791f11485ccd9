"""Time-to-accuracy and performance profiles, as defined in the paper's supplementary.

Pure maths on in-memory traces (no I/O) so that it can be unit-tested on
hand-made traces and reused unchanged by the driver, the plots and the
results checker.

A *trace* is the sequence of (cumulative_seconds, cost) points of one solver
run on one problem, in iteration order; its first point is the initial cost.
Only points at which the solver actually holds that cost belong in it (the
initial point and accepted steps), see bench_io.read_trace.  A failed run has
no trace (None).

For a problem p, solvers s and tolerance 0 < tau < 1:
    f*(p)        = min cost reached by any solver,
    f0(p)        = initial cost,
    f_tau(p)     = f*(p) + tau (f0(p) - f*(p)),
    t_tau(p, s)  = cumulative time of the first point of s with cost <= f_tau(p)
                   (infinity if none, or if the run failed),
    rho_tau(s, a)= fraction of problems with t_tau(p, s) <= a * min_s' t_tau(p, s').
"""

import math
from collections import namedtuple

TAUS = (1e-1, 1e-2, 1e-3)

# f0, f_star: floats or None when no solver produced a trace.
# thresholds: {tau: f_tau or None}; times: {tau: {solver: seconds or inf}}.
ProblemAnalysis = namedtuple("ProblemAnalysis", "f0 f_star thresholds times")


def _finite_costs(trace):
    return [cost for _, cost in trace if math.isfinite(cost)]


def initial_cost(traces):
    """f0: the initial cost, from the first point of every available trace.

    All solvers start from the same parameters, so their initial costs agree
    up to floating-point summation order.  Taking the largest keeps one run's
    rounding from making the thresholds of the others harder to reach.
    """
    firsts = [trace[0][1] for trace in traces if trace and math.isfinite(trace[0][1])]
    return max(firsts) if firsts else None


def best_cost(traces):
    """f*: the smallest finite cost any run reached (None if there is none)."""
    costs = [c for trace in traces if trace for c in _finite_costs(trace)]
    return min(costs) if costs else None


def cost_threshold(f0, f_star, tau):
    """f_tau = f* + tau (f0 - f*): the cost a solver must reach for accuracy tau."""
    return f_star + tau * (f0 - f_star)


def time_to_threshold(trace, f_tau):
    """Cumulative time of the first trace point with cost <= f_tau; inf if never.

    A missing trace (failed run) or threshold (no solver produced a trace)
    means "never".  A NaN cost never satisfies the comparison.
    """
    if not trace or f_tau is None:
        return math.inf
    for seconds, cost in trace:
        if cost <= f_tau:
            return seconds
    return math.inf


def analyse_problem(traces_by_solver, taus=TAUS):
    """f0, f*, f_tau and every solver's t_tau for one problem.

    traces_by_solver maps solver name -> trace or None (failed run).
    """
    traces = list(traces_by_solver.values())
    f0, f_star = initial_cost(traces), best_cost(traces)
    thresholds, times = {}, {}
    for tau in taus:
        f_tau = None if f0 is None or f_star is None else cost_threshold(f0, f_star, tau)
        thresholds[tau] = f_tau
        times[tau] = {name: time_to_threshold(trace, f_tau)
                      for name, trace in traces_by_solver.items()}
    return ProblemAnalysis(f0, f_star, thresholds, times)


def time_ratio(t, t_ref):
    """t / t_ref with the conventions needed for times that may be infinite.

    Both infinite: undefined (nan), neither solver got there.  Reference
    infinite: 0 (the other got there, the reference never did).  Reference 0:
    only t == 0 keeps up with it (ratio 1), anything else is infinitely slower;
    this is exactly the profile's condition t <= alpha * 0.
    """
    if math.isinf(t) and math.isinf(t_ref):
        return math.nan
    if t_ref == 0:
        return 1.0 if t == 0 else math.inf
    return t / t_ref


def performance_ratios(times_per_problem, solvers):
    """Per solver, its time relative to the fastest solver on each problem.

    times_per_problem: one {solver: t_tau} dict per problem (one tau).
    Returns {solver: [ratio per problem]}; a ratio is inf where the solver did
    not reach the threshold (including problems no solver solved), so every
    problem stays in the profile's denominator.
    """
    ratios = {s: [] for s in solvers}
    for times in times_per_problem:
        fastest = min((times.get(s, math.inf) for s in solvers), default=math.inf)
        for s in solvers:
            t = times.get(s, math.inf)
            ratio = math.inf if math.isinf(fastest) or math.isinf(t) else time_ratio(t, fastest)
            ratios[s].append(ratio)
    return ratios


def profile(ratios, alpha):
    """rho(alpha): fraction of problems solved within alpha x the fastest time."""
    if not ratios:
        return 0.0
    return sum(1 for r in ratios if r <= alpha) / len(ratios)


def profile_curve(ratios):
    """Breakpoints (alphas, fractions) of the step function rho, for plotting.

    The curve starts at alpha = 1 (fraction of problems where the solver is the
    fastest) and rises at every finite ratio; callers extend it to the right.
    """
    steps = sorted({r for r in ratios if math.isfinite(r) and r > 1.0})
    alphas = [1.0] + steps
    return alphas, [profile(ratios, a) for a in alphas]
