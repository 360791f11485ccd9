// LinearSolverFactory's decisions (solvers/linear_solver_factory.h): which
// storage holds the landmark blocks (projected unless SQRT_ITERATIVE_SCHUR
// asks for explicit rows), sparse() for SQRT_SPARSE_SCHUR, the dense or sparse
// factorization of the reduced camera matrix (AUTOMATIC_FACTORIZATION: dense
// when it needs at most kDenseFlopRatio times the sparse one's flops),
// PlanError when CHOLMOD cannot order the camera blocks, the bytes counted for
// each precision, the work partition, and the solver Create builds.
#include "ceres_sqrtba/internal/solvers/linear_solver_factory.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/direct/camera_factorization_plan.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/solvers/explicit_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/solvers/projected_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/solvers/sqrt_sparse_schur_solver.h"
#include "gtest/gtest.h"
#include "limited_suitesparse_memory.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A synthetic BA problem (pose and intrinsics blocks per camera, every point
// seen by obs_per_point cameras) and its structure.
struct BaProblem {
  BaProblem(int cameras, int points, int obs_per_point)
      : ba(testing::MakeSyntheticBa(cameras, points, obs_per_point, 7)) {
    testing::AddReprojectionResiduals(&ba, &problem, nullptr);
    std::string error;
    status = BuildProblemStructure(problem, nullptr, &s, &error);
    EXPECT_EQ(status, StructureStatus::kOk) << error;
  }
  testing::SyntheticBa ba;
  ceres::Problem problem;
  ProblemStructure s;
  StructureStatus status;
};

// Cameras (6 parameters) in a chain, each point seen by two neighbours: a
// block tridiagonal reduced camera matrix, whose sparse Cholesky needs far
// fewer flops than the dense one.
struct ChainProblem {
  explicit ChainProblem(int num_cameras) : cameras(num_cameras, std::vector<double>(6, 0.5)) {
    std::mt19937 rng(3);
    ceres::Problem::Options po;
    po.cost_function_ownership = ceres::TAKE_OWNERSHIP;
    problem = std::make_unique<ceres::Problem>(po);
    points.reserve(3 * (num_cameras - 1));
    ceres::ParameterBlockOrdering ordering;
    for (int c = 0; c + 1 < num_cameras; ++c) {
      for (int k = 0; k < 3; ++k) {
        points.push_back(std::vector<double>(3, 0.25));
        for (int side = 0; side < 2; ++side) {
          problem->AddResidualBlock(new testing::RandomLinearCost(2, {6, 3}, &rng), nullptr,
                                    cameras[c + side].data(), points.back().data());
        }
        ordering.AddElementToGroup(points.back().data(), 0);
      }
    }
    for (auto& camera : cameras) ordering.AddElementToGroup(camera.data(), 1);
    std::string error;
    EXPECT_EQ(BuildProblemStructure(*problem, &ordering, &s, &error), StructureStatus::kOk) << error;
  }
  std::vector<std::vector<double>> cameras, points;
  std::unique_ptr<ceres::Problem> problem;
  ProblemStructure s;
};

LinearSolverOptions Options(SqrtLinearSolverType type, bool explicit_rows = false,
                            ReducedCameraFactorization factorization = AUTOMATIC_FACTORIZATION) {
  LinearSolverOptions o;
  o.sqrt_linear_solver_type = type;
  o.use_explicit_reduced_rows = explicit_rows;
  o.reduced_camera_factorization = factorization;
  return o;
}

TEST(LinearSolverFactory, IterativeSolverUsesProjectedStorageByDefault) {
  BaProblem p(5, 40, 3);
  const LinearSolverFactory f(p.s, Options(SQRT_ITERATIVE_SCHUR));
  EXPECT_TRUE(f.projected());
  EXPECT_FALSE(f.sparse());
  EXPECT_FALSE(f.dense_factorization());
  EXPECT_EQ(f.PlanError(), "");
  EXPECT_STREQ(f.WhatRequiredBytesCounts(), "the landmark blocks");
}

TEST(LinearSolverFactory, ExplicitRowsForTheIterativeSolverOnly) {
  BaProblem p(5, 40, 3);
  const LinearSolverFactory iterative(p.s, Options(SQRT_ITERATIVE_SCHUR, true));
  EXPECT_FALSE(iterative.projected());
  EXPECT_FALSE(iterative.sparse());
  EXPECT_STREQ(iterative.WhatRequiredBytesCounts(), "the landmark blocks");
  // SQRT_SPARSE_SCHUR forms its matrix from the projected storage whatever
  // the option says.
  const LinearSolverFactory direct(p.s, Options(SQRT_SPARSE_SCHUR, true));
  EXPECT_TRUE(direct.projected());
  EXPECT_TRUE(direct.sparse());
  EXPECT_STREQ(direct.WhatRequiredBytesCounts(),
               "the landmark blocks, the reduced camera matrix and its factorization");
}

