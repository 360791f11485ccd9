// Solves a one-landmark, one-camera problem through an installed ceres_sqrtba,
// and parses an option's name through the installed leaf header types.h
// (included first: it must compile on its own).
#include "ceres_sqrtba/types.h"

#include <cstdio>

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
  problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Error, 3, 2, 2>(new Error), nullptr,
                           camera, point);
  problem.SetParameterBlockConstant(camera);
  ceres_sqrtba::Solver::Options options;
  options.sqrt_linear_solver_type = ceres_sqrtba::SQRT_ITERATIVE_SCHUR;
  options.logging_type = ceres::SILENT;
  ceres::Solver::Summary summary;
  ceres_sqrtba::Solve(options, &problem, &summary);
  std::printf("%s\n", summary.BriefReport().c_str());
  return summary.IsSolutionUsable() && summary.final_cost < 1e-10 ? 0 : 1;
}
