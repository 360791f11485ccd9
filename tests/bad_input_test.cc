// Problems and options the square-root solver cannot take end with FAILURE, a
// message naming the reason, and the user's parameter blocks untouched; faults
// raised by user code are handled as Ceres handles them.
#include <cmath>
#include <limits>
#include <type_traits>

#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace {

using testing::AddReprojectionResiduals;
using testing::MakeSyntheticBa;
using testing::SyntheticBa;

struct Between {
  template <typename T>
  bool operator()(const T* a, const T* b, T* r) const {
    for (int k = 0; k < 3; ++k) r[k] = a[k] - b[k];
    return true;
  }
};


Solver::Options SqrtOptions() {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.logging_type = ceres::SILENT;
  o.max_num_iterations = 10;
  return o;
}

struct Fixture {
  Fixture() : ba(MakeSyntheticBa(5, 60, 3, 21)), original(ba) {
    AddReprojectionResiduals(&ba, &problem, nullptr);
  }
  bool Untouched() const {
    return ba.poses == original.poses && ba.points == original.points &&
           ba.intrinsics == original.intrinsics;
  }
  SyntheticBa ba, original;
  ceres::Problem problem;
};

void ExpectFailure(const Solver::Options& o, Fixture* f, const std::string& needle) {
  ceres::Solver::Summary s;
  Solve(o, &f->problem, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE) << s.message;
  EXPECT_NE(s.message.find(needle), std::string::npos) << "message: " << s.message;
  EXPECT_TRUE(f->Untouched());
  EXPECT_FALSE(s.IsSolutionUsable());
}

TEST(BadInput, InvalidOptionValuesNameTheOption) {
  struct Case {
    std::function<void(Solver::Options*)> set;
    const char* needle;
  };
  const std::vector<Case> cases = {
      {[](Solver::Options* o) { o->num_threads = 0; }, "Solver::Options::num_threads = 0"},
      {[](Solver::Options* o) { o->eta = 0.0; }, "Solver::Options::eta = 0"},
      {[](Solver::Options* o) { o->eta = -1.0; }, "Solver::Options::eta"},
      {[](Solver::Options* o) { o->max_num_iterations = -1; }, "max_num_iterations"},
      {[](Solver::Options* o) { o->function_tolerance = -1; }, "function_tolerance"},
      {[](Solver::Options* o) { o->min_lm_diagonal = 0; }, "min_lm_diagonal"},
      {[](Solver::Options* o) { o->min_lm_diagonal = 2e32; }, "min_lm_diagonal"},
      {[](Solver::Options* o) { o->initial_trust_region_radius = -1; }, "initial_trust_region_radius"},
      // 0 is valid with Ceres 2.2, -1 never.
      {[](Solver::Options* o) { o->max_linear_solver_iterations = internal::kMinMaxLinearSolverIterations - 1; },
       "max_linear_solver_iterations"},
      {[](Solver::Options* o) { o->min_linear_solver_iterations = 10; o->max_linear_solver_iterations = 5; },
       "min_linear_solver_iterations"},
      {[](Solver::Options* o) { o->memory_limit_in_bytes = -5; }, "memory_limit_in_bytes"},
      {[](Solver::Options* o) { o->trust_region_strategy_type = ceres::DOGLEG; }, "trust_region_strategy_type = DOGLEG"},
      {[](Solver::Options* o) { o->preconditioner_type = ceres::SUBSET; }, "preconditioner_type = SUBSET"},
      {[](Solver::Options* o) { o->use_inner_iterations = true; }, "use_inner_iterations"},
      {[](Solver::Options* o) { o->check_gradients = true; }, "check_gradients"},
      {[](Solver::Options* o) { o->callbacks.push_back(nullptr); }, "callbacks[0] is null"},
      {[](Solver::Options* o) { o->use_nonmonotonic_steps = true; o->max_consecutive_nonmonotonic_steps = 0; },
       "max_consecutive_nonmonotonic_steps"},
  };
  for (const Case& c : cases) {
    Fixture f;
    Solver::Options o = SqrtOptions();
    c.set(&o);
    std::string error;
    EXPECT_FALSE(o.IsValid(&error)) << c.needle;
    ExpectFailure(o, &f, c.needle);
  }
}

// True when E{0} compiles, i.e. when the enum has a fixed underlying type.
template <typename E, typename = void>
struct HasFixedUnderlyingType : std::false_type {};
template <typename E>
struct HasFixedUnderlyingType<E, std::void_t<decltype(E{0})>> : std::true_type {};

