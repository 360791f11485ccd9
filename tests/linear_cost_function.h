// r = sum_i A_i x_i + b with fixed A_i and b: a cost function whose
// Jacobians are the A_i exactly, for tests against dense (J^T J)^-1 and
// eigenvalues. Optionally it fails (returns false) when the first parameter
// block's first value exceeds fail_above: a cost function failing there.
#ifndef CERES_SQRTBA_TESTS_LINEAR_COST_FUNCTION_H_
#define CERES_SQRTBA_TESTS_LINEAR_COST_FUNCTION_H_

#include <limits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "ceres/ceres.h"

namespace ceres_sqrtba {
namespace testing {

class LinearCostFunction : public ceres::CostFunction {
 public:
  using Matrix = Eigen::MatrixXd;
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  LinearCostFunction(std::vector<Matrix> a, Eigen::VectorXd b,
                     double fail_above = std::numeric_limits<double>::infinity())
      : a_(std::move(a)), b_(std::move(b)), fail_above_(fail_above) {
    set_num_residuals(static_cast<int>(b_.size()));
    for (const Matrix& ai : a_) mutable_parameter_block_sizes()->push_back(static_cast<int>(ai.cols()));
  }
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    if (parameters[0][0] > fail_above_) return false;
    Eigen::Map<Eigen::VectorXd> r(residuals, num_residuals());
    r = b_;
    for (size_t i = 0; i < a_.size(); ++i) {
      r += a_[i] * Eigen::Map<const Eigen::VectorXd>(parameters[i], a_[i].cols());
      if (jacobians != nullptr && jacobians[i] != nullptr) {
        Eigen::Map<RowMatrix>(jacobians[i], a_[i].rows(), a_[i].cols()) = a_[i];
      }
    }
    return true;
  }

 private:
  std::vector<Matrix> a_;
  Eigen::VectorXd b_;
  double fail_above_;
};

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_LINEAR_COST_FUNCTION_H_
