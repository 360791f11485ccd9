// ceres_sqrtba::AutoDiffCostFunction: ceres::AutoDiffCostFunction whose
// Jacobians a single precision solve evaluates in float.
//
//   problem.AddResidualBlock(
//       new ceres_sqrtba::AutoDiffCostFunction<MyFunctor, 2, 9, 3>(new MyFunctor(...)),
//       loss, camera, point);                 // was ceres::AutoDiffCostFunction
//
// It has ceres::AutoDiffCostFunction<CostFunctor, kNumResiduals, Ns...>'s
// constructors and ownership, and its Evaluate is that class's own (it holds
// one: Ceres 2.1 and 2.2 declare it final, so it is-a
// ceres::SizedCostFunction<kNumResiduals, Ns...>, as that class is): a
// problem built with it gives ceres::Solve, ceres::Covariance, gradient
// checking and ceres_sqrtba's double precision solves exactly what it gives
// with ceres::AutoDiffCostFunction. It adds FloatJacobians
// (float_jacobians.h): when ceres_sqrtba::Solve runs in single precision, each
// Jacobian pass evaluates the functor twice,
//
//   residuals  r = f(x)            with T = double (Evaluate without Jacobians),
//   Jacobians  J = df/dx(float(x)) with T = ceres::Jet<float, N>, N = sum(Ns),
//
// so the cost and the trust-region decisions are those of the double
// functor, and the Jacobian carries float's rounding (relative 2^-24 per
// operation), which the float storage of the solver would give it anyway
// when it is written there.
//
// What the functor must satisfy: the same templated operator() that
// ceres::AutoDiffCostFunction needs, instantiable with T = Jet<float, N>.
// Ceres' Jet has no mixed operations with double, so a constant of the
// functor enters the arithmetic as T(constant) (`residual = predicted -
// T(observed)`, not `predicted - observed` with a double `observed`), and
// only functions Ceres defines for Jets (sqrt, atan2, exp, ... found by
// argument-dependent lookup or through `using std::sqrt;`) are called on T.
// A functor that does not satisfy this fails to compile here, not at run
// time. Branches on values (`if (x[2] < T(eps))`) are fine: each precision
// takes the branch of its own value.
#ifndef CERES_SQRTBA_AUTODIFF_COST_FUNCTION_H_
#define CERES_SQRTBA_AUTODIFF_COST_FUNCTION_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "ceres/autodiff_cost_function.h"
#include "ceres/dynamic_autodiff_cost_function.h"
#include "ceres/jet.h"
#include "ceres/types.h"
#include "ceres_sqrtba/float_jacobians.h"

