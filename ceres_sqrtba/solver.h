// ceres_sqrtba: square-root bundle adjustment for ceres::Problem.
//
// This is the whole public interface (with types.h, the names of the
// square-root solver's choices, which it includes). A Ceres user keeps building their
// ceres::Problem exactly as before (cost functions, loss functions, manifolds,
// constant blocks, linear_solver_ordering) and changes three things:
//
//   #include "ceres_sqrtba/solver.h"            // instead of ceres/ceres.h
//   ceres_sqrtba::Solver::Options options;      // is-a ceres::Solver::Options
//   options.sqrt_linear_solver_type = ceres_sqrtba::SQRT_ITERATIVE_SCHUR;
//   options.precision = ceres_sqrtba::SINGLE_PRECISION;   // optional
//   ceres_sqrtba::Solve(options, &problem, &summary);     // not ceres::Solve
//
// With sqrt_linear_solver_type == CERES_LINEAR_SOLVER (the default) the call is
// forwarded unchanged to ceres::Solve, so the same binary can run every Ceres
// solver and the square-root one. With SQRT_AUTOMATIC the square-root
// counterpart of linear_solver_type runs (DENSE_SCHUR and SPARSE_SCHUR ->
// SQRT_SPARSE_SCHUR, ITERATIVE_SCHUR -> SQRT_ITERATIVE_SCHUR), everything
// else goes to ceres::Solve: the one-line change for a pipeline.
//
// With SQRT_ITERATIVE_SCHUR the problem is solved by square-root bundle
// adjustment (Demmel, Sommer, Cremers, Usenko: "Square Root Bundle Adjustment
// for Large-Scale Reconstruction", CVPR 2021): landmarks are marginalized by a
// QR decomposition of small dense per-landmark blocks instead of the Schur
// complement, and the reduced camera system is solved by preconditioned
// conjugate gradients in square-root form (SQRT_SPARSE_SCHUR: by a Cholesky
// factorization of the Gram matrix of the marginalized rows instead). The
// trust-region loop is
// Levenberg-Marquardt exactly as Ceres runs it, and the result is reported in a
// ceres::Solver::Summary filled as Ceres fills it. See docs/ for every option,
// the supported problem shapes and the memory model.
#ifndef CERES_SQRTBA_SOLVER_H_
#define CERES_SQRTBA_SOLVER_H_

#include <cstdint>
#include <string>

#include "ceres/ceres.h"
#include "ceres_sqrtba/types.h"  // SqrtLinearSolverType, ReducedCameraFactorization, Precision

namespace ceres_sqrtba {

// The memory a solve may take when Solver::Options::memory_limit_in_bytes is
// 0, in bytes: the least of the machine's available memory (MemAvailable of
// /proc/meminfo), the address space `ulimit -v` leaves this process, and a
// cgroup v2 memory limit (a container's) less its use; 0 when none can be
// read (then no limit is checked).
int64_t AvailableMemoryInBytes();

class Solver {
 public:
  // All of ceres::Solver::Options keeps its meaning and default; the fields
  // below are added. docs/solver.md says which Ceres fields the square-root
  // solver honours and which values it rejects up front.
  struct Options : public ceres::Solver::Options {
    Options() = default;
    // Start from options a Ceres pipeline already has.
    explicit Options(const ceres::Solver::Options& ceres_options)
        : ceres::Solver::Options(ceres_options) {}

    SqrtLinearSolverType sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
    Precision precision = DOUBLE_PRECISION;

    // SQRT_ITERATIVE_SCHUR only: how conjugate gradients apply the
    // marginalized rows B = Q^_2^T Jp of each landmark.
    // false (default): projected. Each landmark keeps its compact camera
    //   Jacobian and the thin orthogonal factor Q^_1 of its damped columns;
    //   B^T B x = Jp^T (I - Q^_1 Q^_1^T) Jp x. Same steps up to rounding,
    //   about 24 scalars per observation whatever the track length.
    // true: explicit, as in the paper: the dense (2k) x (9k) rows B of a
    //   landmark seen k times are stored after an in-place QR and streamed by
    //   every product.
    // SQRT_SPARSE_SCHUR forms its reduced camera matrix from the projected
    // storage and ignores this option.
    bool use_explicit_reduced_rows = false;

    // SQRT_SPARSE_SCHUR only: dense or sparse Cholesky of the reduced camera
    // matrix (see ReducedCameraFactorization).
    ReducedCameraFactorization reduced_camera_factorization = AUTOMATIC_FACTORIZATION;

