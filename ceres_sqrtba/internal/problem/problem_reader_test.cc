// ReadProblem and BoundsReader (problem_reader.h) on problems built here:
// - parameter blocks numbered by first use in the residual blocks, then the
//   unused ones in Problem::GetParameterBlocks order; their values, sizes,
//   manifolds, tangent sizes and index_of;
// - constancy: set by the user, a manifold with an empty tangent space, and
//   a variable block no residual block uses (marked constant);
// - residual blocks in Problem::GetResidualBlocks order with their cost and
//   loss functions, sizes and parameter blocks; those on constant blocks
//   only become fixed residual blocks (with their index in that order);
// - the FloatJacobians interface found by dynamic_cast (an analytic cost
//   function deriving from it, ceres_sqrtba::AutoDiffCostFunction) or null;
// - a value that is not finite, in any block, refused with Ceres' message;
// - bounds: offsets and values of the bounded blocks only (DBL_MAX where a
//   value has none), Ceres' infeasibility messages, read as the user left
//   the problem (an unused block's box is checked as a variable block's);
// - the same result with a parallel context as without.
#include "ceres_sqrtba/internal/problem/problem_reader.h"

#include <cfloat>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/autodiff_cost_function.h"
#include "ceres_sqrtba/float_jacobians.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// r = 1 + sum of all parameters, `num_residuals` rows.
class Sum : public ceres::CostFunction {
 public:
  Sum(int num_residuals, const std::vector<int>& sizes) {
    set_num_residuals(num_residuals);
    for (int s : sizes) mutable_parameter_block_sizes()->push_back(s);
  }
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    for (int i = 0; i < num_residuals(); ++i) {
      r[i] = 1.0;
      for (size_t b = 0; b < parameter_block_sizes().size(); ++b) {
        const int size = parameter_block_sizes()[b];
        for (int k = 0; k < size; ++k) {
          r[i] += x[b][k];
          if (j != nullptr && j[b] != nullptr) j[b][i * size + k] = 1.0;
        }
      }
    }
    return true;
  }
};

// The same with float Jacobians.
class FloatSum : public ceres::SizedCostFunction<1, 1>, public FloatJacobians {
 public:
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    r[0] = x[0][0];
    if (j != nullptr && j[0] != nullptr) j[0][0] = 1.0;
    return true;
  }
  bool EvaluateFloatJacobians(double const* const* x, double* r, float** j) const override {
    r[0] = x[0][0];
    if (j != nullptr && j[0] != nullptr) j[0][0] = 1.0f;
    return true;
  }
};

struct Difference {
  template <typename T>
  bool operator()(const T* a, const T* b, T* r) const {
    r[0] = a[0] - b[0];
    return true;
  }
};

// The result of ReadProblem then BoundsReader::Finish.
struct Read {
  bool ok = false;
  bool bounds_ok = false;
  std::string error;
  ProblemStructure s;
  std::vector<ResidualBlockInfo> residuals;
};

Read ReadAll(const ceres::Problem& problem, ParallelContext* context = nullptr) {
  Read read;
  BoundsReader bounds(problem, context);
  read.ok = ReadProblem(problem, context, &read.s, &read.residuals, &bounds, &read.error);
  if (read.ok) read.bounds_ok = bounds.Finish(&read.s, &read.error);
  return read;
}

