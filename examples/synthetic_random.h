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

// The world-to-camera rotation (row-major: the camera's axes in world
// coordinates are its rows) of a camera whose z axis is the unit vector
// z_axis, rolled by `roll` radians about it, with its x axis level (in the
// world's xy plane) before the roll. z_forward: the camera looks along +z
// (COLMAP's frame: x right, y down); otherwise along -z (BAL's cameras), and
// x is right, y down for the camera looking along -z_axis.
inline void CameraRotation(const Vec3& z_axis, bool z_forward, double roll, double rotation[9]) {
  const Vec3 up = {0.0, 0.0, 1.0};
  Vec3 right = z_forward ? Cross(z_axis, up) : Cross(up, z_axis);
  if (Dot(right, right) < 1e-12) right = {1.0, 0.0, 0.0};
  right = Normalized(right);
  const Vec3 down = Cross(z_axis, right);
  const double c = std::cos(roll);
  const double s = std::sin(roll);
  const Vec3 rows[3] = {c * right + s * down, (-s) * right + c * down, z_axis};
  for (int r = 0; r < 3; ++r) {
    rotation[3 * r + 0] = rows[r].x;
    rotation[3 * r + 1] = rows[r].y;
    rotation[3 * r + 2] = rows[r].z;
  }
}

}  // namespace synthetic
}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_SYNTHETIC_RANDOM_H_
