// Uses the installed ceres_sqrtba_mpi as a user would: one rank (run
// without mpiexec), a tiny bundle adjustment, solved by SolveDistributed.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/distributed_solver.h"

namespace {

// Residual point - camera offset - observation, 3 each.
struct Offset {
  explicit Offset(double o) : o(o) {}
  template <typename T>
  bool operator()(const T* camera, const T* point, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = point[k] - camera[k] - T(o);
    return true;
  }
  double o;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::vector<double> cameras = {0, 0, 0, 1, 1, 1};
  std::vector<double> points(3 * 20, 0.5);
  ceres::Problem problem;
  problem.AddParameterBlock(&cameras[0], 3);
  problem.AddParameterBlock(&cameras[3], 3);
  problem.SetParameterBlockConstant(&cameras[0]);
  for (int p = 0; p < 20; ++p) {
    for (int c = 0; c < 2; ++c) {
      problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Offset, 3, 3, 3>(new Offset(0.1 * (p + c))), nullptr,
                               &cameras[3 * c], &points[3 * p]);
    }
  }
  ceres_sqrtba::Solver::Options options;
  options.sqrt_linear_solver_type = ceres_sqrtba::SQRT_ITERATIVE_SCHUR;
  options.logging_type = ceres::SILENT;
  ceres_sqrtba::Solver::Summary summary;
  ceres_sqrtba::SolveDistributed(options, MPI_COMM_WORLD, {&cameras[0], &cameras[3]}, &problem, &summary);
  std::printf("%s\n", summary.BriefReport().c_str());
  const bool ok = summary.IsSolutionUsable() && summary.final_cost < 1e-12;
  MPI_Finalize();
  return ok ? 0 : 1;
}
