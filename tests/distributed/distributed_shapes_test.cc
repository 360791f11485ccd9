// ceres_sqrtba::SolveDistributed on every problem shape of
// tests/pipeline_shapes.h under mpiexec (ctest runs this binary on 1, 2 and
// 3 ranks), against the one-process solve of the same shape: the same
// iterations, acceptances and CG counts, costs within 1e-10 relative for the
// first 10 iterations and 1e-8 at the end (the tolerances of
// distributed_solver_test.cc, for the same reason: the ranks' sums are
// added in another order), with SQRT_ITERATIVE_SCHUR and SQRT_SPARSE_SCHUR in
// double precision.
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/distributed_solver.h"
#include "gtest/gtest.h"
#include "mpi_test_support.h"
#include "pipeline_shapes.h"

namespace ceres_sqrtba {
namespace {

using testing::ExpectSameIterations;
using testing::Rank;
using testing::Size;

// Every shape of tests/pipeline_shapes.h (COLMAP's product-manifold poses
// and shared intrinsics, rigs with four blocks per residual, Theia's
// homogeneous points, OpenSfM's dynamic cost functions, GLOMAP's scales as
// one-dimensional landmarks with bounds, AliceVision's evaluation callback,
// OpenMVG's Brown intrinsics and constant control points): each rank builds
// the whole problem, then removes the landmarks of the other ranks' shares
// (BalancedLandmarkShares by residual blocks) and, on ranks other than 0,
// the residual blocks that touch no landmark; the camera-side blocks are
// every other block, in the order of the shape's values. The landmarks are
// the blocks one process eliminates (Ceres' Schur ordering: the points, and
// GLOMAP's per-observation scales).
struct Shape {
  const char* name;
  testing::PipelineProblem problem;
  bool scales_are_landmarks = false;
};

std::vector<Shape> Shapes() {
  using testing::MakeScene;
  return {{"colmap", testing::ColmapProblem(MakeScene(8, 120, 401))},
          {"rig", testing::RigProblem(MakeScene(8, 100, 402))},
          {"theia", testing::TheiaProblem(MakeScene(8, 120, 403))},
          {"opensfm", testing::OpenSfmProblem(MakeScene(8, 120, 404))},
          {"glomap", testing::GlomapPositioningProblem(MakeScene(8, 80, 405), 406), true},
          {"alicevision", testing::AliceVisionProblem(MakeScene(8, 100, 407))},
          {"openmvg", testing::OpenMvgProblem(MakeScene(8, 120, 408))},
          {"openmvg-control-points", testing::OpenMvgProblem(MakeScene(8, 120, 409), 16.0, 6)}};
}

struct ShapeRun {
  testing::Values values;
  std::unique_ptr<ceres::EvaluationCallback> callback;
  std::unique_ptr<ceres::Problem> problem;
  Solver::Summary summary;
};

// One process (spread = false) or this rank's share.
void RunShape(const Shape& shape, const Solver::Options& options, bool spread, ShapeRun* run) {
  run->values = shape.problem.values;
  run->callback = shape.problem.make_callback ? shape.problem.make_callback(&run->values) : nullptr;
  ceres::Problem::Options problem_options;
  problem_options.evaluation_callback = run->callback.get();
  problem_options.enable_fast_removal = true;
  run->problem = std::make_unique<ceres::Problem>(problem_options);
  ceres::Problem& problem = *run->problem;
  shape.problem.build(&run->values, &problem);
  if (!spread) {
    Solve(options, &problem, &run->summary);
    return;
  }
  testing::Values& v = run->values;
  std::vector<double*> landmarks;
  if (shape.scales_are_landmarks) {
    for (size_t k = 0; k < v.intrinsics.size(); ++k) landmarks.push_back(v.intrinsics.data() + k);
  } else {
    for (auto& point : v.points) landmarks.push_back(point.data());
  }
  landmarks.erase(std::remove_if(landmarks.begin(), landmarks.end(),
                                 [&](double* x) { return !problem.HasParameterBlock(x); }),
                  landmarks.end());
  const std::set<double*> all_landmarks(landmarks.begin(), landmarks.end());
  std::vector<int> observations;
  for (double* l : landmarks) {
    std::vector<ceres::ResidualBlockId> blocks;
    problem.GetResidualBlocksForParameterBlock(l, &blocks);
    observations.push_back(static_cast<int>(blocks.size()));
  }
  const std::vector<int> share = BalancedLandmarkShares(observations, Size());
  int mine = 0;
  for (size_t i = 0; i < landmarks.size(); ++i) {
    if (share[i] == Rank()) {
      ++mine;
    } else {
      problem.RemoveParameterBlock(landmarks[i]);
    }
  }
  if (Rank() != 0) {
    std::vector<ceres::ResidualBlockId> residual_blocks;
    problem.GetResidualBlocks(&residual_blocks);
    for (ceres::ResidualBlockId id : residual_blocks) {
      std::vector<double*> blocks;
      problem.GetParameterBlocksForResidualBlock(id, &blocks);
      if (std::none_of(blocks.begin(), blocks.end(), [&](double* b) { return all_landmarks.count(b) > 0; })) {
        problem.RemoveResidualBlock(id);
      }
    }
  }
  std::vector<double*> cameras;
  auto consider = [&](double* b) {
    if (problem.HasParameterBlock(b) && all_landmarks.count(b) == 0) cameras.push_back(b);
  };
  for (auto& x : v.poses) consider(x.data());
  for (auto& x : v.points) consider(x.data());
  for (auto& x : v.extra) consider(x.data());
  for (size_t k = 0; k < v.intrinsics.size(); ++k) consider(v.intrinsics.data() + k);
  ASSERT_EQ(static_cast<int>(cameras.size()) + mine, problem.NumParameterBlocks())
      << shape.name << ": a parameter block outside the shape's values";
  SolveDistributed(options, MPI_COMM_WORLD, cameras, &problem, &run->summary);
}

TEST(DistributedSolverShapes, EveryPipelineShapeFollowsTheOneProcessSolve) {
  for (const Shape& shape : Shapes()) {
    for (SqrtLinearSolverType solver : {SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR}) {
      SCOPED_TRACE(std::string(shape.name) + (solver == SQRT_SPARSE_SCHUR ? ", SQRT_SPARSE_SCHUR" : ", iterative"));
      const Solver::Options options = testing::SolveOptions(DOUBLE_PRECISION, ceres::SCHUR_JACOBI, solver);
      ShapeRun one, distributed;
      RunShape(shape, options, false, &one);
      RunShape(shape, options, true, &distributed);
      ASSERT_NE(one.summary.termination_type, ceres::FAILURE) << one.summary.message;
      ExpectSameIterations(distributed.summary, one.summary, 1e-10, 1e-8);
    }
  }
}

}  // namespace
}  // namespace ceres_sqrtba

int main(int argc, char** argv) { return ceres_sqrtba::testing::MpiTestMain(&argc, argv); }