// Blocks added in the order u1, a, b, c, k, u2 (u1 and u2 unused), residual
// blocks
//   0: (b, a) 2 rows,  1: (k) 3 rows, k constant,  2: (c, a, k) 1 row with a
//   loss,  3: (b) float Jacobians,  4: (a, b) ceres_sqrtba::AutoDiffCostFunction;
// a has a subset manifold (size 3, tangent 2), c one with an empty tangent
// space (size 2, tangent 0: constant).
// First use: b 0, a 1, k 2, c 3; then u1, u2 in GetParameterBlocks order.
struct TestProblem {
  TestProblem() {
    ceres::Problem::Options options;
    options.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
    problem = std::make_unique<ceres::Problem>(options);
    problem->AddParameterBlock(u1, 2);
    problem->AddParameterBlock(a, 3, new ceres::SubsetManifold(3, {1}));
    problem->AddParameterBlock(b, 1);
    problem->AddParameterBlock(c, 2, new ceres::SubsetManifold(2, {0, 1}));
    problem->AddParameterBlock(k, 1);
    problem->AddParameterBlock(u2, 1);
    problem->SetParameterBlockConstant(k);
    ids.push_back(problem->AddResidualBlock(new Sum(2, {1, 3}), nullptr, b, a));
    ids.push_back(problem->AddResidualBlock(new Sum(3, {1}), nullptr, k));
    ids.push_back(problem->AddResidualBlock(new Sum(1, {2, 3, 1}), &loss, c, a, k));
    float_cost = new FloatSum;
    ids.push_back(problem->AddResidualBlock(float_cost, nullptr, b));
    autodiff_cost = new ceres_sqrtba::AutoDiffCostFunction<Difference, 1, 3, 1>(new Difference);
    ids.push_back(problem->AddResidualBlock(autodiff_cost, nullptr, a, b));
  }
  double u1[2] = {1, 2}, a[3] = {3, 4, 5}, b[1] = {6}, c[2] = {7, 8}, k[1] = {9}, u2[1] = {10};
  ceres::HuberLoss loss{1.0};
  FloatSum* float_cost = nullptr;
  ceres::CostFunction* autodiff_cost = nullptr;
  std::unique_ptr<ceres::Problem> problem;
  std::vector<ceres::ResidualBlockId> ids;
};

TEST(ReadProblem, ParameterBlocksInOrderOfFirstUseThenUnused) {
  TestProblem p;
  const Read read = ReadAll(*p.problem);
  ASSERT_TRUE(read.ok) << read.error;
  ASSERT_TRUE(read.bounds_ok) << read.error;
  const ProblemStructure& s = read.s;
  ASSERT_EQ(s.parameter_blocks.size(), 6u);
  std::vector<const double*> expected = {p.b, p.a, p.k, p.c};
  // The unused ones as GetParameterBlocks lists them.
  std::vector<double*> listed;
  p.problem->GetParameterBlocks(&listed);
  for (double* block : listed) {
    if (block == p.u1 || block == p.u2) expected.push_back(block);
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(s.parameter_blocks[i].user_values, expected[i]) << i;
    EXPECT_EQ(s.index_of.at(expected[i]), static_cast<int>(i)) << i;
  }
  EXPECT_EQ(s.index_of.size(), 6u);
}

TEST(ReadProblem, SizesManifoldsAndConstancy) {
  TestProblem p;
  const Read read = ReadAll(*p.problem);
  ASSERT_TRUE(read.ok) << read.error;
  const ProblemStructure& s = read.s;
  auto block = [&](const double* values) { return s.parameter_blocks[s.index_of.at(values)]; };
  struct Expected {
    const double* values;
    int size, tangent_size;
    bool has_manifold, is_constant;
  };
  for (const Expected& e : {Expected{p.a, 3, 2, true, false}, Expected{p.b, 1, 1, false, false},
                            Expected{p.c, 2, 0, true, true},  // empty tangent space
                            Expected{p.k, 1, 1, false, true},  // set constant
                            Expected{p.u1, 2, 2, false, true},  // unused
                            Expected{p.u2, 1, 1, false, true}}) {
    const ParameterBlockInfo& info = block(e.values);
    EXPECT_EQ(info.size, e.size) << s.index_of.at(e.values);
    EXPECT_EQ(info.tangent_size, e.tangent_size) << s.index_of.at(e.values);
    EXPECT_EQ(info.manifold, p.problem->GetManifold(e.values)) << s.index_of.at(e.values);
    EXPECT_EQ(info.manifold != nullptr, e.has_manifold) << s.index_of.at(e.values);
    EXPECT_EQ(info.is_constant, e.is_constant) << s.index_of.at(e.values);
  }
}

