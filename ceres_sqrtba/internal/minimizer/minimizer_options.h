// What the trust-region loop reads of the user's options: the fields of
// ceres::Solver::Options that Ceres' own Minimizer::Options carries for a
// trust-region solve, under the same names and with the same defaults. The
// solve fills them from Solver::Options (solve/square_root_solve.h:
// MinimizerOptionsOf); inner iterations run each block's sub-solve with the
// defaults, as Ceres' coordinate descent runs its sub-problems with a
// default Minimizer::Options whatever the user's options say
// (coordinate_descent_minimizer.h).
//
// The defaults are Ceres' Solver::Options defaults (the largest trust-region
// radius too: 1e16; a sub-solve of inner iterations uses TrustRegionStrategy's
// own instead, coordinate_descent_minimizer.h).
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_MINIMIZER_OPTIONS_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_MINIMIZER_OPTIONS_H_

#include "ceres_sqrtba/internal/minimizer/levenberg_marquardt_strategy.h"
#include "ceres_sqrtba/internal/minimizer/line_search.h"

namespace ceres_sqrtba {
namespace internal {

struct MinimizerOptions {
  // Termination (termination.h).
  int max_num_iterations = 50;
  double max_solver_time_in_seconds = 1e9;
  double function_tolerance = 1e-6;
  double gradient_tolerance = 1e-10;
  double parameter_tolerance = 1e-8;
  double min_trust_region_radius = 1e-32;
  int max_num_consecutive_invalid_steps = 5;

  // Steps: acceptance, step quality (trust_region_step_evaluator.h; 0
  // consecutive non-monotonic steps is the monotonic loop, as Ceres when
  // use_nonmonotonic_steps is false), the linear solver's forcing
  // parameter, and the column scaling of the Jacobian.
  double min_relative_decrease = 1e-3;
  int max_consecutive_nonmonotonic_steps = 0;
  double eta = 1e-1;
  bool jacobi_scaling = true;

  // Levenberg-Marquardt's radius and damping (levenberg_marquardt_strategy.h)
  // and the projected line search of bounded problems (line_search.h).
  LevenbergMarquardtOptions levenberg_marquardt;
  ArmijoOptions line_search;

  // Inner iterations stop for the rest of the solve once a round decreases
  // the candidate's cost by a relative amount of at most this.
  double inner_iteration_tolerance = 1e-3;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_MINIMIZER_OPTIONS_H_
