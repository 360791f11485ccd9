"""The solver configurations compared by the benchmark driver, in one place.

A solver is run by one of three programs:

- "sqrtba": this project's example binary (examples/bundle_adjuster), which
  runs the square-root solvers and, through ceres_sqrtba::Solve's
  pass-through, the Ceres it is linked with (Debian's Ceres 2.1 here);
- "ceres22": Ceres 2.2's own examples/bundle_adjuster, built once per machine
  by scripts/build_ceres22.sh.  It reads plain-text BAL files only, prints its
  progress table and FullReport to stdout and has its own flag set; the
  driver converts what it prints into the same trace and summary files
  (ceres22_output.py);
- "baseline": this project's example binary built from an earlier commit
  (run_benchmarks.py --baseline-binary), run with the same flags as ours, so
  that "no slower than before" is measured within one run, interleaved with
  the current binary, instead of against an older results folder.

Every run gets common_flags(program, ...) plus the flags of its entry in
SOLVERS.  The table is the only place that knows solver flags: the driver,
its --help text, the report and the target checks all read it, so adding a
solver is one line here.
"""

from collections import namedtuple

# family: "sqrt" for this project's solvers, "ceres" for the Ceres our binary
# links (2.1 here), "ceres22" for Ceres 2.2's own example.  The targets
# compare against the best "ceres22" solver of each problem and tau.
# program: "sqrtba" or "ceres22" (which binary runs it, see above).
Solver = namedtuple("Solver", "name family flags program")

SQRTBA = "sqrtba"
CERES22 = "ceres22"
BASELINE = "baseline"

SOLVERS = (
    Solver("sqrt-single", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=single"), SQRTBA),
    Solver("sqrt-double", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=double"), SQRTBA),
    Solver("sqrt-sparse", "sqrt", ("--linear_solver=sqrt_sparse_schur", "--precision=double"),
           SQRTBA),
    # sqrt-single with every Jacobian evaluated in double
    # (ceres::AutoDiffCostFunction): what float Jacobians buy, within one run.
    Solver("sqrt-single-double-jacobians", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=single", "--float_jacobians=false"),
           SQRTBA),
    # The paper's explicit landmark blocks (Q2^T Jp stored), for comparison
    # with the projected default.
    Solver("sqrt-single-explicit", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=single",
            "--explicit_reduced_rows"), SQRTBA),
    Solver("sqrt-double-explicit", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=double",
            "--explicit_reduced_rows"), SQRTBA),
    # The visibility-based preconditioners in square-root form, against
    # SCHUR_JACOBI (sqrt-single) and against Ceres' own (below).
    Solver("sqrt-single-cluster-jacobi", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=single",
            "--preconditioner=cluster_jacobi"), SQRTBA),
    Solver("sqrt-single-cluster-tridiagonal", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=single",
            "--preconditioner=cluster_tridiagonal"), SQRTBA),
    # Ceres 2.2's own bundle_adjuster.
    Solver("ceres22-implicit", "ceres22",
           ("--linear_solver=iterative_schur", "--preconditioner=schur_jacobi"), CERES22),
    Solver("ceres22-explicit", "ceres22",
           ("--linear_solver=iterative_schur", "--preconditioner=schur_jacobi",
            "--explicit_schur_complement"), CERES22),
    Solver("ceres22-sparse-schur", "ceres22",
           ("--linear_solver=sparse_schur", "--sparse_linear_algebra_library=suite_sparse"),
           CERES22),
    Solver("ceres22-power-series", "ceres22",
           ("--linear_solver=iterative_schur",
            "--preconditioner=schur_power_series_expansion"), CERES22),
    Solver("ceres22-cluster-jacobi", "ceres22",
           ("--linear_solver=iterative_schur", "--preconditioner=cluster_jacobi"), CERES22),
    Solver("ceres22-cluster-tridiagonal", "ceres22",
           ("--linear_solver=iterative_schur", "--preconditioner=cluster_tridiagonal"), CERES22),
    # The iterative square-root solver of an earlier build of this project
    # (--baseline-binary): the same flags as sqrt-single / sqrt-double.
    Solver("baseline-single", "baseline",
           ("--linear_solver=sqrt_iterative_schur", "--precision=single"), BASELINE),
    Solver("baseline-double", "baseline",
           ("--linear_solver=sqrt_iterative_schur", "--precision=double"), BASELINE),
    # The Ceres our example binary is linked with (Ceres 2.1 from Debian).
    Solver("ceres-implicit", "ceres",
           ("--linear_solver=iterative_schur", "--preconditioner=schur_jacobi"), SQRTBA),
    Solver("ceres-explicit", "ceres",
           ("--linear_solver=iterative_schur", "--preconditioner=schur_jacobi",
            "--explicit_schur_complement"), SQRTBA),
    Solver("ceres-sparse-schur", "ceres",
           ("--linear_solver=sparse_schur",
            "--sparse_linear_algebra_library=suite_sparse"), SQRTBA),
    Solver("ceres-cluster-jacobi", "ceres",
           ("--linear_solver=iterative_schur", "--preconditioner=cluster_jacobi"), SQRTBA),
    Solver("ceres-cluster-tridiagonal", "ceres",
           ("--linear_solver=iterative_schur", "--preconditioner=cluster_tridiagonal"), SQRTBA),
)