TEST(BadInput, PrecisionOutOfRange) {
  // Precision has no fixed underlying type, so its values are those of one
  // bit: static_cast<Precision>(7) is undefined behaviour ([expr.static.cast]
  // p10) and UBSan reports the load in the validation. The case can only be
  // tested once the enum has a fixed underlying type (enum Precision : int).
  if constexpr (HasFixedUnderlyingType<Precision>::value) {
    Fixture f;
    Solver::Options o = SqrtOptions();
    o.precision = static_cast<Precision>(7);
    std::string error;
    EXPECT_FALSE(o.IsValid(&error));
    ExpectFailure(o, &f, "Solver::Options::precision = 7");
  } else {
    GTEST_SKIP() << "Precision has no fixed underlying type: an out-of-range value is undefined "
                    "behaviour";
  }
}

TEST(BadInput, ResidualTouchingTwoLandmarks) {
  Fixture f;
  // A residual between two points, and an ordering that eliminates both.
  f.problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Between, 3, 3, 3>(new Between), nullptr,
                             f.ba.points[0].data(), f.ba.points[1].data());
  Solver::Options o = SqrtOptions();
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto& p : f.ba.points) ordering->AddElementToGroup(p.data(), 0);
  for (auto& p : f.ba.poses) ordering->AddElementToGroup(p.data(), 1);
  for (auto& p : f.ba.intrinsics) ordering->AddElementToGroup(p.data(), 1);
  o.linear_solver_ordering = ordering;
  ExpectFailure(o, &f, "is not an independent set: the residual block ");
}

TEST(BadInput, NoLandmarks) {
  Fixture f;
  Solver::Options o = SqrtOptions();
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (auto& p : f.ba.points) {
    f.problem.SetParameterBlockConstant(p.data());
    ordering->AddElementToGroup(p.data(), 0);
  }
  for (auto& p : f.ba.poses) ordering->AddElementToGroup(p.data(), 1);
  for (auto& p : f.ba.intrinsics) ordering->AddElementToGroup(p.data(), 1);
  o.linear_solver_ordering = ordering;
  // Nothing to eliminate: solved by ceres::Solve (failure_modes_test.cc has
  // the details), not refused.
  ceres::Solver::Summary s;
  Solve(o, &f.problem, &s);
  EXPECT_TRUE(s.IsSolutionUsable()) << s.message;
  EXPECT_NE(s.message.find("[ceres_sqrtba: no landmark to eliminate; solved by ceres::Solve with CGNR]"),
            std::string::npos)
      << s.message;
}

TEST(BadInput, IncompleteOrdering) {
  Fixture f;
  Solver::Options o = SqrtOptions();
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  ordering->AddElementToGroup(f.ba.points[0].data(), 0);
  ordering->AddElementToGroup(f.ba.poses[0].data(), 1);
  o.linear_solver_ordering = ordering;
  ExpectFailure(o, &f, "linear_solver_ordering");
}

TEST(BadInput, MemoryLimit) {
  Fixture f;
  Solver::Options o = SqrtOptions();
  o.memory_limit_in_bytes = 1000;
  ExpectFailure(o, &f, "memory_limit_in_bytes = 1000");
}

TEST(BadInput, NullProblem) {
  ceres::Solver::Summary s;
  Solve(SqrtOptions(), nullptr, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_NE(s.message.find("null problem"), std::string::npos);
}

// A reprojection error that fails (returns false, or NaN) in a region of the
// parameter space: at x[0] of the first point beyond a threshold.
struct Fragile {
  Fragile(double u, double v, double limit, bool nan) : e(u, v), limit(limit), nan(nan) {}
  template <typename T>
  bool operator()(const T* pose, const T* intr, const T* point, T* r) const {
    if (point[0] > T(limit)) {
      if (!nan) return false;
      r[0] = r[1] = T(std::numeric_limits<double>::quiet_NaN());
      return true;
    }
    return e(pose, intr, point, r);
  }
  testing::ReprojectionError e;
  double limit;
  bool nan;
};

TEST(BadInput, CostFunctionFailingAtInitialPoint) {
  for (bool nan : {false, true}) {
    SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 22);
    const SyntheticBa original = ba;
    ceres::Problem problem;
    for (const auto& o : ba.observations) {
      problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Fragile, 2, 6, 3, 3>(
                                   new Fragile(o.u, o.v, -1e9, nan)),
                               nullptr, ba.poses[o.camera].data(), ba.intrinsics[o.camera].data(),
                               ba.points[o.point].data());
    }
    ceres::Solver::Summary s;
    Solve(SqrtOptions(), &problem, &s);
    EXPECT_EQ(s.termination_type, ceres::FAILURE);
    // Ceres' sentence, then the first failing residual block, by address.
    EXPECT_EQ(s.message.rfind(std::string(internal::kInitialEvaluationFailed) + " ", 0), 0u) << s.message;
    EXPECT_NE(s.message.find(nan ? " has a residual that is not finite or was not written (residual "
                                 : " returned false."),
              std::string::npos)
        << s.message;
    EXPECT_EQ(ba.points, original.points);
  }
}