TEST(LinearSolverFactory, NamedFactorizationIsTaken) {
  BaProblem p(5, 40, 3);
  const LinearSolverFactory dense(p.s, Options(SQRT_SPARSE_SCHUR, false, DENSE_FACTORIZATION));
  EXPECT_TRUE(dense.sparse());
  EXPECT_TRUE(dense.dense_factorization());
  EXPECT_EQ(dense.PlanError(), "");
  const LinearSolverFactory sparse(p.s, Options(SQRT_SPARSE_SCHUR, false, SPARSE_FACTORIZATION));
  EXPECT_FALSE(sparse.dense_factorization());
  EXPECT_EQ(sparse.PlanError(), "");
  ChainProblem chain(40);
  EXPECT_TRUE(LinearSolverFactory(chain.s, Options(SQRT_SPARSE_SCHUR, false, DENSE_FACTORIZATION))
                  .dense_factorization());
}

// AUTOMATIC_FACTORIZATION: cameras that all share points (a dense reduced
// camera matrix: the sparse factorization saves nothing) factor densely; a
// long chain of cameras (block tridiagonal) sparsely. Either way the choice
// is the header's rule on the flops of both.
TEST(LinearSolverFactory, AutomaticFactorizationFollowsTheFlopRule) {
  BaProblem all_see_all(6, 30, 6);
  ChainProblem chain(60);
  for (const ProblemStructure* s : {&all_see_all.s, &chain.s}) {
    const bool is_chain = s == &chain.s;
    const LinearSolverFactory f(*s, Options(SQRT_SPARSE_SCHUR));
    EXPECT_EQ(f.dense_factorization(), !is_chain) << (is_chain ? "chain" : "all see all");
    EXPECT_EQ(f.PlanError(), "");
    const CameraFactorizationPlan sparse(*s, SPARSE_FACTORIZATION);
    ASSERT_EQ(sparse.error(), "");
    const bool rule = CameraFactorizationPlan::DenseFlops(s->num_camera_parameters) <=
                      CameraFactorizationPlan::kDenseFlopRatio * sparse.sparse().flops;
    EXPECT_EQ(f.dense_factorization(), rule) << (is_chain ? "chain" : "all see all");
  }
}

// CHOLMOD cannot order the camera blocks (out of memory from its first
// allocation): SPARSE_FACTORIZATION cannot be planned and says why;
// AUTOMATIC_FACTORIZATION falls back to the dense factorization.
TEST(LinearSolverFactory, PlanErrorWhenTheSparseOrderingFails) {
  ChainProblem chain(10);
  {
    testing::LimitedSuiteSparseMemory no_memory(0);
    const LinearSolverFactory sparse(chain.s, Options(SQRT_SPARSE_SCHUR, false, SPARSE_FACTORIZATION));
    const std::string error = sparse.PlanError();
    EXPECT_TRUE(Contains(error,
                         "SQRT_SPARSE_SCHUR with SPARSE_FACTORIZATION: CHOLMOD ordering of the camera "
                         "blocks failed: out of memory"))
        << error;
    EXPECT_FALSE(sparse.dense_factorization());
    const LinearSolverFactory automatic(chain.s, Options(SQRT_SPARSE_SCHUR));
    EXPECT_EQ(automatic.PlanError(), "");
    EXPECT_TRUE(automatic.dense_factorization());
    // Nothing to plan for the iterative solver.
    EXPECT_EQ(LinearSolverFactory(chain.s, Options(SQRT_ITERATIVE_SCHUR)).PlanError(), "");
  }
  // With memory again the same chain is planned sparsely.
  const LinearSolverFactory automatic(chain.s, Options(SQRT_SPARSE_SCHUR));
  EXPECT_FALSE(automatic.dense_factorization());
}

// Double precision blocks need more bytes than single ones; explicit blocks
// are all Scalar, exactly twice as many bytes. The reduced camera matrix and
// its factorization are double in either precision: SQRT_SPARSE_SCHUR adds
// the same bytes to both.
TEST(LinearSolverFactory, RequiredBytesGrowWithPrecision) {
  BaProblem p(6, 80, 4);
  const LinearSolverFactory explicit_rows(p.s, Options(SQRT_ITERATIVE_SCHUR, true));
  const ExplicitBlockLayout layout(p.s);
  EXPECT_EQ(explicit_rows.RequiredBytes(SINGLE_PRECISION),
            4 * (layout.total_scalars + layout.rotation_scalars));
  EXPECT_EQ(explicit_rows.RequiredBytes(DOUBLE_PRECISION),
            8 * (layout.total_scalars + layout.rotation_scalars));

  const LinearSolverFactory projected(p.s, Options(SQRT_ITERATIVE_SCHUR));
  const int64_t projected_single = projected.RequiredBytes(SINGLE_PRECISION);
  const int64_t projected_double = projected.RequiredBytes(DOUBLE_PRECISION);
  EXPECT_GT(projected_single, 0);
  EXPECT_GT(projected_double, projected_single);
  // The projected blocks keep about 24 scalars per observation against the
  // explicit ones' dense rows: fewer bytes here.
  EXPECT_LT(projected_double, explicit_rows.RequiredBytes(DOUBLE_PRECISION));

  for (ReducedCameraFactorization factorization : {DENSE_FACTORIZATION, SPARSE_FACTORIZATION}) {
    const LinearSolverFactory direct(p.s, Options(SQRT_SPARSE_SCHUR, false, factorization));
    const int64_t single = direct.RequiredBytes(SINGLE_PRECISION),
                  dbl = direct.RequiredBytes(DOUBLE_PRECISION);
    EXPECT_GT(dbl, single);
    EXPECT_GT(single, projected_single) << ReducedCameraFactorizationToString(factorization);
    EXPECT_EQ(dbl - single, projected_double - projected_single)
        << ReducedCameraFactorizationToString(factorization);
    EXPECT_EQ(single - projected_single, dbl - projected_double)
        << ReducedCameraFactorizationToString(factorization);
  }
  for (const LinearSolverFactory* f : {&explicit_rows, &projected}) {
    EXPECT_GT(f->SolverVectorBytes(DOUBLE_PRECISION), f->SolverVectorBytes(SINGLE_PRECISION));
    EXPECT_GT(f->PlanBytes(), 0);
  }
}

