// What the synthetic generators share (synthetic_problem for BAL problems,
// colmap_synthetic_scene for COLMAP models): a small random number generator
// that gives the same sequence on every platform (splitmix64, not the C
// library's), and 3-vectors.
#ifndef CERES_SQRTBA_EXAMPLES_SYNTHETIC_RANDOM_H_
#define CERES_SQRTBA_EXAMPLES_SYNTHETIC_RANDOM_H_

#include <cmath>
#include <cstdint>

namespace ceres_sqrtba {
namespace examples {
namespace synthetic {

// splitmix64: small, fast, and the same everywhere.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  double Uniform(double low, double high) {
    return low + (high - low) * Uniform();
  }
  // Standard normal (polar method, one value per accepted pair).
  double Normal() {
    double u, v, s;
    do {
      u = Uniform(-1.0, 1.0);
      v = Uniform(-1.0, 1.0);
      s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    return u * std::sqrt(-2.0 * std::log(s) / s);
  }

 private:
  uint64_t state_;
};

struct Vec3 {
  double x, y, z;
};
inline Vec3 operator+(const Vec3& a, const Vec3& b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
inline Vec3 operator-(const Vec3& a, const Vec3& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
inline Vec3 operator*(double s, const Vec3& a) { return {s * a.x, s * a.y, s * a.z}; }
inline double Dot(const Vec3& a, const Vec3& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
inline Vec3 Cross(const Vec3& a, const Vec3& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z,
          a.x * b.y - a.y * b.x};
}
inline Vec3 Normalized(const Vec3& a) { return (1.0 / std::sqrt(Dot(a, a))) * a; }

}  // namespace synthetic
}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_SYNTHETIC_RANDOM_H_
