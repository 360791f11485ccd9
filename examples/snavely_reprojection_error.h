// Reprojection error of the Snavely (Bundler) camera used by BAL problems, as
// templated functors for ceres::AutoDiffCostFunction.
//
// A point X is moved into the camera frame, P = R X + t, and projected along
// the camera's -z axis: p = -(P_x, P_y) / P_z. Radial distortion scales p by
// d = 1 + k1 |p|^2 + k2 |p|^4 and the predicted pixel is f d p. The residual
// is predicted minus observed (two values).
//
// The functors build either ceres::AutoDiffCostFunction or
// ceres_sqrtba::AutoDiffCostFunction (float Jacobians in single precision
// solves): the observed values enter as T(observed), so that T may be a
// Jet<float, N>.
#ifndef CERES_SQRTBA_EXAMPLES_SNAVELY_REPROJECTION_ERROR_H_
#define CERES_SQRTBA_EXAMPLES_SNAVELY_REPROJECTION_ERROR_H_

#include "ceres/autodiff_cost_function.h"
#include "ceres/rotation.h"
#include "autodiff_cost.h"

namespace ceres_sqrtba {
namespace examples {

// Shared tail of both camera parameterizations: from the point in camera
// coordinates and the intrinsics (f, k1, k2) to the two residuals.
template <typename T>
inline void SnavelyProjectionResidual(const T camera_point[3],
                                      const T* intrinsics, double observed_x,
                                      double observed_y, T residuals[2]) {
  const T u = -camera_point[0] / camera_point[2];
  const T v = -camera_point[1] / camera_point[2];
  const T radius2 = u * u + v * v;
  const T scale =
      intrinsics[0] * (T(1.0) + radius2 * (intrinsics[1] + intrinsics[2] * radius2));
  residuals[0] = scale * u - T(observed_x);
  residuals[1] = scale * v - T(observed_y);
}

// Camera block of 9: angle-axis rotation (3), translation (3), f, k1, k2.
class SnavelyAngleAxisError {
 public:
  SnavelyAngleAxisError(double observed_x, double observed_y)
      : observed_x_(observed_x), observed_y_(observed_y) {}

  template <typename T>
  bool operator()(const T* const camera, const T* const point,
                  T* residuals) const {
    T moved[3];
    ceres::AngleAxisRotatePoint(camera, point, moved);
    for (int k = 0; k < 3; ++k) moved[k] += camera[3 + k];
    SnavelyProjectionResidual(moved, camera + 6, observed_x_, observed_y_,
                              residuals);
    return true;
  }

  // float_jacobians: ceres_sqrtba::AutoDiffCostFunction, else Ceres' own.
  static ceres::CostFunction* Create(double observed_x, double observed_y,
                                     bool float_jacobians) {
    return NewAutoDiffCostFunction<SnavelyAngleAxisError, 2, 9, 3>(
        new SnavelyAngleAxisError(observed_x, observed_y), float_jacobians);
  }

 private:
  double observed_x_;
  double observed_y_;
};

// Camera block of 10: quaternion (w, x, y, z), translation (3), f, k1, k2.
// The quaternion need not have unit norm (QuaternionRotatePoint divides by
// it), so the block can be optimized with or without a manifold.
class SnavelyQuaternionError {
 public:
  SnavelyQuaternionError(double observed_x, double observed_y)
      : observed_x_(observed_x), observed_y_(observed_y) {}

  template <typename T>
  bool operator()(const T* const camera, const T* const point,
                  T* residuals) const {
    T moved[3];
    ceres::QuaternionRotatePoint(camera, point, moved);
    for (int k = 0; k < 3; ++k) moved[k] += camera[4 + k];
    SnavelyProjectionResidual(moved, camera + 7, observed_x_, observed_y_,
                              residuals);
    return true;
  }

  // float_jacobians: ceres_sqrtba::AutoDiffCostFunction, else Ceres' own.
  static ceres::CostFunction* Create(double observed_x, double observed_y,
                                     bool float_jacobians) {
    return NewAutoDiffCostFunction<SnavelyQuaternionError, 2, 10, 3>(
        new SnavelyQuaternionError(observed_x, observed_y), float_jacobians);
  }

 private:
  double observed_x_;
  double observed_y_;
};

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_SNAVELY_REPROJECTION_ERROR_H_
