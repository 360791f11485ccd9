#include "ceres_sqrtba/internal/solve/ceres_pass_through.h"

#include <string>

#include "ceres_sqrtba/internal/problem/options_validation.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

void Record(const Solver::Options& options, Solver::Summary* summary) {
  summary->sqrt_linear_solver_type_given = options.sqrt_linear_solver_type;
  summary->sqrt_linear_solver_type_used = CERES_LINEAR_SOLVER;
  summary->precision_given = options.precision;
  // Ceres' own solvers run in double (mixed precision refines to double).
  summary->precision_used = DOUBLE_PRECISION;
}

}  // namespace

void SolveWithCeres(const Solver::Options& options, const std::string& reason, ceres::Problem* problem,
                    Solver::Summary* summary) {
  *summary = Solver::Summary();
  Record(options, summary);
  if (problem == nullptr) {
    summary->message = "ceres_sqrtba::Solve was called with a null problem.";
    return;
  }
  // ceres::Solve validates too, but lets through what Ceres aborts on.
  std::string error;
  if (!ValidateCeresOptions(options, &error)) {
    summary->message = error;
    if (options.logging_type != ceres::SILENT) LOG(ERROR) << "Terminating: " << error;
    return;
  }
  ceres::Solve(options, problem, summary);
  if (!reason.empty()) summary->message += " [ceres_sqrtba: " + reason + "; solved by ceres::Solve]";
}

void SolveWithoutLandmarks(const Solver::Options& options, ceres::Problem* problem,
                           Solver::Summary* summary) {
  ceres::Solver::Options ceres_options = options;
  const bool sparse = options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR;
  ceres_options.linear_solver_type =
      !sparse ? ceres::ITERATIVE_SCHUR
              : (options.reduced_camera_factorization == DENSE_FACTORIZATION ? ceres::DENSE_SCHUR : ceres::SPARSE_SCHUR);
  // The square-root solvers take no sparse library option; SuiteSparse is
  // what this build links (and another value can crash Ceres 2.2 here).
  ceres_options.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  ceres_options.use_mixed_precision_solves = false;
  ceres::Solve(ceres_options, problem, summary);
  Record(options, summary);
  // With nothing variable (or a failure before its minimizer) Ceres runs no
  // iteration and uses no linear solver: its summary's linear_solver_type_used
  // is then only the field's default, not worth naming.
  summary->message += summary->iterations.empty()
                          ? std::string(" [ceres_sqrtba: no landmark to eliminate; passed to ceres::Solve, which ran no "
                                        "iteration]")
                          : std::string(" [ceres_sqrtba: no landmark to eliminate; solved by ceres::Solve with ") +
                                ceres::LinearSolverTypeToString(summary->linear_solver_type_used) + "]";
}

}  // namespace internal
}  // namespace ceres_sqrtba
