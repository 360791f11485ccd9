#include "ceres_sqrtba/internal/minimizer/reductions.h"

#include <algorithm>
#include <cmath>

namespace ceres_sqrtba {
namespace internal {

ProcessReductions::ProcessReductions(const ProcessGroup* processes, const ProblemStructure& s)
    : processes_(processes), ambient_begin_(s.num_parameters), tangent_begin_(s.camera_tangent_begin) {
  for (int c : s.cameras) ambient_begin_ = std::min(ambient_begin_, s.parameter_blocks[c].state_offset);
}

double ProcessReductions::Dot(Space space, const Eigen::VectorXd& a, const Eigen::VectorXd& b) const {
  const int begin = CameraBegin(space);
  const int cameras = static_cast<int>(a.size()) - begin;
  double landmarks = a.head(begin).dot(b.head(begin));
  processes_->Sum(&landmarks, 1);
  return landmarks + a.tail(cameras).dot(b.tail(cameras));
}

double ProcessReductions::Norm(Space space, const Eigen::VectorXd& a) const {
  const int begin = CameraBegin(space);
  double landmarks = a.head(begin).squaredNorm();
  processes_->Sum(&landmarks, 1);
  return std::sqrt(landmarks + a.tail(a.size() - begin).squaredNorm());
}

double ProcessReductions::MaxNorm(Space space, const Eigen::VectorXd& a) const {
  const int begin = CameraBegin(space);
  double landmarks = 0.0;
  for (int i = 0; i < begin; ++i) landmarks = std::max(landmarks, std::abs(a[i]));
  landmarks = processes_->Max(landmarks);
  double cameras = 0.0;
  for (Eigen::Index i = begin; i < a.size(); ++i) cameras = std::max(cameras, std::abs(a[i]));
  return std::max(landmarks, cameras);
}

}  // namespace internal
}  // namespace ceres_sqrtba
