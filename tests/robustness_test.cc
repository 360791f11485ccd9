// Numerically hard problems and single precision limits: each solves or ends
// cleanly with Ceres' semantics, with finite parameters, with both square-root
// solvers in both precisions.
#include <cmath>
#include <thread>

#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::AddReprojectionResiduals;
using testing::MakeSyntheticBa;
using testing::SyntheticBa;

using testing::HugeReprojectionError;

// Each test runs for both square-root solvers in both precisions, and the
// iterative one with both storages of the reduced rows.
struct Config {
  SqrtLinearSolverType type;
  Precision precision;
  bool explicit_rows = false;
  ReducedCameraFactorization factorization = AUTOMATIC_FACTORIZATION;
};

void PrintTo(const Config& config, std::ostream* os) {
  *os << SqrtLinearSolverTypeToString(config.type) << ", " << PrecisionToString(config.precision)
      << (config.explicit_rows ? ", explicit rows" : "") << ", "
      << ReducedCameraFactorizationToString(config.factorization);
}

Solver::Options Options(const Config& config) {
  Solver::Options o;
  o.sqrt_linear_solver_type = config.type;
  o.precision = config.precision;
  o.use_explicit_reduced_rows = config.explicit_rows;
  o.reduced_camera_factorization = config.factorization;
  o.logging_type = ceres::SILENT;
  o.max_num_iterations = 30;
  o.num_threads = 2;
  return o;
}

bool AllFinite(const SyntheticBa& ba) {
  for (const auto* set : {&ba.poses, &ba.points, &ba.intrinsics}) {
    for (const auto& v : *set) {
      for (double x : v) {
        if (!std::isfinite(x)) return false;
      }
    }
  }
  return true;
}

class Robustness : public ::testing::TestWithParam<Config> {};

// Solves `ba` as built by `build` with the sqrt solver and with Ceres.
void ExpectCleanSolve(SyntheticBa ba, const Config& config,
                      const std::function<void(SyntheticBa*, ceres::Problem*)>& build,
                      bool compare_with_ceres = true) {
  SyntheticBa ceres_ba = ba;
  ceres::Problem problem, ceres_problem;
  build(&ba, &problem);
  build(&ceres_ba, &ceres_problem);
  ceres::Solver::Summary s, cs;
  Solve(Options(config), &problem, &s);
  ceres::Solver::Options co;
  co.linear_solver_type = ceres::ITERATIVE_SCHUR;
  co.preconditioner_type = ceres::SCHUR_JACOBI;
  co.max_num_iterations = 30;
  co.logging_type = ceres::SILENT;
  ceres::Solve(co, &ceres_problem, &cs);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_TRUE(AllFinite(ba));
  EXPECT_TRUE(std::isfinite(s.final_cost));
  EXPECT_LE(s.final_cost, s.initial_cost);
  if (compare_with_ceres) {
    // Both follow LM with an inexact (eta = 0.1) inner solver: within the
    // iteration limit they need not meet, but ours must be no worse.
    EXPECT_LE(s.final_cost, cs.final_cost * (1 + 1e-3) + 1e-9) << s.message;
  }
}

TEST_P(Robustness, LandmarkSeenByOneCamera) {
  SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 31);
  ba.observations.push_back({0, 0, 1.0, 2.0});  // add a point seen once
  ba.points.push_back({0.3, 0.2, 0.1});
  ba.observations.back().point = static_cast<int>(ba.points.size()) - 1;
  ExpectCleanSolve(ba, GetParam(), [](SyntheticBa* b, ceres::Problem* p) {
    AddReprojectionResiduals(b, p, new ceres::HuberLoss(1.0));
  });
}

