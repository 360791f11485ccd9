// The per-iteration progress table of Ceres' trust-region minimizer, printed
// to stdout (Solver::Options::minimizer_progress_to_stdout) or to VLOG(1),
// row for row in Ceres' format so that logs of both solvers line up.
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_PROGRESS_LOGGING_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_PROGRESS_LOGGING_H_

#include <string>

#include "ceres/iteration_callback.h"

namespace ceres_sqrtba {
namespace internal {

// One table row; iteration 0 is preceded by the header line.
std::string FormatProgressRow(const ceres::IterationSummary& summary);

class ProgressLogger : public ceres::IterationCallback {
 public:
  explicit ProgressLogger(bool to_stdout) : to_stdout_(to_stdout) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& summary) override;

 private:
  bool to_stdout_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_PROGRESS_LOGGING_H_
