// The jitter of tests/rounding_jitter.h: none without a seed, a few units in
// the last place with one, the same for the same value.
#include "rounding_jitter.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace testing {
namespace {

// Units in the last place between two doubles of the same sign.
int64_t UlpDistance(double a, double b) {
  int64_t ia, ib;
  std::memcpy(&ia, &a, sizeof(a));
  std::memcpy(&ib, &b, sizeof(b));
  return ia > ib ? ia - ib : ib - ia;
}

TEST(RoundingJitter, NoSeedNoJitter) {
  for (double x : {1.0, -3.5, 1e-300, 6.02e23}) EXPECT_EQ(Jitter(x, 0), x);
}

TEST(RoundingJitter, AFewUnitsInTheLastPlaceTheSameForTheSameValue) {
  std::mt19937 rng(7);
  std::normal_distribution<double> n(0.0, 100.0);
  int moved = 0, seeds_differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const double x = n(rng);
    const double j = Jitter(x, 12345);
    EXPECT_LE(UlpDistance(x, j), 4) << x;
    EXPECT_EQ(std::signbit(j), std::signbit(x));
    EXPECT_EQ(Jitter(x, 12345), j);
    moved += j != x;
    seeds_differ += Jitter(x, 1) != Jitter(x, 2);
  }
  // k = 0 for one value in nine (expected 889 moved of 1000, sd 10), and two
  // seeds agree as often (expected 1000 / 9 of 1000).
  EXPECT_GT(moved, 800);
  EXPECT_LT(moved, 960);
  EXPECT_GT(seeds_differ, 800);
}

TEST(RoundingJitter, ZeroAndNonFiniteStay) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Jitter(0.0, 3), 0.0);
  EXPECT_EQ(Jitter(inf, 3), inf);
  EXPECT_TRUE(std::isnan(Jitter(std::nan(""), 3)));
}

}  // namespace
}  // namespace testing
}  // namespace ceres_sqrtba