TEST_P(Robustness, NearlyParallelRaysAndFarLandmarks) {
  SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 32);
  ba.points[0] = {0.0, 0.0, 1e7};  // very far: rays nearly parallel
  ba.points[1] = {1e-9, 0.0, 0.0};
  ExpectCleanSolve(ba, GetParam(), [](SyntheticBa* b, ceres::Problem* p) {
    AddReprojectionResiduals(b, p, new ceres::HuberLoss(1.0));
  }, /*compare_with_ceres=*/false);
}

TEST_P(Robustness, CameraThatSeesNothing) {
  SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 33);
  ExpectCleanSolve(ba, GetParam(), [](SyntheticBa* b, ceres::Problem* p) {
    b->poses.reserve(b->poses.size() + 1);  // keep the pointers Ceres holds valid
    AddReprojectionResiduals(b, p, nullptr);
    b->poses.push_back({0.1, 0.2, 0.3, 1, 2, 3});
    p->AddParameterBlock(b->poses.back().data(), 6);  // no residuals
  });
}

TEST_P(Robustness, AllCamerasConstant) {
  SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 34);
  ExpectCleanSolve(ba, GetParam(), [](SyntheticBa* b, ceres::Problem* p) {
    AddReprojectionResiduals(b, p, nullptr);
    for (auto& c : b->poses) p->SetParameterBlockConstant(c.data());
    for (auto& c : b->intrinsics) p->SetParameterBlockConstant(c.data());
  });
}

TEST_P(Robustness, AllLandmarksConstant) {
  SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 35);
  ExpectCleanSolve(ba, GetParam(), [](SyntheticBa* b, ceres::Problem* p) {
    AddReprojectionResiduals(b, p, nullptr);
    for (auto& c : b->points) p->SetParameterBlockConstant(c.data());
  });
}

TEST_P(Robustness, ZeroResiduals) {
  SyntheticBa ba = MakeSyntheticBa(4, 30, 3, 36, 0.0);
  // Observations equal to the predictions: cost 0, gradient 0.
  for (auto& o : ba.observations) {
    double r[2];
    testing::ReprojectionError(0, 0)(ba.poses[o.camera].data(), ba.intrinsics[o.camera].data(),
                                     ba.points[o.point].data(), r);
    o.u = r[0];
    o.v = r[1];
  }
  SyntheticBa copy = ba;
  ceres::Problem problem;
  AddReprojectionResiduals(&copy, &problem, nullptr);
  ceres::Solver::Summary s;
  Solve(Options(GetParam()), &problem, &s);
  EXPECT_EQ(s.termination_type, ceres::CONVERGENCE) << s.message;
  EXPECT_LT(s.final_cost, 1e-20);  // autodiff rounds differently from the test
  EXPECT_EQ(s.iterations.size(), 1u);  // converged at the initial point
  EXPECT_EQ(copy.points, ba.points);
}

TEST_P(Robustness, HugeResidualsNeverReturnGarbage) {
  // Residuals around 1e20: beyond what single precision can square safely.
  SyntheticBa ba = MakeSyntheticBa(6, 80, 3, 37);
  SyntheticBa double_ba = ba;
  auto build = [](SyntheticBa* b, ceres::Problem* p) {
    for (const auto& o : b->observations) {
      p->AddResidualBlock(new ceres::AutoDiffCostFunction<HugeReprojectionError, 2, 6, 3, 3>(new HugeReprojectionError(o.u, o.v)), nullptr,
                          b->poses[o.camera].data(), b->intrinsics[o.camera].data(), b->points[o.point].data());
    }
  };
  ceres::Problem problem, double_problem;
  build(&ba, &problem);
  build(&double_ba, &double_problem);
  ceres::Solver::Summary s, ds;
  Solve(Options(GetParam()), &problem, &s);
  Solve(Options({GetParam().type, DOUBLE_PRECISION, GetParam().explicit_rows}), &double_problem, &ds);
  EXPECT_TRUE(AllFinite(ba));
  if (GetParam().precision == SINGLE_PRECISION) {
    // Either recovered in double (and says so) or failed; never silently wrong.
    if (s.termination_type == ceres::FAILURE) {
      EXPECT_NE(s.message.find("Single precision"), std::string::npos) << s.message;
    } else {
      EXPECT_NE(s.message.find("continued in double precision"), std::string::npos) << s.message;
      EXPECT_NEAR(s.final_cost, ds.final_cost, 1e-6 * ds.final_cost);
    }
  } else {
    EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
    EXPECT_LT(s.final_cost, s.initial_cost);
  }
}

