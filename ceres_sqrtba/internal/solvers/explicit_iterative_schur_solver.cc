#include "ceres_sqrtba/internal/solvers/explicit_iterative_schur_solver.h"

#include <algorithm>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
ExplicitIterativeSchurSolver<Scalar>::ExplicitIterativeSchurSolver(
    const ProblemStructure& s, const ExplicitBlockLayout& layout,
    const WorkPartition& partition, ParallelContext* context,
    const IterativeSchurOptions& options)
    : s_(s),
      options_(options),
      context_(context),
      landmarks_(s, layout, partition, context),
      system_(s, layout, partition, landmarks_.blocks(), context),
      cameras_(s, partition, options.preconditioner),
      back_substitution_(s, layout, partition) {
  system_.SetDamping(cameras_.damping_squared());
}

template <typename Scalar>
LinearSolverSummary ExplicitIterativeSchurSolver<Scalar>::Solve(const double* d, double eta,
                                                            double* y,
                                                            double* jy_squared_norm) {
  // One pass over the blocks: QR (new Jacobian) or undoing the previous
  // damping (new radius), damping, and, while each block is in cache, its
  // top-row Gram for the preconditioner and its share of the right-hand side.
  BlockJacobiPreconditioner<Scalar>* preconditioner = cameras_.preconditioner();
  const bool visit_top_rows = preconditioner != nullptr && preconditioner->CanVisit();
  struct Visitor : DampedBlockVisitor<Scalar> {
    ExplicitReducedCameraSystem<Scalar>* system;
    BlockJacobiPreconditioner<Scalar>* preconditioner;  // nullptr: not visited
    void BeginChunk(int chunk) override {
      system->BeginRhsChunk(chunk);
      if (preconditioner != nullptr) preconditioner->BeginChunk(chunk);
    }
    void Visit(int chunk, int group, const LandmarkBlock<Scalar>& block) override {
      system->AddRhs(chunk, group, block);
      if (preconditioner != nullptr) {
        preconditioner->AddGroup(chunk, group, [&](int, int, int column, int n, double* acc) {
          block.AddColumnGramLower(column, n, 0, block.landmark_size(), acc);
        });
      }
    }
  } visitor;
  visitor.system = &system_;
  visitor.preconditioner = visit_top_rows ? preconditioner : nullptr;
  landmarks_.MarginalizeAndDamp(d, &visitor);
  system_.FinishRhs(cameras_.rhs().data());
  cameras_.SetPoseDamping(d + s_.camera_tangent_begin);
  if (preconditioner != nullptr) {
    // SCHUR_JACOBI subtracts the Gram matrices of the blocks' top rows
    // Q^_1^T Jp from the camera Gram matrices.
    if (visit_top_rows) {
      preconditioner->FinishSums(context_);
    } else if (preconditioner->schur()) {
      preconditioner->SumBlocks(context_, [&](int g, int, int column, int n, double* acc) {
        const LandmarkBlock<Scalar> b = landmarks_.blocks()->block(g);
        b.AddColumnGramLower(column, n, 0, b.landmark_size(), acc);
      });
    }
    preconditioner->Invert(&landmarks_.camera_gram(), cameras_.damping_squared_double(), context_);
  }
  LinearSolverSummary summary;
  if (cameras_.Solve(&system_, options_.ForSolve(eta), y + s_.camera_tangent_begin, &summary)) {
    // Back substitution and the model's |J y|^2, block by block.
    *jy_squared_norm = back_substitution_.Run(landmarks_.blocks(), d, y, context_);
  }
  return summary;
}

template class ExplicitIterativeSchurSolver<float>;
template class ExplicitIterativeSchurSolver<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
