"""The solver configurations compared by the benchmark driver, in one place.

Every run of the example binary gets COMMON_FLAGS plus the flags of one entry
of SOLVERS.  The table is the only place that knows solver flags: the driver,
its --help text, the report and the target checks all read it, so adding a
solver is one line here.
"""

from collections import namedtuple

# family: "sqrt" for this project's solvers, "ceres" for Ceres' own.  The
# target checks compare against "the fastest Ceres solver", i.e. family ceres.
Solver = namedtuple("Solver", "name family flags")

SOLVERS = (
    Solver("sqrt-single", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=single")),
    Solver("sqrt-double", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=double")),
    Solver("sqrt-sparse", "sqrt", ("--linear_solver=sqrt_sparse_schur", "--precision=double")),
    # The paper's explicit landmark blocks (Q2^T Jp stored), for comparison
    # with the projected default.
    Solver("sqrt-single-explicit", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=single",
            "--explicit_reduced_rows")),
    Solver("sqrt-double-explicit", "sqrt",
           ("--linear_solver=sqrt_iterative_schur", "--precision=double",
            "--explicit_reduced_rows")),
    Solver("ceres-implicit", "ceres",
           ("--linear_solver=iterative_schur", "--preconditioner=schur_jacobi")),
    Solver("ceres-explicit", "ceres",
           ("--linear_solver=iterative_schur", "--preconditioner=schur_jacobi",
            "--explicit_schur_complement")),
    Solver("ceres-sparse-schur", "ceres",
           ("--linear_solver=sparse_schur",
            "--sparse_linear_algebra_library=suite_sparse")),
)

# The solver all time ratios in the report are taken against.
BASELINE = "ceres-implicit"

DEFAULT_NUM_ITERATIONS = 50


def common_flags(num_iterations, num_threads):
    """Flags shared by every solver, so that runs differ only by solver."""
    return (
        "--num_iterations=%s" % num_iterations,
        "--robustify",
        "--eta=0.1",
        "--max_linear_solver_iterations=500",
        "--jacobi_scaling=true",
        "--num_threads=%s" % num_threads,
    )


# Run when --solvers is not given: every solver but the explicit-row variants
# (kept for comparison with the projected default).
DEFAULT_SOLVERS = ("sqrt-single", "sqrt-double", "sqrt-sparse", "ceres-implicit", "ceres-explicit",
                   "ceres-sparse-schur")


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
    """The subset of `names` belonging to `family`, e.g. all Ceres solvers run."""
    return [n for n in names if by_name(n).family == family]
