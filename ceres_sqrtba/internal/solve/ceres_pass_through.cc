#include "ceres_sqrtba/internal/solve/ceres_pass_through.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/internal/problem/inner_iteration_ordering.h"
#include "ceres_sqrtba/internal/solve/options_validation.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

void Record(const Solver::Options& options, Solver::Summary* summary) {
  summary->sqrt_linear_solver_type_given = options.sqrt_linear_solver_type;
  summary->sqrt_linear_solver_type_used = CERES_LINEAR_SOLVER;
  summary->precision_given = options.precision;
  // Ceres' own solvers run in double (mixed precision refines to double).
  summary->precision_used = DOUBLE_PRECISION;
}

// Ceres' own refusals of inner iterations (an evaluation callback, a group
// of inner_iteration_ordering that is not an independent set of the reduced
// problem) come from its preprocessor, after its Schur solvers have been set
// up but before the Jacobian they need is: Solver::Solve then reads the Schur
// structure of a Jacobian that does not exist and crashes (2.1 and 2.2). They
// are refused here first, with Ceres' messages, for Ceres' Schur solvers;
// Ceres reports them itself with the others. A block in the ordering that is
// not in the problem makes Ceres read past a map's end with any solver: refused
// too. False with *error set.
bool CheckInnerIterationsForCeres(const ceres::Solver::Options& options, const ceres::Problem& problem,
                                  std::string* error) {
  if (!options.use_inner_iterations || options.minimizer_type != ceres::TRUST_REGION) return true;
  const ceres::ParameterBlockOrdering* ordering = options.inner_iteration_ordering.get();
  if (ordering != nullptr) {
    for (const auto& group : ordering->group_to_elements()) {
      for (double* block : group.second) {
        if (!problem.HasParameterBlock(block)) {
          *error = InnerIterationBlockNotInProblem(block);
          return false;
        }
      }
    }
  }
  const ceres::LinearSolverType type = options.linear_solver_type;
  if (type != ceres::DENSE_SCHUR && type != ceres::SPARSE_SCHUR && type != ceres::ITERATIVE_SCHUR) return true;
  std::vector<ceres::ResidualBlockId> residual_blocks;
  problem.GetResidualBlocks(&residual_blocks);
  // The reduced problem: variable blocks that a residual block uses.
  std::unordered_set<const double*> reduced;
  std::vector<double*> blocks;
  for (ceres::ResidualBlockId id : residual_blocks) {
    problem.GetParameterBlocksForResidualBlock(id, &blocks);
    for (double* b : blocks) {
      if (!problem.IsParameterBlockConstant(b)) reduced.insert(b);
    }
  }
#if CERES_SQRTBA_CERES_2_2
  if (problem.options().evaluation_callback != nullptr && !reduced.empty()) {
    *error = "Inner iterations cannot be used with EvaluationCallbacks";
    return false;
  }
#endif
  // Ceres leaves inner iterations off, without a check, when the reduced
  // problem has one block or the ordering none of its blocks.
  if (ordering == nullptr || reduced.size() <= 1) return true;
  // The reduced problem's blocks as vertices, its residual blocks as
  // hyperedges.
  std::unordered_map<const double*, int> vertex_of;
  std::vector<int> group_of;
  for (const auto& group : ordering->group_to_elements()) {
    for (double* block : group.second) {
      if (reduced.count(block) == 0) continue;
      vertex_of[block] = static_cast<int>(group_of.size());
      group_of.push_back(group.first);
    }
  }
  std::vector<int> edge_begin, edge_vertices;
  for (ceres::ResidualBlockId id : residual_blocks) {
    problem.GetParameterBlocksForResidualBlock(id, &blocks);
    edge_begin.push_back(static_cast<int>(edge_vertices.size()));
    for (double* b : blocks) {
      const auto it = vertex_of.find(b);
      if (it != vertex_of.end()) edge_vertices.push_back(it->second);
    }
  }
  edge_begin.push_back(static_cast<int>(edge_vertices.size()));
  return InnerIterationGroupsAreIndependent(edge_begin, edge_vertices, group_of, error);
}

}  // namespace

void SolveWithCeres(const Solver::Options& options, const std::string& reason, ceres::Problem* problem,
                    Solver::Summary* summary) {
  *summary = Solver::Summary();
  Record(options, summary);
  if (problem == nullptr) {
    summary->message = "ceres_sqrtba::Solve was called with a null problem.";
    return;
  }
  // ceres::Solve validates too, but lets through what Ceres aborts on.
  std::string error;
  if (!ValidateCeresOptions(options, &error) || !CheckInnerIterationsForCeres(options, *problem, &error)) {
    summary->message = error;
    if (options.logging_type != ceres::SILENT) LOG(ERROR) << "Terminating: " << error;
    return;
  }
  ceres::Solve(options, problem, summary);
  if (!reason.empty()) summary->message += " [ceres_sqrtba: " + reason + "; solved by ceres::Solve]";
}

void SolveWithoutLandmarks(const Solver::Options& options, ceres::Problem* problem,
                           Solver::Summary* summary) {
  ceres::Solver::Options ceres_options = options;
  const bool sparse = options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR;
  ceres_options.linear_solver_type =
      !sparse ? ceres::ITERATIVE_SCHUR
              : (options.reduced_camera_factorization == DENSE_FACTORIZATION ? ceres::DENSE_SCHUR : ceres::SPARSE_SCHUR);
  // The square-root solvers take no sparse library option; SuiteSparse is
  // what this build links (and another value can crash Ceres 2.2 here).
  ceres_options.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
  ceres_options.use_mixed_precision_solves = false;
  std::string error;
  if (!CheckInnerIterationsForCeres(ceres_options, *problem, &error)) {
    *summary = Solver::Summary();
    Record(options, summary);
    summary->message = error;
    if (options.logging_type != ceres::SILENT) LOG(ERROR) << "Terminating: " << error;
    return;
  }
  ceres::Solve(ceres_options, problem, summary);
  Record(options, summary);
  // With nothing variable (or a failure before its minimizer) Ceres runs no
  // iteration and uses no linear solver: its summary's linear_solver_type_used
  // is then only the field's default, not worth naming.
  summary->message += summary->iterations.empty()
                          ? std::string(" [ceres_sqrtba: no landmark to eliminate; passed to ceres::Solve, which ran no "
                                        "iteration]")
                          : std::string(" [ceres_sqrtba: no landmark to eliminate; solved by ceres::Solve with ") +
                                ceres::LinearSolverTypeToString(summary->linear_solver_type_used) + "]";
}

}  // namespace internal
}  // namespace ceres_sqrtba
