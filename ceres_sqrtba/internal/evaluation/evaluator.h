// Evaluates the user's cost functions at a state vector, in double, in
// parallel, the way Ceres' ProgramEvaluator does: cost 1/2 sum rho(|r|^2),
// Jacobians in tangent space (ambient Jacobian times Manifold::PlusJacobian),
// robust loss corrections (loss_correction.h), and the gradient J^T r.
//
// The Jacobian is not stored here: each residual block's corrected residual and
// tangent Jacobians are handed to a JacobianWriter (the linear solver's landmark
// blocks), from the thread that evaluates that block's group, so they go
// straight into their landmark block without an intermediate sparse matrix.
//
// A cost function that returns false, or leaves a non-finite value in a
// residual or a requested Jacobian, makes the whole evaluation fail, as in
// Ceres: the trust-region loop treats a failed candidate as a step with
// infinite cost and a failed initial evaluation as FAILURE.
#ifndef CERES_SQRTBA_INTERNAL_EVALUATION_EVALUATOR_H_
#define CERES_SQRTBA_INTERNAL_EVALUATION_EVALUATOR_H_

#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/evaluation/evaluation_notifier.h"
#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/evaluation/tangent_jacobian.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class Evaluator {
 public:
  // The partition of the groups into chunks fixes the order of every sum, so
  // that results do not depend on the number of threads.
  Evaluator(const ProblemStructure& structure, const WorkPartition& partition,
            ParallelContext* context);
  ~Evaluator();

  // Tells the user's evaluation callback about every evaluation from now on
  // (evaluation_notifier.h); null: nobody is told.
  void SetNotifier(EvaluationNotifier* notifier) { notifier_ = notifier; }

  // Cost of the variable residual blocks at state x, a new evaluation point.
  // False if a cost function (or a manifold's PlusJacobian, as in Ceres)
  // failed.
  bool EvaluateCost(const double* x, double* cost);

  // Cost, gradient (tangent space, size num_effective_parameters) and the
  // Jacobian, written through `writer` (null: the gradient only).
  // new_evaluation_point: false when x is the point of the last cost
  // evaluation (an accepted candidate), as Ceres tells the callback.
  bool EvaluateJacobian(const double* x, bool new_evaluation_point, double* cost, double* gradient,
                        JacobianWriter* writer);

  // The cost of the residual blocks whose parameter blocks are all constant
  // (Ceres' fixed cost), from the user's values. False with Ceres' message
  // when one fails to evaluate.
  bool EvaluateFixedCost(double* cost);

  // x_plus_delta = Plus(x, delta) block by block, each then projected onto
  // its bounds (component by component, in ambient coordinates, as Ceres'
  // ParameterBlock::Plus). False if a manifold's Plus failed.
  bool Plus(const double* x, const double* delta, double* x_plus_delta);

  // Why the last evaluation failed, naming the residual or parameter block
  // as Ceres' messages name them; empty after a successful one.
  const std::string& error() const { return error_; }

  // After a successful Jacobian pass into a float storage: empty, or why a
  // cost function's float Jacobian (FloatJacobians) could not be used for
  // some residual block (the first in the evaluation's order, the same for
  // any number of threads), whose double Jacobian was used instead. The
  // caller may then continue in double precision.
  const std::string& float_jacobian_fallback() const { return float_fallback_; }

  // After a Jacobian pass with the gradient into a float storage: the size
  // of the rounding that the float Jacobians bring into the gradient, 2^-24
  // max_j sum_i |J_ij| |r_i| over the residual blocks evaluated in float (0
  // when none was). A gradient whose entries are all within a small multiple
  // of it can no longer be told from the Jacobians' rounding.
  double float_gradient_level() const { return float_gradient_level_; }

 private:
  struct Scratch;
  // One evaluation pass (the cost's, or the Jacobian's when `jacobian`):
  // the PlusJacobians, the notifier, Evaluate, Agree, Finish.
  bool Pass(const double* x, bool jacobian, bool new_evaluation_point, double* cost, double* gradient,
            JacobianWriter* writer);
  // This process's evaluation: its cost (before the sum over processes)
  // and, into the chunk slots, the gradient's camera part.
  bool Evaluate(const double* x, double* cost, double* gradient,
                JacobianWriter* writer);
  // In a solve spread over processes (process_group.h), whether every
  // process's evaluation succeeded: false on all of them, with the first
  // failing rank's error, when one failed. One process: ok.
  bool Agree(bool ok);
  // After an agreed evaluation: the cost summed over processes and checked,
  // the gradient's camera part summed over chunks and processes, the float
  // Jacobians' fallback and rounding level.
  bool Finish(double* cost, double* gradient, JacobianWriter* writer);
  // The PlusJacobian of every variable block with a manifold at x (as Ceres
  // computes them whenever it sets the state, so that a manifold failing
  // there fails the evaluation), with their identity borders when `borders`.
  bool ComputePlusJacobians(const double* x, bool borders);

  const ProblemStructure& s_;
  const WorkPartition& partition_;
  ParallelContext* context_;
  EvaluationNotifier* notifier_ = nullptr;
  int max_residuals_ = 0;
  int max_ambient_jacobian_ = 0;  // sum over a block's parameters of rows*size
  int max_tangent_jacobian_ = 0;
  int max_parameter_blocks_ = 0;
  std::vector<int> plus_jacobian_offset_;  // per parameter block, -1 if none
  // Per parameter block: the identity borders of its PlusJacobian at the
  // current point (tangent_jacobian.h), found when it is computed.
  std::vector<PlusJacobianBorder> plus_jacobian_border_;
  // The variable blocks with a manifold, in variable order: every evaluation
  // computes their PlusJacobians, and a problem without manifolds should not
  // walk its thousands of other blocks to find none.
  std::vector<int> manifold_blocks_;
  std::vector<double> plus_jacobians_;
  std::vector<char> plus_jacobian_status_;  // per manifold block, of the last computation
  std::vector<double> chunk_cost_;
  std::vector<std::string> chunk_error_;  // per chunk: empty, or its first failure
  std::vector<std::string> chunk_float_fallback_;  // per chunk: empty, or its first
  std::string error_;
  std::string float_fallback_;
  double float_gradient_level_ = 0.0;
  PerChunk<double> chunk_camera_magnitude_;     // per chunk: num_camera_parameters
  std::vector<double> camera_magnitude_;        // their sum
  std::vector<double> chunk_landmark_magnitude_;  // per chunk: the largest landmark entry
  PerChunk<double> chunk_camera_gradient_;  // per chunk: num_camera_parameters
  std::vector<Scratch> scratch_;                // one per chunk
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EVALUATION_EVALUATOR_H_
