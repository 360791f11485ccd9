#!/usr/bin/python3
"""Stand-in for examples/bundle_adjuster, for testing the benchmark driver.

Honours the example binary's command-line contract (gflags style
--name=value / bare booleans; unknown flags are an error, as with gflags, so
the driver cannot pass flags the real binary would reject) and writes --csv
and --summary_csv files with plausible, deterministic convergence: each
solver decays the cost geometrically at its own rate and per-iteration time,
rejects some steps, and holds a solver-dependent amount of memory.  Times are
modelled, not measured, so tests run in well under a second per run.

FAKE_BA_FAIL=<label>:<mode>[,...] makes runs of solver <label> (sqrt-single,
sqrt-double, sqrt-sparse, ceres-implicit, ceres-explicit, ceres-sparse-schur)
misbehave: crash (exit 3), nocsv (exit 0 without summary), hang (sleep 60 s),
stuck (never improves on the initial cost), switch (sqrt-single: switches to
double precision at iteration 2).  FAKE_BA_FAIL=write_bal:crash makes
--write_bal fail.

--write_bal writes a BAL text file with the problem's header and made-up
values (what fake_ceres22_bundle_adjuster.py reads); the summary has the
time breakdown (a fixed share of the total per phase) and
precision_switch_iteration.
"""

import bz2
import csv
import os
import sys
import time

VALUE_FLAGS = {
    "input": "", "csv": "", "summary_csv": "", "linear_solver": "sparse_schur",
    "preconditioner": "jacobi", "precision": "double",
    "sparse_linear_algebra_library": "suite_sparse",
    "num_iterations": "5", "eta": "0.01", "max_linear_solver_iterations": "500",
    "num_threads": "1", "synthetic_num_cameras": "20", "synthetic_num_points": "1000",
    "synthetic_observations_per_point": "5", "random_seed": "38401", "jacobi_scaling": "true",
    "synthetic_max_observations_per_point": "0", "parameter_tolerance": "1e-8", "write_bal": "",
}
BOOL_FLAGS = {"robustify": False, "explicit_schur_complement": False, "write_bal_only": False}

# label: (cost decay per accepted iteration, seconds per iteration per
# observation, MiB per 1000 observations, relative excess of its final cost)
SOLVERS = {
    "sqrt-single": (0.55, 0.8e-6, 0.30, 1e-7),
    "sqrt-double": (0.55, 1.5e-6, 0.40, 0.0),
    "sqrt-sparse": (0.50, 6.0e-6, 1.20, 0.0),
    "ceres-implicit": (0.60, 2.0e-6, 0.25, 0.0),
    "ceres-explicit": (0.60, 2.4e-6, 0.35, 0.0),
    "ceres-sparse-schur": (0.50, 4.0e-6, 0.60, 0.0),
}


def parse_flags(argv):
    flags = dict(VALUE_FLAGS)
    flags.update(BOOL_FLAGS)
    args = iter(argv)
    for arg in args:
        if not arg.startswith("--"):
            sys.exit("ERROR: unexpected argument %r" % arg)
        name, has_value, value = arg[2:].partition("=")
        if name in BOOL_FLAGS:
            flags[name] = (value.lower() in ("1", "true", "yes")) if has_value else True
        elif name in VALUE_FLAGS:
            flags[name] = value if has_value else next(args, "")
        else:
            sys.exit("ERROR: unknown command line flag '%s'" % name)
    return flags


def solver_label(flags):
    if flags["linear_solver"] == "sqrt_iterative_schur":
        return "sqrt-" + flags["precision"]
    if flags["linear_solver"] == "sqrt_sparse_schur":
        return "sqrt-sparse"
    if flags["linear_solver"] == "iterative_schur":
        return "ceres-explicit" if flags["explicit_schur_complement"] else "ceres-implicit"
    return "ceres-sparse-schur"


