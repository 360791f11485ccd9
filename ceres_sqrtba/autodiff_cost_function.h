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

#include <array>
#include <utility>
#include <vector>

#include "ceres/autodiff_cost_function.h"
#include "ceres/jet.h"
#include "ceres/types.h"
#include "ceres_sqrtba/float_jacobians.h"

namespace ceres_sqrtba {

namespace float_autodiff {

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
template <typename Functor, int... Ns>
bool Jacobians(const Functor& functor, double const* const* parameters, int num_residuals,
               ceres::Jet<float, (Ns + ...)>* residuals, float** jacobians) {
  constexpr int kN = (Ns + ...);
  constexpr int kBlocks = sizeof...(Ns);
  constexpr std::array<int, kBlocks> sizes{Ns...};
  constexpr std::array<int, kBlocks> offsets = BlockOffsets<Ns...>();
  using JetT = ceres::Jet<float, kN>;
  std::array<JetT, kN> x;
  for (int b = 0; b < kBlocks; ++b) {
    for (int j = 0; j < sizes[b]; ++j) {
      x[offsets[b] + j] = JetT(static_cast<float>(parameters[b][j]), offsets[b] + j);
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
    using JetT = ceres::Jet<float, (Ns + ...)>;
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

}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_AUTODIFF_COST_FUNCTION_H_
