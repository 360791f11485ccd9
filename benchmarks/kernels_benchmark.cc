// Micro-benchmarks of the square-root solver's kernels, in float and double,
// next to this machine's memory bandwidth (a STREAM-like triad in the same
// binary), so that each kernel can be read as a fraction of its limit.
//
//   build/benchmarks/kernels_benchmark [--benchmark_filter=...]
//
// Counters: FLOP/s and B/s (bytes the kernel must at least move), and for the
// landmark-block kernels ns per observation.
//
// The Evaluate/ benchmarks (evaluation_benchmarks.cc) set the evaluator's
// residual and Jacobian passes, and Ceres' own evaluator's, against their
// floor, the user's cost and loss functions called alone;
// benchmarks/evaluator_ratios.py turns them into the table of
// docs/benchmarks.md. The BM_Projected benchmarks
// (projected_kernel_benchmarks.cc) time the projected storage's
// per-landmark kernels on a BAL file or the synthetic problem.
#include <benchmark/benchmark.h>

#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ceres/version.h"
#include "ceres_sqrtba/internal/evaluation/evaluator.h"
#include "ceres_sqrtba/internal/explicit/landmark_block.h"
#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/solvers/projected_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/solvers/explicit_iterative_schur_solver.h"
#include "ceres_sqrtba/internal/linear/linear_solver.h"
#include "ceres_sqrtba/internal/solvers/linear_solver_factory.h"
#include "ceres_sqrtba/internal/solve/square_root_solve.h"
#include "ceres_sqrtba/solver.h"
#include "test_problems.h"

// The bundle_adjuster example's problems (library `bal`).
#include "bal_problem.h"
#include "build_problem.h"
#include "synthetic_problem.h"

#include "kernels_benchmark.h"

