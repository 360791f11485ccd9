#include "ceres_sqrtba/internal/problem/inner_iteration_ordering.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sstream>

namespace ceres_sqrtba {
namespace internal {

std::string InnerIterationBlockNotInProblem(const double* block) {
  std::ostringstream ss;
  ss << "Solver::Options::inner_iteration_ordering contains a parameter block (" << block
     << ") that is not in the problem.";
  return ss.str();
}

bool InnerIterationGroupsAreIndependent(const std::vector<int>& edge_begin,
                                        const std::vector<int>& edge_vertices,
                                        const std::vector<int>& group_of, std::string* error) {
  int failed = std::numeric_limits<int>::max();
  for (size_t e = 0; e + 1 < edge_begin.size(); ++e) {
    for (int i = edge_begin[e]; i < edge_begin[e + 1]; ++i) {
      const int gi = group_of[edge_vertices[i]];
      if (gi < 0) continue;
      for (int j = i + 1; j < edge_begin[e + 1]; ++j) {
        if (group_of[edge_vertices[j]] == gi) failed = std::min(failed, gi);
      }
    }
  }
  if (failed == std::numeric_limits<int>::max()) return true;
  char message[200];
  std::snprintf(message, sizeof(message),
                "The user-provided parameter_blocks_for_inner_iterations does not form an independent set. "
                "Group Id: %d",
                failed);
  *error = message;
  return false;
}

}  // namespace internal
}  // namespace ceres_sqrtba
