// LossCorrection with Ceres' loss functions. ceres::Corrector, which it
// mirrors, is internal to Ceres 2.1 (not installed), so the expected values
// are derived by hand from Triggs et al. (section 6.8):
//
//   with alpha the smaller root of alpha^2/2 - alpha - s rho''/rho' = 0,
//   J~ = sqrt(rho') (I - alpha/s r r^T) J and r~ = sqrt(rho') / (1 - alpha) r:
//   J~^T r~ = rho'/(1 - alpha) J^T (r - alpha r) = rho' J^T r, and, using
//   (I - alpha/s r r^T)^2 = I + (alpha^2 - 2 alpha)/s r r^T = I + 2 rho''/rho' r r^T,
//   J~^T J~ = J^T (rho' I + 2 rho'' r r^T) J: the Gauss-Newton Hessian of
//   1/2 rho(|r|^2) with its second-order term.
// Where rho'' <= 0 or s = 0 only the first-order scaling applies:
//   J~ = sqrt(rho') J, r~ = sqrt(rho') r, J~^T J~ = rho' J^T J.
#include "ceres_sqrtba/internal/evaluation/loss_correction.h"

#include <Eigen/Core>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ceres/loss_function.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// rho(s) = s + 5/6 s^2: rho' = 1 + 5/3 s, rho'' = 5/3 > 0 everywhere. At s = 1,
// rho' = 8/3 and 1 + 2 s rho''/rho' = 9/4, so alpha = 1 - 3/2 = -1/2 exactly.
class GrowingLoss : public ceres::LossFunction {
 public:
  void Evaluate(double s, double rho[3]) const override {
    rho[0] = s + 5.0 / 6.0 * s * s;
    rho[1] = 1.0 + 5.0 / 3.0 * s;
    rho[2] = 5.0 / 3.0;
  }
};

struct Corrected {
  RowMatrix j;
  Eigen::VectorXd r;
  double rho[3];
};

// What the evaluator does: the Jacobian first, with the uncorrected residual.
Corrected Apply(const ceres::LossFunction& loss, const Eigen::VectorXd& r, const RowMatrix& j) {
  Corrected c{j, r, {}};
  const double s = r.squaredNorm();
  loss.Evaluate(s, c.rho);
  const LossCorrection correction(s, c.rho);
  correction.CorrectJacobian(static_cast<int>(j.rows()), static_cast<int>(j.cols()), r.data(),
                             c.j.data());
  correction.CorrectResiduals(static_cast<int>(r.size()), c.r.data());
  return c;
}

TEST(LossCorrection, HandWorkedSecondOrderCase) {
  // r = (0.6, 0.8): s = 1, alpha = -1/2, so I - alpha/s r r^T = I + r r^T / 2
  // = [[1.18, 0.24], [0.24, 1.32]] and r~ = sqrt(8/3) r / (3/2).
  const Corrected c = Apply(GrowingLoss(), Eigen::Vector2d(0.6, 0.8), RowMatrix::Identity(2, 2));
  RowMatrix expected_j(2, 2);
  expected_j << 1.18, 0.24, 0.24, 1.32;
  expected_j *= std::sqrt(8.0 / 3.0);
  const Eigen::Vector2d expected_r = std::sqrt(8.0 / 3.0) / 1.5 * Eigen::Vector2d(0.6, 0.8);
  // A few roundings of O(1) numbers (0.6, 0.8 are not binary): 1e-15 absolute.
  EXPECT_LT((c.j - expected_j).cwiseAbs().maxCoeff(), 1e-15) << c.j;
  EXPECT_LT((c.r - expected_r).cwiseAbs().maxCoeff(), 1e-15) << c.r.transpose();
}

struct LossCase {
  std::string name;
  std::shared_ptr<ceres::LossFunction> loss;
};

std::vector<LossCase> Losses() {
  return {{"Trivial", std::make_shared<ceres::TrivialLoss>()},
          {"Huber(1)", std::make_shared<ceres::HuberLoss>(1.0)},
          {"Cauchy(1)", std::make_shared<ceres::CauchyLoss>(1.0)},
          {"SoftLOne(0.5)", std::make_shared<ceres::SoftLOneLoss>(0.5)},
          {"Arctan(2)", std::make_shared<ceres::ArctanLoss>(2.0)},
          // Ceres' convex losses: rho'' > 0, the second-order branch.
          {"Tolerant(2, 0.5)", std::make_shared<ceres::TolerantLoss>(2.0, 0.5)},
          {"Growing", std::make_shared<GrowingLoss>()}};
}

