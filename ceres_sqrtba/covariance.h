// ceres_sqrtba::Covariance: the covariance of what a bundle adjustment
// estimated, exact and at reconstruction scale, with the interface of
// ceres::Covariance.
//
//   #include "ceres_sqrtba/covariance.h"         // beside ceres/ceres.h
//
//   ceres_sqrtba::Covariance::Options options;    // is-a ceres::Covariance::Options
//   options.num_threads = 8;
//   ceres_sqrtba::Covariance covariance(options);
//   std::vector<std::pair<const double*, const double*>> blocks = {{pose, pose}, {point, point}};
//   if (covariance.Compute(blocks, &problem)) {
//     double pose_covariance[6 * 6];
//     covariance.GetCovarianceBlockInTangentSpace(pose, pose, pose_covariance);
//   } else {
//     std::cerr << covariance.error() << "\n";   // why, naming the option or block
//   }
//
// What it computes is what ceres::Covariance computes on the same problem
// and options: the covariance (J^T J)^-1 of the parameter blocks at their
// current values, J the Jacobian in the tangent spaces of the manifolds with
// the loss function's correction when apply_loss_function (the same
// Jacobian as ceres::Problem::Evaluate), constant blocks and blocks that no
// residual uses giving zero blocks. How it computes it is the square-root
// bundle adjustment's: the problem's landmarks (chosen as Ceres' Schur
// solvers choose them) are marginalized by QR of their own blocks, the
// camera covariance comes from the Cholesky factor of the reduced camera
// matrix by a selected inversion (only the blocks on the factor's pattern,
// never a dense inverse), and each landmark's marginal covariance adds the
// cameras' uncertainty to its own (docs/covariance.md has the maths). A
// problem without landmarks goes to ceres::Covariance unchanged.
//
// Options honoured (the others are ignored):
//   num_threads                      evaluation, landmark QR, reduced camera
//                                    matrix and the requested blocks; the
//                                    result is the same for any count;
//   apply_loss_function              as in Ceres;
//   algorithm_type                   which of Ceres' behaviours on a rank-
//                                    deficient Jacobian (a free gauge):
//     SPARSE_QR (Ceres' default)     Compute fails, saying that the Jacobian
//                                    is rank deficient and its rank, as
//                                    Ceres does (rank by SuiteSparseQR's
//                                    default tolerance, or
//                                    column_pivot_threshold when >= 0);
//     DENSE_SVD                      the Moore-Penrose pseudo-inverse,
//                                    dropping null_space_rank directions
//                                    (-1: those with sigma_i^2/sigma_max^2 <
//                                    min_reciprocal_condition_number) and
//                                    failing with Ceres' message when a kept
//                                    one is below that; computed by
//                                    projecting the dropped directions out,
//                                    not densely;
//   min_reciprocal_condition_number, null_space_rank, column_pivot_threshold
//                                    as above (column_pivot_threshold is
//                                    Ceres 2.2's; with 2.1 the default).
// And its own (Covariance::Options below): memory_limit_in_bytes,
// skip_undetermined_landmarks, landmark_damping (COLMAP's damping of its
// points) and camera_pairs_on_demand (any pair of camera-side blocks after
// Compute, as COLMAP's BACovariance answers any pair of images).
//
// Differences from ceres::Covariance, all where Ceres aborts the program:
// duplicate blocks in a request, a block not in the problem, a Get* call
// before Compute or after a failed one, and a block pair that was not
// requested return false with a message in error() (and Ceres' LOG(ERROR)
// text in the log) instead.
#ifndef CERES_SQRTBA_COVARIANCE_H_
#define CERES_SQRTBA_COVARIANCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ceres/covariance.h"
#include "ceres/problem.h"

