#include "ceres_sqrtba/internal/solvers/linear_solver_factory.h"

#include <algorithm>

#include "ceres_sqrtba/internal/direct/camera_factorization_plan.h"
#include "ceres_sqrtba/internal/direct/visibility_based_preconditioner.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/projected/projected_landmark_blocks.h"
#include "ceres_sqrtba/internal/solvers/explicit_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/solvers/projected_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/solvers/sqrt_sparse_schur_solver.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

constexpr int kMaxChunks = 64;

// Explicit blocks are streamed whole by every product: larger chunks.
constexpr int64_t kMinChunkWorkExplicit = 4096;
constexpr int64_t kMinChunkWorkProjected = 1024;

template <template <typename> class SolverT, typename Layout, typename... Args>
std::unique_ptr<LinearSolver> Make(Precision precision, const ProblemStructure& s,
                                   const Layout& layout, Args&&... args) {
  if (precision == SINGLE_PRECISION) {
    return std::make_unique<SolverT<float>>(s, layout, std::forward<Args>(args)...);
  }
  return std::make_unique<SolverT<double>>(s, layout, std::forward<Args>(args)...);
}

}  // namespace

LinearSolverFactory::LinearSolverFactory(const ProblemStructure& s, const LinearSolverOptions& options)
    : s_(s), sparse_(options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR) {
  iterative_options_.preconditioner = options.preconditioner_type;
  iterative_options_.min_num_iterations = options.min_linear_solver_iterations;
  iterative_options_.max_num_iterations = options.max_linear_solver_iterations;
  const bool projected = sparse_ || !options.use_explicit_reduced_rows;
  int64_t block_scalars = 0;
  if (projected) {
    projected_layout_ = std::make_unique<ProjectedBlockLayout>(s);
    block_scalars = projected_layout_->hot_scalars;
  } else {
    explicit_layout_ = std::make_unique<ExplicitBlockLayout>(s);
    block_scalars = explicit_layout_->total_scalars;
  }
  if (sparse_) {
    direct_plan_ = std::make_unique<CameraFactorizationPlan>(
        options.processes != nullptr ? ReducedCameraPattern::Union(s, *options.processes) : ReducedCameraPattern(s),
        options.reduced_camera_factorization);
  }
  const bool clusters = options.preconditioner_type == ceres::CLUSTER_JACOBI ||
                        options.preconditioner_type == ceres::CLUSTER_TRIDIAGONAL;
  if (!sparse_ && clusters && !s.cameras.empty()) {
    visibility_plan_ = std::make_unique<VisibilityPreconditionerPlan>(
        s, options.preconditioner_type, options.visibility_clustering_type, options.processes);
    iterative_options_.visibility = visibility_plan_.get();
  }
  const int64_t nc = std::max(1, s.num_camera_parameters);
  const int max_chunks =
      static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(kMaxChunks, block_scalars / (4 * nc))));
  partition_ = WorkPartition(static_cast<int>(s.groups.size()),
                             projected ? projected_layout_->work : explicit_layout_->work, max_chunks,
                             projected ? kMinChunkWorkProjected : kMinChunkWorkExplicit);
  // Landmarks of one shape side by side in storage, chunk by chunk, for the
  // batched kernels (landmark_batches.h).
  if (projected) projected_layout_->PlaceInShapeOrder(partition_);
}

LinearSolverFactory::~LinearSolverFactory() = default;

bool LinearSolverFactory::dense_factorization() const { return direct_plan_ != nullptr && direct_plan_->dense(); }

std::string LinearSolverFactory::PlanError() const { return direct_plan_ != nullptr ? direct_plan_->error() : ""; }

int64_t LinearSolverFactory::RequiredBytes(Precision precision) const {
  const bool single = precision == SINGLE_PRECISION;
  if (projected()) {
    return projected_layout_->RequiredBytes(single ? 4 : 8) +
           (single ? ProjectedLandmarkBlocks<float>::BatchBytes(*projected_layout_, partition_)
                   : ProjectedLandmarkBlocks<double>::BatchBytes(*projected_layout_, partition_)) +
           (sparse_ ? direct_plan_->RequiredBytes(s_, partition_) : 0) +
           (visibility_plan_ != nullptr ? visibility_plan_->RequiredBytes(s_, partition_) : 0);
  }
  return single ? ExplicitLandmarkBlocks<float>::RequiredBytes(*explicit_layout_)
                : ExplicitLandmarkBlocks<double>::RequiredBytes(*explicit_layout_);
}

int64_t LinearSolverFactory::SolverVectorBytes(Precision precision) const {
  const int64_t scalar = precision == SINGLE_PRECISION ? 4 : 8;
  const int64_t nc = s_.num_camera_parameters;
  const int64_t chunks = partition_.num_chunks();
  int64_t gram = 0;  // the n x n blocks of all cameras
  for (int p : s_.cameras) gram += int64_t{s_.parameter_blocks[p].tangent_size} * s_.parameter_blocks[p].tangent_size;
  // Block-major per-camera sums: up to one copy per chunk, 32 MiB at most
  // (camera_block_sum.h), for the preconditioner and the camera Gram.
  const int64_t sum_copies = std::min<int64_t>(gram * 8 * std::max<int64_t>(1, chunks), int64_t{32} << 20);
  // PCG (4 vectors), right-hand side, solution, damping (both precisions),
  // per-chunk product and right-hand side accumulators, the blocks of the
  // preconditioner (inverse in Scalar, sums in double) and the camera Gram;
  // in float, the projected back substitution's copy of the camera step.
  const int64_t step_copy = projected() && precision == SINGLE_PRECISION ? nc * scalar : 0;
  return nc * (6 * scalar + 16) + chunks * nc * (scalar + 8) + gram * (scalar + 16) + 2 * sum_copies + step_copy;
}

int64_t LinearSolverFactory::PlanBytes() const {
  return (projected() ? projected_layout_->AllocatedBytes() : explicit_layout_->AllocatedBytes()) +
         static_cast<int64_t>(partition_.num_chunks() + 1) * 4;
}

const char* LinearSolverFactory::WhatRequiredBytesCounts() const {
  if (sparse_) return "the landmark blocks, the reduced camera matrix and its factorization";
  return visibility_plan_ != nullptr ? "the landmark blocks and the preconditioner's matrix and factorization"
                                     : "the landmark blocks";
}

std::unique_ptr<LinearSolver> LinearSolverFactory::Create(Precision precision,
                                                          ParallelContext* context) const {
  if (sparse_) {
    return Make<SqrtSparseSchurSolver>(precision, s_, *projected_layout_, partition_, context, *direct_plan_);
  }
  if (projected()) {
    return Make<ProjectedIterativeSchurSolver>(precision, s_, *projected_layout_, partition_, context,
                                               iterative_options_);
  }
  return Make<ExplicitIterativeSchurSolver>(precision, s_, *explicit_layout_, partition_, context,
                                            iterative_options_);
}

}  // namespace internal
}  // namespace ceres_sqrtba
