// kernels_benchmark's Evaluate/ benchmarks: the evaluator against its floor
// (kernels_benchmark.cc has the binary's other benchmarks and main).
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
// The problems' residuals are ceres_sqrtba::AutoDiffCostFunction (as
// bundle_adjuster builds them): the single precision Jacobian pass evaluates
// their Jacobians in float, against the float floor (FloatJacobians'
// EvaluateFloatJacobians alone: the plain double residuals and the
// Jet<float> Jacobians); the same pass with every Jacobian in double (an
// evaluator over the same structure with the FloatJacobians left out, as
// with ceres::AutoDiffCostFunction) against the double floor.
// Names: Evaluate/<problem>/<pass>/threads:<n>, pass one of floor_residuals,
// evaluator_cost, floor_jacobians, floor_float_jacobians,
// evaluator_jacobian_single, evaluator_jacobian_single_double_jacobians,
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
    s_double_jacobians_ = s_;
    for (ResidualBlockInfo& rb : s_double_jacobians_.residual_blocks) rb.float_jacobians = nullptr;
    evaluator_double_jacobians_ = std::make_unique<Evaluator>(s_double_jacobians_, factory_->partition(), &context_);
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
      sc.float_jacobians.resize(max_jacobian);
      sc.float_jacobian_pointers.resize(max_blocks);
      sc.parameters.resize(max_blocks);
      sc.jacobian_pointers.resize(max_blocks);
    }
  }

  int64_t num_residual_blocks() const { return static_cast<int64_t>(s_.residual_blocks.size()); }

  // The floor: user code only. Returns the sum of the losses, so that nothing
  // can be optimized away. With float_jacobians, the cost functions'
  // EvaluateFloatJacobians where they have it (all of these problems').
  double Floor(bool jacobians, bool float_jacobians = false) {
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
            sc.float_jacobian_pointers[i] = nullptr;
            if (jacobians && !pb.is_constant) {
              sc.jacobian_pointers[i] = sc.jacobians.data() + used;
              sc.float_jacobian_pointers[i] = sc.float_jacobians.data() + used;
              used += rb.num_residuals * pb.size;
            }
          }
          if (jacobians && float_jacobians && rb.float_jacobians != nullptr) {
            rb.float_jacobians->EvaluateFloatJacobians(sc.parameters.data(), sc.residuals.data(),
                                                       sc.float_jacobian_pointers.data());
          } else {
            rb.cost_function->Evaluate(sc.parameters.data(), sc.residuals.data(),
                                       jacobians ? sc.jacobian_pointers.data() : nullptr);
          }
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

  // double_jacobians: every Jacobian in double, also into a float storage.
  double EvaluateJacobian(Precision precision, bool double_jacobians = false) {
    LinearSolver* solver = SolverOf(precision);
    Evaluator* evaluator = double_jacobians ? evaluator_double_jacobians_.get() : evaluator_.get();
    double cost = 0.0;
    if (!evaluator->EvaluateJacobian(x_.data(), true, &cost, gradient_.data(), solver->writer())) Fail();
    return cost;
  }

 private:
  struct FloorScratch {
    std::vector<double> residuals, jacobians;
    std::vector<float> float_jacobians;
    std::vector<const double*> parameters;
    std::vector<double*> jacobian_pointers;
    std::vector<float*> float_jacobian_pointers;
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
  ProblemStructure s_double_jacobians_;  // s_ without the FloatJacobians
  std::unique_ptr<Evaluator> evaluator_double_jacobians_;
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
  kFloorFloatJacobians,
  kEvaluatorJacobianSingle,
  kEvaluatorJacobianSingleDoubleJacobians,
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
      case Pass::kFloorFloatJacobians: value = f.Floor(true, true); break;
      case Pass::kEvaluatorJacobianSingle: value = f.EvaluateJacobian(SINGLE_PRECISION); break;
      case Pass::kEvaluatorJacobianSingleDoubleJacobians:
        value = f.EvaluateJacobian(SINGLE_PRECISION, /*double_jacobians=*/true);
        break;
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

}  // namespace

void RegisterEvaluationBenchmarks(const std::string& bal) {
  std::vector<EvaluationSpec> specs;
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
      {"floor_float_jacobians", Pass::kFloorFloatJacobians},
      {"evaluator_jacobian_single", Pass::kEvaluatorJacobianSingle},
      {"evaluator_jacobian_single_double_jacobians", Pass::kEvaluatorJacobianSingleDoubleJacobians},
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


}  // namespace internal
}  // namespace ceres_sqrtba
