#!/usr/bin/python3
"""Stand-in for Ceres 2.2's examples/bundle_adjuster, for testing the driver.

Accepts exactly the flags of Ceres 2.2's example (and glog's --logtostderr;
any other flag is an error, as with gflags), reads only the header of a
plain-text BAL file (a bzip2 file is an error, as it is for that binary) and
prints what the real binary prints: Ceres' progress table and a FullReport,
in Ceres' formats, with modelled, deterministic convergence.  Every fifth
step is rejected (its row shows the candidate's higher cost, the previous
gradient and a negative tr_ratio), iteration 7 is an invalid step (tr_ratio
0), and a glog warning line sits between two rows.  The solver is told by its
flags (the driver's ceres22-* names).

FAKE_CERES22_FAIL=<label>:<mode>[,...] makes runs of <label> misbehave:
crash (part of the table, then exit 134 as after a CHECK), failure (the solve
ends with Termination: FAILURE, exit 0 as the real binary does), garbage (no
table at all), hang (sleep 60 s).
"""

import os
import sys
import time

VALUE_FLAGS = {
    "input": "", "trust_region_strategy": "levenberg_marquardt",
    "dogleg": "traditional_dogleg", "blocks_for_inner_iterations": "automatic",
    "linear_solver": "sparse_schur", "preconditioner": "jacobi",
    "visibility_clustering": "canonical_views", "sparse_linear_algebra_library": "suite_sparse",
    "dense_linear_algebra_library": "eigen", "ordering_type": "amd",
    "linear_solver_ordering": "user", "eta": "1e-2", "num_threads": "-1",
    "num_iterations": "5", "max_linear_solver_iterations": "500", "spse_tolerance": "0.1",
    "max_num_spse_iterations": "5", "max_solver_time": "1e32", "rotation_sigma": "0",
    "translation_sigma": "0", "point_sigma": "0", "random_seed": "38401",
    "max_num_refinement_iterations": "0", "initial_ply": "", "final_ply": "",
}
BOOL_FLAGS = {"inner_iterations": False, "explicit_schur_complement": False,
              "use_spse_initialization": False, "use_quaternions": False,
              "use_manifolds": False, "robustify": False, "nonmonotonic_steps": False,
              "line_search": False, "mixed_precision_solves": False, "logtostderr": False}

# label: (cost decay per accepted step, seconds per iteration per observation,
# MiB per 1000 observations)
SOLVERS = {
    "ceres22-implicit": (0.6, 2.0e-6, 0.25),
    "ceres22-explicit": (0.6, 2.2e-6, 0.35),
    "ceres22-sparse-schur": (0.5, 3.5e-6, 0.6),
    "ceres22-power-series": (0.62, 1.9e-6, 0.25),
}
ROW = "% 4d % 8e   % 3.2e   % 3.2e  % 3.2e  % 3.2e % 3.2e     % 4d   % 3.2e   % 3.2e"
HEADER = ("iter      cost      cost_change  |gradient|   |step|    tr_ratio  tr_radius  "
          "ls_iter  iter_time  total_time")


def parse_flags(argv):
    flags = dict(VALUE_FLAGS)
    flags.update(BOOL_FLAGS)
    for arg in argv:
        if not arg.startswith("--"):
            continue  # gflags leaves positional arguments; the example ignores them
        name, has_value, value = arg[2:].partition("=")
        if name in BOOL_FLAGS:
            flags[name] = (value.lower() in ("1", "true", "yes")) if has_value else True
        elif name in VALUE_FLAGS:
            flags[name] = value
        else:
            sys.stderr.write("ERROR: unknown command line flag '%s'\n" % name)
            sys.exit(1)
    return flags


def solver_label(flags):
    if flags["linear_solver"] == "sparse_schur":
        return "ceres22-sparse-schur"
    if flags["preconditioner"] == "schur_power_series_expansion":
        return "ceres22-power-series"
    return "ceres22-explicit" if flags["explicit_schur_complement"] else "ceres22-implicit"


def failure_mode(label):
    for item in os.environ.get("FAKE_CERES22_FAIL", "").split(","):
        name, _, mode = item.partition(":")
        if name == label:
            return mode
    return ""


def read_header(path):
    with open(path, "rb") as f:
        start = f.read(64)
    if start.startswith(b"BZh"):
        sys.stderr.write("E1126 00:00:00.000000 1 bal_problem.cc:64] Error reading file: %s\n"
                         % path)
        sys.exit(134)
    return tuple(int(x) for x in start.decode().splitlines()[0].split())


