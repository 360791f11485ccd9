#include "build_problem.h"

#include "snavely_reprojection_error.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

// Adds the cameras (group camera_group) and points (group point_group) of the
// problem to *ordering; a negative group leaves that kind out.
void AddGroups(BalProblem* bal, const ceres::Problem& problem, int camera_group,
               int point_group, ceres::ParameterBlockOrdering* ordering) {
  if (point_group >= 0) {
    for (int i = 0; i < bal->num_points(); ++i) {
      double* block = bal->mutable_point(i);
      if (problem.HasParameterBlock(block)) {
        ordering->AddElementToGroup(block, point_group);
      }
    }
  }
  if (camera_group >= 0) {
    for (int i = 0; i < bal->num_cameras(); ++i) {
      double* block = bal->mutable_camera(i);
      if (problem.HasParameterBlock(block)) {
        ordering->AddElementToGroup(block, camera_group);
      }
    }
  }
}

}  // namespace

bool BuildProblem(const BuildOptions& options, BalProblem* bal,
                  ceres::Problem* problem, std::string* error) {
  if (options.use_manifolds && !bal->use_quaternions()) {
    *error = "--use_manifolds can only be used with --use_quaternions";
    return false;
  }
  // One loss object for all blocks; the problem deletes it once.
  ceres::LossFunction* loss =
      options.robustify ? new ceres::HuberLoss(1.0) : nullptr;
  const std::vector<double>& observed = bal->observations();
  int added = 0;
  if (options.point_rank != nullptr) {
    // Every camera, on every rank, in camera order (SolveDistributed's list).
    for (int c = 0; c < bal->num_cameras(); ++c) {
      problem->AddParameterBlock(bal->mutable_camera(c), bal->camera_block_size());
    }
  }
  for (int i = 0; i < bal->num_observations(); ++i) {
    if (options.point_rank != nullptr && (*options.point_rank)[bal->point_index()[i]] != options.rank) continue;
    ++added;
    const double x = observed[2 * static_cast<size_t>(i)];
    const double y = observed[2 * static_cast<size_t>(i) + 1];
    ceres::CostFunction* cost = bal->use_quaternions()
                                    ? SnavelyQuaternionError::Create(x, y, options.float_jacobians)
                                    : SnavelyAngleAxisError::Create(x, y, options.float_jacobians);
    problem->AddResidualBlock(cost, loss,
                              bal->mutable_camera(bal->camera_index()[i]),
                              bal->mutable_point(bal->point_index()[i]));
  }
  if (added == 0) delete loss;  // no residual block took it (a rank without points)
  if (bal->use_quaternions() && options.use_manifolds) {
    // One manifold object shared by all cameras; the problem owns it.
    ceres::Manifold* camera_manifold =
        new ceres::ProductManifold<ceres::QuaternionManifold,
                                   ceres::EuclideanManifold<6>>{};
    for (int i = 0; i < bal->num_cameras(); ++i) {
      double* block = bal->mutable_camera(i);
      if (problem->HasParameterBlock(block)) {
        problem->SetManifold(block, camera_manifold);
      }
    }
  }
  return true;
}

std::shared_ptr<ceres::ParameterBlockOrdering> PointsFirstOrdering(
    BalProblem* bal, const ceres::Problem& problem) {
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  AddGroups(bal, problem, /*camera_group=*/1, /*point_group=*/0,
            ordering.get());
  return ordering;
}

bool InnerIterationOrdering(
    const std::string& blocks, BalProblem* bal, const ceres::Problem& problem,
    std::shared_ptr<ceres::ParameterBlockOrdering>* ordering,
    std::string* error) {
  int camera_group = -1;
  int point_group = -1;
  if (blocks == "automatic") {
    ordering->reset();
    return true;
  } else if (blocks == "cameras") {
    camera_group = 0;
  } else if (blocks == "points") {
    point_group = 0;
  } else if (blocks == "cameras,points") {
    camera_group = 0;
    point_group = 1;
  } else if (blocks == "points,cameras") {
    point_group = 0;
    camera_group = 1;
  } else {
    *error = "unknown --blocks_for_inner_iterations '" + blocks +
             "' (expected automatic, cameras, points, cameras,points or "
             "points,cameras)";
    return false;
  }
  *ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  AddGroups(bal, problem, camera_group, point_group, ordering->get());
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
