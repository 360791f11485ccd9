// LocalReductions: the dot product and the two norms over the whole state
// of one process, on values whose sums are exact.
#include "ceres_sqrtba/internal/minimizer/reductions.h"

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

TEST(LocalReductions, DotAndNorms) {
  Eigen::VectorXd a(4), b(4);
  a << 1, -2, 2, 4;
  b << 0.5, 0.25, -1, 2;
  const LocalReductions local;
  const Reductions& reductions = local;
  for (const auto space : {Reductions::Space::kAmbient, Reductions::Space::kTangent}) {
    EXPECT_EQ(reductions.Dot(space, a, b), 0.5 - 0.5 - 2 + 8);
    EXPECT_EQ(reductions.Norm(space, a), 5.0);  // sqrt(1 + 4 + 4 + 16)
    EXPECT_EQ(reductions.MaxNorm(space, b), 2.0);
    EXPECT_EQ(reductions.MaxNorm(space, -a), 4.0);
  }
}

TEST(LocalReductions, EmptyState) {
  const Eigen::VectorXd empty;
  const LocalReductions reductions;
  EXPECT_EQ(reductions.Dot(Reductions::Space::kTangent, empty, empty), 0.0);
  EXPECT_EQ(reductions.Norm(Reductions::Space::kAmbient, empty), 0.0);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
