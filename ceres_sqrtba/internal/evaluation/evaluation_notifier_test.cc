// EvaluationNotifier: the user's evaluation callback sees the point written
// into the parameter blocks and (evaluate_jacobians, new_evaluation_point) as
// asked — except that "same point" is never said for a point other than the
// last one prepared (a precision switch re-evaluates the Jacobian at x after
// a candidate was evaluated). Runs against the linked Ceres, through
// Problem::options() (2.2) or Problem::EvaluateResidualBlock (2.1).
#include "ceres_sqrtba/internal/evaluation/evaluation_notifier.h"

#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

struct Call {
  bool jacobians;
  bool new_point;
  double value;  // the first parameter block's first value when called
};

class Recorder : public ceres::EvaluationCallback {
 public:
  explicit Recorder(const double* watched) : watched_(watched) {}
  void PrepareForEvaluation(bool evaluate_jacobians, bool new_evaluation_point) override {
    calls.push_back({evaluate_jacobians, new_evaluation_point, *watched_});
  }
  std::vector<Call> calls;

 private:
  const double* watched_;
};

struct Difference {
  template <typename T>
  bool operator()(const T* a, const T* b, T* r) const {
    r[0] = a[0] - b[0];
    return true;
  }
};

TEST(EvaluationNotifier, SamePointOnlyForTheLastPointPrepared) {
  double a = 1.0, b = 2.0;
  Recorder recorder(&a);
  ceres::Problem::Options po;
  po.evaluation_callback = &recorder;
  ceres::Problem problem(po);
  problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Difference, 1, 1, 1>(new Difference), nullptr, &a, &b);
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  ASSERT_EQ(s.num_parameters, 2);
  const int ia = s.parameter_blocks[s.index_of.at(&a)].state_offset;
  std::vector<double> x(2), candidate(2);
  x[ia] = 5.0;
  x[1 - ia] = 6.0;
  candidate[ia] = 7.0;
  candidate[1 - ia] = 6.0;

  EvaluationNotifier notifier(&problem, s);
  recorder.calls.clear();
  notifier.Prepare(x.data(), true, true);           // iteration 0
  notifier.Prepare(candidate.data(), false, true);  // a candidate's cost
  notifier.Prepare(candidate.data(), true, false);  // accepted: its Jacobian
  notifier.Prepare(x.data(), true, false);          // asked "same point" at another point
  notifier.Prepare(x.data(), true, false);          // now it is the same point
  ASSERT_EQ(recorder.calls.size(), 5u);
  const bool expected_new[] = {true, true, false, true, false};
  const double expected_value[] = {5.0, 7.0, 7.0, 5.0, 5.0};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(recorder.calls[i].new_point, expected_new[i]) << "call " << i;
    EXPECT_EQ(recorder.calls[i].value, expected_value[i]) << "call " << i;
  }
  EXPECT_FALSE(recorder.calls[1].jacobians);
  EXPECT_TRUE(recorder.calls[2].jacobians);
  EXPECT_EQ(a, 5.0);  // the user's block holds the last point prepared
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
