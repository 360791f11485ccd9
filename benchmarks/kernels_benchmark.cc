// Micro-benchmarks of the square-root solver's kernels, in float and double,
// next to this machine's memory bandwidth (a STREAM-like triad in the same
// binary), so that each kernel can be read as a fraction of its limit.
//
//   build/benchmarks/kernels_benchmark [--benchmark_filter=...]
//
// Counters: FLOP/s and B/s (bytes the kernel must at least move), and for the
// landmark-block kernels ns per observation.
//
// The Evaluate/ benchmarks (at the end) set the evaluator's residual and
// Jacobian passes, and Ceres' own evaluator's, against their floor, the
// user's cost and loss functions called alone; benchmarks/evaluator_ratios.py
// turns them into the table of docs/benchmarks.md.
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

// ---------------------------------------------------------------------------
// The evaluator against its floor.
//
// Floor: for every residual block, the user's CostFunction::Evaluate (and the
// LossFunction::Evaluate of its squared norm), with or without Jacobians,
// into per-chunk scratch, over the evaluator's chunks on the same
// ParallelContext: the calls any evaluator has to make, nothing else.
// Evaluator: Evaluator::EvaluateCost (the residual pass of every candidate
// point) and Evaluator::EvaluateJacobian with the gradient and the default
// linear solver's writer (the Jacobian pass of every accepted point), in the
// state the trust-region loop leaves them after its first Jacobian (columns
// scaled). Only the evaluator's public interface is used.
//
// Problems (each built as bundle_adjuster builds it, normalized, Huber loss
// of scale 1 as in every benchmark run):
//   bal       the first BAL file found ($CERES_SQRTBA_BAL_DIR, else
//             ../shared/bal next to the source tree; ladybug-49 if present),
//             skipped when there is none;
//   synthetic the example's synthetic problem, 100 000 observations;
//   manifold  the same with quaternion cameras and a
//             ProductManifold<QuaternionManifold, EuclideanManifold<6>>.
// Ceres: Ceres' own evaluator on the same problem (the Ceres this binary is
// linked with, in the JSON context as ceres_version), as ceres::Solve runs
// it for ITERATIVE_SCHUR: the time of one residual pass and of one Jacobian
// pass after the first (whose first touch of the Jacobian's storage is left
// out), from the solver's summary timers (CeresPasses). A yardstick for the
// floor ratios: the same calls of the user's code, with everything an
// evaluator must add around them, in the reference implementation.
// Names: Evaluate/<problem>/<pass>/threads:<n>, pass one of floor_residuals,
// evaluator_cost, floor_jacobians, evaluator_jacobian_single,
// evaluator_jacobian_double, ceres_cost, ceres_jacobian.

struct EvaluationSpec {
  std::string name;
  std::string bal_path;  // empty: the synthetic problem
  bool quaternions = false;
};

