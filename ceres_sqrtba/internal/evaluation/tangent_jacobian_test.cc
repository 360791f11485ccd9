#include "ceres_sqrtba/internal/evaluation/tangent_jacobian.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "ceres/manifold.h"
#include "ceres/product_manifold.h"
#include "fused_multiply_add.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// The full product, every sum over all ambient rows in increasing order: what
// Ceres computes and what TangentJacobian must reproduce bit for bit.
std::vector<double> FullProduct(int m, int ambient, int tangent, const std::vector<double>& a,
                                const std::vector<double>& p) {
  std::vector<double> t(m * tangent);
  for (int r = 0; r < m; ++r) {
    for (int c = 0; c < tangent; ++c) {
      double v = 0.0;
      for (int k = 0; k < ambient; ++k) v += a[r * ambient + k] * p[k * tangent + c];
      t[r * tangent + c] = v;
    }
  }
  return t;
}

// An ambient Jacobian with the values that can trip a shortcut: signed zeros,
// exact zeros, and values of very different magnitudes.
std::vector<double> AmbientJacobian(int m, int ambient, std::mt19937* rng) {
  ::ceres_sqrtba::testing::UniformRealDistribution uniform(-1.0, 1.0);
  std::uniform_int_distribution<int> kind(0, 6);
  std::vector<double> a(m * ambient);
  for (double& v : a) {
    switch (kind(*rng)) {
      case 0: v = -0.0; break;
      case 1: v = 0.0; break;
      case 2: v = uniform(*rng) * 1e-300; break;
      case 3: v = uniform(*rng) < 0.0 ? -4.9e-324 : 4.9e-324; break;  // products round to +-0
      default: v = uniform(*rng) * 1e3; break;
    }
  }
  return a;
}

std::vector<double> PlusJacobianOf(const ceres::Manifold& manifold, std::mt19937* rng) {
  ::ceres_sqrtba::testing::NormalDistribution normal;
  std::vector<double> x(manifold.AmbientSize());
  for (double& v : x) v = normal(*rng);
  // Quaternions (wherever they are) are read as unit quaternions only up to
  // their norm; normalize the whole vector so that any layout is valid.
  double norm = 0.0;
  for (double v : x) norm += v * v;
  for (double& v : x) v /= std::sqrt(norm);
  std::vector<double> p(manifold.AmbientSize() * manifold.TangentSize());
  EXPECT_TRUE(manifold.PlusJacobian(x.data(), p.data()));
  return p;
}

void ExpectSameBits(int m, int ambient, int tangent, const std::vector<double>& p, std::mt19937* rng) {
  const PlusJacobianBorder border = BorderOf(p.data(), ambient, tangent);
  for (int trial = 0; trial < 20; ++trial) {
    const std::vector<double> a = AmbientJacobian(m, ambient, rng);
    const std::vector<double> expected = FullProduct(m, ambient, tangent, a, p);
    std::vector<double> t(m * tangent, 12345.0);
    TangentJacobian(m, ambient, tangent, border, a.data(), p.data(), t.data());
    if (!testing::kFusedMultiplyAdd) {
      ASSERT_EQ(std::memcmp(t.data(), expected.data(), t.size() * sizeof(double)), 0)
          << ambient << " x " << tangent << ", border " << border.lead << "/" << border.trail;
      continue;
    }
    // Fused multiply-adds (fused_multiply_add.h): each entry within the
    // rounding of a sum of `ambient` products, |t - e| <= 2 ambient u sum |a||p|.
    std::vector<double> abs_a(a.size()), abs_p(p.size());
    for (size_t i = 0; i < a.size(); ++i) abs_a[i] = std::abs(a[i]);
    for (size_t i = 0; i < p.size(); ++i) abs_p[i] = std::abs(p[i]);
    const std::vector<double> magnitude = FullProduct(m, ambient, tangent, abs_a, abs_p);
    const double u = std::numeric_limits<double>::epsilon() / 2;
    for (size_t i = 0; i < t.size(); ++i) {
      ASSERT_LE(std::abs(t[i] - expected[i]), 2 * ambient * u * magnitude[i] + std::numeric_limits<double>::denorm_min())
          << ambient << " x " << tangent << ", border " << border.lead << "/" << border.trail << ", entry " << i;
    }
  }
}

// The borders BorderOf finds in a manifold's PlusJacobian, and the product's
// bits against the full product for residual blocks of 1 to 3 rows.
void ExpectBordersAndSameBits(const ceres::Manifold& manifold, int lead, int trail, unsigned seed) {
  std::mt19937 rng(seed);
  const int ambient = manifold.AmbientSize(), tangent = manifold.TangentSize();
  const std::vector<double> p = PlusJacobianOf(manifold, &rng);
  const PlusJacobianBorder border = BorderOf(p.data(), ambient, tangent);
  EXPECT_EQ(border.lead, lead);
  EXPECT_EQ(border.trail, trail);
  for (int m : {1, 2, 3}) ExpectSameBits(m, ambient, tangent, p, &rng);
}