# The family the report's time ratios and the speed targets are taken
# against: per problem and tau, its fastest solver ("best Ceres 2.2 solver").
REFERENCE_FAMILY = "ceres22"
REFERENCE_LABEL = "best Ceres 2.2"

DEFAULT_NUM_ITERATIONS = 50


def common_flags(num_iterations, num_threads, program=SQRTBA):
    """Flags shared by every solver of `program`, so that runs differ only by
    solver and all binaries solve the same problem the same way (the baseline
    build gets ours):

    - the same iterations, Huber loss, eta, PCG limit and threads;
    - Ceres 2.2's example always sets parameter_tolerance = 1e-16 (2.1's
      did not): ours is given the same;
    - Ceres 2.2's example defaults to a user ordering (points, then cameras)
      where ours lets the solver find the landmarks (automatic, as Ceres 2.1's
      example did): 2.2 is told "automatic" as well;
    - 2.2's example defaults to all cores and to glog files in /tmp: it gets
      the threads and --logtostderr.
    """
    shared = ("--num_iterations=%s" % num_iterations, "--robustify", "--eta=0.1",
              "--max_linear_solver_iterations=500")
    if program == CERES22:
        return shared + ("--linear_solver_ordering=automatic",
                         "--num_threads=%s" % num_threads, "--logtostderr")
    return shared + ("--jacobi_scaling=true", "--parameter_tolerance=1e-16",
                     "--num_threads=%s" % num_threads)


# Run when --solvers is not given: the square-root solvers (iterative in both
# precisions, direct) and every Ceres 2.2 solver. The explicit square-root
# variants and the linked Ceres 2.1 are for comparisons: name them with
# --solvers (the baseline-* solvers with --baseline-binary).
DEFAULT_SOLVERS = ("sqrt-single", "sqrt-double", "sqrt-sparse", "ceres22-implicit", "ceres22-explicit",
                   "ceres22-sparse-schur", "ceres22-power-series")


def solver_names():
    """Names of all known solvers, in table order (also the report order)."""
    return [s.name for s in SOLVERS]


def by_name(name):
    """The Solver called `name`; KeyError naming the known ones otherwise."""
    for solver in SOLVERS:
        if solver.name == name:
            return solver
    raise KeyError("unknown solver %r (known: %s)" % (name, ", ".join(solver_names())))


def family_members(family, names):
    """The subset of `names` belonging to `family`, e.g. all Ceres 2.2 solvers run."""
    return [n for n in names if n in solver_names() and by_name(n).family == family]


def program_of(name):
    """Which binary runs solver `name` (SQRTBA or CERES22)."""
    return by_name(name).program
