// Bundle adjustment problems shaped as the SfM pipelines build them (written
// from their public sources: COLMAP's bundle adjuster, GLOMAP's global
// positioning, Theia's homogeneous points, OpenMVG's Brown camera and control
// points, OpenSfM's dynamic cost functions, AliceVision's evaluation callback
// and rigs), each solved by ceres::Solve
// with the pipeline's options and by ceres_sqrtba::Solve with the same
// options and SQRT_AUTOMATIC: the one-line change. The direct
// counterparts end within 1e-6 of the pipeline's direct Ceres solver, the
// iterative one within 1e-6 of Ceres' ITERATIVE_SCHUR, in double precision;
// in single precision both within 1e-4.
// The problems are built by tests/pipeline_shapes.h (shared with
// benchmarks/pipeline_benchmark.cc).
#include "pipeline_shapes.h"

#include <string>

#include "ceres/ceres.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace {

using testing::AliceVisionProblem;
using testing::ColmapProblem;
using testing::GlomapPositioningProblem;
using testing::MakeScene;
using testing::OpenMvgProblem;
using testing::OpenSfmProblem;
using testing::PipelineProblem;
using testing::RigProblem;
using testing::SolvePipelineProblem;
using testing::TheiaProblem;

Solver::Options PipelineOptions(ceres::LinearSolverType type) {
  Solver::Options o;
  o.linear_solver_type = type;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  o.max_num_iterations = 30;
  o.function_tolerance = 1e-10;
  o.num_threads = 2;
  o.logging_type = ceres::SILENT;
  return o;
}

// The pipeline's own solve and SQRT_AUTOMATIC on the same options, for the
// direct solver it would pick (dense or sparse) and for ITERATIVE_SCHUR.
void ExpectSameAsCeres(const PipelineProblem& problem, const Solver::Options& base) {
  for (ceres::LinearSolverType type : {ceres::DENSE_SCHUR, ceres::SPARSE_SCHUR, ceres::ITERATIVE_SCHUR}) {
    SCOPED_TRACE(ceres::LinearSolverTypeToString(type));
    Solver::Options o = base;
    o.linear_solver_type = type;
    // Ceres on one thread: its threaded Schur elimination sums in an order
    // that varies from run to run.
    Solver::Options reference_options = o;
    reference_options.num_threads = 1;
    const Solver::Summary reference = SolvePipelineProblem(problem, reference_options);
    const int reference_rejected = reference.num_unsuccessful_steps;
    ASSERT_TRUE(reference.IsSolutionUsable()) << reference.message;
    ASSERT_LT(reference.final_cost, reference.initial_cost);
    o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
    for (Precision precision : {DOUBLE_PRECISION, SINGLE_PRECISION}) {
      SCOPED_TRACE(PrecisionToString(precision));
      o.precision = precision;
      std::string error;
      EXPECT_TRUE(o.IsValid(&error)) << error;
      const Solver::Summary s = SolvePipelineProblem(problem, o);
      ASSERT_TRUE(s.IsSolutionUsable()) << s.message;
      EXPECT_EQ(s.sqrt_linear_solver_type_used,
                type == ceres::ITERATIVE_SCHUR ? SQRT_ITERATIVE_SCHUR : SQRT_SPARSE_SCHUR)
          << s.message;
      const double tolerance = precision == DOUBLE_PRECISION ? 1e-6 : 1e-4;
      // Never above Ceres' cost. Below it only when Ceres rejected more
      // steps: on the rig problem's nearly singular last steps Ceres' dense
      // Cholesky of S = U - W V^-1 W^T fails once (a step lost: 1.4e-6 of
      // the cost at iteration 30, still decreasing), where the square-root
      // S, the Gram matrix of the marginalized rows, does not.
      EXPECT_LE(s.final_cost, reference.final_cost * (1 + tolerance))
          << "sqrt iterations " << s.iterations.size() << ", Ceres' " << reference.iterations.size();
      if (s.num_unsuccessful_steps >= reference_rejected) {
        EXPECT_GE(s.final_cost, reference.final_cost * (1 - tolerance))
            << "sqrt iterations " << s.iterations.size() << ", Ceres' " << reference.iterations.size();
      }
    }
  }
}

TEST(PipelineShapes, ColmapProductManifoldPosesSharedIntrinsics) {
  ExpectSameAsCeres(ColmapProblem(MakeScene(8, 120, 401)), PipelineOptions(ceres::DENSE_SCHUR));
}

// COLMAP's (and AliceVision's) rigs: four parameter blocks per residual.
TEST(PipelineShapes, RigResidualsWithFourBlocks) {
  ExpectSameAsCeres(RigProblem(MakeScene(8, 100, 402)), PipelineOptions(ceres::DENSE_SCHUR));
}

// Theia: homogeneous 4-vector points on the sphere (SphereManifold).
TEST(PipelineShapes, TheiaHomogeneousPoints) {
  ExpectSameAsCeres(TheiaProblem(MakeScene(8, 120, 403)), PipelineOptions(ceres::SPARSE_SCHUR));
}

// OpenSfM: DynamicAutoDiffCostFunction residuals (sizes set at run time).
TEST(PipelineShapes, OpenSfmDynamicCostFunctions) {
  ExpectSameAsCeres(OpenSfmProblem(MakeScene(8, 120, 404)), PipelineOptions(ceres::SPARSE_SCHUR));
}

// GLOMAP's global positioning: one-dimensional eliminated blocks (one scale
// per observation) with lower bounds.
TEST(PipelineShapes, GlomapOneDimensionalEliminatedBlocksWithBounds) {
  Solver::Options o = PipelineOptions(ceres::SPARSE_SCHUR);
  // GLOMAP's preconditioner, which Ceres ignores for SPARSE_SCHUR and which
  // must not be refused.
  o.preconditioner_type = ceres::CLUSTER_TRIDIAGONAL;
  ExpectSameAsCeres(GlomapPositioningProblem(MakeScene(8, 80, 405), 406), o);
}

// AliceVision: an evaluation callback that changes the residuals.
TEST(PipelineShapes, AliceVisionEvaluationCallbackChangesTheResiduals) {
  ExpectSameAsCeres(AliceVisionProblem(MakeScene(8, 100, 407)), PipelineOptions(ceres::DENSE_SCHUR));
}

// OpenMVG: Brown intrinsics (8 parameters, the principal point held),
// angle-axis poses, intrinsics first in each residual.
TEST(PipelineShapes, OpenMvgBrownIntrinsics) {
  ExpectSameAsCeres(OpenMvgProblem(MakeScene(8, 120, 408)), PipelineOptions(ceres::SPARSE_SCHUR));
}

// OpenMVG's ground control points: constant points whose weighted
// residuals (no loss) leave only the camera free.
TEST(PipelineShapes, OpenMvgControlPoints) {
  ExpectSameAsCeres(OpenMvgProblem(MakeScene(8, 120, 409), 16.0, /*num_control_points=*/6),
                    PipelineOptions(ceres::DENSE_SCHUR));
}

}  // namespace
}  // namespace ceres_sqrtba