class EvaluationFixture {
 public:
  EvaluationFixture(const EvaluationSpec& spec, int threads) : context_(threads) {
    std::string error;
    examples::BalReadOptions read;
    read.use_quaternions = spec.quaternions;
    bool ok;
    if (!spec.bal_path.empty()) {
      ok = examples::BalProblem::Read(spec.bal_path, read, &bal_, &error);
    } else {
      examples::SyntheticOptions synthetic;
      synthetic.num_cameras = 200;
      synthetic.num_points = 20000;
      synthetic.observations_per_point = 5;
      synthetic.use_quaternions = spec.quaternions;
      ok = examples::MakeSyntheticProblem(synthetic, &bal_, &error);
    }
    ok = ok && bal_.Normalize(&error);
    examples::BuildOptions build;
    build.robustify = true;
    build.use_manifolds = spec.quaternions;
    ok = ok && examples::BuildProblem(build, &bal_, &problem_, &error);
    ok = ok && BuildProblemStructure(problem_, nullptr, &s_, &error) == StructureStatus::kOk;
    if (!ok) {
      std::fprintf(stderr, "kernels_benchmark: %s: %s\n", spec.name.c_str(), error.c_str());
      std::abort();
    }
    // The default square-root solver, as bundle_adjuster configures it.
    options_.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
    options_.preconditioner_type = ceres::SCHUR_JACOBI;
    factory_ = std::make_unique<LinearSolverFactory>(s_, LinearSolverOptionsOf(options_));
    evaluator_ = std::make_unique<Evaluator>(s_, factory_->partition(), &context_);
    x_ = StateFromUser(s_);
    gradient_.resize(s_.num_effective_parameters);
    // Per-chunk scratch of the floor, sized for the largest residual block.
    int max_residuals = 1, max_blocks = 1, max_jacobian = 1;
    for (const ResidualBlockInfo& rb : s_.residual_blocks) {
      max_residuals = std::max(max_residuals, rb.num_residuals);
      max_blocks = std::max(max_blocks, rb.num_parameter_blocks);
      int jacobian = 0;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        jacobian += rb.num_residuals * s_.parameter_blocks[s_.residual_parameters[rb.parameter_begin + i]].size;
      }
      max_jacobian = std::max(max_jacobian, jacobian);
    }
    scratch_.resize(factory_->partition().num_chunks());
    for (FloorScratch& sc : scratch_) {
      sc.residuals.resize(max_residuals);
      sc.jacobians.resize(max_jacobian);
      sc.parameters.resize(max_blocks);
      sc.jacobian_pointers.resize(max_blocks);
    }
  }

  int64_t num_residual_blocks() const { return static_cast<int64_t>(s_.residual_blocks.size()); }

  // The floor: user code only. Returns the sum of the losses, so that nothing
  // can be optimized away.
  double Floor(bool jacobians) {
    const WorkPartition& partition = factory_->partition();
    context_.ForChunks(partition, [&](int chunk, int gbegin, int gend) {
      FloorScratch& sc = scratch_[chunk];
      double cost = 0.0;
      for (int g = gbegin; g < gend; ++g) {
        const Group& group = s_.groups[g];
        for (int k = group.residual_begin; k < group.residual_end; ++k) {
          const ResidualBlockInfo& rb = s_.residual_blocks[s_.group_residuals[k]];
          int used = 0;
          for (int i = 0; i < rb.num_parameter_blocks; ++i) {
            const ParameterBlockInfo& pb = s_.parameter_blocks[s_.residual_parameters[rb.parameter_begin + i]];
            sc.parameters[i] = pb.is_constant ? pb.user_values : x_.data() + pb.state_offset;
            sc.jacobian_pointers[i] = nullptr;
            if (jacobians && !pb.is_constant) {
              sc.jacobian_pointers[i] = sc.jacobians.data() + used;
              used += rb.num_residuals * pb.size;
            }
          }
          rb.cost_function->Evaluate(sc.parameters.data(), sc.residuals.data(),
                                     jacobians ? sc.jacobian_pointers.data() : nullptr);
          double squared_norm = 0.0;
          for (int i = 0; i < rb.num_residuals; ++i) squared_norm += sc.residuals[i] * sc.residuals[i];
          if (rb.loss_function != nullptr) {
            double rho[3];
            rb.loss_function->Evaluate(squared_norm, rho);
            cost += rho[0];
          } else {
            cost += squared_norm;
          }
        }
      }
      sc.cost = cost;
    });
    double total = 0.0;
    for (const FloorScratch& sc : scratch_) total += sc.cost;
    return total;
  }

  // Ceres' own evaluator on the same problem and threads, from ceres::Solve's
  // timers (ITERATIVE_SCHUR + SCHUR_JACOBI, points eliminated first, as
  // bundle_adjuster runs it): a solve of 0 iterations evaluates the Jacobian
  // once (with the first touch of its storage), one of kIterations once more
  // per accepted step, so the difference of their Jacobian times over the
  // difference of their counts is the time of one later Jacobian pass (with
  // the gradient, as ours); a residual pass is the longer solve's residual
  // time over its count. The parameters are restored after each solve.
  struct CeresTimes {
    double jacobian = 0.0, residual = 0.0;
  };
  CeresTimes CeresPasses(int threads) {
    constexpr int kIterations = 3;
    if (saved_.empty()) saved_ = bal_.parameters();
    auto solve = [&](int iterations, ceres::Solver::Summary* summary) {
      ceres::Solver::Options o;
      o.linear_solver_type = ceres::ITERATIVE_SCHUR;
      o.preconditioner_type = ceres::SCHUR_JACOBI;
      o.num_threads = threads;
      o.max_num_iterations = iterations;
      o.logging_type = ceres::SILENT;
      o.linear_solver_ordering = examples::PointsFirstOrdering(&bal_, problem_);
      ceres::Solve(o, &problem_, summary);
      // The problem's parameter blocks live in bal_'s one array, cameras first.
      std::copy(saved_.begin(), saved_.end(), bal_.mutable_camera(0));
    };
    ceres::Solver::Summary first, longer;
    solve(0, &first);
    solve(kIterations, &longer);
    CeresTimes t;
    const int extra = longer.num_jacobian_evaluations - first.num_jacobian_evaluations;
    if (extra <= 0 || longer.num_residual_evaluations <= 0) {
      std::fprintf(stderr, "kernels_benchmark: Ceres' solve evaluated no Jacobian after the first: %s\n",
                   longer.BriefReport().c_str());
      std::abort();
    }
    t.jacobian = (longer.jacobian_evaluation_time_in_seconds - first.jacobian_evaluation_time_in_seconds) / extra;
    t.residual = longer.residual_evaluation_time_in_seconds / longer.num_residual_evaluations;
    return t;
  }

  double EvaluateCost() {
    double cost = 0.0;
    if (!evaluator_->EvaluateCost(x_.data(), &cost)) Fail();
    return cost;
  }

  double EvaluateJacobian(Precision precision) {
    LinearSolver* solver = SolverOf(precision);
    double cost = 0.0;
    if (!evaluator_->EvaluateJacobian(x_.data(), true, &cost, gradient_.data(), solver->writer())) Fail();
    return cost;
  }

 private:
  struct FloorScratch {
    std::vector<double> residuals, jacobians;
    std::vector<const double*> parameters;
    std::vector<double*> jacobian_pointers;
    double cost = 0.0;
  };

  void Fail() {
    std::fprintf(stderr, "kernels_benchmark: evaluation failed: %s\n", evaluator_->error().c_str());
    std::abort();
  }

  // The linear solver of one precision, after a first Jacobian and the
  // column scaling of the trust-region loop (later Jacobians are written
  // scaled, as in every iteration after the first).
  LinearSolver* SolverOf(Precision precision) {
    std::unique_ptr<LinearSolver>& solver = solvers_[precision];
    if (solver == nullptr) {
      solver = factory_->Create(precision, &context_);
      double cost = 0.0;
      if (!evaluator_->EvaluateJacobian(x_.data(), true, &cost, gradient_.data(), solver->writer())) Fail();
      std::vector<double> scale(s_.num_effective_parameters);
      solver->SquaredColumnNorms(scale.data());
      for (double& v : scale) v = 1.0 / (1.0 + std::sqrt(v));
      solver->ScaleColumns(scale.data());
    }
    return solver.get();
  }

  ParallelContext context_;
  examples::BalProblem bal_;
  ceres::Problem problem_;
  ProblemStructure s_;
  ceres_sqrtba::Solver::Options options_;
  std::unique_ptr<LinearSolverFactory> factory_;
  std::unique_ptr<Evaluator> evaluator_;
  std::map<Precision, std::unique_ptr<LinearSolver>> solvers_;
  std::vector<double> x_, gradient_, saved_;
  std::vector<FloorScratch> scratch_;
};