def problem_size(flags):
    """(name, cameras, points, observations) of the BAL file or synthetic problem."""
    path = flags["input"]
    if not path:
        points = int(flags["synthetic_num_points"])
        per_point = max(int(flags["synthetic_observations_per_point"]),
                        (int(flags["synthetic_observations_per_point"])
                         + int(flags["synthetic_max_observations_per_point"])) // 2)
        return ("synthetic", int(flags["synthetic_num_cameras"]), points, points * per_point)
    opener = bz2.open if path.endswith(".bz2") else open
    with opener(path, "rt") as f:
        cameras, points, observations = (int(x) for x in f.readline().split())
    return os.path.basename(path), cameras, points, observations


def failure_mode(label):
    for item in os.environ.get("FAKE_BA_FAIL", "").split(","):
        name, _, mode = item.partition(":")
        if name == label:
            return mode
    return ""


def iterations(label, observations, num_iterations, stuck):
    """Rows of the per-iteration CSV (as lists) following the solver's model."""
    decay, seconds_per_obs, _, excess = SOLVERS[label]
    f0 = 10.0 * observations
    f_limit = 0.05 * f0 * (1 + excess)
    cost, t, radius = f0, 1e-6 * observations, 1e4
    rows = [[0, t, cost, 0.0, 1e3, radius, 0, 0]]
    for k in range(1, num_iterations + 1):
        t += seconds_per_obs * observations
        accepted = not stuck and k % 5 != 0
        new_cost = f_limit + (cost - f_limit) * decay if accepted else cost
        radius = radius * 3 if accepted else radius / 2
        rows.append([k, t, new_cost, cost - new_cost, 1e3 * decay ** k, radius, 10 + k,
                     int(accepted)])
        cost = new_cost
    return rows


def hold_memory(mib):
    """Touch `mib` MiB so the process's peak RSS reflects the solver's model."""
    buf = bytearray(int(mib * 1024 * 1024))
    buf[::4096] = b"\x01" * len(range(0, len(buf), 4096))
    return buf


def write_bal(path, cameras, points, observations):
    """A BAL text file of the right size with made-up values."""
    with open(path, "w") as f:
        f.write("%d %d %d\n" % (cameras, points, observations))
        for i in range(observations):
            f.write("%d %d %.17g %.17g\n" % (i % cameras, i % points, 0.5 * i, -0.25 * i))
        for i in range(9 * cameras + 3 * points):
            f.write("%.17g\n" % (1.0 + 1e-3 * i))


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def main():
    flags = parse_flags(sys.argv[1:])
    label = solver_label(flags)
    mode = failure_mode(label)
    if mode == "crash":
        sys.exit("fake failure of %s" % label)
    if mode == "hang":
        time.sleep(60)
    name, cameras, points, observations = problem_size(flags)
    if flags["write_bal"]:
        if failure_mode("write_bal") == "crash":
            sys.exit("fake failure of --write_bal")
        write_bal(flags["write_bal"], cameras, points, observations)
        print("Wrote %s" % flags["write_bal"])
        if flags["write_bal_only"]:
            return 0
    held = hold_memory(SOLVERS[label][2] * observations / 1000.0)
    rows = iterations(label, observations, int(flags["num_iterations"]), mode == "stuck")
    if flags["csv"]:
        write_csv(flags["csv"], ["iteration", "cumulative_seconds", "cost", "cost_change",
                                 "gradient_max_norm", "trust_region_radius",
                                 "linear_solver_iterations", "step_accepted"], rows)
    if flags["summary_csv"] and mode != "nocsv":
        total = rows[-1][1]
        switch = 2 if mode == "switch" else -1
        write_csv(flags["summary_csv"],
                  ["solver", "precision", "problem", "num_cameras", "num_points",
                   "num_observations", "initial_cost", "final_cost", "iterations",
                   "linear_solver_iterations_total", "total_seconds", "termination",
                   "precision_switch_iteration", "preprocessor_seconds",
                   "residual_evaluation_seconds", "jacobian_evaluation_seconds",
                   "linear_solver_seconds", "minimizer_seconds", "postprocessor_seconds"],
                  [[flags["linear_solver"], flags["precision"], name, cameras, points,
                    observations, rows[0][2], rows[-1][2], len(rows),
                    sum(r[6] for r in rows), total, "NO_CONVERGENCE", switch,
                    0.05 * total, 0.1 * total, 0.3 * total, 0.4 * total, 0.9 * total,
                    0.01 * total]])
    print("fake %s on %s: %d iterations, %.1f MiB held" % (label, name, len(rows),
                                                           len(held) / 2.0**20))
    return 0


if __name__ == "__main__":
    sys.exit(main())