    // Once a step has been accepted, evaluate the next candidate point's
    // Jacobian together with its cost: an accepted step then takes one
    // evaluation pass instead of a cost pass and a Jacobian pass, while a
    // rejected one costs a second Jacobian pass at the current point (the
    // linear solver keeps one Jacobian); after each such rejection, twice as
    // many accepted steps in a row are needed before the next try. Costs,
    // steps and the iteration trace are the same either way. Not used on
    // bounded problems (the line search evaluates its own points) nor when
    // the problem has an evaluation callback and the linked Ceres (2.2) lets
    // us see it: Ceres calls the callback at other points. Ceres 2.1 does not
    // show the callback: there a callback is told (true, true) at candidates
    // instead of Ceres' (false, true) then (true, false) when accepted, and
    // false keeps Ceres' sequence exactly (docs/solver.md).
    bool jacobians_at_candidates = true;

    // Upper bound on the memory the landmark blocks (SQRT_SPARSE_SCHUR: plus
    // the reduced camera matrix and its factorization) may take, in bytes.
    // 0 means: AvailableMemoryInBytes() when Solve starts.
    // A problem that needs more ends with FAILURE before anything is allocated.
    int64_t memory_limit_in_bytes = 0;

    // Checks the options as the square-root solver will use them. Returns
    // false and a message naming the offending option when they are invalid.
    // For CERES_LINEAR_SOLVER this is ceres::Solver::Options::IsValid.
    bool IsValid(std::string* error) const;
  };

  // ceres::Solver::Summary, filled as Ceres fills it, plus what the
  // square-root solver ran. Ceres' fields keep their meaning; where Ceres has
  // no value for a square-root solver, linear_solver_type_given/used hold the
  // Ceres solver that solves the same reduced camera system (ITERATIVE_SCHUR
  // or SPARSE_SCHUR) and the fields below say what really ran.
  struct Summary : public ceres::Solver::Summary {
    SqrtLinearSolverType sqrt_linear_solver_type_given = CERES_LINEAR_SOLVER;
    // CERES_LINEAR_SOLVER when the problem went to ceres::Solve (the option
    // asked for it, minimizer_type = LINE_SEARCH, SQRT_AUTOMATIC chose
    // Ceres, or there was no landmark to eliminate); never SQRT_AUTOMATIC.
    SqrtLinearSolverType sqrt_linear_solver_type_used = CERES_LINEAR_SOLVER;
    Precision precision_given = DOUBLE_PRECISION;
    // The precision of the last step's linear algebra.
    Precision precision_used = DOUBLE_PRECISION;
    // The iteration at which a single precision solve continued in double
    // precision, and why; -1 and empty when it did not.
    int precision_switch_iteration = -1;
    std::string precision_switch_reason;
    // How the landmarks' marginalized rows were stored
    // (Options::use_explicit_reduced_rows; SQRT_SPARSE_SCHUR: projected).
    bool explicit_reduced_rows_used = false;
    // SQRT_SPARSE_SCHUR: the factorization asked for and the one that ran
    // (DENSE_FACTORIZATION or SPARSE_FACTORIZATION; linear_solver_type_used
    // is then DENSE_SCHUR or SPARSE_SCHUR).
    ReducedCameraFactorization reduced_camera_factorization_given = AUTOMATIC_FACTORIZATION;
    ReducedCameraFactorization reduced_camera_factorization_used = AUTOMATIC_FACTORIZATION;

    // Ceres' one-line and full reports, with the square-root solver, the
    // precision and the storage in Ceres' layout.
    std::string BriefReport() const;
    std::string FullReport() const;
  };
};

// Solves the problem as ceres::Solve would, with the linear solver chosen by
// options.sqrt_linear_solver_type. Never aborts on bad input: invalid options or
// a problem the square-root solver cannot take end with
// summary->termination_type == ceres::FAILURE, a message naming the reason, and
// the parameter blocks untouched.
void Solve(const Solver::Options& options,
           ceres::Problem* problem,
           Solver::Summary* summary);

// The same for a pipeline that already holds a ceres::Solver::Summary: every
// Ceres field is filled; what only Solver::Summary can say is left out.
void Solve(const Solver::Options& options,
           ceres::Problem* problem,
           ceres::Solver::Summary* summary);

}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_SOLVER_H_
