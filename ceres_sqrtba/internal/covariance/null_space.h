// The directions a bundle adjustment does not determine (its gauge: the
// similarity transformation of the whole scene, 7 directions, when no block
// is held constant), found from the square-root factors without a dense
// decomposition, and what the pseudo-inverse needs of them.
//
// In the full tangent space of the problem (landmarks and cameras) a null
// vector n of H = J^T J has, with the landmark factors of
// landmark_factorization.h, a camera part n_c with S n_c = 0 and landmark
// parts n_l = -K_l n_c: every landmark follows the cameras (H's landmark
// blocks are positive definite, or the problem is reported degenerate at
// that landmark). So the near-null space of H is found on the camera side:
//
//   1. lambda_max(H) by power iteration on H, applied group by group as
//      J_g^T (J_g x) from the compact rows;
//   2. subspace inverse iteration with (D S D + mu I)^-1, D = diag(S)^-1/2
//      (the null space of S is D times that of D S D, whose unit diagonal
//      removes the columns' scales: focal lengths against rotations), mu =
//      1e-12, p vectors, re-orthonormalized every step: the eigenvectors
//      below mu converge by a factor mu / lambda per step against an
//      eigenvalue lambda above it; V = D V~;
//   3. Rayleigh-Ritz in the full space: for camera vectors V, the full
//      vectors F = [V; -K V] have F^T H F = sum_g (J_g F)^T (J_g F) (the
//      Jacobian's own rows times F: not from S, whose rounding is that of a
//      squared matrix) and F^T F =
//      V^T V + sum_l (K_l V)^T (K_l V); the generalized eigenproblem of the
//      two p x p matrices gives Ritz values theta_i (estimates of H's
//      smallest eigenvalues, sigma_i^2 of J) and F-orthonormal Ritz vectors.
//
// The caller decides from theta and lambda_max how many directions are null
// (Ceres' rules: DENSE_SVD's ratio test or null_space_rank, SPARSE_QR's rank
// tolerance), and asks for more vectors when all p are.
#ifndef CERES_SQRTBA_INTERNAL_COVARIANCE_NULL_SPACE_H_
#define CERES_SQRTBA_INTERNAL_COVARIANCE_NULL_SPACE_H_

#include <string>
#include <vector>

#include "Eigen/Core"
#include "ceres_sqrtba/internal/covariance/landmark_factorization.h"
#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"

namespace ceres_sqrtba {
namespace internal {

struct NearNullSpace {
  std::vector<double> theta;        // the p smallest Ritz values, increasing
  Eigen::MatrixXd camera;           // n_c x p: camera parts of the Ritz vectors (full-space orthonormal)
};

// lambda_max(H) by `iterations` steps of the power iteration from a fixed
// start vector without structure of its own (a few per cent low at worst for
// the thresholds it serves); 0 only when H maps three such starts to zero.
double LargestEigenvalue(const LandmarkFactorization& f, int iterations);

// The relative shift mu of the scaled matrix D S D + mu I.
constexpr double kNullSpaceShift = 1e-12;

// The p smallest Ritz pairs of H (p <= number of camera parameters).
// `shifted`: a Cholesky of D S D + mu I already factorized, d the diagonal
// of D.
bool FindNearNullSpace(const LandmarkFactorization& f, SparseCameraCholesky* shifted, const std::vector<double>& d,
                       int p, NearNullSpace* result, std::string* error);

// v_c -> v_c + sum_l K_l^T K_l v_c for the d columns of v (n_c x d): the
// camera part of T^-T n for a null-space vector n = [n_c; -K n_c].
Eigen::MatrixXd AddLandmarkMetric(const LandmarkFactorization& f, const Eigen::MatrixXd& v);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COVARIANCE_NULL_SPACE_H_
