// A cost function whose Jacobian has a nonzero in every column of every
// parameter block: two residuals, each 1 + the sum of all parameters. For
// tests of patterns and factorizations, where only which blocks a residual
// block touches matters.
#ifndef CERES_SQRTBA_TESTS_SUM_COST_FUNCTION_H_
#define CERES_SQRTBA_TESTS_SUM_COST_FUNCTION_H_

#include <vector>

#include "ceres/ceres.h"

namespace ceres_sqrtba {
namespace testing {

class SumCostFunction : public ceres::CostFunction {
 public:
  explicit SumCostFunction(const std::vector<int>& sizes) {
    set_num_residuals(2);
    for (int s : sizes) mutable_parameter_block_sizes()->push_back(s);
  }
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    r[0] = r[1] = 1.0;
    for (size_t b = 0; b < parameter_block_sizes().size(); ++b) {
      const int size = parameter_block_sizes()[b];
      for (int k = 0; k < size; ++k) {
        r[0] += x[b][k];
        r[1] += x[b][k];
        if (j != nullptr && j[b] != nullptr) j[b][k] = j[b][size + k] = 1.0;
      }
    }
    return true;
  }
};

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_SUM_COST_FUNCTION_H_