TEST(BadInput, CostFunctionFailingAtSomeIteratesShrinksTheRadius) {
  for (bool nan : {false, true}) {
    SyntheticBa ba = MakeSyntheticBa(5, 60, 3, 23);
    ceres::Problem problem;
    // Fails as soon as point 0 moves by more than 1e-4 in x: every full step
    // fails, and only a small enough radius makes progress.
    const double limit = ba.points[0][0] + 1e-4;
    for (const auto& o : ba.observations) {
      problem.AddResidualBlock(new ceres::AutoDiffCostFunction<Fragile, 2, 6, 3, 3>(
                                   new Fragile(o.u, o.v, o.point == 0 ? limit : 1e9, nan)),
                               nullptr, ba.poses[o.camera].data(), ba.intrinsics[o.camera].data(),
                               ba.points[o.point].data());
    }
    ceres::Solver::Summary s;
    Solver::Options o = SqrtOptions();
    o.max_num_iterations = 30;
    Solve(o, &problem, &s);
    EXPECT_NE(s.termination_type, ceres::FAILURE) << s.message;
    EXPECT_GT(s.num_unsuccessful_steps, 0);
    bool radius_shrank = false;
    for (size_t i = 1; i < s.iterations.size(); ++i) {
      if (!s.iterations[i].step_is_successful) {
        radius_shrank |= s.iterations[i].trust_region_radius < s.iterations[i - 1].trust_region_radius;
      }
    }
    EXPECT_TRUE(radius_shrank);
    EXPECT_LT(s.final_cost, s.initial_cost);
    for (const auto& p : ba.points) {
      for (double v : p) EXPECT_TRUE(std::isfinite(v));
    }
    EXPECT_LE(ba.points[0][0], limit);
  }
}

class Stopper : public ceres::IterationCallback {
 public:
  Stopper(int at, ceres::CallbackReturnType what) : at_(at), what_(what) {}
  ceres::CallbackReturnType operator()(const ceres::IterationSummary& s) override {
    // Stops at the first successful step from iteration `at` on.
    return s.iteration >= at_ && s.step_is_successful ? what_ : ceres::SOLVER_CONTINUE;
  }

 private:
  int at_;
  ceres::CallbackReturnType what_;
};

TEST(BadInput, CallbacksAbortOrTerminate) {
  {
    Fixture f;
    Stopper stop(2, ceres::SOLVER_ABORT);
    Solver::Options o = SqrtOptions();
    o.callbacks.push_back(&stop);
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    EXPECT_EQ(s.termination_type, ceres::USER_FAILURE);
    EXPECT_EQ(s.message, "User callback returned SOLVER_ABORT.");
    EXPECT_TRUE(f.Untouched());  // Ceres does not update the user state on USER_FAILURE
    EXPECT_TRUE(s.iterations.back().step_is_successful);
  }
  {
    Fixture f;
    Stopper stop(2, ceres::SOLVER_TERMINATE_SUCCESSFULLY);
    Solver::Options o = SqrtOptions();
    o.callbacks.push_back(&stop);
    ceres::Solver::Summary s;
    Solve(o, &f.problem, &s);
    EXPECT_EQ(s.termination_type, ceres::USER_SUCCESS);
    EXPECT_EQ(s.message, "User callback returned SOLVER_TERMINATE_SUCCESSFULLY.");
    EXPECT_FALSE(f.Untouched());
    EXPECT_LT(s.final_cost, s.initial_cost);
  }
}

}  // namespace
}  // namespace ceres_sqrtba
