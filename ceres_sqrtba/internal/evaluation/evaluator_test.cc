// Evaluator against ceres::Problem::Evaluate on the same problem: the cost,
// the gradient and the Jacobian in tangent space, with manifolds of the sizes
// that take the fixed-size PlusJacobian products (quaternion 4 -> 3, pose
// 7 -> 6, quaternion + 6 = 10 -> 9) and of sizes that take the general loop
// (a subset manifold 5 -> 4), with and without a robust loss.
//
// Both compute J_tangent = J_ambient * PlusJacobian and the same sums, in
// possibly different orders: the tolerance is a few units in the last place
// of the entries' magnitudes (1e-12 relative to the largest entry).
#include "ceres_sqrtba/internal/evaluation/evaluator.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/float_jacobians.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "euclidean3_manifold.h"
#include "gtest/gtest.h"
#include "rounding_jitter.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// r = A(camera) (x_point - c(camera)) - b: a smooth residual of 2 rows that
// depends on every ambient coordinate of the camera block and the point.
class CameraPointCost : public ceres::CostFunction {
 public:
  CameraPointCost(int camera_size, unsigned seed) {
    set_num_residuals(2);
    mutable_parameter_block_sizes()->push_back(camera_size);
    mutable_parameter_block_sizes()->push_back(3);
    std::mt19937 rng(seed);
    ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
    b_[0] = n(rng);
    b_[1] = n(rng);
  }
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const int cs = parameter_block_sizes()[0];
    const double* c = parameters[0];
    const double* x = parameters[1];
    // r_i = sum_k c_k * w_ik(x) - b_i with w_ik = sin(k + i + x_(k mod 3)).
    for (int i = 0; i < 2; ++i) {
      double r = -b_[i];
      for (int k = 0; k < cs; ++k) r += c[k] * std::sin(k + i + x[k % 3]);
      residuals[i] = r;
    }
    if (jacobians == nullptr) return true;
    if (jacobians[0] != nullptr) {
      for (int i = 0; i < 2; ++i) {
        for (int k = 0; k < cs; ++k) jacobians[0][i * cs + k] = std::sin(k + i + x[k % 3]);
      }
    }
    if (jacobians[1] != nullptr) {
      for (int i = 0; i < 2; ++i) {
        double d[3] = {0.0, 0.0, 0.0};
        for (int k = 0; k < cs; ++k) d[k % 3] += c[k] * std::cos(k + i + x[k % 3]);
        for (int j = 0; j < 3; ++j) jacobians[1][i * 3 + j] = d[j];
      }
    }
    return true;
  }

 private:
  double b_[2];
};

// Records every tangent Jacobian block the evaluator writes, by (residual
// block, parameter block). Write is called from the evaluating threads.
class RecordingWriter : public JacobianWriter {
 public:
  explicit RecordingWriter(const ProblemStructure& s) : s_(s) {}
  void Write(int, int, int, int residual, const double*, const double* const* jacobians) override {
    const ResidualBlockInfo& rb = s_.residual_blocks[residual];
    std::lock_guard<std::mutex> lock(mutex_);
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      if (jacobians[i] == nullptr) continue;
      const ParameterBlockInfo& pb = s_.parameter_blocks[s_.residual_parameters[rb.parameter_begin + i]];
      blocks[{rb.id, pb.user_values}] =
          std::vector<double>(jacobians[i], jacobians[i] + rb.num_residuals * pb.tangent_size);
    }
  }
  std::map<std::pair<ceres::ResidualBlockId, const double*>, std::vector<double>> blocks;

 private:
  const ProblemStructure& s_;
  std::mutex mutex_;
};

// The structure of a problem and an evaluator over it on `threads` threads
// and at most `chunks` chunks, with the user's values as the state. ok is
// false (and error says why) when the structure could not be built.
struct EvaluatorSetUp {
  EvaluatorSetUp(const ceres::Problem& problem, int threads, int chunks) : context(threads) {
    ok = BuildProblemStructure(problem, nullptr, &s, &error) == StructureStatus::kOk;
    if (!ok) return;
    partition = WorkPartition(static_cast<int>(s.groups.size()), {}, chunks, 1);
    evaluator = std::make_unique<Evaluator>(s, partition, &context);
    x = StateFromUser(s);
  }
  bool ok = false;
  std::string error;
  ProblemStructure s;
  ParallelContext context;
  WorkPartition partition;
  std::unique_ptr<Evaluator> evaluator;
  std::vector<double> x;
};

