// Filling Solver::Summary as Ceres fills ceres::Solver::Summary, plus what
// the square-root solver ran; and the reports.
//
// Ceres' summary has no value for a solver it does not know: for the
// ceres::Solver::Summary fields linear_solver_type_given/used, the Ceres
// solver that solves the same reduced camera system (ITERATIVE_SCHUR for
// SQRT_ITERATIVE_SCHUR, SPARSE_SCHUR for SQRT_SPARSE_SCHUR, DENSE_SCHUR when
// its factorization is dense) stands in, so that
// a drop-in user's code that reads them keeps working. Solver::Summary says
// what really ran, and its FullReport is Ceres' report with those lines
// rewritten and the precision and storage added in the Given/Used table.
#ifndef CERES_SQRTBA_INTERNAL_SOLVE_SUMMARY_REPORT_H_
#define CERES_SQRTBA_INTERNAL_SOLVE_SUMMARY_REPORT_H_

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace internal {

// Resets the summary to FAILURE and records the options.
void StartSummary(const Solver::Options& options, Solver::Summary* summary);

// The problem's sizes (the "Original" column), once the options are valid
// (Ceres leaves them at -1 otherwise).
void RecordProblemSizes(const ceres::Problem& problem, Solver::Summary* summary);
// The same from the structure read from the problem (without asking Ceres
// again, block by block).
void RecordProblemSizes(const ProblemStructure& s, Solver::Summary* summary);

// The reduced problem (the "Reduced" column), the ordering and the Schur
// structure, as Ceres reports them; a user ordering is reported group by
// group as given (without constant blocks and empty groups).
void RecordStructure(const ProblemStructure& s, const ceres::ParameterBlockOrdering* ordering,
                     Solver::Summary* summary);

// SQRT_SPARSE_SCHUR: which Cholesky factorization of the reduced camera
// matrix runs; Ceres' stand-in becomes DENSE_SCHUR (Eigen) for the dense one.
void RecordReducedCameraFactorization(bool dense, Solver::Summary* summary);

// FAILURE with `message`, logged as Ceres logs a termination unless silent.
void RecordFailure(const Solver::Options& options, const std::string& message, double start_time,
                   Solver::Summary* summary);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVE_SUMMARY_REPORT_H_
