"""PNG figures of benchmark results (matplotlib, Agg backend, small files).

Each function writes one kind of figure into the results folder and returns
the file names it wrote, so the report links exactly what exists.
"""

import math
import os
import statistics

import matplotlib

matplotlib.use("Agg")  # headless: no display on build machines and in ctest
import matplotlib.pyplot as plt  # noqa: E402  (must follow use("Agg"))
from matplotlib import ticker  # noqa: E402

import analysis  # noqa: E402
import perf_profiles  # noqa: E402
from report import (MEMORY_PNG, PROFILES_PNG, SCALING_PNG, convergence_png, fmt_tau,  # noqa: E402
                    phases_png)
import solvers  # noqa: E402
import targets  # noqa: E402

DPI = 100
# Profiles are cut off on the right like the paper's: beyond this the curves
# only tell which solvers eventually reach the threshold, which the plateau shows.
MAX_ALPHA = 20.0
ALPHA_TICKS = (1, 1.25, 1.5, 2, 3, 5, 10, 20)
MAX_WIDTH = 16.0  # inches: the memory bars of all 97 BAL problems stay one readable figure


_LINESTYLES = {"sqrt": "-", "ceres22": "--", "ceres": ":"}


def _style(solver_name):
    """Fixed colour per solver (its position in the solver table), so a solver
    looks the same in every figure; sqrt solvers solid, Ceres 2.2 dashed, the
    linked Ceres dotted."""
    names = solvers.solver_names()
    index = names.index(solver_name) if solver_name in names else len(names)
    family = solvers.by_name(solver_name).family if solver_name in names else ""
    return {"color": "C%d" % (index % 10), "linestyle": _LINESTYLES.get(family, "-.")}


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def plot_profiles(results, solver_names, path):
    """Performance profiles, one panel per tau, as in the paper's Figure 4."""
    taus = analysis.taus_of(results)
    fig, axes = plt.subplots(1, len(taus), figsize=(4 * len(taus), 3.4), sharey=True, squeeze=False)
    for ax, tau in zip(axes[0], taus):
        ratios = perf_profiles.performance_ratios(
            [r.analysis.times[tau] for r in results], solver_names)
        finite = [x for rs in ratios.values() for x in rs if math.isfinite(x)]
        alpha_max = min(MAX_ALPHA, max([2.0] + [1.2 * x for x in finite]))
        for name in solver_names:
            alphas, fractions = perf_profiles.profile_curve(ratios[name])
            ax.step(alphas + [alpha_max], [100 * f for f in fractions + fractions[-1:]],
                    where="post", label=name, **_style(name))
        ax.set_xscale("log")
        ax.set_xlim(1.0, alpha_max)
        ax.xaxis.set_major_locator(ticker.FixedLocator(
            [a for a in ALPHA_TICKS if a <= alpha_max]))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: "%g" % x))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_ylim(-2, 102)
        ax.set_title("τ = %s" % fmt_tau(tau))
        ax.set_xlabel("relative runtime α")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("% problems solved")
    axes[0][-1].legend(fontsize="small", loc="lower right")
    _save(fig, path)


def _convergence_time_limit(result):
    """Right end of a convergence plot: a little after the last solver reached
    the smallest tau, or when the fastest solver finished if that is later.
    Beyond it the curves are flat, and one slow solver would squash the rest."""
    ends = [d.trace[-1][0] for d in result.runs.values() if d.trace]
    if not ends:
        return None
    smallest_tau = min(result.analysis.times)
    reached = [t for t in result.analysis.times[smallest_tau].values() if math.isfinite(t)]
    return min(max(ends), max([min(ends)] + [1.2 * t for t in reached]))


def plot_convergence(result, path):
    """Cost (log) vs time of every solver on one problem, with f_tau lines."""
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for name, data in result.runs.items():
        if data.trace:
            ax.plot([t for t, _ in data.trace], [c for _, c in data.trace],
                    marker=".", markersize=3, label=name, **_style(name))
    for tau, f_tau in sorted(result.analysis.thresholds.items(), reverse=True):
        if f_tau is not None and f_tau > 0:
            ax.axhline(f_tau, color="grey", linewidth=0.8, linestyle=":")
            ax.annotate("τ=%s" % fmt_tau(tau), (1.0, f_tau), xycoords=("axes fraction", "data"),
                        fontsize="x-small", ha="right", va="bottom", color="grey")
    if ax.lines and all(c > 0 for d in result.runs.values() if d.trace for _, c in d.trace):
        ax.set_yscale("log")
    right = _convergence_time_limit(result)
    if right:
        ax.set_xlim(0, right)
    ax.set_title(result.name, fontsize="medium")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("cost")
    ax.grid(True, which="both", alpha=0.3)
    if ax.lines:
        ax.legend(fontsize="small")
    _save(fig, path)


