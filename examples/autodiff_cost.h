// The examples' choice between Ceres' and ceres_sqrtba's autodiff cost
// function (--float_jacobians): the same functor, Evaluate bit for bit the
// same; ceres_sqrtba's also evaluates its Jacobians in float in a single
// precision square-root solve.
#ifndef CERES_SQRTBA_EXAMPLES_AUTODIFF_COST_H_
#define CERES_SQRTBA_EXAMPLES_AUTODIFF_COST_H_

#include "ceres/autodiff_cost_function.h"
#include "ceres_sqrtba/autodiff_cost_function.h"

namespace ceres_sqrtba {
namespace examples {

// Takes ownership of functor.
template <typename Functor, int kNumResiduals, int... Ns>
ceres::CostFunction* NewAutoDiffCostFunction(Functor* functor, bool float_jacobians) {
  if (float_jacobians) return new AutoDiffCostFunction<Functor, kNumResiduals, Ns...>(functor);
  return new ceres::AutoDiffCostFunction<Functor, kNumResiduals, Ns...>(functor);
}

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_AUTODIFF_COST_H_
