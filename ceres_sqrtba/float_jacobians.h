// ceres_sqrtba: the interface through which a cost function evaluates its
// Jacobians in single precision.
//
// Ceres evaluates every cost function in double. ceres_sqrtba's single
// precision solves (Solver::Options::precision = SINGLE_PRECISION) keep the
// Jacobian in float storage anyway, so evaluating it in float loses nothing
// the solver keeps, and a templated functor evaluated with ceres::Jet<float, N>
// does half the arithmetic work of Jet<double, N> per SIMD instruction. The
// residuals, and so the cost and every trust-region decision, stay double.
//
// A cost function opts in by also deriving from FloatJacobians:
//
//   - templated functors: use ceres_sqrtba::AutoDiffCostFunction
//     (autodiff_cost_function.h) in place of ceres::AutoDiffCostFunction, one
//     type name, nothing else;
//   - analytic cost functions: derive from both ceres::CostFunction (or a
//     ceres::SizedCostFunction) and FloatJacobians, and implement
//     EvaluateFloatJacobians beside Evaluate:
//
//       class MyCost : public ceres::SizedCostFunction<2, 9, 3>,
//                      public ceres_sqrtba::FloatJacobians {
//        public:
//         bool Evaluate(double const* const* x, double* r, double** J) const override;
//         bool EvaluateFloatJacobians(double const* const* x, double* r,
//                                     float** J) const override;
//       };
//
// ceres_sqrtba::Solve finds the interface with a dynamic_cast when it reads
// the problem, and calls EvaluateFloatJacobians instead of Evaluate for the
// Jacobian passes of a single precision solve; ceres::Solve, ceres::Covariance,
// gradient checking, a double precision solve and every residual-only pass
// keep calling Evaluate. A float Jacobian that is not finite where the double
// one is makes the solve continue in double precision (the reason is in the
// summary), as values beyond float's range in the Jacobian do.
//
// This header is a leaf: it includes nothing, of Ceres or of ceres_sqrtba.
#ifndef CERES_SQRTBA_FLOAT_JACOBIANS_H_
#define CERES_SQRTBA_FLOAT_JACOBIANS_H_

namespace ceres_sqrtba {

class FloatJacobians {
 public:
  virtual ~FloatJacobians() = default;

  // As ceres::CostFunction::Evaluate, with the Jacobians in float:
  //   residuals: num_residuals() doubles, the values Evaluate computes at
  //     `parameters` (they make the cost; computing them in float would
  //     change it);
  //   jacobians: null, or one pointer per parameter block, each null (not
  //     wanted: a constant block) or a row-major num_residuals x block size
  //     array, the derivatives of the residuals at `parameters`, in float.
  // False: the evaluation failed, as when Evaluate returns false. The
  // values a Jacobian leaves unwritten or not finite are checked by the
  // caller.
  virtual bool EvaluateFloatJacobians(double const* const* parameters, double* residuals,
                                      float** jacobians) const = 0;
};

}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_FLOAT_JACOBIANS_H_
