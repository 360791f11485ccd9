// Covariance blocks of a bundle-adjustment problem at its current values,
// from the square-root factors: what ceres_sqrtba::Covariance computes.
//
// The covariance of the estimate is H^-1, H = J^T J the Gauss-Newton matrix
// in tangent space (constant blocks removed, as ceres::Covariance does).
// Ordering landmarks before cameras and eliminating them (the block LDL^T
// H = T^T diag(S, H_ll) T with T = [I 0; K I] on (cameras, landmarks),
// landmark_factorization.h for K_l = R_l^-1 W_l and S):
//
//   H^-1 = T^-1 diag(S^-1, H_ll^-1) T^-T,   T^-1 = [I 0; -K I],
//
// so, with G = S^-1 and every landmark's own H_ll^-1 = R_l^-1 R_l^-T,
//
//   Sigma(c, c')  = G(c, c')
//   Sigma(l, c)   = -K_l G(C(l), c)
//   Sigma(l, l')  = K_l G(C(l), C(l')) K_l'^T  (+ R_l^-1 R_l^-T when l = l'),
//
// C(l) the cameras of landmark l. A landmark's marginal covariance is its
// conditional one, R_l^-1 R_l^-T, plus what the cameras' uncertainty adds
// through K_l. G's blocks between cameras of one landmark are on the pattern
// of S's Cholesky factor and come from the selected inversion
// (selected_inversion.h); any other block is a column of G from solves.
//
// Gauge. With a free gauge H is singular. What happens then is Ceres':
//   - SPARSE_QR semantics (Covariance::Options::algorithm_type = SPARSE_QR):
//     Compute fails, saying that the Jacobian is rank deficient and by how
//     much (its rank by SuiteSparseQR's default tolerance 20 (m + n) eps
//     max ||J_j||, or column_pivot_threshold when set);
//   - DENSE_SVD semantics: the Moore-Penrose pseudo-inverse H^+, the
//     directions dropped as Ceres drops singular values (null_space_rank
//     of them, or, with -1, those with sigma_i^2 / sigma_max^2 <
//     min_reciprocal_condition_number; a remaining one below it fails, with
//     Ceres' message). With N the orthonormal basis of the dropped
//     directions (null_space.h) and P = I - N N^T:
//
//       H^+ = P Sigma_g P,
//
//     for any symmetric generalized inverse Sigma_g of H (H Sigma_g H = H:
//     with H = U L U^T on its range, U^T Sigma_g U = L^-1, so P Sigma_g P =
//     U L^-1 U^T). Sigma_g is the formula above with G the inverse of S with
//     d camera coordinates held (those rows and columns of S replaced by the
//     identity, their entries of G then zero): d coordinates chosen by
//     column-pivoted QR of N_c^T, so that no null direction lies in the
//     others. Each block then needs only N's and Y = Sigma_g N's rows of its
//     two blocks and N^T Y (d x d): block-local, no dense matrix.
// A landmark whose own rows do not determine it (R_l singular) fails in
// both, naming the landmark.
//
// Memory: the compact Jacobian and the landmarks' R and W, S, its factor and
// the selected inverse (as many values as the factor), the requested blocks,
// and n doubles per camera whose column of G a far request needs; checked
// against memory_limit_in_bytes before anything large is allocated.
// Threads: evaluation, landmark QR, S and the requested blocks in parallel,
// each result the same sequence of operations whatever the thread count.
#ifndef CERES_SQRTBA_INTERNAL_COVARIANCE_COVARIANCE_ESTIMATOR_H_
#define CERES_SQRTBA_INTERNAL_COVARIANCE_COVARIANCE_ESTIMATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

struct CovarianceEstimatorOptions {
  int num_threads = 1;
  bool apply_loss_function = true;
  bool pseudo_inverse = false;  // DENSE_SVD's semantics, else SPARSE_QR's
  double min_reciprocal_condition_number = 1e-14;
  int null_space_rank = 0;
  double column_pivot_threshold = -1.0;
  int64_t memory_limit_in_bytes = 0;
  // Landmarks their own residuals do not determine: false, Compute fails
  // naming the first; true, they and their residual blocks are left out
  // (undetermined() lists them).
  bool skip_undetermined_landmarks = false;
  // delta >= 0 added to the diagonal of H on every landmark's coordinates
  // (landmark_factorization.h); SPARSE_QR semantics only (the rank decisions
  // stay the undamped Jacobian's).
  double landmark_damping = 0.0;
  // Keep S's factor and selected inverse after Compute, for CameraBlock.
  bool keep_camera_inverse = false;
};

struct CovarianceStatistics {
  int null_space_dimension = 0;  // directions projected out (pseudo-inverse)
  int64_t factor_values = 0;      // of S's Cholesky factor
  int cameras_with_columns = 0;   // columns of G from solves
  // Landmarks with a pivot |R_kk| at or below SuiteSparseQR's default rank
  // tolerance for the whole Jacobian, 20 (m + n) eps max ||J_j||: what
  // ceres::Covariance's SPARSE_QR counts as dead columns (and then fails).
  int weak_landmarks = 0;
  double seconds_jacobian = 0.0, seconds_factorization = 0.0, seconds_null_space = 0.0,
         seconds_inversion = 0.0, seconds_blocks = 0.0;
};

class CovarianceEstimator {
 public:
  explicit CovarianceEstimator(const CovarianceEstimatorOptions& options);
  ~CovarianceEstimator();

  // Reads the problem's structure (landmarks chosen as Ceres' Schur solvers
  // choose them). kNoLandmarks: the caller hands the problem to
  // ceres::Covariance.
  StructureStatus Read(const ceres::Problem& problem, std::string* error);
  const ProblemStructure& structure() const { return s_; }

  // requests: pairs of indices into structure().parameter_blocks, both
  // variable. Block i (tangent_size(a) x tangent_size(b), row-major) is
  // written at values + offsets[i].
  // problem: the one read, whose evaluation callback is told of the
  // evaluation.
  bool Compute(const ceres::Problem& problem, const std::vector<std::pair<int, int>>& requests,
               std::vector<double>* values, std::vector<int64_t>* offsets, std::string* error);

  const CovarianceStatistics& statistics() const { return statistics_; }
  // The landmarks left out by skip_undetermined_landmarks (parameter block
  // indices); requests that name them are not computed (their offsets hold
  // zeros).
  const std::vector<int>& undetermined() const { return undetermined_; }

  // After a successful Compute with keep_camera_inverse: the block (a, b)
  // of the covariance of two variable camera-side (not landmark) parameter
  // blocks, requested or not, into out (tangent_size(a) x tangent_size(b),
  // row-major): from the selected inverse when the pair is on the factor's
  // pattern, else from two triangular solves per coordinate of b (the
  // pseudo-inverse's projection applied as in Compute). Safe to call from
  // several threads: the solves take a lock.
  bool CameraBlock(int a, int b, double* out, std::string* error) const;

 private:
  struct CameraInverse;
  CovarianceEstimatorOptions options_;
  std::unique_ptr<ParallelContext> context_;
  ProblemStructure s_;
  CovarianceStatistics statistics_;
  std::vector<int> undetermined_;
  std::unique_ptr<CameraInverse> camera_inverse_;  // keep_camera_inverse
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COVARIANCE_COVARIANCE_ESTIMATOR_H_
