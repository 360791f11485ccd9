// A JacobianWriter that collects what the evaluator writes into a dense
// Jacobian j and residual vector r: rows in group order (each group's
// residual blocks in order, group_row(g) the first row of group g), columns
// in the structure's tangent layout. For tests that compare a storage's
// results with dense references.
#ifndef CERES_SQRTBA_TESTS_DENSE_JACOBIAN_WRITER_H_
#define CERES_SQRTBA_TESTS_DENSE_JACOBIAN_WRITER_H_

#include <vector>

#include <Eigen/Core>

#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace testing {

class DenseJacobianWriter : public internal::JacobianWriter {
 public:
  explicit DenseJacobianWriter(const internal::ProblemStructure& s) : s_(s), group_row_(s.groups.size() + 1, 0) {
    j = Eigen::MatrixXd::Zero(s.num_residuals, s.num_effective_parameters);
    r = Eigen::VectorXd::Zero(s.num_residuals);
    for (size_t g = 0; g < s.groups.size(); ++g) group_row_[g + 1] = group_row_[g] + s.groups[g].num_rows;
  }
  void Write(int group, int, int row, int residual, const double* residuals,
             const double* const* jacobians) override {
    const internal::ResidualBlockInfo& rb = s_.residual_blocks[residual];
    const int first = group_row_[group] + row;
    for (int i = 0; i < rb.num_residuals; ++i) r[first + i] = residuals[i];
    for (int b = 0; b < rb.num_parameter_blocks; ++b) {
      if (jacobians[b] == nullptr) continue;
      const internal::ParameterBlockInfo& pb = s_.parameter_blocks[s_.residual_parameters[rb.parameter_begin + b]];
      for (int i = 0; i < rb.num_residuals; ++i) {
        for (int c = 0; c < pb.tangent_size; ++c) {
          j(first + i, pb.tangent_offset + c) = jacobians[b][i * pb.tangent_size + c];
        }
      }
    }
  }
  int group_row(int g) const { return group_row_[g]; }

  Eigen::MatrixXd j;
  Eigen::VectorXd r;

 private:
  const internal::ProblemStructure& s_;
  std::vector<int> group_row_;
};

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_DENSE_JACOBIAN_WRITER_H_