struct ManifoldCase {
  const char* name;
  int camera_size;
  std::function<ceres::Manifold*()> make;  // null: no manifold
};

std::vector<ManifoldCase> Cases() {
  return {
      {"none", 9, nullptr},
      {"quaternion 4->3", 4, [] { return new ceres::QuaternionManifold; }},
      {"pose 7->6", 7,
       [] { return new ceres::ProductManifold<ceres::QuaternionManifold, ceres::EuclideanManifold<3>>(); }},
      {"quaternion + 6, 10->9", 10,
       [] { return new ceres::ProductManifold<ceres::QuaternionManifold, ceres::EuclideanManifold<6>>(); }},
      {"subset 5->4", 5, [] { return new ceres::SubsetManifold(5, {2}); }},
  };
}

class EvaluatorAgainstCeres : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(EvaluatorAgainstCeres, CostGradientAndJacobian) {
  const ManifoldCase c = Cases()[std::get<0>(GetParam())];
  const bool robust = std::get<1>(GetParam());
  SCOPED_TRACE(c.name);
  std::mt19937 rng(11);
  ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
  const int num_cameras = 4, num_points = 30;
  std::vector<std::vector<double>> cameras(num_cameras, std::vector<double>(c.camera_size));
  std::vector<std::vector<double>> points(num_points, std::vector<double>(3));
  for (auto& cam : cameras) {
    for (double& v : cam) v = n(rng);
    if (c.camera_size == 4 || c.camera_size == 7 || c.camera_size == 10) {
      // A unit quaternion first, as the quaternion manifold expects.
      const double norm = std::sqrt(cam[0] * cam[0] + cam[1] * cam[1] + cam[2] * cam[2] + cam[3] * cam[3]);
      for (int k = 0; k < 4; ++k) cam[k] /= norm;
    }
  }
  for (auto& p : points) {
    for (double& v : p) v = n(rng);
  }
  ceres::Problem::Options po;
  po.cost_function_ownership = ceres::TAKE_OWNERSHIP;
  ceres::Problem problem(po);
  std::vector<ceres::ResidualBlockId> ids;
  unsigned seed = 1;
  for (int p = 0; p < num_points; ++p) {
    for (int cam = 0; cam < num_cameras; ++cam) {
      if ((p + cam) % 3 == 0) continue;  // not every camera sees every point
      ids.push_back(problem.AddResidualBlock(new CameraPointCost(c.camera_size, seed++),
                                             robust ? new ceres::CauchyLoss(0.5) : nullptr, cameras[cam].data(),
                                             points[p].data()));
    }
  }
  if (c.make) {
    for (auto& cam : cameras) problem.SetManifold(cam.data(), c.make());
  }

  EvaluatorSetUp e(problem, 2, 4);
  ASSERT_TRUE(e.ok) << e.error;
  const ProblemStructure& s = e.s;
  Evaluator& evaluator = *e.evaluator;
  const std::vector<double>& x = e.x;
  double cost = 0.0;
  std::vector<double> gradient(s.num_effective_parameters);
  RecordingWriter writer(s);
  ASSERT_TRUE(evaluator.EvaluateJacobian(x.data(), true, &cost, gradient.data(), &writer)) << evaluator.error();

  // Ceres, over the blocks in the evaluator's state order.
  ceres::Problem::EvaluateOptions eo;
  for (int p : s.variable_blocks) eo.parameter_blocks.push_back(s.parameter_blocks[p].user_values);
  eo.residual_blocks = ids;
  double ceres_cost = 0.0;
  std::vector<double> ceres_gradient;
  ceres::CRSMatrix jacobian;
  ASSERT_TRUE(problem.Evaluate(eo, &ceres_cost, nullptr, &ceres_gradient, &jacobian));
  EXPECT_NEAR(cost, ceres_cost, 1e-12 * ceres_cost);
  ASSERT_EQ(ceres_gradient.size(), gradient.size());
  const double gmax = std::max(1.0, *std::max_element(ceres_gradient.begin(), ceres_gradient.end(),
                                                      [](double a, double b) { return std::abs(a) < std::abs(b); }));
  for (size_t i = 0; i < gradient.size(); ++i) {
    EXPECT_NEAR(gradient[i], ceres_gradient[i], 1e-12 * std::abs(gmax)) << "gradient entry " << i;
  }

