// What the SQRT_SPARSE_SCHUR solve tests share: the options of their solves
// and a solve of a copy of a synthetic problem, so that the original stays
// untouched for the next solver.
#ifndef CERES_SQRTBA_TESTS_DIRECT_SOLVE_H_
#define CERES_SQRTBA_TESTS_DIRECT_SOLVE_H_

#include "ceres_sqrtba/solver.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace testing {

constexpr ReducedCameraFactorization kDenseAndSparse[] = {DENSE_FACTORIZATION, SPARSE_FACTORIZATION};

// SQRT_SPARSE_SCHUR, 20 iterations, 2 threads, silent.
inline Solver::Options DirectOptions(Precision precision,
                                     ReducedCameraFactorization factorization = AUTOMATIC_FACTORIZATION) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  o.reduced_camera_factorization = factorization;
  o.precision = precision;
  o.max_num_iterations = 20;
  o.num_threads = 2;
  o.logging_type = ceres::SILENT;
  return o;
}

// Solves a copy of `original` (reprojection errors, Huber loss unless
// `huber` is false).
inline Solver::Summary SolveCopy(const SyntheticBa& original, const Solver::Options& options, bool huber = true) {
  SyntheticBa ba = original;
  ceres::Problem problem;
  AddReprojectionResiduals(&ba, &problem, huber ? new ceres::HuberLoss(1.0) : nullptr);
  Solver::Summary summary;
  Solve(options, &problem, &summary);
  return summary;
}

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_DIRECT_SOLVE_H_