TEST_P(Robustness, TwoSolvesInTwoThreads) {
  const SyntheticBa a0 = MakeSyntheticBa(6, 150, 3, 38), b0 = MakeSyntheticBa(7, 120, 4, 39);
  // CHOLMOD's supernodal kernels are the system BLAS's, whose rounding may
  // depend on where its buffers land in memory, and a thread's allocations
  // land elsewhere: a step may differ in its last bits. So SQRT_SPARSE_SCHUR
  // with the sparse factorization is compared while it converges (15
  // iterations) and to 1e-9; everything of ours (the dense factorization
  // included: Eigen's LLT) is bit-identical.
  const bool sparse = GetParam().factorization == SPARSE_FACTORIZATION;
  auto solve = [&](const SyntheticBa& in, double* cost) {
    SyntheticBa ba = in;
    ceres::Problem problem;
    AddReprojectionResiduals(&ba, &problem, new ceres::HuberLoss(1.0));
    ceres::Solver::Summary s;
    Solver::Options options = Options(GetParam());
    if (sparse) options.max_num_iterations = 15;
    Solve(options, &problem, &s);
    *cost = s.final_cost;
  };
  double alone_a, alone_b, together_a, together_b;
  solve(a0, &alone_a);
  solve(b0, &alone_b);
  std::thread ta([&] { solve(a0, &together_a); });
  std::thread tb([&] { solve(b0, &together_b); });
  ta.join();
  tb.join();
  if (sparse) {
    EXPECT_NEAR(alone_a, together_a, 1e-9 * alone_a);
    EXPECT_NEAR(alone_b, together_b, 1e-9 * alone_b);
  } else {
    EXPECT_EQ(alone_a, together_a);
    EXPECT_EQ(alone_b, together_b);
  }
}

std::string PrecisionName(const ::testing::TestParamInfo<Config>& info) {
  return info.param.precision == SINGLE_PRECISION ? "Single" : "Double";
}

INSTANTIATE_TEST_SUITE_P(Precisions, Robustness,
                         ::testing::Values(Config{SQRT_ITERATIVE_SCHUR, DOUBLE_PRECISION},
                                           Config{SQRT_ITERATIVE_SCHUR, SINGLE_PRECISION}),
                         PrecisionName);
INSTANTIATE_TEST_SUITE_P(ExplicitRowsPrecisions, Robustness,
                         ::testing::Values(Config{SQRT_ITERATIVE_SCHUR, DOUBLE_PRECISION, true},
                                           Config{SQRT_ITERATIVE_SCHUR, SINGLE_PRECISION, true}),
                         PrecisionName);
INSTANTIATE_TEST_SUITE_P(SparsePrecisions, Robustness,
                         ::testing::Values(Config{SQRT_SPARSE_SCHUR, DOUBLE_PRECISION},
                                           Config{SQRT_SPARSE_SCHUR, SINGLE_PRECISION}),
                         PrecisionName);
// The small problems here take the dense factorization automatically: the
// sparse one too.
INSTANTIATE_TEST_SUITE_P(SparseCholeskyPrecisions, Robustness,
                         ::testing::Values(Config{SQRT_SPARSE_SCHUR, DOUBLE_PRECISION, false, SPARSE_FACTORIZATION},
                                           Config{SQRT_SPARSE_SCHUR, SINGLE_PRECISION, false, SPARSE_FACTORIZATION}),
                         PrecisionName);

}  // namespace
}  // namespace ceres_sqrtba