TEST(ReadProblem, ResidualBlocksAndFixedOnes) {
  TestProblem p;
  const Read read = ReadAll(*p.problem);
  ASSERT_TRUE(read.ok) << read.error;
  const ProblemStructure& s = read.s;
  std::vector<ceres::ResidualBlockId> listed;
  p.problem->GetResidualBlocks(&listed);
  ASSERT_EQ(listed.size(), 5u);
  // Residual block 1 (on the constant k alone) is fixed; the rest in order.
  ASSERT_EQ(s.fixed_residual_blocks.size(), 1u);
  const FixedResidualBlock& fixed = s.fixed_residual_blocks[0];
  EXPECT_EQ(fixed.id, p.ids[1]);
  EXPECT_EQ(listed[fixed.index], p.ids[1]);
  EXPECT_EQ(fixed.cost_function, p.problem->GetCostFunctionForResidualBlock(p.ids[1]));
  EXPECT_EQ(fixed.loss_function, nullptr);
  EXPECT_EQ(fixed.parameters, std::vector<const double*>{p.k});

  ASSERT_EQ(read.residuals.size(), 4u);
  std::vector<ceres::ResidualBlockId> variable;
  for (ceres::ResidualBlockId id : listed) {
    if (id != p.ids[1]) variable.push_back(id);
  }
  const int b = s.index_of.at(p.b), a = s.index_of.at(p.a), c = s.index_of.at(p.c), k = s.index_of.at(p.k);
  const std::vector<std::vector<int>> blocks_of = {{b, a}, {c, a, k}, {b}, {a, b}};
  const std::vector<int> rows_of = {2, 1, 1, 1};
  for (size_t r = 0; r < read.residuals.size(); ++r) {
    const ResidualBlockInfo& rb = read.residuals[r];
    EXPECT_EQ(rb.id, variable[r]) << r;
    EXPECT_EQ(rb.cost_function, p.problem->GetCostFunctionForResidualBlock(rb.id)) << r;
    EXPECT_EQ(rb.loss_function, p.problem->GetLossFunctionForResidualBlock(rb.id)) << r;
    EXPECT_EQ(rb.num_residuals, rows_of[r]) << r;
    ASSERT_EQ(rb.num_parameter_blocks, static_cast<int>(blocks_of[r].size())) << r;
    const auto begin = s.residual_parameters.begin() + rb.parameter_begin;
    const std::vector<int> params(begin, begin + rb.num_parameter_blocks);
    EXPECT_EQ(params, blocks_of[r]) << r;
  }
  EXPECT_EQ(read.residuals[1].loss_function, &p.loss);
  EXPECT_EQ(s.residual_parameters.size(), 8u);
}

TEST(ReadProblem, FloatJacobiansFoundByDynamicCast) {
  TestProblem p;
  const Read read = ReadAll(*p.problem);
  ASSERT_TRUE(read.ok) << read.error;
  ASSERT_EQ(read.residuals.size(), 4u);
  EXPECT_EQ(read.residuals[0].float_jacobians, nullptr);  // a plain ceres::CostFunction
  EXPECT_EQ(read.residuals[1].float_jacobians, nullptr);
  EXPECT_EQ(read.residuals[2].float_jacobians, static_cast<const FloatJacobians*>(p.float_cost));
  EXPECT_EQ(read.residuals[3].float_jacobians, dynamic_cast<const FloatJacobians*>(p.autodiff_cost));
  EXPECT_NE(read.residuals[3].float_jacobians, nullptr);
}

// Ceres' message: the block, its size, the first index that is not finite,
// and its values printed "%12g ".
TEST(ReadProblem, AValueThatIsNotFiniteIsRefusedWithCeresMessage) {
  TestProblem p;
  p.u1[1] = std::numeric_limits<double>::infinity();  // in a block no residual block uses
  Read read = ReadAll(*p.problem);
  EXPECT_FALSE(read.ok);
  char head[128];
  std::snprintf(head, sizeof(head), "ParameterBlock: %p with size 2 has at least one invalid value.\n",
                static_cast<const void*>(p.u1));
  EXPECT_EQ(read.error, std::string(head) + "First invalid value is at index: 1.\nParameter block values: "
                                            "           1          inf ");
  // In a constant block, too.
  TestProblem q;
  q.k[0] = -std::numeric_limits<double>::infinity();
  read = ReadAll(*q.problem);
  EXPECT_FALSE(read.ok);
  EXPECT_NE(read.error.find("First invalid value is at index: 0.\nParameter block values:         -inf "),
            std::string::npos)
      << read.error;
}