  // The Jacobian: Ceres' rows are the residual blocks in `ids` order, its
  // columns the tangent coordinates in state order, as the evaluator's.
  // Ceres applies the loss correction to its Jacobian too.
  std::vector<double> dense(static_cast<size_t>(jacobian.num_rows) * jacobian.num_cols, 0.0);
  for (int r = 0; r < jacobian.num_rows; ++r) {
    for (int k = jacobian.rows[r]; k < jacobian.rows[r + 1]; ++k) {
      dense[static_cast<size_t>(r) * jacobian.num_cols + jacobian.cols[k]] = jacobian.values[k];
    }
  }
  int row = 0;
  int checked = 0;
  for (ceres::ResidualBlockId id : ids) {
    std::vector<double*> blocks;
    problem.GetParameterBlocksForResidualBlock(id, &blocks);
    for (double* block : blocks) {
      const ParameterBlockInfo& pb = s.parameter_blocks[s.index_of.at(block)];
      const auto it = writer.blocks.find({id, block});
      ASSERT_NE(it, writer.blocks.end());
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < pb.tangent_size; ++j) {
          const double expected = dense[static_cast<size_t>(row + i) * jacobian.num_cols + pb.tangent_offset + j];
          EXPECT_NEAR(it->second[i * pb.tangent_size + j], expected, 1e-12 * std::max(1.0, std::abs(expected)))
              << "residual row " << row + i << ", tangent column " << j;
          ++checked;
        }
      }
    }
    row += 2;
  }
  const int camera_tangent = c.make ? std::unique_ptr<ceres::Manifold>(c.make())->TangentSize() : c.camera_size;
  EXPECT_EQ(checked, static_cast<int>(ids.size()) * 2 * (3 + camera_tangent));
}

INSTANTIATE_TEST_SUITE_P(Manifolds, EvaluatorAgainstCeres,
                         ::testing::Combine(::testing::Range(0, 5), ::testing::Bool()));

// A manifold whose PlusJacobian stops writing its output once `forget` is
// set (and still says it succeeded).
class ForgetfulManifold : public testing::Euclidean3Manifold {
 public:
  bool PlusJacobian(const double* x, double* jacobian) const override {
    if (forget) return true;
    return Euclidean3Manifold::PlusJacobian(x, jacobian);
  }
  bool forget = false;
};

// An entry the manifold leaves unwritten is an error naming the block, never
// the value of the previous point.
TEST(Evaluator, PlusJacobianEntriesLeftUnwrittenAreAnError) {
  std::vector<double> camera(3, 0.5), point = {0.1, 0.2, 0.3};
  ceres::Problem problem;
  problem.AddResidualBlock(new CameraPointCost(3, 1), nullptr, camera.data(), point.data());
  ForgetfulManifold* manifold = new ForgetfulManifold;
  problem.SetManifold(camera.data(), manifold);
  EvaluatorSetUp e(problem, 1, 1);
  ASSERT_TRUE(e.ok) << e.error;
  Evaluator& evaluator = *e.evaluator;
  const std::vector<double>& x = e.x;
  double cost = 0.0;
  ASSERT_TRUE(evaluator.EvaluateCost(x.data(), &cost)) << evaluator.error();
  manifold->forget = true;
  EXPECT_FALSE(evaluator.EvaluateCost(x.data(), &cost));
  EXPECT_NE(evaluator.error().find("PlusJacobian with a value that is not finite"), std::string::npos)
      << evaluator.error();
}

// A manifold whose PlusJacobian fails in one of two ways once `fault` is set
// (Ceres itself aborts when it fails while the problem is built).
class FaultyPlusJacobianManifold : public testing::Euclidean3Manifold {
 public:
  enum Fault { kNone, kReturnsFalse, kWritesNaN };
  bool PlusJacobian(const double* x, double* jacobian) const override {
    if (fault == kReturnsFalse) return false;
    const bool ok = Euclidean3Manifold::PlusJacobian(x, jacobian);
    if (fault == kWritesNaN) jacobian[4] = std::numeric_limits<double>::quiet_NaN();
    return ok;
  }
  Fault fault = kNone;
};

