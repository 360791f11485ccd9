// A JacobianWriter that discards what it is given: for test linear solvers
// whose steps are scripted, so that the evaluator has somewhere to write.
#ifndef CERES_SQRTBA_TESTS_NULL_JACOBIAN_WRITER_H_
#define CERES_SQRTBA_TESTS_NULL_JACOBIAN_WRITER_H_

#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"

namespace ceres_sqrtba {
namespace testing {

class NullJacobianWriter : public internal::JacobianWriter {
 public:
  void Write(int, int, int, int, const double*, const double* const*) override {}
};

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_NULL_JACOBIAN_WRITER_H_
