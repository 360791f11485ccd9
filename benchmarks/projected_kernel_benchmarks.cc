// kernels_benchmark's BM_Projected benchmarks: the projected storage's
// per-landmark kernels (kernels_benchmark.cc has the binary's main).
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
// order and every landmark's QR one at a time, in double, and `batched`, each chunk's groups stored by shape
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

}  // namespace

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


}  // namespace internal
}  // namespace ceres_sqrtba