// The PlusJacobians are computed in parallel (in tasks of 64 blocks): the
// failure reported is still the first in block order, with the message of
// its kind, whatever the number of threads, in the cost pass and in the
// Jacobian pass; and after the faults are gone both passes succeed.
TEST(Evaluator, PlusJacobianFailuresAreReportedInBlockOrder) {
  using Fault = FaultyPlusJacobianManifold::Fault;
  constexpr int kPoints = 300;
  // Faulty points by index (in the order they are added): the first two
  // cases have the earlier fault in a task the later one's does not share.
  const std::vector<std::vector<std::pair<int, Fault>>> cases = {
      {{150, Fault::kWritesNaN}, {270, Fault::kReturnsFalse}},
      {{20, Fault::kReturnsFalse}, {250, Fault::kWritesNaN}},
      {{299, Fault::kWritesNaN}},
      {},
  };
  for (const auto& faults : cases) {
    std::string first_error;
    for (int threads : {1, 2}) {
      std::vector<double> camera = {0.3, 0.2, 0.1}, points(3 * kPoints);
      for (size_t i = 0; i < points.size(); ++i) points[i] = 0.01 * (i + 1);
      ceres::Problem problem;
      std::vector<FaultyPlusJacobianManifold*> manifolds;
      for (int k = 0; k < kPoints; ++k) {
        problem.AddResidualBlock(new CameraPointCost(3, 1), nullptr, camera.data(), points.data() + 3 * k);
        manifolds.push_back(new FaultyPlusJacobianManifold);
        problem.SetManifold(points.data() + 3 * k, manifolds.back());
      }
      EvaluatorSetUp e(problem, threads, threads);
      ASSERT_TRUE(e.ok) << e.error;
      for (const auto& [index, f] : faults) manifolds[index]->fault = f;
      // The first faulty block in the variable order, which is the order of
      // the evaluator's manifold blocks.
      Fault expected = Fault::kNone;
      const double* faulty = nullptr;
      for (int p : e.s.variable_blocks) {
        const double* values = e.s.parameter_blocks[p].user_values;
        for (const auto& [index, f] : faults) {
          if (values == points.data() + 3 * index && expected == Fault::kNone) {
            expected = f;
            faulty = values;
          }
        }
        if (expected != Fault::kNone) break;
      }
      double cost = 0.0;
      std::vector<double> gradient(e.s.num_effective_parameters);
      const bool cost_ok = e.evaluator->EvaluateCost(e.x.data(), &cost);
      const std::string cost_error = e.evaluator->error();
      const bool jacobian_ok = e.evaluator->EvaluateJacobian(e.x.data(), true, &cost, gradient.data(), nullptr);
      const std::string jacobian_error = e.evaluator->error();
      EXPECT_EQ(cost_ok, expected == Fault::kNone) << cost_error;
      EXPECT_EQ(jacobian_ok, expected == Fault::kNone) << jacobian_error;
      EXPECT_EQ(cost_error, jacobian_error);
      if (expected == Fault::kReturnsFalse) {
        EXPECT_EQ(cost_error, "The manifold of the " + NameOf(faulty) + " failed to compute its PlusJacobian.");
      } else if (expected == Fault::kWritesNaN) {
        EXPECT_EQ(cost_error,
                  "The manifold of the " + NameOf(faulty) + " returned a PlusJacobian with a value that is not finite.");
      } else {
        EXPECT_EQ(cost_error, "");
      }
      // The same point, by its index, with 1 and 2 threads.
      const std::string named = faulty == nullptr ? "" : std::to_string((faulty - points.data()) / 3);
      if (threads == 1) first_error = named;
      EXPECT_EQ(named, first_error);
    }
  }
}

