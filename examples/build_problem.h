// Turns a BalProblem into a ceres::Problem the way Ceres' bundle_adjuster
// example does, and the parameter orderings it can ask for.
#ifndef CERES_SQRTBA_EXAMPLES_BUILD_PROBLEM_H_
#define CERES_SQRTBA_EXAMPLES_BUILD_PROBLEM_H_

#include <memory>
#include <string>
#include <vector>

#include "bal_problem.h"
#include "ceres/ceres.h"

namespace ceres_sqrtba {
namespace examples {

struct BuildOptions {
  // Huber loss with scale 1 (pixel) on every residual block.
  bool robustify = false;
  // Quaternion cameras only: QuaternionManifold on the rotation and a
  // Euclidean manifold on the other six values of the camera block.
  bool use_manifolds = false;
  // ceres_sqrtba::AutoDiffCostFunction (Jacobians in float when the solve
  // runs in single precision); false: ceres::AutoDiffCostFunction.
  bool float_jacobians = true;
  // One rank's share of a solve spread over MPI ranks: every camera, then
  // the observations of the points with point_rank[point] == rank only.
  const std::vector<int>* point_rank = nullptr;
  int rank = 0;
};

// One autodiff reprojection residual (2 values) per observation, on the
// camera block and the point block, which stay in *bal's storage: solving the
// problem updates *bal. Returns false (with a message) when the options do not
// fit the problem (manifolds without quaternions).
bool BuildProblem(const BuildOptions& options, BalProblem* bal,
                  ceres::Problem* problem, std::string* error);

// Elimination ordering for Schur-type solvers: every point in group 0, every
// camera in group 1. Blocks that are not in the problem are left out.
std::shared_ptr<ceres::ParameterBlockOrdering> PointsFirstOrdering(
    BalProblem* bal, const ceres::Problem& problem);

// Ordering for inner iterations: "automatic" (sets *ordering to null),
// "cameras", "points", "cameras,points" or "points,cameras" (the first named
// kind is refined first). False with a message for any other value.
bool InnerIterationOrdering(const std::string& blocks, BalProblem* bal,
                            const ceres::Problem& problem,
                            std::shared_ptr<ceres::ParameterBlockOrdering>* ordering,
                            std::string* error);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_BUILD_PROBLEM_H_