TEST(BoundsReader, BoundedBlocksOnlyInBlockOrder) {
  TestProblem p;
  p.problem->SetParameterLowerBound(p.a, 1, -2.0);
  p.problem->SetParameterUpperBound(p.a, 2, 50.0);
  p.problem->SetParameterUpperBound(p.b, 0, 20.0);
  const Read read = ReadAll(*p.problem);
  ASSERT_TRUE(read.ok) << read.error;
  ASSERT_TRUE(read.bounds_ok) << read.error;
  const ProblemStructure& s = read.s;
  // b (index 0) first, then a (index 1): block order, not the order set.
  EXPECT_EQ(s.parameter_blocks[s.index_of.at(p.b)].bounds_offset, 0);
  EXPECT_EQ(s.parameter_blocks[s.index_of.at(p.a)].bounds_offset, 1);
  for (const double* unbounded : {p.c, p.k, p.u1, p.u2}) {
    EXPECT_EQ(s.parameter_blocks[s.index_of.at(unbounded)].bounds_offset, -1);
  }
  EXPECT_EQ(s.lower_bounds, (std::vector<double>{-DBL_MAX, -DBL_MAX, -2.0, -DBL_MAX}));
  EXPECT_EQ(s.upper_bounds, (std::vector<double>{20.0, DBL_MAX, DBL_MAX, 50.0}));
}

// A constant block outside its box, a variable block with an empty box:
// Ceres refuses both before it solves, with these messages.
TEST(BoundsReader, InfeasibleBoxesWithCeresMessages) {
  {
    TestProblem p;
    p.problem->SetParameterLowerBound(p.k, 0, 10.0);  // k = 9, constant
    const Read read = ReadAll(*p.problem);
    ASSERT_TRUE(read.ok);
    EXPECT_FALSE(read.bounds_ok);
    char head[128];
    std::snprintf(head, sizeof(head), "ParameterBlock: %p with size 1 has at least one infeasible value.\n",
                  static_cast<const void*>(p.k));
    EXPECT_EQ(read.error, std::string(head) +
                              "First infeasible value is at index: 0.\n"
                              "Lower bound: 1.000000e+01, value: 9.000000e+00, upper bound: 1.797693e+308\n"
                              "Parameter block values:            9 ");
  }
  {
    // Unused, so the solver marks it constant; Ceres checks it as the user
    // left it, a variable block: its value may lie outside, its box not be
    // empty.
    TestProblem p;
    p.problem->SetParameterLowerBound(p.u2, 0, 100.0);  // u2 = 10
    Read read = ReadAll(*p.problem);
    EXPECT_TRUE(read.bounds_ok) << read.error;
    p.problem->SetParameterUpperBound(p.u2, 0, 100.0);
    read = ReadAll(*p.problem);
    EXPECT_FALSE(read.bounds_ok);
    char head[128];
    std::snprintf(head, sizeof(head), "ParameterBlock: %p with size 1 has at least one infeasible bound.\n",
                  static_cast<const void*>(p.u2));
    EXPECT_EQ(read.error, std::string(head) +
                              "First infeasible bound is at index: 0.\n"
                              "Lower bound: 1.000000e+02, upper bound: 1.000000e+02\n"
                              "Parameter block values:           10 ");
  }
}

// Queries in parallel and bounds read aside: the same structure.
TEST(ReadProblem, ParallelContextGivesTheSameResult) {
  TestProblem p;
  p.problem->SetParameterLowerBound(p.a, 0, -1.0);
  const Read serial = ReadAll(*p.problem);
  ParallelContext context(2);
  const Read parallel = ReadAll(*p.problem, &context);
  ASSERT_TRUE(parallel.ok && parallel.bounds_ok) << parallel.error;
  ASSERT_EQ(parallel.s.parameter_blocks.size(), serial.s.parameter_blocks.size());
  for (size_t i = 0; i < serial.s.parameter_blocks.size(); ++i) {
    const ParameterBlockInfo &x = serial.s.parameter_blocks[i], &y = parallel.s.parameter_blocks[i];
    EXPECT_EQ(x.user_values, y.user_values) << i;
    EXPECT_EQ(x.tangent_size, y.tangent_size) << i;
    EXPECT_EQ(x.is_constant, y.is_constant) << i;
    EXPECT_EQ(x.bounds_offset, y.bounds_offset) << i;
  }
  EXPECT_EQ(parallel.s.residual_parameters, serial.s.residual_parameters);
  EXPECT_EQ(parallel.s.lower_bounds, serial.s.lower_bounds);
  EXPECT_EQ(parallel.s.upper_bounds, serial.s.upper_bounds);
  ASSERT_EQ(parallel.residuals.size(), serial.residuals.size());
  for (size_t r = 0; r < serial.residuals.size(); ++r) {
    EXPECT_EQ(parallel.residuals[r].id, serial.residuals[r].id) << r;
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