// The trust-region loop takes an accepted candidate's cost from whichever
// pass evaluated it (the cost pass, or the Jacobian pass when it evaluates
// Jacobians at candidates): both must give the same bits, with a loss, with
// manifolds, with several chunks and threads.
TEST(Evaluator, CostPassAndJacobianPassGiveTheSameCost) {
  for (int threads : {1, 2}) {
    for (bool robust : {false, true}) {
      std::mt19937 rng(7);
      ::ceres_sqrtba::testing::NormalDistribution n(0.0, 1.0);
      std::vector<std::vector<double>> cameras(6, std::vector<double>(10)), points(300, std::vector<double>(3));
      for (auto& c : cameras) {
        for (double& v : c) v = n(rng);
      }
      for (auto& p : points) {
        for (double& v : p) v = n(rng);
      }
      ceres::Problem problem;
      unsigned seed = 1;
      for (auto& p : points) {
        for (int k = 0; k < 3; ++k) {
          auto& c = cameras[(seed + k) % cameras.size()];
          problem.AddResidualBlock(new CameraPointCost(10, seed++), robust ? new ceres::HuberLoss(0.5) : nullptr,
                                   c.data(), p.data());
        }
      }
      for (auto& c : cameras) {
        problem.SetManifold(c.data(),
                            new ceres::ProductManifold<ceres::QuaternionManifold, ceres::EuclideanManifold<6>>());
      }
      EvaluatorSetUp e(problem, threads, 7);
      ASSERT_TRUE(e.ok) << e.error;
      ASSERT_GT(e.partition.num_chunks(), 1);
      Evaluator& evaluator = *e.evaluator;
      std::vector<double>& x = e.x;
      std::vector<double> gradient(e.s.num_effective_parameters);
      RecordingWriter writer(e.s);
      for (int point = 0; point < 3; ++point) {
        for (double& v : x) v += 1e-3 * n(rng);
        double cost = 0.0, cost_with_jacobian = 0.0;
        ASSERT_TRUE(evaluator.EvaluateCost(x.data(), &cost)) << evaluator.error();
        ASSERT_TRUE(evaluator.EvaluateJacobian(x.data(), true, &cost_with_jacobian, gradient.data(), &writer))
            << evaluator.error();
        EXPECT_EQ(cost, cost_with_jacobian) << threads << " threads, robust " << robust;
      }
    }
  }
}

// Writes the two residuals it is given (and no Jacobian is asked for here).
class FixedResiduals : public ceres::CostFunction {
 public:
  FixedResiduals(double r0, double r1, bool write_second) : r0_(r0), r1_(r1), write_second_(write_second) {
    set_num_residuals(2);
    mutable_parameter_block_sizes()->push_back(3);
    mutable_parameter_block_sizes()->push_back(3);
  }
  bool Evaluate(double const* const*, double* residuals, double**) const override {
    residuals[0] = r0_;
    if (write_second_) residuals[1] = r1_;
    return true;
  }

 private:
  double r0_, r1_;
  bool write_second_;
};

// The residual check runs on the squared norm and falls back to the values
// only when that is not finite: a residual that is infinite or left unwritten
// is still named by its index, while finite residuals whose squares overflow
// are not called "not finite" (their cost is).
TEST(Evaluator, ResidualsThatAreNotFiniteAreNamedAndOverflowingSquaresAreNot) {
  struct Case {
    double r0, r1;
    bool write_second;
    const char* expected;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      {1.0, inf, true, "has a residual that is not finite or was not written (residual 1 = inf)."},
      {-inf, 1.0, true, "has a residual that is not finite or was not written (residual 0 = -inf)."},
      {1.0, 2.0, false, "has a residual that is not finite or was not written (residual 1 = nan)."},
      {1e200, 1e200, true, "The cost is not finite (inf): the residuals are too large to square and sum."},
  };
  for (const Case& c : cases) {
    std::vector<double> camera(3, 0.5), point = {0.1, 0.2, 0.3};
    ceres::Problem problem;
    problem.AddResidualBlock(new FixedResiduals(c.r0, c.r1, c.write_second), nullptr, camera.data(), point.data());
    EvaluatorSetUp e(problem, 1, 1);
    ASSERT_TRUE(e.ok) << e.error;
    double cost = 0.0;
    EXPECT_FALSE(e.evaluator->EvaluateCost(e.x.data(), &cost));
    EXPECT_NE(e.evaluator->error().find(c.expected), std::string::npos) << e.evaluator->error();
  }
}

