// Solves a one-landmark, one-camera problem through an installed ceres_sqrtba,
// parses an option's name through the installed leaf header types.h
// (included first: it must compile on its own), and takes the landmark's
// covariance through the installed covariance.h. The residual is a
// ceres_sqrtba::AutoDiffCostFunction (autodiff_cost_function.h), solved in
// single precision (its Jacobians in float) and then in double.
#include "ceres_sqrtba/types.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "ceres_sqrtba/autodiff_cost_function.h"
#include "ceres_sqrtba/covariance.h"
#include "ceres_sqrtba/solver.h"

struct Error {
  template <typename T>
  bool operator()(const T* camera, const T* point, T* r) const {
    r[0] = point[0] - camera[0] - T(1.0);
    r[1] = point[1] - camera[1] - T(2.0);
    r[2] = point[0] + point[1] - T(3.0);
    return true;
  }
};

int main() {
  ceres_sqrtba::Precision precision = ceres_sqrtba::DOUBLE_PRECISION;
  if (!ceres_sqrtba::StringToPrecision("single", &precision) ||
      precision != ceres_sqrtba::SINGLE_PRECISION) {
    std::printf("StringToPrecision(\"single\") failed\n");
    return 1;
  }
  double camera[2] = {0.0, 0.0};
  double point[2] = {5.0, -3.0};
  ceres::Problem problem;
  problem.AddResidualBlock(new ceres_sqrtba::AutoDiffCostFunction<Error, 3, 2, 2>(new Error), nullptr,
                           camera, point);
  problem.SetParameterBlockConstant(camera);
  ceres_sqrtba::Solver::Options options;
  options.sqrt_linear_solver_type = ceres_sqrtba::SQRT_ITERATIVE_SCHUR;
  options.logging_type = ceres::SILENT;
  for (ceres_sqrtba::Precision p : {ceres_sqrtba::SINGLE_PRECISION, ceres_sqrtba::DOUBLE_PRECISION}) {
    options.precision = p;
    point[0] = 5.0;
    point[1] = -3.0;
    ceres::Solver::Summary summary;
    ceres_sqrtba::Solve(options, &problem, &summary);
    std::printf("%s\n", summary.BriefReport().c_str());
    if (!summary.IsSolutionUsable() || !(summary.final_cost < 1e-10)) return 1;
  }
  // J = [1 0; 0 1; 1 1] in the point: (J^T J)^-1 = [2 -1; -1 2] / 3.
  ceres_sqrtba::Covariance covariance{ceres_sqrtba::Covariance::Options()};
  double c[4];
  if (!covariance.Compute(std::vector<const double*>{point}, &problem) ||
      !covariance.GetCovarianceBlock(point, point, c)) {
    std::printf("Covariance failed: %s\n", covariance.error().c_str());
    return 1;
  }
  std::printf("point covariance %.6f %.6f %.6f %.6f\n", c[0], c[1], c[2], c[3]);
  const double expected[4] = {2.0 / 3.0, -1.0 / 3.0, -1.0 / 3.0, 2.0 / 3.0};
  for (int i = 0; i < 4; ++i) {
    if (!(std::abs(c[i] - expected[i]) < 1e-12)) return 1;
  }
  return 0;
}