// One fixture per (problem, threads), built on first use and kept: Google
// Benchmark calls a benchmark function several times.
EvaluationFixture& FixtureFor(const EvaluationSpec& spec, int threads) {
  static std::map<std::pair<std::string, int>, std::unique_ptr<EvaluationFixture>> fixtures;
  std::unique_ptr<EvaluationFixture>& f = fixtures[{spec.name, threads}];
  if (f == nullptr) f = std::make_unique<EvaluationFixture>(spec, threads);
  return *f;
}

enum class Pass {
  kFloorResiduals,
  kEvaluatorCost,
  kFloorJacobians,
  kEvaluatorJacobianSingle,
  kEvaluatorJacobianDouble,
  kCeresCost,
  kCeresJacobian
};

void BM_Evaluate(benchmark::State& state, EvaluationSpec spec, Pass pass, int threads) {
  EvaluationFixture& f = FixtureFor(spec, threads);
  if (pass == Pass::kCeresCost || pass == Pass::kCeresJacobian) {
    for (auto _ : state) {
      const EvaluationFixture::CeresTimes t = f.CeresPasses(threads);
      state.SetIterationTime(pass == Pass::kCeresCost ? t.residual : t.jacobian);
    }
    state.counters["residual_blocks"] = static_cast<double>(f.num_residual_blocks());
    return;
  }
  for (auto _ : state) {
    double value = 0.0;
    switch (pass) {
      case Pass::kFloorResiduals: value = f.Floor(false); break;
      case Pass::kEvaluatorCost: value = f.EvaluateCost(); break;
      case Pass::kFloorJacobians: value = f.Floor(true); break;
      case Pass::kEvaluatorJacobianSingle: value = f.EvaluateJacobian(SINGLE_PRECISION); break;
      case Pass::kEvaluatorJacobianDouble: value = f.EvaluateJacobian(DOUBLE_PRECISION); break;
      default: break;
    }
    benchmark::DoNotOptimize(value);
  }
  state.counters["ns/residual_block"] = benchmark::Counter(
      1e-9 * static_cast<double>(f.num_residual_blocks()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["residual_blocks"] = static_cast<double>(f.num_residual_blocks());
}

// The BAL file of the Evaluate/bal benchmarks: ladybug-49 if present, else
// the first BAL file (by name) of the folder; empty if there is none.
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

// The per-landmark kernels of the projected storage (SQRT_ITERATIVE_SCHUR's
// default), one thread, on the BAL file (ladybug-49) or the synthetic
// problem of the evaluator benchmarks (200 cameras, 20 000 points, 5
// observations each), in float and double:
// - damp: ProjectedLandmarkBlocks::Damp, every landmark's thin QR of its
//   damped columns and the reduced right-hand side, per solve;
// - product: B^T B x over all landmarks, per PCG iteration;
// - preconditioner: the SCHUR_JACOBI blocks Jc^T (I - Q1 Q1^T) Jc of every
//   (landmark, camera) pair, per solve (here without the pass's camera sums);
// - back_substitution: y_l and |J y|^2, per solve;
// - column_norms: the squared norms of the Jacobian's columns (Levenberg-
//   Marquardt's diagonal), per new Jacobian;
// each on two storages: `group_order`, the groups stored in group index
// order and every landmark's QR one at a time, in double (the solver before
// issue #30), and `batched`, each chunk's groups stored by shape
// (ProjectedBlockLayout::PlaceInShapeOrder) and Damp's QR run on batches of
// landmarks, one per SIMD lane, in Scalar (landmark_batches.h), as the
// solver runs now.
enum class ProjectedKernel { kDamp, kProduct, kPreconditioner, kBackSubstitution, kColumnNorms };

class ProjectedKernelFixture {
 public:
  explicit ProjectedKernelFixture(const std::string& bal_path) : context_(1) {
    std::string error;
    bool ok;
    if (!bal_path.empty()) {
      ok = examples::BalProblem::Read(bal_path, examples::BalReadOptions(), &bal_, &error);
    } else {
      examples::SyntheticOptions synthetic;
      synthetic.num_cameras = 200;
      synthetic.num_points = 20000;
      synthetic.observations_per_point = 5;
      ok = examples::MakeSyntheticProblem(synthetic, &bal_, &error);
    }
    ok = ok && bal_.Normalize(&error);
    examples::BuildOptions build;
    build.robustify = true;
    ok = ok && examples::BuildProblem(build, &bal_, &problem_, &error);
    ok = ok && BuildProblemStructure(problem_, nullptr, &s_, &error) == StructureStatus::kOk;
    if (!ok) {
      std::fprintf(stderr, "kernels_benchmark: projected kernels: %s\n", error.c_str());
      std::abort();
    }
    options_.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
    factory_ = std::make_unique<LinearSolverFactory>(s_, LinearSolverOptionsOf(options_));
    layout_ = std::make_unique<ProjectedBlockLayout>(s_);
    shape_layout_ = std::make_unique<ProjectedBlockLayout>(s_);
    shape_layout_->PlaceInShapeOrder(factory_->partition());
    evaluator_ = std::make_unique<Evaluator>(s_, factory_->partition(), &context_);
    for (const Group& group : s_.groups) observations_ += group.num_rows / 2;
  }
  template <typename Scalar>
  void Run(benchmark::State& state, ProjectedKernel kernel, bool batched) {
    const ProjectedBlockLayout& layout = batched ? *shape_layout_ : *layout_;
    ProjectedLandmarkBlocks<Scalar> blocks(s_, layout, factory_->partition(), &context_,
                                           batched ? LandmarkQr::kBatchedInScalar : LandmarkQr::kOneAtATime);
    std::vector<double> x = StateFromUser(s_), g(s_.num_effective_parameters);
    double cost;
    evaluator_->EvaluateJacobian(x.data(), true, &cost, g.data(), &blocks);
    std::vector<double> d(s_.num_effective_parameters, 0.1), rhs(std::max(1, s_.num_camera_parameters));
    blocks.Damp(d.data(), rhs.data());
    const int nc = s_.num_camera_parameters;
    std::vector<Scalar> xc(nc, Scalar(0.01)), yc(nc);
    std::vector<Scalar> scratch(layout_->max_rows + layout_->max_landmark_size);
    std::vector<double> y(s_.num_effective_parameters, 0.0);
    std::vector<Scalar> blocks_sum(81);
    for (int i = 0; i < nc; ++i) y[s_.camera_tangent_begin + i] = 0.01;
    const int num_groups = static_cast<int>(s_.groups.size());
    for (auto _ : state) {
      switch (kernel) {
        case ProjectedKernel::kDamp:
          blocks.Damp(d.data(), rhs.data());
          benchmark::DoNotOptimize(rhs.data());
          break;
        case ProjectedKernel::kProduct:
          std::fill(yc.begin(), yc.end(), Scalar(0));
          blocks.MultiplyNormal(0, num_groups, xc.data(), yc.data(), scratch.data());
          benchmark::DoNotOptimize(yc.data());
          break;
        case ProjectedKernel::kPreconditioner:
          for (int p = 0; p < num_groups; ++p) {
            const int gi = layout.order[p];  // in storage order
            const Group& group = s_.groups[gi];
            for (int e = group.camera_begin; e < group.camera_end; ++e) {
              const int n = s_.parameter_blocks[s_.group_cameras[e]].tangent_size;
              blocks.AddReducedGramLower(gi, e, n, blocks_sum.data());
            }
          }
          benchmark::DoNotOptimize(blocks_sum.data());
          break;
        case ProjectedKernel::kBackSubstitution:
          benchmark::DoNotOptimize(blocks.BackSubstitute(y.data()));
          break;
        case ProjectedKernel::kColumnNorms:
          blocks.SquaredColumnNorms(y.data());
          benchmark::DoNotOptimize(y.data());
          break;
      }
    }
    state.counters["ns/obs"] = benchmark::Counter(
        1e-9 * observations_, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
    if (batched && kernel == ProjectedKernel::kDamp) {
      state.counters["batched"] = static_cast<double>(blocks.batches().batched_groups) / s_.groups.size();
    }
  }

 private:
  ParallelContext context_;
  examples::BalProblem bal_;
  ceres::Problem problem_;
  ProblemStructure s_;
  Solver::Options options_;
  std::unique_ptr<LinearSolverFactory> factory_;
  std::unique_ptr<ProjectedBlockLayout> layout_;        // group order
  std::unique_ptr<ProjectedBlockLayout> shape_layout_;  // shape order
  std::unique_ptr<Evaluator> evaluator_;
  double observations_ = 0;
};

void RegisterProjectedKernelBenchmarks(const std::string& bal) {
  std::vector<std::pair<std::string, std::string>> specs;
  if (!bal.empty()) specs.emplace_back("bal", bal);
  specs.emplace_back("synthetic", "");
  const std::vector<std::pair<std::string, ProjectedKernel>> kernels = {
      {"damp", ProjectedKernel::kDamp},
      {"product", ProjectedKernel::kProduct},
      {"preconditioner", ProjectedKernel::kPreconditioner},
      {"back_substitution", ProjectedKernel::kBackSubstitution},
      {"column_norms", ProjectedKernel::kColumnNorms}};
  for (const auto& spec : specs) {
    // Built on first use: a filter that skips these benchmarks reads nothing.
    auto fixture = std::make_shared<std::unique_ptr<ProjectedKernelFixture>>();
    const std::string path = spec.second;
    auto get = [fixture, path]() -> ProjectedKernelFixture& {
      if (*fixture == nullptr) *fixture = std::make_unique<ProjectedKernelFixture>(path);
      return **fixture;
    };
    for (const auto& kernel : kernels) {
      for (const bool batched : {false, true}) {
        const ProjectedKernel k = kernel.second;
        const std::string suffix = spec.first + "/" + kernel.first + (batched ? "/batched" : "/group_order");
        benchmark::RegisterBenchmark(("BM_Projected<float>/" + suffix).c_str(),
                                     [get, k, batched](benchmark::State& st) { get().Run<float>(st, k, batched); })
            ->UseRealTime();
        benchmark::RegisterBenchmark(("BM_Projected<double>/" + suffix).c_str(),
                                     [get, k, batched](benchmark::State& st) { get().Run<double>(st, k, batched); })
            ->UseRealTime();
      }
    }
  }
}

void RegisterEvaluationBenchmarks() {
  std::vector<EvaluationSpec> specs;
  const std::string bal = FindBalFile();
  if (bal.empty()) {
    std::fprintf(stderr, "kernels_benchmark: no BAL file in $CERES_SQRTBA_BAL_DIR or %s: Evaluate/bal skipped\n",
                 KERNELS_BENCHMARK_BAL_DIR);
  } else {
    specs.push_back({"bal", bal, false});
  }
  specs.push_back({"synthetic", "", false});
  specs.push_back({"manifold", "", true});
  const std::pair<const char*, Pass> passes[] = {
      {"floor_residuals", Pass::kFloorResiduals},
      {"evaluator_cost", Pass::kEvaluatorCost},
      {"floor_jacobians", Pass::kFloorJacobians},
      {"evaluator_jacobian_single", Pass::kEvaluatorJacobianSingle},
      {"evaluator_jacobian_double", Pass::kEvaluatorJacobianDouble},
      {"ceres_cost", Pass::kCeresCost},
      {"ceres_jacobian", Pass::kCeresJacobian},
  };
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  for (int threads = 1; threads <= std::min(2, cores); ++threads) {
    for (const EvaluationSpec& spec : specs) {
      for (const auto& [pass_name, pass] : passes) {
        const std::string name =
            "Evaluate/" + spec.name + "/" + pass_name + "/threads:" + std::to_string(threads);
        benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(name.c_str(), BM_Evaluate, spec, pass, threads);
        if (pass == Pass::kCeresCost || pass == Pass::kCeresJacobian) {
          // Two solves per iteration (about a second on the synthetic
          // problems): a fixed count instead of --benchmark_min_time.
          b->UseManualTime()->Iterations(2);
        } else {
          b->UseRealTime();
        }
        b->Unit(benchmark::kMillisecond);
      }
    }
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ceres_version", CERES_VERSION_STRING);
  ceres_sqrtba::internal::RegisterEvaluationBenchmarks();
  ceres_sqrtba::internal::RegisterProjectedKernelBenchmarks(ceres_sqrtba::internal::FindBalFile());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