// A 2-row residual of a 3-d camera and a 3-d point with one planted fault:
// a Jacobian value (of block `block`, at row, col) set to `value` or left
// unwritten, or the cost function returning false. `scale` multiplies the
// residuals.
class FaultyCost : public ceres::SizedCostFunction<2, 3, 3> {
 public:
  enum Fault { kNone, kJacobianValue, kJacobianUnwritten, kReturnsFalse };
  explicit FaultyCost(Fault fault = kNone, int block = 0, int row = 0, int col = 0, double value = 0.0,
                      double scale = 1.0)
      : fault_(fault), block_(block), row_(row), col_(col), value_(value), scale_(scale) {}
  bool Evaluate(double const* const* p, double* residuals, double** jacobians) const override {
    residuals[0] = scale_ * (p[0][0] + p[1][0] - 1.0);
    residuals[1] = scale_ * (p[0][1] - p[1][1] + 0.5);
    if (fault_ == kReturnsFalse) return false;
    if (jacobians == nullptr) return true;
    for (int b = 0; b < 2; ++b) {
      if (jacobians[b] == nullptr) continue;
      for (int i = 0; i < 6; ++i) {
        const bool planted = fault_ != kNone && b == block_ && i == row_ * 3 + col_;
        if (planted && fault_ == kJacobianUnwritten) continue;
        jacobians[b][i] = planted ? value_ : 0.25 * (i + 1) + b;
      }
    }
    return true;
  }

 private:
  Fault fault_;
  int block_, row_, col_;
  double value_, scale_;
};

// A Jacobian value that is not finite (or not written) fails the Jacobian
// pass with the first such block in block order, named with its row and
// column, ahead of a later block whose cost function fails; also under a
// robust loss that zeroes the block's weight (Tukey, far out), for one chunk
// or several. Finite values whose gradient sums overflow are not an error,
// and the gradient is then Ceres' own. (Any shortcut for these tests, e.g.
// reading them from the gradient sums, has to keep all of this.)
TEST(Evaluator, JacobianValuesThatAreNotFiniteAreNamedInBlockOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Fault {
    int index;  // residual block
    FaultyCost::Fault fault;
    int block, row, col;
    double value;
  };
  struct Case {
    std::vector<Fault> faults;
    bool tukey;
    double scale;
    int expected_index;  // -1: the evaluation succeeds
    const char* expected;
  };
  const Case cases[] = {
      {{{3, FaultyCost::kJacobianValue, 0, 1, 2, nan}}, false, 1.0, 3, " has a value that is not finite or was not written (row 1, column 2)."},
      {{{2, FaultyCost::kJacobianValue, 1, 0, 1, -inf}, {4, FaultyCost::kReturnsFalse, 0, 0, 0, 0.0}}, false, 1.0, 2,
       " has a value that is not finite or was not written (row 0, column 1)."},
      {{{4, FaultyCost::kJacobianUnwritten, 1, 1, 0, 0.0}}, false, 1.0, 4, " has a value that is not finite or was not written (row 1, column 0)."},
      {{{1, FaultyCost::kJacobianValue, 0, 0, 0, inf}}, true, 1e3, 1, " has a value that is not finite or was not written (row 0, column 0)."},
      {{{5, FaultyCost::kJacobianValue, 0, 0, 0, 1e300}}, false, 1e10, -1, ""},
  };
  for (const Case& c : cases) {
    for (int threads : {1, 2}) {
      std::vector<double> cameras(2 * 3), points(6 * 3);
      for (size_t i = 0; i < cameras.size(); ++i) cameras[i] = 0.1 * (i + 1);
      for (size_t i = 0; i < points.size(); ++i) points[i] = 0.05 * (i + 2);
      ceres::Problem problem;
      std::vector<ceres::ResidualBlockId> ids;
      for (int r = 0; r < 6; ++r) {
        // The planted block alone scaled (an outlier for Tukey's loss).
        FaultyCost* cost = new FaultyCost();
        for (const Fault& f : c.faults) {
          if (f.index == r) cost = (delete cost, new FaultyCost(f.fault, f.block, f.row, f.col, f.value, c.scale));
        }
        ids.push_back(problem.AddResidualBlock(cost, c.tukey ? new ceres::TukeyLoss(1.0) : nullptr,
                                               cameras.data() + 3 * (r % 2), points.data() + 3 * r));
      }
      EvaluatorSetUp e(problem, threads, threads);
      ASSERT_TRUE(e.ok) << e.error;
      double cost = 0.0;
      std::vector<double> gradient(e.s.num_effective_parameters);
      const bool ok = e.evaluator->EvaluateJacobian(e.x.data(), true, &cost, gradient.data(), nullptr);
      if (c.expected_index < 0) {
        EXPECT_TRUE(ok) << e.evaluator->error();
        // The gradient as Ceres computes it, the overflow included (in the
        // order cameras, then points).
        ceres::Problem::EvaluateOptions options;
        for (size_t i = 0; i < cameras.size(); i += 3) options.parameter_blocks.push_back(cameras.data() + i);
        for (size_t i = 0; i < points.size(); i += 3) options.parameter_blocks.push_back(points.data() + i);
        std::vector<double> expected;
        problem.Evaluate(options, nullptr, nullptr, &expected, nullptr);
        std::vector<double> ours(gradient.size());
        for (const ParameterBlockInfo& pb : e.s.parameter_blocks) {
          const bool point = pb.user_values >= points.data() && pb.user_values < points.data() + points.size();
          const size_t at = point ? cameras.size() + (pb.user_values - points.data()) : pb.user_values - cameras.data();
          for (int k = 0; k < pb.size; ++k) ours[at + k] = gradient[pb.tangent_offset + k];
        }
        ASSERT_EQ(expected.size(), ours.size());
        EXPECT_TRUE(std::any_of(expected.begin(), expected.end(), [](double v) { return !std::isfinite(v); }));
        for (size_t i = 0; i < ours.size(); ++i) {
          if (std::isfinite(expected[i])) {
            EXPECT_NEAR(ours[i], expected[i], 1e-12 * (1.0 + std::abs(expected[i]))) << i;
          } else {
            EXPECT_EQ(ours[i], expected[i]) << i;
          }
        }
        continue;
      }
      EXPECT_FALSE(ok);
      const std::string& error = e.evaluator->error();
      EXPECT_NE(error.find(c.expected), std::string::npos) << error;
      EXPECT_NE(error.find(NameOf(ids[c.expected_index])), std::string::npos) << error;
    }
  }
}

