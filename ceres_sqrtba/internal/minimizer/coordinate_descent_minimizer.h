// Inner iterations (Solver::Options::use_inner_iterations): non-linear block
// coordinate descent after each trust-region step, as Ceres runs it
// (Ruhe & Wedin's simplified variable projection, generalised to any number
// of blocks).
//
// The maths. The cost is F(x) = 1/2 sum_r rho_r(|f_r(x)|^2). Fix every
// parameter block but one, p: what is left is a small non-linear least-squares
// problem in x_p alone, over the residual blocks that touch p,
//
//   min over x_p   1/2 sum_{r touches p} rho_r(|f_r(x_p; the others)|^2),
//
// whose Jacobian is dense (rows of those residual blocks x the tangent size of
// p). Two blocks that share no residual block (an independent set of the
// Hessian's graph) give independent sub-problems, which are solved in
// parallel; the sets are visited one after the other, each seeing the values
// the previous sets left. A round over all sets cannot increase F: every
// sub-solve returns the best point it met, and its start is one of them.
//
// Ceres' rules, reproduced here:
// - The sets. Given: Solver::Options::inner_iteration_ordering, its groups in
//   increasing id, each checked to be an independent set of the reduced
//   problem (problem/inner_iteration_ordering.h, Ceres' message); constant blocks and blocks no
//   residual block uses are dropped first (Ceres removes them from the
//   ordering), and blocks of the problem that the ordering leaves out are held
//   constant. Automatic: Ceres' CoordinateDescentMinimizer::CreateOrdering, a
//   recursive independent-set ordering: the greedy maximal independent set
//   of independent_set.h, taken out of the graph, then the same on what is
//   left, until every variable block is in a set; the sets are then visited
//   in reverse (in bundle adjustment: the cameras, then the points). Ceres
//   breaks ties between blocks of equal degree by the address of its internal
//   ParameterBlock objects; here they are broken by the order of first use
//   (as for the landmark choice, docs/solver.md): the sizes of the sets agree,
//   their members can differ where a tie is broken differently (a pose and
//   the intrinsics of the same camera).
// - One sub-solve: Ceres builds a one-block program and runs its
//   TrustRegionMinimizer on it with *default* Minimizer::Options (whatever the
//   user's options say). Here the sub-solve runs the trust-region loop's own
//   parts: its LevenbergMarquardtStrategy (radius and damping), its
//   TrustRegionStepEvaluator (step quality) and Ceres' termination tests
//   (termination.h), with a default MinimizerOptions (minimizer_options.h):
//   Jacobi scaling, initial radius 1e4, max radius TrustRegionStrategy's own
//   (2.1: 1e16, 2.2: 1e32; ceres_version.h), LM diagonal in [1e-6, 1e32], at
//   most 50 iterations, function tolerance 1e-6, gradient tolerance 1e-10,
//   parameter tolerance 1e-8, min relative decrease 1e-3, 5 consecutive
//   invalid steps, monotonic steps, no line search (is_constrained is left
//   false), and Ceres' DENSE_QR linear solver (dense_qr_solver.h). Bounds
//   still hold: the state update x (+) delta projects each component onto
//   the block's bounds, as Ceres' ParameterBlock::Plus. The sub-solve
//   returns its minimum-cost state; a failed first evaluation leaves the
//   block as it was. Residuals, loss corrections and tangent Jacobians are
//   computed as by the Evaluator (loss_correction.h, tangent_jacobian.h), in
//   double. No evaluation callback is told: Ceres refuses inner iterations
//   on problems that have one.
// - In the trust-region loop (trust_region_minimizer.cc): after the
//   candidate's cost, a round starts from the candidate, the whole cost is
//   evaluated at its result, the candidate moves there, the model cost change
//   grows by the round's decrease, a step whose round ends below the current
//   cost is accepted whatever its ratio, and inner iterations stop for the
//   rest of the solve once a round decreases the candidate's cost by a
//   relative amount of at most inner_iteration_tolerance.
//
// Determinism: each sub-solve reads the blocks of other sets and writes its
// own block only, with its own scratch, so a round gives the same bits for
// any num_threads.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_COORDINATE_DESCENT_MINIMIZER_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_COORDINATE_DESCENT_MINIMIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/minimizer/minimizer_options.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

// Ceres' automatic ordering: the variable blocks (indices into
// s.parameter_blocks) in independent sets, in the order they are visited.
std::vector<std::vector<int>> RecursiveIndependentSetOrdering(const ProblemStructure& s);

// What the loop runs, and what the summary reports.
struct InnerIterationSetup {
  // Ceres' Summary::inner_iterations_used: false when the reduced problem has
  // one parameter block (Ceres disables them, with a warning) or a given
  // ordering has no variable block left.
  bool used = false;
  std::vector<std::vector<int>> sets;  // indices into s.parameter_blocks
  // Summary::inner_iteration_ordering_used: the sizes of the sets (the given
  // ordering's groups without constant blocks), or of the given ordering as
  // it is when inner iterations are not used.
  std::vector<int> ordering_used;
};

// Ceres' preprocessing of inner iterations (after the fixed cost), with its
// messages. `has_evaluation_callback`: what the caller knows (Ceres 2.2 lets
// us see it). False with *error set: the solve fails.
bool SetUpInnerIterations(const ProblemStructure& s, const ceres::ParameterBlockOrdering* given,
                          bool has_evaluation_callback, InnerIterationSetup* setup, std::string* error);

class CoordinateDescentMinimizer {
 public:
  // sets: independent sets of variable blocks (SetUpInnerIterations).
  CoordinateDescentMinimizer(const ProblemStructure& s, std::vector<std::vector<int>> sets,
                             ParallelContext* context);
  ~CoordinateDescentMinimizer();

  // One round over the sets, from and into the ambient state x.
  void Minimize(double* x);

  // Bytes the scratch of one thread takes (the dense Jacobian and QR of the
  // largest block's sub-problem), for the memory plan; and the index
  // arrays.
  static int64_t ScratchBytesPerThread(const ProblemStructure& s);
  static int64_t IndexBytes(const ProblemStructure& s);

  // The LM iterations of the last round's sub-solves (tests, logs).
  int last_round_iterations() const { return last_round_iterations_; }

 private:
  struct Scratch;
  // Minimizes over block p with the others held at their values in x;
  // returns the LM iterations run.
  int SolveBlock(int p, double* x, Scratch* scratch) const;

  const ProblemStructure& s_;
  std::vector<std::vector<int>> sets_;
  ParallelContext* context_;
  // Ceres' default Minimizer::Options, which every sub-solve runs with.
  MinimizerOptions options_;
  // Per parameter block: its residual blocks (CSR), indices into
  // s.residual_blocks; and where the block sits in each (its position in
  // the residual block's parameter list).
  std::vector<int> residual_begin_;
  std::vector<int> residuals_;
  std::vector<int> position_;
  std::vector<int> rows_;  // per parameter block: sum of its residual blocks' sizes
  int max_rows_ = 0, max_size_ = 0, max_tangent_ = 0, max_residuals_ = 0, max_parameter_blocks_ = 0;
  struct ThreadScratch;
  std::unique_ptr<ThreadScratch> scratch_;
  int last_round_iterations_ = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_COORDINATE_DESCENT_MINIMIZER_H_