namespace ceres_sqrtba {

namespace float_autodiff {

// Eigen vectorizes a fixed-size vector only with packets whose size divides
// its length: a Jet of 12 floats takes three 4-float operations even where
// 8 fit one register (AVX). The derivative vector is padded with zeros to a
// multiple of the float lanes of the including translation unit's target
// (8 with AVX, where Eigen then also takes 16 when they divide; 4 with SSE),
// so that its operations use the widest packets.
#if defined(__AVX__)
constexpr int kFloatLanes = 8;
#else
constexpr int kFloatLanes = 4;
#endif

constexpr int PaddedSize(int n) { return (n + kFloatLanes - 1) / kFloatLanes * kFloatLanes; }

// Offsets of the parameter blocks in the Jet's derivative vector.
template <int... Ns>
constexpr std::array<int, sizeof...(Ns)> BlockOffsets() {
  constexpr std::array<int, sizeof...(Ns)> sizes{Ns...};
  std::array<int, sizeof...(Ns)> offsets{};
  int offset = 0;
  for (size_t b = 0; b < sizes.size(); ++b) {
    offsets[b] = offset;
    offset += sizes[b];
  }
  return offsets;
}

template <typename Functor, typename JetT, int... Ns, size_t... Is>
bool CallFunctor(const Functor& functor, const JetT* x, JetT* residuals,
                 std::index_sequence<Is...>) {
  constexpr std::array<int, sizeof...(Ns)> offsets = BlockOffsets<Ns...>();
  return functor((x + offsets[Is])..., residuals);
}

// The Jacobians of functor(x) in float, x = float(parameters): one forward
// pass with every parameter a Jet<float, N> seeded with its own unit vector,
// the derivatives then read out block by block (row-major). `residuals`:
// num_residuals Jets of scratch.
// Flattened: every Jet operation and Eigen loop of the functor is inlined
// into this one function (compilers otherwise leave many of them as calls,
// a third of the time of a small functor such as BAL's).
#if defined(__GNUC__) || defined(__clang__)
#define CERES_SQRTBA_FLATTEN __attribute__((flatten))
#else
#define CERES_SQRTBA_FLATTEN
#endif

template <typename Functor, int... Ns>
CERES_SQRTBA_FLATTEN bool Jacobians(const Functor& functor, double const* const* parameters, int num_residuals,
               ceres::Jet<float, PaddedSize((Ns + ...))>* residuals, float** jacobians) {
  constexpr int kN = PaddedSize((Ns + ...));
  constexpr int kBlocks = sizeof...(Ns);
  constexpr std::array<int, kBlocks> sizes{Ns...};
  constexpr std::array<int, kBlocks> offsets = BlockOffsets<Ns...>();
  using JetT = ceres::Jet<float, kN>;
  using Derivatives = Eigen::Matrix<float, kN, 1>;
  // The unit vectors, copied in whole: writing the 1 into a zeroed vector
  // and reading the vector back at once stalls every seed (a narrow store
  // read by a wide load), which measured 40% of BAL's functor.
  struct Units {
    Units() {
      for (int i = 0; i < kN; ++i) e[i] = Derivatives::Unit(i);
    }
    std::array<Derivatives, kN> e;
  };
  static const Units units;
  std::array<JetT, (Ns + ...)> x;
  for (int b = 0; b < kBlocks; ++b) {
    for (int j = 0; j < sizes[b]; ++j) {
      x[offsets[b] + j].a = static_cast<float>(parameters[b][j]);
      x[offsets[b] + j].v = units.e[offsets[b] + j];
    }
  }
  if (!CallFunctor<Functor, JetT, Ns...>(functor, x.data(), residuals,
                                         std::make_index_sequence<kBlocks>())) {
    return false;
  }
  for (int b = 0; b < kBlocks; ++b) {
    float* jacobian = jacobians[b];
    if (jacobian == nullptr) continue;
    for (int r = 0; r < num_residuals; ++r) {
      for (int j = 0; j < sizes[b]; ++j) jacobian[r * sizes[b] + j] = residuals[r].v[offsets[b] + j];
    }
  }
  return true;
}

}  // namespace float_autodiff

template <typename CostFunctor, int kNumResiduals, int... Ns>
class AutoDiffCostFunction : public ceres::SizedCostFunction<kNumResiduals, Ns...>, public FloatJacobians {
 public:
  // ceres::AutoDiffCostFunction's constructors, with its ownership of the
  // functor.
  explicit AutoDiffCostFunction(CostFunctor* functor, ceres::Ownership ownership = ceres::TAKE_OWNERSHIP)
      : autodiff_(functor, ownership) {}
  AutoDiffCostFunction(CostFunctor* functor, int num_residuals,
                       ceres::Ownership ownership = ceres::TAKE_OWNERSHIP)
      : autodiff_(functor, num_residuals, ownership) {
    this->set_num_residuals(num_residuals);
  }
  AutoDiffCostFunction(AutoDiffCostFunction&& other) : autodiff_(std::move(other.autodiff_)) {
    this->set_num_residuals(other.num_residuals());
  }

  // ceres::AutoDiffCostFunction::Evaluate itself: the same values, bit for
  // bit (a direct call: that class is final).
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    return autodiff_.Evaluate(parameters, residuals, jacobians);
  }

  bool EvaluateFloatJacobians(double const* const* parameters, double* residuals,
                              float** jacobians) const override {
    if (!autodiff_.Evaluate(parameters, residuals, nullptr)) return false;
    if (jacobians == nullptr) return true;
    using JetT = ceres::Jet<float, float_autodiff::PaddedSize((Ns + ...))>;
    if constexpr (kNumResiduals != ceres::DYNAMIC) {
      JetT jet_residuals[kNumResiduals];
      return float_autodiff::Jacobians<CostFunctor, Ns...>(functor(), parameters, kNumResiduals, jet_residuals,
                                                           jacobians);
    } else {
      // Residuals counted at run time: scratch per thread, allocated once.
      thread_local std::vector<JetT> jet_residuals;
      const int m = this->num_residuals();
      if (static_cast<int>(jet_residuals.size()) < m) jet_residuals.resize(m);
      return float_autodiff::Jacobians<CostFunctor, Ns...>(functor(), parameters, m, jet_residuals.data(),
                                                           jacobians);
    }
  }