// CameraPointCost that also evaluates its Jacobians "in float"
// (FloatJacobians): the double Jacobians rounded to float and marked by an
// offset of `mark` in every entry, so that a test sees which ones the
// evaluator used; with poison, the float Jacobian of the point is NaN (as an
// overflow in float would leave it).
class FloatCameraPointCost : public CameraPointCost, public FloatJacobians {
 public:
  FloatCameraPointCost(int camera_size, unsigned seed, float mark, bool poison, int* float_calls)
      : CameraPointCost(camera_size, seed), mark_(mark), poison_(poison), float_calls_(float_calls) {}
  bool EvaluateFloatJacobians(double const* const* parameters, double* residuals,
                              float** jacobians) const override {
    ++*float_calls_;  // one thread in the tests below
    const int sizes[2] = {parameter_block_sizes()[0], 3};
    std::vector<double> j0(2 * sizes[0]), j1(2 * sizes[1]);
    double* double_jacobians[2] = {j0.data(), j1.data()};
    Evaluate(parameters, residuals, double_jacobians);
    for (int b = 0; b < 2; ++b) {
      if (jacobians == nullptr || jacobians[b] == nullptr) continue;
      for (int k = 0; k < 2 * sizes[b]; ++k) {
        jacobians[b][k] = static_cast<float>(double_jacobians[b][k]) + mark_;
      }
    }
    if (poison_ && jacobians != nullptr && jacobians[1] != nullptr) {
      jacobians[1][0] = std::numeric_limits<float>::infinity();
    }
    return true;
  }

 private:
  float mark_;
  bool poison_;
  int* float_calls_;
};

class FloatRecordingWriter : public RecordingWriter {
 public:
  using RecordingWriter::RecordingWriter;
  bool KeepsFloatJacobians() const override { return true; }
};

