// The solve spread over processes without MPI: a ProcessGroup of one
// process (sums and maxima are the values themselves) runs every agreement
// point of SolveSquareRoot with the cameras given, so that the sanitizer
// build covers them (the MPI tests run in the Release build only). It must
// follow the plain solve (the state's norms and dot products are then
// split into landmark and camera parts: rounding apart, the same numbers),
// and its failures carry the rank.
#include "ceres_sqrtba/internal/solve/distributed_structure.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/solve/square_root_solve.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

class OneProcess final : public ProcessGroup {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void Sum(double*, int64_t) const override { ++sums; }
  void Sum(float*, int64_t) const override { ++sums; }
  double Max(double value) const override { return value; }
  std::string FirstMessage(const std::string& message, int* from) const override {
    if (from != nullptr) *from = message.empty() ? -1 : 0;
    return message;
  }
  bool AllEqual(uint64_t) const override { return all_equal; }
  void Exchange(const std::vector<std::vector<uint64_t>>& to, std::vector<uint64_t>* received,
                std::vector<int>* from) const override {
    *received = to[0];
    from->assign(received->size(), 0);
  }
  // As if `machine_processes` processes like this one shared its machine.
  int64_t SumOnMachine(int64_t value) const override { return value * machine_processes; }
  int64_t MinOnMachine(int64_t value) const override { return value; }
  mutable int sums = 0;
  bool all_equal = true;
  int64_t machine_processes = 1;
};

struct Built {
  testing::SyntheticBa ba;
  ceres::Problem problem;
  std::vector<double*> cameras;
};

void Build(const testing::SyntheticBa& ba, Built* b) {
  b->ba = ba;
  for (size_t c = 0; c < b->ba.poses.size(); ++c) {
    b->cameras.push_back(b->ba.poses[c].data());
    b->cameras.push_back(b->ba.intrinsics[c].data());
  }
  testing::AddReprojectionResiduals(&b->ba, &b->problem, nullptr);
}

Solver::Options Options() {
  Solver::Options options;
  options.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  options.max_num_iterations = 10;
  options.logging_type = ceres::SILENT;
  return options;
}

TEST(DistributedStructure, OneProcessFollowsThePlainSolve) {
  const testing::SyntheticBa ba = testing::MakeSyntheticBa(6, 80, 3, 41);
  Built plain, spread;
  Build(ba, &plain);
  Build(ba, &spread);
  Solver::Summary plain_summary, spread_summary;
  SolveSquareRoot(Options(), &plain.problem, &plain_summary);
  OneProcess processes;
  SolveSquareRoot(Options(), &spread.problem, &spread_summary, &processes, &spread.cameras);
  ASSERT_NE(spread_summary.termination_type, ceres::FAILURE) << spread_summary.message;
  EXPECT_GT(processes.sums, 0);
  EXPECT_EQ(spread_summary.num_parameter_blocks, plain_summary.num_parameter_blocks);
  EXPECT_EQ(spread_summary.num_effective_parameters_reduced, plain_summary.num_effective_parameters_reduced);
  EXPECT_EQ(spread_summary.num_residuals, plain_summary.num_residuals);
  ASSERT_EQ(spread_summary.iterations.size(), plain_summary.iterations.size());
  for (size_t i = 0; i < plain_summary.iterations.size(); ++i) {
    // Norms split in two parts and added: a few ulps, carried by the
    // iterations; 1e-10 relative leaves four orders of magnitude.
    EXPECT_NEAR(spread_summary.iterations[i].cost, plain_summary.iterations[i].cost,
                1e-10 * plain_summary.iterations[i].cost)
        << i;
    EXPECT_EQ(spread_summary.iterations[i].linear_solver_iterations,
              plain_summary.iterations[i].linear_solver_iterations)
        << i;
  }
}

TEST(DistributedStructure, CamerasThatDoNotMatchFailWithTheMessage) {
  const testing::SyntheticBa ba = testing::MakeSyntheticBa(4, 20, 3, 42);
  Built b;
  Build(ba, &b);
  OneProcess processes;
  processes.all_equal = false;
  Solver::Summary summary;
  SolveSquareRoot(Options(), &b.problem, &summary, &processes, &b.cameras);
  EXPECT_EQ(summary.termination_type, ceres::FAILURE);
  EXPECT_NE(summary.message.find("do not hold the same camera-side parameter blocks"), std::string::npos)
      << summary.message;
}

