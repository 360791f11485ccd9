// Everything about a square-root linear solver that is decided before the
// first step: which storage holds the landmark blocks, how the work over them
// is cut into chunks, how much memory one precision's solver needs, and the
// solver itself.
//
// Storage: SQRT_ITERATIVE_SCHUR uses the projected blocks
// (projected/projected_landmark_blocks.h) unless
// LinearSolverOptions::use_explicit_reduced_rows asks for the paper's explicit
// blocks (explicit/explicit_landmark_blocks.h); SQRT_SPARSE_SCHUR always uses
// the projected ones and plans its reduced camera matrix and Cholesky
// factorization here (direct/camera_factorization_plan.h: pattern, dense or
// sparse, ordering, factor size), so that the memory check counts them, as
// it counts the matrix and factorization of SQRT_ITERATIVE_SCHUR's
// visibility-based preconditioners (CLUSTER_JACOBI, CLUSTER_TRIDIAGONAL:
// direct/visibility_based_preconditioner.h), planned here too. Only the
// chosen storage's layout is built.
//
// Work partition: the chunks fix the order of every parallel sum, so they
// depend on the problem only, never on num_threads (bit-identical results for
// any number of threads). At most 64 chunks, each with at least
// 4 x (reduced camera vector) scalars of blocks so that the per-chunk camera
// accumulators stay small against the blocks they sum.
//
// Precision is a parameter of Create and RequiredBytes only: the layout and
// the partition are shared, so a single precision solve that continues in
// double (solvers/precision_policy.h) builds the double solver on the same
// plan.
//
// The factory reads the few options of Solver::Options that concern the
// linear solver, copied into LinearSolverOptions by the solve
// (solve/square_root_solve.h: LinearSolverOptionsOf), so that this layer
// does not depend on the public interface that the solve implements.
#ifndef CERES_SQRTBA_INTERNAL_SOLVERS_LINEAR_SOLVER_FACTORY_H_
#define CERES_SQRTBA_INTERNAL_SOLVERS_LINEAR_SOLVER_FACTORY_H_

#include <cstdint>
#include <memory>
#include <string>

#include "ceres/types.h"
#include "ceres_sqrtba/internal/cameras/reduced_camera_pcg.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/common/process_group.h"
#include "ceres_sqrtba/internal/linear/linear_solver.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/types.h"

namespace ceres_sqrtba {
namespace internal {

struct ExplicitBlockLayout;
struct ProjectedBlockLayout;
class CameraFactorizationPlan;
class VisibilityPreconditionerPlan;

// The fields of Solver::Options that choose and configure the linear solver,
// with their names and defaults there (Ceres' for Ceres' fields).
struct LinearSolverOptions {
  // SQRT_ITERATIVE_SCHUR or SQRT_SPARSE_SCHUR (SQRT_AUTOMATIC is resolved by
  // then: solve/solver_choice.h).
  SqrtLinearSolverType sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  bool use_explicit_reduced_rows = false;
  ReducedCameraFactorization reduced_camera_factorization = AUTOMATIC_FACTORIZATION;
  ceres::PreconditionerType preconditioner_type = ceres::JACOBI;
  ceres::VisibilityClusteringType visibility_clustering_type = ceres::CANONICAL_VIEWS;
  int min_linear_solver_iterations = 0;
  int max_linear_solver_iterations = 500;
  // A solve spread over processes: SQRT_SPARSE_SCHUR's reduced camera matrix
  // is summed over them, on the union of their patterns.
  const ProcessGroup* processes = nullptr;
};

class LinearSolverFactory {
 public:
  LinearSolverFactory(const ProblemStructure& s, const LinearSolverOptions& options);
  ~LinearSolverFactory();

  bool sparse() const { return sparse_; }
  // SQRT_SPARSE_SCHUR: whether the reduced camera matrix is factored densely.
  bool dense_factorization() const;
  // Why the solver cannot be built (empty: it can), known before any large
  // allocation.
  std::string PlanError() const;
  bool projected() const { return projected_layout_ != nullptr; }
  const WorkPartition& partition() const { return partition_; }

  // Bytes the solver of one precision allocates: its landmark storage and,
  // for SQRT_SPARSE_SCHUR, the reduced camera matrix and its factorization
  // (for a visibility-based preconditioner: its part of them).
  int64_t RequiredBytes(Precision precision) const;
  // What RequiredBytes counts, for messages ("the landmark blocks").
  const char* WhatRequiredBytesCounts() const;
  // Bytes of the solver's camera-side vectors besides the storage: PCG's
  // vectors, the per-chunk accumulators of the products and right-hand
  // side, the preconditioner's blocks and their block-major sums.
  int64_t SolverVectorBytes(Precision precision) const;
  // Bytes of this plan (the storage's layout, the partition).
  int64_t PlanBytes() const;

  std::unique_ptr<LinearSolver> Create(Precision precision, ParallelContext* context) const;

 private:
  const ProblemStructure& s_;
  bool sparse_;
  IterativeSchurOptions iterative_options_;
  std::unique_ptr<ExplicitBlockLayout> explicit_layout_;
  std::unique_ptr<ProjectedBlockLayout> projected_layout_;
  std::unique_ptr<CameraFactorizationPlan> direct_plan_;
  std::unique_ptr<VisibilityPreconditionerPlan> visibility_plan_;
  WorkPartition partition_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_SOLVERS_LINEAR_SOLVER_FACTORY_H_