// One camera (no manifold) and a point: the Jacobian pass of a float
// storage takes FloatJacobians' values (widened exactly), every other pass
// (the residual pass, a double storage) the cost function's own Evaluate; a
// float Jacobian that is not finite is replaced by the double one and
// reported.
TEST(EvaluatorFloatJacobians, UsedOnlyForFloatStorage) {
  for (bool poison : {false, true}) {
    SCOPED_TRACE(poison ? "float Jacobian not finite" : "finite float Jacobian");
    std::vector<double> camera = {0.3, -0.2, 0.5, 0.1, 0.7, -0.4, 0.2, 0.9, -0.6};
    std::vector<double> point = {0.4, -0.8, 1.1};
    int float_calls = 0;
    const float mark = 0.25f;  // exact in float and in double
    ceres::Problem problem;
    problem.AddResidualBlock(new FloatCameraPointCost(9, 3, mark, poison, &float_calls), nullptr, camera.data(),
                             point.data());
    EvaluatorSetUp e(problem, 1, 1);
    ASSERT_TRUE(e.ok) << e.error;
    double cost = 0.0, float_cost = 0.0;
    std::vector<double> gradient(e.s.num_effective_parameters);
    RecordingWriter double_writer(e.s);
    ASSERT_TRUE(e.evaluator->EvaluateJacobian(e.x.data(), true, &cost, gradient.data(), &double_writer));
    ASSERT_TRUE(e.evaluator->EvaluateCost(e.x.data(), &cost));
    EXPECT_EQ(float_calls, 0);
    EXPECT_TRUE(e.evaluator->float_jacobian_fallback().empty());
    FloatRecordingWriter float_writer(e.s);
    ASSERT_TRUE(e.evaluator->EvaluateJacobian(e.x.data(), true, &float_cost, gradient.data(), &float_writer))
        << e.evaluator->error();
    EXPECT_EQ(float_calls, 1);
    EXPECT_EQ(float_cost, cost);  // the residuals stay the double ones
    ASSERT_EQ(float_writer.blocks.size(), 2u);
    for (const auto& [key, values] : float_writer.blocks) {
      const std::vector<double>& reference = double_writer.blocks.at(key);
      ASSERT_EQ(values.size(), reference.size());
      for (size_t k = 0; k < values.size(); ++k) {
        // Finite: the float values plus the mark; not finite: the double
        // Jacobian of the whole residual block, exactly.
        const double expected =
            poison ? reference[k] : static_cast<double>(static_cast<float>(reference[k]) + mark);
        EXPECT_EQ(values[k], expected) << "entry " << k;
      }
    }
    if (poison) {
      EXPECT_NE(e.evaluator->float_jacobian_fallback().find("is not finite"), std::string::npos)
          << e.evaluator->float_jacobian_fallback();
    } else {
      EXPECT_TRUE(e.evaluator->float_jacobian_fallback().empty()) << e.evaluator->float_jacobian_fallback();
      // The rounding level of the float gradient: 2^-24 times the largest
      // sum_i |J_ij| |r_i| over the columns of both blocks.
      double r[2];
      const double* values[2] = {camera.data(), point.data()};
      std::vector<ceres::ResidualBlockId> ids;
      problem.GetResidualBlocks(&ids);
      ASSERT_TRUE(problem.GetCostFunctionForResidualBlock(ids[0])->Evaluate(values, r, nullptr));
      double largest = 0.0;
      for (const auto& [key, values_of_block] : float_writer.blocks) {
        const int cols = static_cast<int>(values_of_block.size()) / 2;
        for (int c = 0; c < cols; ++c) {
          largest = std::max(largest, std::abs(values_of_block[c]) * std::abs(r[0]) +
                                          std::abs(values_of_block[cols + c]) * std::abs(r[1]));
        }
      }
      EXPECT_NEAR(e.evaluator->float_gradient_level(), largest * std::ldexp(1.0, -24), 1e-12 * largest);
      EXPECT_GT(e.evaluator->float_gradient_level(), 0.0);
    }
    // Passes without float Jacobians leave it at 0.
    ASSERT_TRUE(e.evaluator->EvaluateJacobian(e.x.data(), true, &cost, gradient.data(), &double_writer));
    EXPECT_EQ(e.evaluator->float_gradient_level(), 0.0);
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
