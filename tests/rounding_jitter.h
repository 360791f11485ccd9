// A different machine in miniature: with CERES_SQRTBA_TEST_JITTER=<seed>
// (a non-zero integer) every value the tests' random problems draw is moved
// by a few units in the last place, so that every rounding in a solve comes
// out differently while the problem stays the same to 1e-15.
//
// Why: another CPU, libm, BLAS or Ceres build rounds differently, and a test
// that passes only because of how this machine rounds (a search over seeds
// for one that reaches a rare rounding event, a threshold met by chance, an
// exact comparison of two different computations) fails there and nowhere
// here. Run under a jitter seed, such a test fails here too; a test whose
// case is constructed and whose tolerances are defended passes under every
// seed. scripts/test_ceres22.sh runs the whole suite under one
// (docs/solver.md, "What is bit-identical where").
//
// Unset or 0: no jitter, every value exactly as drawn. The jitter of a value
// is a function of the value and the seed only (not of how many values were
// drawn before), so a problem built twice is built the same twice, and the
// tests that compare two solves of it bit for bit keep their meaning.
#ifndef CERES_SQRTBA_TESTS_ROUNDING_JITTER_H_
#define CERES_SQRTBA_TESTS_ROUNDING_JITTER_H_

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

namespace ceres_sqrtba {
namespace testing {

// The seed of CERES_SQRTBA_TEST_JITTER, 0 when unset or not a number.
inline uint64_t JitterSeed() {
  static const uint64_t seed = [] {
    const char* text = std::getenv("CERES_SQRTBA_TEST_JITTER");
    return text == nullptr ? uint64_t{0} : static_cast<uint64_t>(std::strtoull(text, nullptr, 10));
  }();
  return seed;
}

// x moved by k units in the last place, k in [-4, 4] from a hash of x's bits
// and the seed; x itself without a seed, and for 0 and non-finite values.
inline double Jitter(double x, uint64_t seed = JitterSeed()) {
  if (seed == 0 || x == 0.0 || !std::isfinite(x)) return x;
  uint64_t h;
  std::memcpy(&h, &x, sizeof(h));
  // SplitMix64's finalizer.
  h ^= seed * 0x9e3779b97f4a7c15ull;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  h ^= h >> 31;
  const int k = static_cast<int>(h % 9) - 4;
  const double toward = k > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  for (int i = 0; i < std::abs(k); ++i) x = std::nextafter(x, toward);
  return x;
}

// A standard distribution whose draws are jittered.
template <typename Distribution>
class Jittered {
 public:
  using result_type = typename Distribution::result_type;
  template <typename... Args>
  explicit Jittered(Args... args) : d_(args...) {}
  template <typename Rng>
  result_type operator()(Rng& rng) {
    return static_cast<result_type>(Jitter(static_cast<double>(d_(rng))));
  }

 private:
  Distribution d_;
};

using NormalDistribution = Jittered<std::normal_distribution<double>>;
using UniformRealDistribution = Jittered<std::uniform_real_distribution<double>>;

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_ROUNDING_JITTER_H_