// The visibility-based preconditioners' matrix and factorization are planned
// and counted by the factory.
TEST(LinearSolverFactory, ClusterPreconditionerIsCounted) {
  BaProblem p(8, 60, 3);
  LinearSolverOptions o = Options(SQRT_ITERATIVE_SCHUR);
  o.preconditioner_type = ceres::JACOBI;
  const LinearSolverFactory jacobi(p.s, o);
  for (ceres::PreconditionerType type : {ceres::CLUSTER_JACOBI, ceres::CLUSTER_TRIDIAGONAL}) {
    o.preconditioner_type = type;
    const LinearSolverFactory clusters(p.s, o);
    EXPECT_STREQ(clusters.WhatRequiredBytesCounts(),
                 "the landmark blocks and the preconditioner's matrix and factorization");
    for (Precision precision : {SINGLE_PRECISION, DOUBLE_PRECISION}) {
      EXPECT_GT(clusters.RequiredBytes(precision), jacobi.RequiredBytes(precision))
          << ceres::PreconditionerTypeToString(type);
    }
  }
}

// The chunks cover every group in order, at most 64 of them.
TEST(LinearSolverFactory, PartitionCoversTheGroups) {
  BaProblem p(6, 400, 4);
  for (bool explicit_rows : {false, true}) {
    const LinearSolverFactory f(p.s, Options(SQRT_ITERATIVE_SCHUR, explicit_rows));
    const WorkPartition& w = f.partition();
    ASSERT_GE(w.num_chunks(), 1);
    EXPECT_LE(w.num_chunks(), 64);
    EXPECT_EQ(w.begin(0), 0);
    EXPECT_EQ(w.end(w.num_chunks() - 1), static_cast<int>(p.s.groups.size()));
    for (int c = 0; c < w.num_chunks(); ++c) {
      EXPECT_LT(w.begin(c), w.end(c)) << c;
      if (c > 0) {
        EXPECT_EQ(w.begin(c), w.end(c - 1)) << c;
      }
    }
  }
}

// Create builds the chosen solver in the precision asked.
TEST(LinearSolverFactory, CreateBuildsTheChosenSolver) {
  BaProblem p(5, 40, 3);
  ParallelContext context(1);
  const LinearSolverFactory projected(p.s, Options(SQRT_ITERATIVE_SCHUR));
  const LinearSolverFactory explicit_rows(p.s, Options(SQRT_ITERATIVE_SCHUR, true));
  const LinearSolverFactory direct(p.s, Options(SQRT_SPARSE_SCHUR));
  {
    const std::unique_ptr<LinearSolver> s = projected.Create(SINGLE_PRECISION, &context);
    EXPECT_NE(dynamic_cast<ProjectedIterativeSchurSolver<float>*>(s.get()), nullptr);
    const std::unique_ptr<LinearSolver> d = projected.Create(DOUBLE_PRECISION, &context);
    EXPECT_NE(dynamic_cast<ProjectedIterativeSchurSolver<double>*>(d.get()), nullptr);
  }
  {
    const std::unique_ptr<LinearSolver> s = explicit_rows.Create(SINGLE_PRECISION, &context);
    EXPECT_NE(dynamic_cast<ExplicitIterativeSchurSolver<float>*>(s.get()), nullptr);
    const std::unique_ptr<LinearSolver> d = explicit_rows.Create(DOUBLE_PRECISION, &context);
    EXPECT_NE(dynamic_cast<ExplicitIterativeSchurSolver<double>*>(d.get()), nullptr);
  }
  {
    const std::unique_ptr<LinearSolver> s = direct.Create(SINGLE_PRECISION, &context);
    EXPECT_NE(dynamic_cast<SqrtSparseSchurSolver<float>*>(s.get()), nullptr);
    const std::unique_ptr<LinearSolver> d = direct.Create(DOUBLE_PRECISION, &context);
    EXPECT_NE(dynamic_cast<SqrtSparseSchurSolver<double>*>(d.get()), nullptr);
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