  const CostFunctor& functor() const { return autodiff_.functor(); }

 private:
  ceres::AutoDiffCostFunction<CostFunctor, kNumResiduals, Ns...> autodiff_;
};

// ceres::DynamicAutoDiffCostFunction (parameter blocks and residuals
// counted at run time, OpenSfM's cost functions) with FloatJacobians, in the
// same way: it holds one (final, as the fixed-size one) for Evaluate, and the
// float Jacobians are evaluated in passes of Stride derivatives, as Ceres
// evaluates the double ones, with Jet<float, Stride>.
template <typename CostFunctor, int Stride = 4>
class DynamicAutoDiffCostFunction : public ceres::DynamicCostFunction, public FloatJacobians {
 public:
  explicit DynamicAutoDiffCostFunction(CostFunctor* functor, ceres::Ownership ownership = ceres::TAKE_OWNERSHIP)
      : autodiff_(functor, ownership), functor_(functor) {}
  DynamicAutoDiffCostFunction(DynamicAutoDiffCostFunction&& other)
      : autodiff_(std::move(other.autodiff_)), functor_(other.functor_) {
    *mutable_parameter_block_sizes() = other.parameter_block_sizes();
    set_num_residuals(other.num_residuals());
  }

  // The sizes go to the held cost function too.
  void AddParameterBlock(int size) override {
    ceres::DynamicCostFunction::AddParameterBlock(size);
    autodiff_.AddParameterBlock(size);
  }
  void SetNumResiduals(int num_residuals) override {
    ceres::DynamicCostFunction::SetNumResiduals(num_residuals);
    autodiff_.SetNumResiduals(num_residuals);
  }

  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    return autodiff_.Evaluate(parameters, residuals, jacobians);
  }

  bool EvaluateFloatJacobians(double const* const* parameters, double* residuals,
                              float** jacobians) const override {
    if (!autodiff_.Evaluate(parameters, residuals, nullptr)) return false;
    if (jacobians == nullptr) return true;
    using JetT = ceres::Jet<float, Stride>;
    const std::vector<int32_t>& sizes = parameter_block_sizes();
    const int num_blocks = static_cast<int>(sizes.size());
    const int m = num_residuals();
    // Scratch per thread, allocated once: the parameters as Jets, the
    // residuals, the block pointers, and the wanted derivatives as (block,
    // index within it).
    thread_local std::vector<JetT> x, r;
    thread_local std::vector<JetT*> blocks;
    thread_local std::vector<std::pair<int, int>> wanted;
    int total = 0;
    for (int b = 0; b < num_blocks; ++b) total += sizes[b];
    x.resize(std::max<size_t>(x.size(), total));
    r.resize(std::max<size_t>(r.size(), m));
    blocks.resize(std::max<size_t>(blocks.size(), num_blocks));
    wanted.clear();
    for (int b = 0, offset = 0; b < num_blocks; offset += sizes[b], ++b) {
      blocks[b] = x.data() + offset;
      for (int j = 0; j < sizes[b]; ++j) {
        x[offset + j].a = static_cast<float>(parameters[b][j]);
        if (jacobians[b] != nullptr) wanted.emplace_back(b, j);
      }
    }
    // The unit vectors stored whole (see Jacobians above).
    using Derivatives = Eigen::Matrix<float, Stride, 1>;
    for (size_t begin = 0; begin < wanted.size(); begin += Stride) {
      for (int k = 0; k < total; ++k) x[k].v.setZero();
      const size_t end = std::min(wanted.size(), begin + Stride);
      for (size_t w = begin; w < end; ++w) {
        blocks[wanted[w].first][wanted[w].second].v = Derivatives::Unit(static_cast<int>(w - begin));
      }
      if (!functor()(blocks.data(), r.data())) return false;
      for (size_t w = begin; w < end; ++w) {
        const auto [b, j] = wanted[w];
        for (int i = 0; i < m; ++i) jacobians[b][i * sizes[b] + j] = r[i].v[w - begin];
      }
    }
    return true;
  }

  const CostFunctor& functor() const { return *functor_; }

 private:
  ceres::DynamicAutoDiffCostFunction<CostFunctor, Stride> autodiff_;
  // The functor autodiff_ holds (Ceres 2.1's has no accessor).
  const CostFunctor* functor_;
};

}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_AUTODIFF_COST_FUNCTION_H_
