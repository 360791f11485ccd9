// The sums the trust-region loop takes over the whole state, behind one
// small interface: the model cost change y^T (J^T r), the norms of the
// step and of the state (the parameter tolerance), and the norms of the
// projected gradient x - Plus(x, -g) (the gradient tolerance and the
// summary). In one process they are Eigen's dot products and norms over
// the vectors as they are (LocalReductions). A solve spread over processes
// holds on each the same camera-side entries and its own share of the
// landmarks; its implementation adds the camera part once and the
// landmark parts of every process, in a fixed order, so that every process
// sees the same number and takes the same decision.
//
// The vectors are laid out as ProblemStructure lays out the state: ambient
// (num_parameters) or tangent (num_effective_parameters) coordinates, which
// the Space argument names (the two layouts have the same blocks in the
// same order).
#ifndef CERES_SQRTBA_INTERNAL_MINIMIZER_REDUCTIONS_H_
#define CERES_SQRTBA_INTERNAL_MINIMIZER_REDUCTIONS_H_

#include <Eigen/Core>

#include "ceres_sqrtba/internal/common/process_group.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class Reductions {
 public:
  enum class Space { kAmbient, kTangent };

  virtual ~Reductions() = default;

  // a^T b.
  virtual double Dot(Space space, const Eigen::VectorXd& a, const Eigen::VectorXd& b) const = 0;
  // |a|_2.
  virtual double Norm(Space space, const Eigen::VectorXd& a) const = 0;
  // |a|_inf.
  virtual double MaxNorm(Space space, const Eigen::VectorXd& a) const = 0;
};

// One process: the whole state is here.
class LocalReductions final : public Reductions {
 public:
  double Dot(Space, const Eigen::VectorXd& a, const Eigen::VectorXd& b) const override {
    return a.dot(b);
  }
  double Norm(Space, const Eigen::VectorXd& a) const override { return a.norm(); }
  double MaxNorm(Space, const Eigen::VectorXd& a) const override {
    return a.lpNorm<Eigen::Infinity>();
  }
};

// A solve spread over processes: the landmarks' entries (the head of either
// layout) are each process's own and are summed over the processes in rank
// order; the cameras' entries (the tail) are the same on every process and
// are taken once.
class ProcessReductions final : public Reductions {
 public:
  ProcessReductions(const ProcessGroup* processes, const ProblemStructure& s);
  double Dot(Space space, const Eigen::VectorXd& a, const Eigen::VectorXd& b) const override;
  double Norm(Space space, const Eigen::VectorXd& a) const override;
  double MaxNorm(Space space, const Eigen::VectorXd& a) const override;

 private:
  // Where the cameras start in the layout.
  int CameraBegin(Space space) const { return space == Space::kAmbient ? ambient_begin_ : tangent_begin_; }

  const ProcessGroup* processes_;
  int ambient_begin_ = 0;
  int tangent_begin_ = 0;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_MINIMIZER_REDUCTIONS_H_
