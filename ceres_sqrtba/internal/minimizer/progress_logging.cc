#include "ceres_sqrtba/internal/minimizer/progress_logging.h"

#include <cstdio>
#include <iostream>

#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

std::string FormatProgressRow(const ceres::IterationSummary& s) {
  std::string out;
  if (s.iteration == 0) {
    out =
        "iter      cost      cost_change  |gradient|   |step|    tr_ratio  "
        "tr_radius  ls_iter  iter_time  total_time\n";
  }
  char row[256];
  std::snprintf(row, sizeof(row),
                "% 4d % 8e   % 3.2e   % 3.2e  % 3.2e  % 3.2e % 3.2e     % 4d   % 3.2e   % 3.2e",
                s.iteration, s.cost, s.cost_change, s.gradient_max_norm, s.step_norm,
                s.relative_decrease, s.trust_region_radius, s.linear_solver_iterations,
                s.iteration_time_in_seconds, s.cumulative_time_in_seconds);
  out += row;
  return out;
}

ceres::CallbackReturnType ProgressLogger::operator()(const ceres::IterationSummary& summary) {
  const std::string row = FormatProgressRow(summary);
  if (to_stdout_) {
    std::cout << row << std::endl;
  } else {
    VLOG(1) << row;
  }
  return ceres::SOLVER_CONTINUE;
}

}  // namespace internal
}  // namespace ceres_sqrtba
