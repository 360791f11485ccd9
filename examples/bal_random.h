// Pseudo-random numbers for perturbing BAL problems.
//
// Ceres' bundle_adjuster example draws its perturbations from the C library's
// rand() after srand(--random_seed). To reproduce its initial cost bit for bit
// without touching the global C generator, this header carries an independent
// implementation of the glibc rand()/random() generator (the default TYPE_3
// additive lagged-Fibonacci generator: x[n] = x[n-3] + x[n-31] mod 2^32, output
// x[n] >> 1, seeded by the Park-Miller minimal standard generator and warmed up
// by 310 discarded draws). On glibc the sequence equals rand() after srand();
// the unit tests check that.
#ifndef CERES_SQRTBA_EXAMPLES_BAL_RANDOM_H_
#define CERES_SQRTBA_EXAMPLES_BAL_RANDOM_H_

#include <array>
#include <cmath>
#include <cstdint>

namespace ceres_sqrtba {
namespace examples {

class BalRandom {
 public:
  // Largest value Next() returns (glibc's RAND_MAX).
  static constexpr int32_t kMax = 2147483647;

  explicit BalRandom(uint32_t seed = 1) { Seed(seed); }

  void Seed(uint32_t seed) {
    // glibc keeps the seed as a signed 32-bit word and maps 0 to 1.
    int64_t word = static_cast<int32_t>(seed);
    if (word == 0) word = 1;
    history_[0] = static_cast<uint32_t>(word);
    for (int i = 1; i < kLongLag; ++i) {
      // 16807 * word mod (2^31 - 1), Schrage's method with C's truncating
      // division (the seed may be negative).
      const int64_t hi = word / 127773;
      const int64_t lo = word % 127773;
      word = 16807 * lo - 2836 * hi;
      if (word < 0) word += 2147483647;
      history_[i] = static_cast<uint32_t>(word);
    }
    // The three values after the seeded ones repeat the first three.
    for (int i = kLongLag; i < kHistory; ++i) {
      history_[i] = history_[i - kLongLag];
    }
    count_ = kHistory;
    for (int i = 0; i < kWarmUp; ++i) Step();
  }

  // Uniform integer in [0, kMax].
  int32_t Next() { return static_cast<int32_t>(Step() >> 1); }

  // Uniform double in [0, 1], as rand() / RAND_MAX.
  double Uniform() { return static_cast<double>(Next()) / kMax; }

  // Standard normal sample by the Marsaglia polar method; the second variate
  // of each accepted pair is discarded (as Ceres' example does).
  double Normal() {
    double u, v, s;
    do {
      u = 2.0 * Uniform() - 1.0;
      v = 2.0 * Uniform() - 1.0;
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    return u * std::sqrt(-2.0 * std::log(s) / s);
  }

 private:
  static constexpr int kLongLag = 31;
  static constexpr int kShortLag = 3;
  static constexpr int kHistory = kLongLag + kShortLag;
  static constexpr int kWarmUp = 310;

  // x[n] = x[n - 31] + x[n - 3] (mod 2^32). history_ is a ring holding
  // x[count_ - 34] ... x[count_ - 1] at index (n mod 34).
  uint32_t Step() {
    const uint32_t value = history_[(count_ - kLongLag) % kHistory] +
                           history_[(count_ - kShortLag) % kHistory];
    history_[count_ % kHistory] = value;
    ++count_;
    return value;
  }

  std::array<uint32_t, kHistory> history_{};
  uint64_t count_ = 0;
};

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_BAL_RANDOM_H_