namespace ceres_sqrtba {
namespace internal {
namespace {


// a = b + s c: 3 arrays moved per element (STREAM counts 24 bytes per double
// element). Two sizes: 3 x 128 MiB, and 3 x 1 GiB, well beyond the 480 MiB
// last-level cache this VM reports (measured: both give the same bandwidth).
void BM_Triad(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const size_t n = size_t{1} << state.range(1);
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  ParallelContext context(threads);
  for (auto _ : state) {
    context.For(static_cast<int>(n / 1024), 64, [&](int begin, int end) {
      for (size_t i = static_cast<size_t>(begin) * 1024; i < static_cast<size_t>(end) * 1024; ++i) {
        a[i] = b[i] + 3.0 * c[i];
      }
    });
    benchmark::DoNotOptimize(a.data());
    benchmark::ClobberMemory();
  }
  state.counters["B/s"] = benchmark::Counter(24.0 * n, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["MiB"] = 24.0 * n / (1024.0 * 1024.0);
}
BENCHMARK(BM_Triad)->Args({1, 24})->Args({2, 24})->Args({1, 27})->Args({2, 27})->UseRealTime()->Unit(benchmark::kMillisecond);

// Blocks of k observations of a 3-d landmark by 9-parameter cameras.
template <typename Scalar>
struct BlockSet {
  BlockSet(int k, int count) : k(k), count(count) {
    obs = LandmarkBlock<Scalar>::ObservationRows(2 * k, 3);
    nc = 9 * k;
    stride = LandmarkBlock<Scalar>::Stride(nc, 3);
    size = LandmarkBlock<Scalar>::Size(obs, 3, nc);
    pristine.resize(size * count);
    std::mt19937 rng(k);
    std::normal_distribution<double> n(0.0, 1.0);
    for (int b = 0; b < count; ++b) {
      LandmarkBlock<Scalar> blk = block(pristine.data(), b);
      blk.SetZero();
      for (int o = 0; o < k; ++o) {
        for (int r = 2 * o; r < 2 * o + 2; ++r) {
          for (int c = 9 * o; c < 9 * o + 9; ++c) blk(r, c) = static_cast<Scalar>(n(rng));
          for (int c = nc; c < nc + 4; ++c) blk(r, c) = static_cast<Scalar>(n(rng));
        }
      }
    }
    work = pristine;
    scratch.resize(obs + blk_cols());
  }
  int blk_cols() const { return nc + 4; }
  LandmarkBlock<Scalar> block(Scalar* base, int b) {
    return LandmarkBlock<Scalar>(base + size * b, obs, 3, nc, stride);
  }
  int k, count, obs, nc, stride;
  int64_t size;
  std::vector<Scalar> pristine, work, scratch;
};

template <typename Scalar>
void BM_Marginalize(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  BlockSet<Scalar> set(k, std::max(8, 4096 / k));
  for (auto _ : state) {
    state.PauseTiming();
    std::copy(set.pristine.begin(), set.pristine.end(), set.work.begin());
    state.ResumeTiming();
    for (int b = 0; b < set.count; ++b) set.block(set.work.data(), b).Marginalize(set.scratch.data());
    benchmark::ClobberMemory();
  }
  // Three reflections over the observation rows: ~4 flops per entry touched.
  const double flops = 3.0 * 4.0 * set.obs * set.blk_cols() * set.count;
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ns/obs"] = benchmark::Counter(
      1e-9 * set.count * k, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK_TEMPLATE(BM_Marginalize, float)->RangeMultiplier(2)->Range(2, 64);
BENCHMARK_TEMPLATE(BM_Marginalize, double)->RangeMultiplier(2)->Range(2, 64);

template <typename Scalar>
void BM_DampingApplyUndo(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  BlockSet<Scalar> set(k, std::max(8, 4096 / k));
  for (int b = 0; b < set.count; ++b) set.block(set.work.data(), b).Marginalize(set.scratch.data());
  const Scalar dl[3] = {Scalar(0.5), Scalar(0.7), Scalar(0.9)};
  std::vector<Scalar> rotations(12 * set.count);
  for (auto _ : state) {
    for (int b = 0; b < set.count; ++b) {
      LandmarkBlock<Scalar> blk = set.block(set.work.data(), b);
      blk.ApplyDamping(dl, rotations.data() + 12 * b);
      blk.UndoDamping(rotations.data() + 12 * b);
    }
    benchmark::ClobberMemory();
  }
  // 6 rotations each way over two rows: 6 flops per column and rotation.
  const double flops = 2.0 * 6.0 * 6.0 * set.blk_cols() * set.count;
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ns/obs"] = benchmark::Counter(
      1e-9 * set.count * k, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK_TEMPLATE(BM_DampingApplyUndo, float)->Arg(2)->Arg(4)->Arg(8)->Arg(32);
BENCHMARK_TEMPLATE(BM_DampingApplyUndo, double)->Arg(2)->Arg(4)->Arg(8)->Arg(32);

// A square-root solver (explicit or projected storage) set up on a BA-shaped
// problem and solved once, so that its reduced system can be multiplied:
// 9-parameter cameras, 3-d landmarks, `num_landmarks` landmarks with 2..8
// observations each.
inline std::unique_ptr<ExplicitBlockLayout> MakeLayout(const ProblemStructure& s, ExplicitBlockLayout*) {
  return std::make_unique<ExplicitBlockLayout>(s);
}
inline std::unique_ptr<ProjectedBlockLayout> MakeLayout(const ProblemStructure& s, ProjectedBlockLayout*) {
  return std::make_unique<ProjectedBlockLayout>(s);
}
inline int64_t BlockScalars(const ExplicitBlockLayout& l) { return l.total_scalars; }
inline int64_t BlockScalars(const ProjectedBlockLayout& l) { return l.hot_scalars; }

template <typename Solver>
struct SolverFixture {
  using Layout = typename Solver::Layout;
  SolverFixture(int num_landmarks, int threads) : context(threads) {
    testing::RandomProblemConfig config;
    config.num_cameras = std::max(20, num_landmarks / 150);
    config.camera_size = 9;
    config.num_landmarks = num_landmarks;
    config.min_observations = 2;
    config.max_observations = 8;
    problem = testing::MakeRandomProblem(config);
    std::string error;
    BuildProblemStructure(*problem.problem, nullptr, &s, &error);
    layout = MakeLayout(s, static_cast<Layout*>(nullptr));
    // As solver.cc partitions the work.
    const int64_t nc = std::max(1, s.num_camera_parameters);
    const bool projected = std::is_same<Layout, ProjectedBlockLayout>::value;
    partition = WorkPartition(static_cast<int>(s.groups.size()), layout->work,
                              static_cast<int>(std::min<int64_t>(64, BlockScalars(*layout) / (4 * nc))),
                              projected ? 1024 : 4096);
    evaluator = std::make_unique<Evaluator>(s, partition, &context);
    solver = std::make_unique<Solver>(s, *layout, partition, &context, IterativeSchurOptions());
    std::vector<double> x = StateFromUser(s), g(s.num_effective_parameters), y(s.num_effective_parameters);
    double cost, jy;
    evaluator->EvaluateJacobian(x.data(), true, &cost, g.data(), solver->writer());
    std::vector<double> d(s.num_effective_parameters, 0.1);
    solver->Solve(d.data(), 0.1, y.data(), &jy);
    for (const Group& group : s.groups) observations += group.num_rows / 2;
  }
  ParallelContext context;
  testing::RandomProblem problem;
  ProblemStructure s;
  std::unique_ptr<Layout> layout;
  WorkPartition partition;
  std::unique_ptr<Evaluator> evaluator;
  std::unique_ptr<Solver> solver;
  double observations = 0;
};

// The explicit reduced camera system product H~ x.
template <typename Scalar>
struct ReducedSystemFixture : SolverFixture<ExplicitIterativeSchurSolver<Scalar>> {
  ReducedSystemFixture(int num_landmarks, int threads)
      : SolverFixture<ExplicitIterativeSchurSolver<Scalar>>(num_landmarks, threads) {
    // Bytes of the reduced rows' camera columns: what one product must read.
    for (size_t gi = 0; gi < this->s.groups.size(); ++gi) {
      reduced_bytes += static_cast<double>(this->layout->obs_rows[gi]) *
                       this->s.groups[gi].camera_columns * sizeof(Scalar);
    }
  }
  double reduced_bytes = 0;
};

template <typename Scalar>
void BM_ReducedMatvec(benchmark::State& state) {
  ReducedSystemFixture<Scalar> f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const int n = f.s.num_camera_parameters;
  std::vector<Scalar> x(n, Scalar(1)), y(n);
  for (auto _ : state) {
    f.solver->reduced_system()->Multiply(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["B/s"] = benchmark::Counter(f.reduced_bytes, benchmark::Counter::kIsIterationInvariantRate);
  // Each entry of B is used twice (B x and B^T t), a multiply-add each time.
  state.counters["FLOP/s"] = benchmark::Counter(4.0 * f.reduced_bytes / sizeof(Scalar),
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["MiB"] = f.reduced_bytes / (1024.0 * 1024.0);
}
BENCHMARK_TEMPLATE(BM_ReducedMatvec, float)->Args({20000, 1})->Args({20000, 2})->Args({200000, 2})->UseRealTime();
BENCHMARK_TEMPLATE(BM_ReducedMatvec, double)->Args({20000, 1})->Args({20000, 2})->Args({200000, 2})->UseRealTime();

// The same product with the projected storage (the default):
// Jp^T (u - Q1 Q1^T u), u = Jp x, reading per observation row the compact
// camera Jacobian and the row of Q1.
template <typename Scalar>
struct ProjectedSystemFixture : SolverFixture<ProjectedIterativeSchurSolver<Scalar>> {
  ProjectedSystemFixture(int num_landmarks, int threads)
      : SolverFixture<ProjectedIterativeSchurSolver<Scalar>>(num_landmarks, threads),
        hot_bytes(static_cast<double>(this->layout->hot_scalars) * sizeof(Scalar)) {}
  double hot_bytes;
};

template <typename Scalar>
void BM_ProjectedMatvec(benchmark::State& state) {
  ProjectedSystemFixture<Scalar> f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const int n = f.s.num_camera_parameters;
  std::vector<Scalar> x(n, Scalar(1)), y(n);
  for (auto _ : state) {
    f.solver->reduced_system()->Multiply(x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["B/s"] = benchmark::Counter(f.hot_bytes, benchmark::Counter::kIsIterationInvariantRate);
  // Per observation: 2 x 9 twice (Jp x, Jp^T w) and 2 x 3 twice (Q1^T u, Q1 t),
  // a multiply-add each: 96 flops.
  state.counters["FLOP/s"] = benchmark::Counter(96.0 * f.observations,
                                                benchmark::Counter::kIsIterationInvariantRate);
  state.counters["ns/obs"] = benchmark::Counter(
      1e-9 * f.observations, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["MiB"] = f.hot_bytes / (1024.0 * 1024.0);
}
BENCHMARK_TEMPLATE(BM_ProjectedMatvec, float)->Args({20000, 1})->Args({20000, 2})->Args({200000, 2})->UseRealTime();
BENCHMARK_TEMPLATE(BM_ProjectedMatvec, double)->Args({20000, 1})->Args({20000, 2})->Args({200000, 2})->UseRealTime();

}  // namespace

// kernels_benchmark.h.
std::string FindBalFile() {
  const char* env = std::getenv("CERES_SQRTBA_BAL_DIR");
  const std::string folder = (env != nullptr && *env != '\0') ? env : KERNELS_BENCHMARK_BAL_DIR;
  std::vector<std::string> names;
  if (DIR* dir = opendir(folder.c_str())) {
    while (const dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.find(".txt") != std::string::npos || name.find(".bal") != std::string::npos) {
        names.push_back(name);
      }
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (name.rfind("problem-49-7776-pre.txt", 0) == 0) return folder + "/" + name;
  }
  return names.empty() ? std::string() : folder + "/" + names.front();
}


}  // namespace internal
}  // namespace ceres_sqrtba

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ceres_version", CERES_VERSION_STRING);
  // The folder is read once; both sets of benchmarks take the same file.
  const std::string bal = ceres_sqrtba::internal::FindBalFile();
  ceres_sqrtba::internal::RegisterEvaluationBenchmarks(bal);
  ceres_sqrtba::internal::RegisterProjectedKernelBenchmarks(bal);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