// 3 residuals, 4 columns; |r|^2 = scale^2 |r0|^2 sweeps inlier and outlier
// regions of every loss above (Huber's kink at s = 1, Tolerant's at s = 2).
TEST(LossCorrection, GradientAndGaussNewtonHessianMatchTheLoss) {
  std::mt19937 rng(7);
  ::ceres_sqrtba::testing::NormalDistribution normal;
  RowMatrix j(3, 4);
  for (int i = 0; i < j.size(); ++i) j.data()[i] = normal(rng);
  Eigen::VectorXd r0(3);
  for (int i = 0; i < 3; ++i) r0[i] = normal(rng);
  r0.normalize();
  int second_order_cases = 0, first_order_cases = 0;
  for (const LossCase& lc : Losses()) {
    for (double scale : {0.05, 0.7, 1.3, 1.9, 3.0, 10.0}) {
      const Eigen::VectorXd r = scale * r0;
      const double s = r.squaredNorm();
      const Corrected c = Apply(*lc.loss, r, j);
      const double rho1 = c.rho[1], rho2 = c.rho[2];
      ASSERT_GT(rho1, 0.0) << lc.name;
      const std::string where = lc.name + ", s = " + std::to_string(s);

      // Gradient: the entries are sums of 3 products scaled by factors with a
      // few roundings each; relative to rho' |J| |r| that is ~10 eps, so 1e-13.
      const Eigen::VectorXd g = c.j.transpose() * c.r, expected_g = rho1 * j.transpose() * r;
      EXPECT_LT((g - expected_g).norm(), 1e-13 * rho1 * j.norm() * r.norm()) << where;

      const RowMatrix h = c.j.transpose() * c.j;
      RowMatrix expected_h;
      if (rho2 > 0.0) {
        ++second_order_cases;
        const Eigen::MatrixXd middle = rho1 * Eigen::MatrixXd::Identity(3, 3) + 2.0 * rho2 * r * r.transpose();
        expected_h = j.transpose() * middle * j;
      } else {
        ++first_order_cases;
        expected_h = rho1 * j.transpose() * j;
        // The first-order scaling is one multiplication by sqrt(rho'): 1 ulp.
        EXPECT_TRUE(c.r.isApprox(std::sqrt(rho1) * r, 4e-16)) << where;
        EXPECT_TRUE(c.j.isApprox(std::sqrt(rho1) * j, 4e-16)) << where;
      }
      // Hessian entries are of size (rho' + 2 s |rho''|) |J|^2 (= rho' (1 -
      // alpha)^2 |J|^2 for the corrected Jacobian); same error count: 1e-13.
      const double h_scale = (rho1 + 2.0 * s * std::abs(rho2)) * j.squaredNorm();
      EXPECT_LT((h - expected_h).norm(), 1e-13 * h_scale) << where << "\n" << h << "\n" << expected_h;
    }
  }
  // The sweep exercises both branches: rho'' > 0 for Growing at all 6 scales
  // and for Tolerant at 5 (at s = 100 Ceres evaluates it as linear, rho'' = 0).
  EXPECT_EQ(second_order_cases, 11);
  EXPECT_EQ(first_order_cases, 31);
}

TEST(LossCorrection, NegativeCurvatureGetsNoRankOneTerm) {
  // Cauchy at s = 4: rho' = 1/5, rho'' = -1/25 < 0. The full Triggs
  // correction would give J~^T J~ = J^T (rho' I + 2 rho'' r r^T) J, which is
  // indefinite here (rho' + 2 rho'' s = -3/25); Ceres keeps rho' J^T J.
  const Eigen::Vector2d r(0.0, 2.0);
  RowMatrix j(2, 1);
  j << 0.0, 1.0;
  const Corrected c = Apply(ceres::CauchyLoss(1.0), r, j);
  EXPECT_DOUBLE_EQ(c.rho[1], 0.2);
  EXPECT_DOUBLE_EQ(c.rho[2], -0.04);
  EXPECT_DOUBLE_EQ((c.j.transpose() * c.j)(0, 0), 0.2);  // not -0.12
  EXPECT_DOUBLE_EQ(c.r[1], 2.0 * std::sqrt(0.2));
}

TEST(LossCorrection, ZeroResidualUsesFirstOrderScaling) {
  // rho'' > 0 at s = 0 (Tolerant(1, 1): rho' = 1/(1+e), rho'' > 0): the
  // second-order formula would divide 0 by 0; the unit must scale by
  // sqrt(rho') and stay finite.
  const Eigen::Vector3d r = Eigen::Vector3d::Zero();
  RowMatrix j(3, 2);
  j << 1, 2, 3, 4, 5, 6;
  for (const LossCase& lc : Losses()) {
    const Corrected c = Apply(*lc.loss, r, j);
    EXPECT_TRUE(c.j.allFinite()) << lc.name;
    EXPECT_TRUE(c.j.isApprox(std::sqrt(c.rho[1]) * j, 4e-16)) << lc.name;
    EXPECT_EQ(c.r, r) << lc.name;
  }
  const Corrected tolerant = Apply(ceres::TolerantLoss(1.0, 1.0), r, j);
  EXPECT_GT(tolerant.rho[2], 0.0);
  EXPECT_TRUE(tolerant.j.isApprox(std::sqrt(1.0 / (1.0 + std::exp(1.0))) * j, 1e-15));
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