namespace ceres_sqrtba {

class Covariance {
 public:
  struct Options : public ceres::Covariance::Options {
    Options() = default;
    // A pipeline's options, copied in.
    Options(const ceres::Covariance::Options& options)  // NOLINT(runtime/explicit): a drop-in
        : ceres::Covariance::Options(options) {}
    // The memory Compute may use (0: the memory available, as Solver::Options).
    int64_t memory_limit_in_bytes = 0;
    // A landmark its own residuals do not determine (a point seen once, or
    // whose every observation lies behind its camera): false (Ceres'
    // behaviour), Compute fails naming it; true, such landmarks and their
    // residual blocks are left out (the covariance of the problem without
    // them), summary().undetermined_landmarks counts them, and a Get* that
    // names one returns false.
    bool skip_undetermined_landmarks = false;
    // delta >= 0 added to the diagonal of J^T J on every landmark's tangent
    // coordinates: the covariance of the problem with a prior of weight
    // delta on each landmark, which is what COLMAP's EstimateBACovariance
    // computes (BACovarianceOptions::damping, 1e-8: its points are damped
    // before they are eliminated). It makes a point seen once determined
    // (its variance along its ray ~1/delta) and leaves a well-determined one
    // unchanged to ~delta / its smallest eigenvalue. In the square root:
    // each landmark's QR runs on its rows stacked on sqrt(delta) I. The rank
    // decisions (the gauge) stay the Jacobian's own; algorithm_type =
    // SPARSE_QR only (DENSE_SVD with delta > 0 fails, naming the option).
    double landmark_damping = 0.0;
    // false (Ceres' behaviour): the Get* calls answer the pairs Compute was
    // given. true: Compute also keeps the reduced camera matrix's Cholesky
    // factor and its selected inverse (as many values each; they stay until
    // the next Compute or the destructor), and the Get* calls also answer
    // any pair of variable camera-side blocks (blocks that are not
    // landmarks), requested or not: from the selected inverse when the two
    // cameras are neighbours in the factor, else by two triangular solves per
    // tangent coordinate of the second block (O(factor values) each, not
    // cached: a loop over many far pairs pays them per pair). Calls that
    // succeed may run from several threads (their solves take turns); a call
    // that fails writes error(), which is not synchronized. A problem
    // without landmarks (handed to ceres::Covariance) answers requested pairs
    // only.
    bool camera_pairs_on_demand = false;
  };

  // What the last Compute did, for logs and benchmarks.
  struct Summary {
    bool square_root = false;       // false: it went to ceres::Covariance (no landmarks)
    int num_landmarks = 0, num_cameras = 0;
    int null_space_dimension = 0;   // directions projected out (DENSE_SVD semantics)
    int64_t factor_values = 0;      // of the reduced camera matrix's Cholesky factor
    int cameras_with_columns = 0;   // columns of the camera covariance solved for (far pairs)
    // Landmarks determined by their own residuals (so computed) but with a
    // pivot below SuiteSparseQR's default rank tolerance of the whole
    // Jacobian: where ceres::Covariance's SPARSE_QR reports a rank-deficient
    // Jacobian and returns false. Their covariances are large, and exact.
    int weak_landmarks = 0;
    int undetermined_landmarks = 0;  // left out (skip_undetermined_landmarks)
    double seconds_jacobian = 0.0;  // evaluation, landmark QR, reduced camera matrix
    double seconds_factorization = 0.0, seconds_null_space = 0.0, seconds_inversion = 0.0,
           seconds_blocks = 0.0, seconds_total = 0.0;
  };

  explicit Covariance(const Options& options);
  ~Covariance();
  Covariance(const Covariance&) = delete;
  Covariance& operator=(const Covariance&) = delete;

  // As ceres::Covariance::Compute: the blocks (a, b) listed (either order;
  // (b, a) is then available too), or every pair of the blocks listed.
  bool Compute(const std::vector<std::pair<const double*, const double*>>& covariance_blocks,
               ceres::Problem* problem);
  bool Compute(const std::vector<const double*>& parameter_blocks, ceres::Problem* problem);

  // As ceres::Covariance's: row-major blocks, in the ambient space (lifted
  // by the manifolds' PlusJacobian at the blocks' values now) or in the
  // tangent space.
  bool GetCovarianceBlock(const double* parameter_block1, const double* parameter_block2,
                          double* covariance_block) const;
  bool GetCovarianceBlockInTangentSpace(const double* parameter_block1, const double* parameter_block2,
                                        double* covariance_block) const;
  bool GetCovarianceMatrix(const std::vector<const double*>& parameter_blocks, double* covariance_matrix) const;
  bool GetCovarianceMatrixInTangentSpace(const std::vector<const double*>& parameter_blocks,
                                         double* covariance_matrix) const;

  // Why the last call returned false; empty after a successful Compute.
  const std::string& error() const;
  const Summary& summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_COVARIANCE_H_