TEST(DistributedStructure, ACameraNotInTheProblemIsNamed) {
  const testing::SyntheticBa ba = testing::MakeSyntheticBa(4, 20, 3, 43);
  Built b;
  Build(ba, &b);
  double stray[6] = {0, 0, 0, 0, 0, 0};
  b.cameras.push_back(stray);
  OneProcess processes;
  Solver::Summary summary;
  SolveSquareRoot(Options(), &b.problem, &summary, &processes, &b.cameras);
  EXPECT_EQ(summary.termination_type, ceres::FAILURE);
  EXPECT_NE(summary.message.find("Rank 0: The camera-side block"), std::string::npos) << summary.message;
  EXPECT_NE(summary.message.find("is not a parameter block of the problem"), std::string::npos);
}

// With memory_limit_in_bytes = 0 the processes of one machine share its
// available memory: 10^11 processes like this one on the machine need
// petabytes, more than any machine has (and no int64 overflow for a plan
// below 92 MB), and the solve fails saying so (before any large
// allocation); alone it runs, and an explicit per-process limit is per
// process.
TEST(DistributedStructure, TheProcessesOfOneMachineShareItsMemory) {
  if (AvailableMemoryBytes() == 0) GTEST_SKIP() << "the available memory cannot be read here";
  const testing::SyntheticBa ba = testing::MakeSyntheticBa(4, 60, 3, 45);
  OneProcess processes;
  processes.machine_processes = 100000000000;
  Built crowded;
  Build(ba, &crowded);
  Solver::Summary summary;
  SolveSquareRoot(Options(), &crowded.problem, &summary, &processes, &crowded.cameras);
  EXPECT_EQ(summary.termination_type, ceres::FAILURE);
  EXPECT_NE(summary.message.find("The processes on this machine need"), std::string::npos) << summary.message;
  EXPECT_NE(summary.message.find("memory_limit_in_bytes"), std::string::npos) << summary.message;
  EXPECT_EQ(crowded.ba.poses, ba.poses);  // nothing was changed
  Built per_process;
  Build(ba, &per_process);
  Solver::Options limited = Options();
  limited.memory_limit_in_bytes = int64_t{1} << 30;
  SolveSquareRoot(limited, &per_process.problem, &summary, &processes, &per_process.cameras);
  EXPECT_NE(summary.termination_type, ceres::FAILURE) << summary.message;
  processes.machine_processes = 1;
  Built alone;
  Build(ba, &alone);
  SolveSquareRoot(Options(), &alone.problem, &summary, &processes, &alone.cameras);
  EXPECT_NE(summary.termination_type, ceres::FAILURE) << summary.message;
}

TEST(DistributedStructure, UnsupportedOptionsAreNamed) {
  Solver::Options options = Options();
  EXPECT_EQ(UnsupportedDistributedOption(options), "");
  options.use_inner_iterations = true;
  EXPECT_NE(UnsupportedDistributedOption(options).find("use_inner_iterations"), std::string::npos);
  options = Options();
  options.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  EXPECT_EQ(UnsupportedDistributedOption(options), "");
  // SQRT_SPARSE_SCHUR reads no preconditioner.
  options.preconditioner_type = ceres::CLUSTER_JACOBI;
  EXPECT_EQ(UnsupportedDistributedOption(options), "");
  options = Options();
  options.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  EXPECT_NE(UnsupportedDistributedOption(options).find("SQRT_ITERATIVE_SCHUR or SQRT_SPARSE_SCHUR"),
            std::string::npos);
  // Ceres' own solver: named as the square-root solver it needs, not as an
  // invalid square-root configuration.
  options.sqrt_linear_solver_type = CERES_LINEAR_SOLVER;
  EXPECT_EQ(UnsupportedDistributedOption(options),
            "A solve spread over processes needs Solver::Options::sqrt_linear_solver_type = "
            "SQRT_ITERATIVE_SCHUR or SQRT_SPARSE_SCHUR.");
  // The visibility-based preconditioners run across processes too; what one
  // process refuses is refused with its message.
  options = Options();
  options.preconditioner_type = ceres::CLUSTER_TRIDIAGONAL;
  EXPECT_EQ(UnsupportedDistributedOption(options), "");
  options.preconditioner_type = ceres::SUBSET;
  EXPECT_NE(UnsupportedDistributedOption(options).find("preconditioner_type"), std::string::npos);
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