TEST(TangentJacobian, QuaternionCameraHasAnIdentityTail) {
  ExpectBordersAndSameBits(ceres::ProductManifold<ceres::QuaternionManifold, ceres::EuclideanManifold<6>>(), 0, 6, 1);
}

TEST(TangentJacobian, PoseWithTranslationFirstHasAnIdentityLead) {
  ExpectBordersAndSameBits(ceres::ProductManifold<ceres::EuclideanManifold<3>, ceres::QuaternionManifold>(), 3, 0, 2);
}

TEST(TangentJacobian, SubsetManifoldDropsItsConstantRow) {
  ExpectBordersAndSameBits(ceres::SubsetManifold(5, {2}), 2, 2, 3);
  // Both borders around a middle of 4 rows and 2 columns (the general loop),
  // two ambient rows more than tangent columns.
  ExpectBordersAndSameBits(ceres::SubsetManifold(6, {1, 4}), 1, 1, 6);
}

TEST(TangentJacobian, QuaternionBetweenTwoEuclideanBlocks) {
  ExpectBordersAndSameBits(
      ceres::ProductManifold<ceres::EuclideanManifold<2>, ceres::QuaternionManifold, ceres::EuclideanManifold<2>>(),
      2, 2, 7);
}

TEST(TangentJacobian, DenseAndIdentityPlusJacobians) {
  std::mt19937 rng(4);
  ceres::QuaternionManifold quaternion;
  ExpectSameBits(2, 4, 3, PlusJacobianOf(quaternion, &rng), &rng);
  ceres::EuclideanManifold<3> euclidean;
  const std::vector<double> identity = PlusJacobianOf(euclidean, &rng);
  EXPECT_EQ(BorderOf(identity.data(), 3, 3).lead, 3);
  EXPECT_EQ(BorderOf(identity.data(), 3, 3).trail, 0);
  ExpectSameBits(2, 3, 3, identity, &rng);
  // Dense, at the fixed sizes and at others.
  ::ceres_sqrtba::testing::UniformRealDistribution uniform(-1.0, 1.0);
  for (auto [ambient, tangent] : {std::pair{10, 9}, std::pair{7, 6}, std::pair{5, 2}}) {
    std::vector<double> p(ambient * tangent);
    for (double& v : p) v = uniform(rng);
    const PlusJacobianBorder border = BorderOf(p.data(), ambient, tangent);
    EXPECT_EQ(border.lead + border.trail, 0);
    ExpectSameBits(2, ambient, tangent, p, &rng);
  }
}

// Changes every entry outside the middle block of the manifold's
// PlusJacobian, one at a time, to another value (however close) and expects
// smaller borders and the same bits as the full product.
void ExpectEveryChangeShrinksTheBorders(const ceres::Manifold& manifold, unsigned seed) {
  std::mt19937 rng(seed);
  const int ambient = manifold.AmbientSize(), tangent = manifold.TangentSize();
  const std::vector<double> base = PlusJacobianOf(manifold, &rng);
  const PlusJacobianBorder full = BorderOf(base.data(), ambient, tangent);
  ASSERT_GT(full.lead + full.trail, 0);
  for (int i = 0; i < ambient; ++i) {
    for (int j = 0; j < tangent; ++j) {
      const bool middle = i >= full.lead && i < ambient - full.trail && j >= full.lead && j < tangent - full.trail;
      if (middle) continue;
      std::vector<double> p = base;
      double& v = p[i * tangent + j];
      v = v == 0.0 ? 1e-200 : std::nextafter(v, 2.0);
      const PlusJacobianBorder border = BorderOf(p.data(), ambient, tangent);
      EXPECT_LT(border.lead + border.trail, full.lead + full.trail) << i << ", " << j;
      ExpectSameBits(2, ambient, tangent, p, &rng);
    }
  }
}

// A border is taken only where every entry is exactly 0 or 1: any other
// value in its rows or columns, however small, shrinks it.
TEST(TangentJacobian, AnyEntryOffTheBorderPatternShrinksIt) {
  ExpectEveryChangeShrinksTheBorders(ceres::ProductManifold<ceres::QuaternionManifold, ceres::EuclideanManifold<6>>(), 5);
  ExpectEveryChangeShrinksTheBorders(ceres::ProductManifold<ceres::EuclideanManifold<3>, ceres::QuaternionManifold>(), 8);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
