// ceres_sqrtba: the names of the square-root solver's choices.
//
// The enums that Solver::Options and Solver::Summary (solver.h) hold, and
// their conversions to and from strings, in a leaf header of their own, as
// ceres/types.h is for Ceres: it includes nothing of Ceres, so that the
// library's internal units that only need a choice (the precision of a
// solve, the factorization of the reduced camera matrix) include this header
// rather than the whole public interface. solver.h includes it; users include
// solver.h.
#ifndef CERES_SQRTBA_TYPES_H_
#define CERES_SQRTBA_TYPES_H_

#include <string>

namespace ceres_sqrtba {

// Which linear solver runs inside the trust-region loop.
enum SqrtLinearSolverType : int {
  // Use ceres::Solver::Options::linear_solver_type: the call is forwarded to
  // ceres::Solve unchanged.
  CERES_LINEAR_SOLVER = 0,
  // Square-root marginalization (QR of landmark blocks) + preconditioned
  // conjugate gradients on the reduced camera system.
  SQRT_ITERATIVE_SCHUR = 1,
  // Square-root marginalization + a direct solve of the reduced camera system:
  // every landmark is still eliminated by QR of its own block (nothing
  // inverts Jl^T Jl), and the reduced camera matrix is formed as the Gram
  // matrix of the marginalized rows, sum_b B_b^T B_b + lambda D_p^2, in double
  // (positive semi-definite by construction), then factored by Cholesky:
  // dense for small camera systems, CHOLMOD's supernodal factorization
  // otherwise (Options::reduced_camera_factorization). Exact steps, as Ceres'
  // SPARSE_SCHUR / DENSE_SCHUR, for small and medium problems.
  SQRT_SPARSE_SCHUR = 2,
  // The square-root counterpart of ceres::Solver::Options::linear_solver_type,
  // for pipelines that choose Ceres' solver by problem size (COLMAP, Theia,
  // OpenMVG, ...): one changed call keeps their rule.
  //   DENSE_SCHUR      -> SQRT_SPARSE_SCHUR with DENSE_FACTORIZATION (unless
  //                       reduced_camera_factorization says otherwise);
  //   SPARSE_SCHUR     -> SQRT_SPARSE_SCHUR;
  //   ITERATIVE_SCHUR  -> SQRT_ITERATIVE_SCHUR (preconditioner as given);
  //   any other type   -> ceres::Solve, unchanged.
  // Options the square-root solvers do not implement (see docs/solver.md)
  // also send the problem to ceres::Solve unchanged instead of being refused.
  // The summary's sqrt_linear_solver_type_used says what ran, and a
  // pass-through's message says why.
  SQRT_AUTOMATIC = 3,
};

// SQRT_SPARSE_SCHUR: how the reduced camera matrix is factored.
enum ReducedCameraFactorization : int {
  // Dense when a dense factorization needs at most 4 times the flops of the
  // sparse one (every camera pair shares points, e.g. small BAL problems),
  // sparse otherwise (large, local camera graphs): the measured crossover,
  // docs/benchmarks.md.
  AUTOMATIC_FACTORIZATION = 0,
  // Eigen's dense LLT (n^2 doubles; as Ceres' DENSE_SCHUR).
  DENSE_FACTORIZATION = 1,
  // CHOLMOD's supernodal Cholesky on the block-sparse pattern, AMD ordering
  // of the camera blocks (as Ceres' SPARSE_SCHUR with SuiteSparse).
  SPARSE_FACTORIZATION = 2,
};

// Floating point type of the linear algebra of the square-root solvers
// (landmark blocks, conjugate gradients; SQRT_SPARSE_SCHUR's reduced camera
// matrix and its Cholesky are always double). The parameters, residuals,
// cost functions, the cost and the trust-region decisions are always double.
enum Precision : int {
  DOUBLE_PRECISION = 0,
  SINGLE_PRECISION = 1,
};

const char* SqrtLinearSolverTypeToString(SqrtLinearSolverType type);
// Accepts the names above, case-insensitively ("sqrt_iterative_schur",
// "sqrt_sparse_schur", "sqrt_automatic").
bool StringToSqrtLinearSolverType(std::string value,
                                  SqrtLinearSolverType* type);
const char* PrecisionToString(Precision precision);
// Accepts "double"/"single" and the enum names, case-insensitively.
bool StringToPrecision(std::string value, Precision* precision);
const char* ReducedCameraFactorizationToString(ReducedCameraFactorization factorization);
// Accepts "automatic"/"dense"/"sparse" and the enum names, case-insensitively.
bool StringToReducedCameraFactorization(std::string value,
                                        ReducedCameraFactorization* factorization);

}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TYPES_H_
