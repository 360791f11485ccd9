// An iteration callback that returns `what` (SOLVER_ABORT,
// SOLVER_TERMINATE_SUCCESSFULLY) from a given iteration on: how the tests
// end a solve from the user's side.
#ifndef CERES_SQRTBA_TESTS_STOP_AT_ITERATION_H_
#define CERES_SQRTBA_TESTS_STOP_AT_ITERATION_H_

#include "ceres/iteration_callback.h"

namespace ceres_sqrtba {
namespace testing {

class StopAtIteration : public ceres::IterationCallback {
 public:
  StopAtIteration(int iteration, ceres::CallbackReturnType what) : iteration_(iteration), what_(what) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
    return s.iteration >= iteration_ ? what_ : ceres::SOLVER_CONTINUE;
  }

 private:
  int iteration_;
  ceres::CallbackReturnType what_;
};

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_STOP_AT_ITERATION_H_