def plot_memory(results, solver_names, path):
    """Peak resident memory per problem, one bar per solver (grouped)."""
    fig, ax = plt.subplots(figsize=(min(MAX_WIDTH, max(5.0, 1.2 * len(results) + 2)), 3.6))
    width = 0.8 / max(1, len(solver_names))
    for i, name in enumerate(solver_names):
        heights = []
        for result in results:
            data = result.runs.get(name)
            ok = data is not None and data.rows is not None
            heights.append(data.run["peak_rss_mib"] if ok else 0.0)
        ax.bar([p + (i - (len(solver_names) - 1) / 2) * width for p in range(len(results))],
               heights, width, label=name, color=_style(name)["color"])
    ax.set_xticks(range(len(results)))
    ax.set_xticklabels([r.name for r in results], rotation=20, ha="right", fontsize="small")
    ax.set_ylabel("peak memory [MiB]")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, path)


# Colours of the phases (stacked from the bottom in this order).
_PHASE_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#b0b0b0")


def plot_phases(result, path):
    """Stacked bars, one per solver with a time breakdown: residual evaluation,
    Jacobian evaluation, linear solver and the rest of the total."""
    bars = [(name, analysis.phase_seconds(d.run)) for name, d in result.runs.items()
            if d.rows is not None]
    bars = [(name, b) for name, b in bars if b]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(bars) + 2.5), 3.8))
    labels = [label for label, _ in analysis.PHASES] + [analysis.REST]
    bottoms = [0.0] * len(bars)
    for label, colour in zip(labels, _PHASE_COLOURS):
        heights = [b[label] for _, b in bars]
        ax.bar(range(len(bars)), heights, 0.6, bottom=bottoms, label=label, color=colour)
        bottoms = [low + h for low, h in zip(bottoms, heights)]
    # Each bar's total on top of it. A solver far slower than the others
    # (e.g. sqrt-sparse) is cut at the top of the axis, its total written
    # there, so that the others stay readable.
    totals = [b["total"] for _, b in bars]
    top = max(totals, default=0.0)
    if len(totals) > 2:
        typical = statistics.median(totals)
        kept = [t for t in totals if t <= 4 * typical]
        if kept and top > 4 * typical:
            top = max(kept)
    if top > 0:
        ax.set_ylim(0, 1.25 * top)
    for x, total in enumerate(totals):
        if total > 1.25 * top:  # cut: the total in a box inside the axis
            ax.text(x, 1.1 * top, "%.3g s ↑" % total, ha="center", va="bottom",
                    fontsize="x-small", bbox={"facecolor": "white", "edgecolor": "none"})
        else:
            ax.text(x, total, "%.3g s" % total, ha="center", va="bottom", fontsize="x-small")
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels([name for name, _ in bars], rotation=20, ha="right", fontsize="small")
    ax.set_ylabel("seconds (whole run)")
    ax.set_title("%s: time per phase" % result.name, fontsize="medium")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    _save(fig, path)


def has_phase_data(result):
    return any(d.rows is not None and analysis.phase_seconds(d.run) for d in result.runs.values())


def has_scaling_data(results, solver_names):
    """True if some solver ran on at least two synthetic sizes."""
    return any(len({x for x, _ in targets.scaling_points(results, s)}) >= 2 for s in solver_names)


def plot_scaling(results, solver_names, path):
    """Time per LM iteration vs observations (log-log) on synthetic problems."""
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for name in solver_names:
        points = targets.scaling_points(results, name)
        if points:
            slope = targets.loglog_slope(points)
            label = name if slope is None else "%s (slope %.2f)" % (name, slope)
            ax.plot([x for x, _ in points], [y for _, y in points], marker="o",
                    label=label, **_style(name))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("observations")
    ax.set_ylabel("seconds per iteration")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    _save(fig, path)


def plot_all(results, solver_names, out_dir):
    """Write every figure that the results support; return their file names."""
    written = []
    if not results:
        return written
    plot_profiles(results, solver_names, os.path.join(out_dir, PROFILES_PNG))
    written.append(PROFILES_PNG)
    for result in results:
        plot_convergence(result, os.path.join(out_dir, convergence_png(result.name)))
        written.append(convergence_png(result.name))
        if has_phase_data(result):
            plot_phases(result, os.path.join(out_dir, phases_png(result.name)))
            written.append(phases_png(result.name))
    plot_memory(results, solver_names, os.path.join(out_dir, MEMORY_PNG))
    written.append(MEMORY_PNG)
    if has_scaling_data(results, solver_names):
        plot_scaling(results, solver_names, os.path.join(out_dir, SCALING_PNG))
        written.append(SCALING_PNG)
    return written
