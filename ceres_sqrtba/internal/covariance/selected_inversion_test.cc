#include "ceres_sqrtba/internal/covariance/selected_inversion.h"

#include <array>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "Eigen/Dense"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "gtest/gtest.h"
#include "ceres/ceres.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Only the pattern matters: a point seen by two cameras.
struct Link {
  template <typename T>
  bool operator()(const T* camera, const T* point, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = point[k] - camera[k] - camera[k + 3];
    return true;
  }
};

// A reduced camera pattern of a sequence (40 cameras of size 6, points seen
// by cameras i and i + 1, and every fifth also by i + 3: a banded S whose
// factor is not full; with `dense`, one more point seen by every camera:
// S and its factor full, one supernode of 240 columns), values on it made strictly diagonally dominant (so S
// is positive definite with a condition number of a few tens, and the
// dense inverse is a reference to 1e-13).
struct PatternFixture {
  std::vector<std::array<double, 6>> cameras = std::vector<std::array<double, 6>>(40);
  std::vector<std::array<double, 3>> points = std::vector<std::array<double, 3>>(40);
  ceres::Problem problem;
  ProblemStructure s;
  std::unique_ptr<ReducedCameraPattern> pattern;
  std::vector<int64_t> col_begin, rows;
  std::vector<double> values;
  Eigen::MatrixXd dense;

  explicit PatternFixture(bool dense_scene = false) {
    for (int i = 0; i + 1 < 40; ++i) {
      for (int c : {i, i + 1, i + 3}) {
        if (c >= 40 || (c == i + 3 && i % 5 != 0)) continue;
        problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Link, 3, 6, 3>(new Link), nullptr,
                                 cameras[c].data(), points[i].data());
      }
    }
    for (int c = 0; dense_scene && c < 40; ++c) {
      problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Link, 3, 6, 3>(new Link), nullptr,
                               cameras[c].data(), points[39].data());
    }
    std::string error;
    // The points are the landmarks (group 0), the cameras group 1: the
    // automatic ordering would eliminate some cameras of the banded scene,
    // and the dense scene's point seen by all of them.
    ceres::ParameterBlockOrdering ordering;
    for (auto& point : points) {
      if (problem.HasParameterBlock(point.data())) ordering.AddElementToGroup(point.data(), 0);
    }
    for (auto& camera : cameras) ordering.AddElementToGroup(camera.data(), 1);
    EXPECT_EQ(BuildProblemStructure(problem, &ordering, &s, &error), StructureStatus::kOk) << error;
    pattern = std::make_unique<ReducedCameraPattern>(s);
    pattern->ScalarPattern(&col_begin, &rows);
    const int n = pattern->num_parameters();
    values.resize(col_begin[n]);
    dense = Eigen::MatrixXd::Zero(n, n);
    std::mt19937 random(3);
    for (int j = 0; j < n; ++j) {
      for (int64_t k = col_begin[j]; k < col_begin[j + 1]; ++k) {
        const int64_t i = rows[k];
        values[k] = i == j ? 0.0 : static_cast<double>(random() % 2001) / 1000.0 - 1.0;
        dense(i, j) = dense(j, i) = values[k];
      }
    }
    for (int j = 0; j < n; ++j) {
      const double diagonal = dense.row(j).cwiseAbs().sum() + 1.0;
      values[col_begin[j + 1] - 1] = diagonal;
      dense(j, j) = diagonal;
    }
  }
};

// The selected entries of S^-1 against the dense inverse; with `dense`,
// all of them (one full supernode: the dense triangular inverse and Gram
// matrix alone), otherwise some are off the factor's pattern.
void ExpectTheDenseInverseOnTheFactorsPattern(bool dense) {
  PatternFixture p(dense);
  const SparseCholeskyPlan plan = PlanSparseCholesky(*p.pattern);
  ASSERT_FALSE(plan.camera_order.empty()) << plan.error;
  SparseCameraCholesky cholesky(*p.pattern, plan, p.col_begin.data(), p.rows.data());
  ASSERT_EQ(cholesky.Factorize(p.values.data()).termination, LinearSolverTermination::kSuccess);
  SupernodalFactor factor;
  ASSERT_TRUE(cholesky.GetSupernodalFactor(&factor));
  SelectedInverse z;
  std::string error;
  ASSERT_TRUE(z.Compute(factor, &error)) << error;
  const Eigen::MatrixXd inverse = p.dense.inverse();
  const int n = p.pattern->num_parameters();
  int64_t found = 0, pattern_entries = 0;
  double worst = 0.0;
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      double value = 0.0;
      if (!z.Entry(i, j, &value)) continue;
      ++found;
      worst = std::max(worst, std::abs(value - inverse(i, j)) / inverse.cwiseAbs().maxCoeff());
    }
    // Every entry of S's own pattern is among them (both triangles).
    for (int64_t k = p.col_begin[j]; k < p.col_begin[j + 1]; ++k) {
      double value = 0.0;
      EXPECT_TRUE(z.Entry(p.rows[k], j, &value) && z.Entry(j, p.rows[k], &value));
      ++pattern_entries;
    }
  }
  EXPECT_LT(worst, 1e-13);
  if (dense) {
    EXPECT_EQ(found, int64_t{n} * n);
  } else {
    // The factor of a sparse scene is not full: some entries are not selected.
    EXPECT_LT(found, int64_t{n} * n);
    EXPECT_GE(found, 2 * pattern_entries - n);
  }
}

TEST(SelectedInverse, EqualsTheDenseInverseOnTheFactorsPattern) { ExpectTheDenseInverseOnTheFactorsPattern(false); }

TEST(SelectedInverse, EqualsTheDenseInverseOfAFullFactor) { ExpectTheDenseInverseOnTheFactorsPattern(true); }

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
