// What the mpiexec tests share: this process's rank and the number of ranks,
// the comparison of a distributed solve's iterations with the one-process
// solve's, and a main that runs GoogleTest on every rank (rank 0 prints; the
// run fails when a test failed on any rank).
#ifndef CERES_SQRTBA_TESTS_DISTRIBUTED_MPI_TEST_SUPPORT_H_
#define CERES_SQRTBA_TESTS_DISTRIBUTED_MPI_TEST_SUPPORT_H_

#include <mpi.h>

#include <algorithm>
#include <cmath>

#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace testing {

inline int Rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int Size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// The distributed tests' solve: 20 iterations of SQRT_ITERATIVE_SCHUR (or
// the solver given), one thread, silent.
inline Solver::Options SolveOptions(Precision precision = DOUBLE_PRECISION,
                                    ceres::PreconditionerType preconditioner = ceres::SCHUR_JACOBI,
                                    SqrtLinearSolverType solver = SQRT_ITERATIVE_SCHUR) {
  Solver::Options options;
  options.sqrt_linear_solver_type = solver;
  options.preconditioner_type = preconditioner;
  options.precision = precision;
  options.max_num_iterations = 20;
  options.num_threads = 1;
  options.function_tolerance = 1e-12;
  options.logging_type = ceres::SILENT;
  return options;
}

inline double Relative(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

// The same iterations, acceptances and CG counts; costs within `early`
// relative for the first 10 iterations and the final costs within `final`.
inline void ExpectSameIterations(const Solver::Summary& distributed, const Solver::Summary& one, double early,
                                 double final) {
  ASSERT_NE(distributed.termination_type, ceres::FAILURE) << distributed.message;
  ASSERT_EQ(distributed.iterations.size(), one.iterations.size());
  for (size_t i = 0; i < one.iterations.size(); ++i) {
    const ceres::IterationSummary& d = distributed.iterations[i];
    const ceres::IterationSummary& o = one.iterations[i];
    EXPECT_EQ(d.step_is_successful, o.step_is_successful) << i;
    EXPECT_EQ(d.linear_solver_iterations, o.linear_solver_iterations) << i;
    if (i < 10) EXPECT_LE(Relative(d.cost, o.cost), early) << i;
  }
  EXPECT_LE(Relative(distributed.final_cost, one.final_cost), final);
}

inline int MpiTestMain(int* argc, char** argv) {
  MPI_Init(argc, &argv);
  ::testing::InitGoogleTest(argc, argv);
  // One rank prints; every rank's result counts.
  if (Rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_DISTRIBUTED_MPI_TEST_SUPPORT_H_