def iterations(label, observations, num_iterations):
    """(iteration, cost, cost_change, gradient, step, ratio, radius, ls_iter,
    iter_time, total_time) rows following the solver's model."""
    decay, seconds_per_obs, _ = SOLVERS[label]
    f0 = 10.0 * observations
    f_limit = 0.05 * f0
    cost, radius, gradient = f0, 1e4, 1e3
    total = 2e-6 * observations
    rows = [(0, cost, 0.0, gradient, 0.0, 0.0, radius, 0, total, total)]
    for k in range(1, num_iterations + 1):
        step = seconds_per_obs * observations
        total += step
        if k == 7:  # invalid step: the current cost, no change, ratio 0
            radius /= 2
            rows.append((k, cost, 0.0, gradient, 0.0, 0.0, radius, 3, step, total))
            continue
        if k % 5 == 0:  # rejected: the candidate's cost, the previous gradient
            candidate = cost * 1.5
            radius /= 2
            rows.append((k, candidate, cost - candidate, gradient, 10.0, -0.8, radius, 10 + k,
                         step, total))
            continue
        new_cost = f_limit + (cost - f_limit) * decay
        gradient *= decay
        radius *= 3
        rows.append((k, new_cost, cost - new_cost, gradient, 10.0, 0.9, radius, 10 + k, step,
                     total))
        cost = new_cost
    return rows


def full_report(label, flags, rows, counts, termination, message):
    cameras, points, observations = counts
    preconditioner = {"ceres22-implicit": "SCHUR_JACOBI", "ceres22-explicit": "SCHUR_JACOBI",
                      "ceres22-power-series": "SCHUR_POWER_SERIES_EXPANSION",
                      "ceres22-sparse-schur": None}[label]
    solver = "SPARSE_SCHUR" if preconditioner is None else "ITERATIVE_SCHUR"
    total = rows[-1][9]
    minimizer = total - rows[0][8] * 0.5
    accepted = [r for r in rows if r[0] == 0 or r[5] > 1e-3]
    lines = ["", "Solver Summary (v 2.2.0-eigen-(3.4.0)-lapack-suitesparse-(5.12.0)-eigensparse)",
             "", "%37s%26s" % ("Original", "Reduced"),
             "Parameter blocks    %25d%25d" % (cameras + points, cameras + points),
             "Residual blocks     %25d%25d" % (observations, observations), "",
             "Minimizer                        TRUST_REGION",
             "Trust region strategy     LEVENBERG_MARQUARDT",
             "%41s%25s" % ("Given", "Used"),
             "Linear solver       %21s%25s" % (solver, solver)]
    if preconditioner:
        lines.append("Preconditioner      %21s%25s" % (preconditioner, preconditioner))
    lines += ["Threads             %21s%25s" % (flags["num_threads"], flags["num_threads"]),
              "", "Cost:",
              "Initial                          %e" % rows[0][1],
              "Final                            %e" % accepted[-1][1],
              "Change                           %e" % (rows[0][1] - accepted[-1][1]), "",
              "Minimizer iterations                       %3d" % len(rows), "",
              "Time (in seconds):",
              "Preprocessor        %25.6f" % (rows[0][9] - rows[0][8]), "",
              "  Residual only evaluation %18.6f (%d)" % (0.1 * total, len(rows) - 1),
              "  Jacobian & residual evaluation %12.6f (%d)" % (0.3 * total, len(accepted)),
              "  Linear solver       %23.6f (%d)" % (0.4 * total, len(rows) - 1),
              "Minimizer           %25.6f" % minimizer, "",
              "Postprocessor        %24.6f" % 0.000123,
              "Total               %25.6f" % (total + 0.000123), "",
              "Termination:        %25s (%s)" % (termination, message)]
    return "\n".join(lines)


def main():
    flags = parse_flags(sys.argv[1:])
    if not flags["input"]:
        sys.stderr.write("E1126 00:00:00.000000 1 bundle_adjuster.cc:392] Usage: "
                         "bundle_adjuster --input=bal_problem\n")
        return 1
    label = solver_label(flags)
    mode = failure_mode(label)
    if mode == "hang":
        time.sleep(60)
    counts = read_header(flags["input"])
    held = bytearray(int(SOLVERS[label][2] * counts[2] / 1000.0 * 1024 * 1024))
    held[::4096] = b"\x01" * len(range(0, len(held), 4096))
    if mode == "garbage":
        print("something else entirely")
        return 0
    rows = iterations(label, counts[2], int(flags["num_iterations"]))
    out = [HEADER]
    for row in rows:
        out.append(ROW % row)
        if row[0] == 5:
            out.append("W1126 00:00:01.000000 1 trust_region_minimizer.cc:735] "
                       "Step failed to evaluate. Treating it as a step with infinite cost")
        if mode == "crash" and row[0] == 3:
            sys.stdout.write("\n".join(out) + "\n")
            sys.stdout.flush()
            os._exit(134)
    termination, message = "NO_CONVERGENCE", ("Maximum number of iterations reached. "
                                              "Number of iterations: %d." % rows[-1][0])
    if mode == "failure":
        termination, message = "FAILURE", "Residual and Jacobian evaluation failed."
    out.append(full_report(label, flags, rows, counts, termination, message))
    sys.stdout.write("\n".join(out) + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
