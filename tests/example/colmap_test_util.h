// Helpers of the COLMAP example's tests: a small hand-made model, the shared
// real model's folder, and perturbation.
#ifndef CERES_SQRTBA_TESTS_EXAMPLE_COLMAP_TEST_UTIL_H_
#define CERES_SQRTBA_TESTS_EXAMPLE_COLMAP_TEST_UTIL_H_

#include <cstdlib>
#include <random>
#include <string>

#include "colmap_model.h"
#include "example_test_util.h"

namespace ceres_sqrtba {
namespace examples {
namespace testing_util {

// Three images (two cameras: SIMPLE_RADIAL and PINHOLE), three points; point
// 3 is seen once (left out of the bundle adjustment); image 1's third 2D
// point has no 3D point.
inline const char* SmallCamerasText() {
  return "# Camera list\n"
         "1 SIMPLE_RADIAL 640 480 500 320 240 0.01\n"
         "2 PINHOLE 640 480 500 510 320 240\n";
}
inline const char* SmallImagesText() {
  return "# Image list\n"
         "\n"
         "1 1 0 0 0 0 0 0 1 a.jpg\n"
         "100 200 1 110 210 2 5 5 -1\n"
         "2 0.9950041652780258 0 0.09983341664682815 0 -0.5 0 0 1 b.jpg\n"
         "120 220 1 130 230 2\n"
         "3 1 0 0 0 0.3 0.1 0 2 c.jpg\n"
         "140 240 1 150 250 3\n";
}
inline const char* SmallPointsText() {
  return "# 3D point list\n"
         "1 0.1 0.2 3 255 0 0 0.5 1 0 2 0 3 0\n"
         "2 -0.1 0.1 4 0 255 0 0.5 1 1 2 1\n"
         "3 0.2 -0.1 5 0 0 255 0.5 3 1\n";
}

// Folder of the shared COLMAP models: $CERES_SQRTBA_COLMAP_DIR, else
// ../shared/colmap beside the source tree.
inline std::string ColmapDir() {
  const char* env = std::getenv("CERES_SQRTBA_COLMAP_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return CERES_SQRTBA_DEFAULT_COLMAP_DIR;
}

inline std::string SharedModel() { return ColmapDir() + "/statue-of-liberty"; }

// Moves every point and every image centre by Gaussian noise and scales the
// focal lengths, deterministically.
inline void Perturb(double point_sigma, double translation_sigma, double focal_factor,
                    ColmapModel* model) {
  std::mt19937 random(1234);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (ColmapPoint3D& point : model->points3D) {
    for (double& v : point.xyz) v += point_sigma * normal(random);
  }
  for (ColmapImage& image : model->images) {
    for (double& v : image.tvec) v += translation_sigma * normal(random);
  }
  for (ColmapCamera& camera : model->cameras) camera.params[0] *= focal_factor;
}

}  // namespace testing_util
}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_EXAMPLE_COLMAP_TEST_UTIL_H_
