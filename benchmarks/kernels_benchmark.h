// What the three translation units of kernels_benchmark share: the BAL file
// its benchmarks read, and the registration of the benchmarks that are
// built at run time (their problems depend on that file).
//
//   kernels_benchmark.cc            memory bandwidth, landmark-block and
//                                   reduced-system kernels, main
//   evaluation_benchmarks.cc        Evaluate/: the evaluator against its floor
//   projected_kernel_benchmarks.cc  BM_Projected: the projected storage's
//                                   per-landmark kernels
#ifndef CERES_SQRTBA_BENCHMARKS_KERNELS_BENCHMARK_H_
#define CERES_SQRTBA_BENCHMARKS_KERNELS_BENCHMARK_H_

#include <string>

namespace ceres_sqrtba {
namespace internal {

// The BAL file of the Evaluate/bal and BM_Projected/bal benchmarks:
// ladybug-49 (problem-49-7776-pre.txt) if present, else the first BAL file
// (by name) of $CERES_SQRTBA_BAL_DIR, else of the folder the build was
// configured with; empty if there is none.
std::string FindBalFile();

// Registers Evaluate/<problem>/<pass>/threads:<n> (evaluation_benchmarks.cc)
// on `bal` (when not empty; else a line says Evaluate/bal is skipped), the
// synthetic problem and its quaternion-manifold variant.
void RegisterEvaluationBenchmarks(const std::string& bal);

// Registers BM_Projected<Scalar>/<problem>/<kernel>/<storage> on `bal` (when
// not empty) and the synthetic problem (projected_kernel_benchmarks.cc).
void RegisterProjectedKernelBenchmarks(const std::string& bal);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_BENCHMARKS_KERNELS_BENCHMARK_H_
