#include "ceres_sqrtba/internal/covariance/null_space.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "Eigen/Dense"

namespace ceres_sqrtba {
namespace internal {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Index of group-camera entry `entry` in the reduced camera vector.
int CameraVectorIndex(const ProblemStructure& s, int entry) {
  return s.parameter_blocks[s.group_cameras[entry]].tangent_offset - s.camera_tangent_begin;
}

// The rows of v (n_c x p) of group g's cameras, in the group's column order.
Eigen::MatrixXd GatherCameraRows(const LandmarkFactorization& f, int g, const Eigen::MatrixXd& v) {
  const ProblemStructure& s = f.structure();
  const Group& group = s.groups[g];
  Eigen::MatrixXd out(group.camera_columns, v.cols());
  int row = 0;
  for (int c = group.camera_begin; c < group.camera_end; ++c) {
    const int size = s.parameter_blocks[s.group_cameras[c]].tangent_size;
    out.middleRows(row, size) = v.middleRows(CameraVectorIndex(s, c), size);
    row += size;
  }
  return out;
}

void ScatterAddCameraRows(const LandmarkFactorization& f, int g, const Eigen::MatrixXd& rows, Eigen::MatrixXd* v) {
  const ProblemStructure& s = f.structure();
  const Group& group = s.groups[g];
  int row = 0;
  for (int c = group.camera_begin; c < group.camera_end; ++c) {
    const int size = s.parameter_blocks[s.group_cameras[c]].tangent_size;
    v->middleRows(CameraVectorIndex(s, c), size) += rows.middleRows(row, size);
    row += size;
  }
}

// K_g x for camera rows x of group g (camera_columns x p): R^-1 (W x).
Eigen::MatrixXd MarginalizationTimes(const LandmarkFactorization& f, int g, const Eigen::MatrixXd& x) {
  const int e = f.landmark_size(g), n = f.camera_columns(g);
  Eigen::MatrixXd t = Eigen::Map<const RowMatrix>(f.w(g), e, n) * x;
  Eigen::Map<const RowMatrix>(f.r(g), e, e).triangularView<Eigen::Upper>().solveInPlace(t);
  return t;
}

// J f for the full-space vectors f = [-K v; v] of the camera vectors v (the
// group's rows of them, camera_columns x p): the group's rows of J F.
Eigen::MatrixXd FullSpaceTimes(const LandmarkFactorization& f, int g, const Eigen::MatrixXd& vg) {
  const int e = f.landmark_size(g);
  const Eigen::MatrixXd landmark = e > 0 ? Eigen::MatrixXd(-MarginalizationTimes(f, g, vg))
                                         : Eigen::MatrixXd(0, vg.cols());
  return f.Times(g, landmark, vg);
}

}  // namespace

double LargestEigenvalue(const LandmarkFactorization& f, int iterations) {
  const ProblemStructure& s = f.structure();
  const int n = s.num_effective_parameters;
  if (n == 0) return 0.0;
  Eigen::VectorXd x(n), y(n);
  Eigen::MatrixXd xl, xc, yl, yc;
  // y = H x = J^T J x.
  auto multiply = [&]() {
    y.setZero();
    for (int g = 0; g < static_cast<int>(s.groups.size()); ++g) {
      if (f.excluded(g)) continue;
      const Group& group = s.groups[g];
      const int e = group.landmark_size;
      const int landmark_offset = e > 0 ? s.parameter_blocks[group.landmark].tangent_offset : 0;
      xl = e > 0 ? Eigen::MatrixXd(x.segment(landmark_offset, e)) : Eigen::MatrixXd(0, 1);
      xc.resize(group.camera_columns, 1);
      for (int c = group.camera_begin; c < group.camera_end; ++c) {
        const ParameterBlockInfo& pb = s.parameter_blocks[s.group_cameras[c]];
        xc.middleRows(f.column(c), pb.tangent_size) = x.segment(pb.tangent_offset, pb.tangent_size);
      }
      f.TransposeTimes(g, f.Times(g, xl, xc), &yl, &yc);
      if (e > 0) y.segment(landmark_offset, e) += yl.col(0);
      for (int c = group.camera_begin; c < group.camera_end; ++c) {
        const ParameterBlockInfo& pb = s.parameter_blocks[s.group_cameras[c]];
        y.segment(pb.tangent_offset, pb.tangent_size) += yc.middleRows(f.column(c), pb.tangent_size).col(0);
      }
    }
  };
  // The start: entries spread over [0.5, 1.5) by the golden ratio, not a
  // vector with structure of its own (the all-ones vector is the null space
  // of a translation gauge, and would make a non-zero H look zero). Should
  // H x still vanish, two more starts with other signs are tried before H
  // is taken to be zero.
  constexpr double kGolden = 0.6180339887498949;
  double lambda = 0.0;
  for (int start = 0; start < 3; ++start) {
    for (int i = 0; i < n; ++i) {
      const double v = 0.5 + std::fmod((i + 1) * kGolden, 1.0);
      x[i] = start == 1 && i % 2 == 1 ? -v : start == 2 && i % 3 == 0 ? -v : v;
    }
    x /= x.norm();
    bool zero = false;
    for (int it = 0; it < iterations; ++it) {
      multiply();
      lambda = x.dot(y);
      const double norm = y.norm();
      if (!(norm > 0.0)) {
        zero = true;
        break;
      }
      x = y / norm;
    }
    if (!zero) return lambda;
  }
  return 0.0;
}

bool FindNearNullSpace(const LandmarkFactorization& f, SparseCameraCholesky* shifted, const std::vector<double>& d,
                       int p, NearNullSpace* result, std::string* error) {
  const ProblemStructure& s = f.structure();
  const int nc = s.num_camera_parameters;
  p = std::min(p, nc);
  // A start that does not depend on the platform: mt19937's raw output.
  std::mt19937 random(20210619u);
  Eigen::MatrixXd v(nc, p);
  for (int j = 0; j < p; ++j) {
    for (int i = 0; i < nc; ++i) v(i, j) = static_cast<double>(random() >> 8) / 16777216.0 - 0.5;
  }
  constexpr int kIterations = 10;
  Eigen::VectorXd column(nc);
  for (int it = 0; it < kIterations; ++it) {
    for (int j = 0; j < p; ++j) {
      column = v.col(j);
      const LinearSolverSummary solved = shifted->Solve(column.data(), column.data());
      if (solved.termination != LinearSolverTermination::kSuccess) {
        *error = solved.message;
        return false;
      }
      v.col(j) = column;
    }
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(v);
    v = qr.householderQ() * Eigen::MatrixXd::Identity(nc, p);
  }
  // Back to S's coordinates; Rayleigh-Ritz in the full space.
  for (int i = 0; i < nc; ++i) v.row(i) *= d[i];
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(p, p);
  Eigen::MatrixXd b = v.transpose() * v;
  for (int g = 0; g < static_cast<int>(s.groups.size()); ++g) {
    const int e = f.landmark_size(g);
    if (f.camera_columns(g) == 0 || f.excluded(g)) continue;
    const Eigen::MatrixXd vg = GatherCameraRows(f, g, v);
    const Eigen::MatrixXd jf = FullSpaceTimes(f, g, vg);
    a.noalias() += jf.transpose() * jf;
    if (e > 0) {
      const Eigen::MatrixXd kv = MarginalizationTimes(f, g, vg);
      b.noalias() += kv.transpose() * kv;
    }
  }
  Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> eigen(a, b);
  if (eigen.info() != Eigen::Success) {
    *error = "the Rayleigh-Ritz step of the null-space search failed";
    return false;
  }
  // The eigensolver's values are accurate to eps times the largest of them
  // only; each Ritz vector's own Rayleigh quotient ||J f||^2 (its full-space
  // norm is 1) from the Jacobian's rows is accurate to eps^2 lambda_max for
  // a null vector: the values the rank decisions read.
  Eigen::MatrixXd ritz = v * eigen.eigenvectors();
  Eigen::VectorXd quotient = Eigen::VectorXd::Zero(p);
  for (int g = 0; g < static_cast<int>(s.groups.size()); ++g) {
    if (f.camera_columns(g) == 0 || f.excluded(g)) continue;
    quotient += FullSpaceTimes(f, g, GatherCameraRows(f, g, ritz)).colwise().squaredNorm().transpose();
  }
  std::vector<int> order(p);
  for (int j = 0; j < p; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(), [&](int i, int j) { return quotient[i] < quotient[j]; });
  result->theta.resize(p);
  result->camera.resize(nc, p);
  for (int j = 0; j < p; ++j) {
    result->theta[j] = quotient[order[j]];
    result->camera.col(j) = ritz.col(order[j]);
  }
  return true;
}

Eigen::MatrixXd AddLandmarkMetric(const LandmarkFactorization& f, const Eigen::MatrixXd& v) {
  const ProblemStructure& s = f.structure();
  Eigen::MatrixXd out = v;
  for (int g = 0; g < static_cast<int>(s.groups.size()); ++g) {
    const int e = f.landmark_size(g), n = f.camera_columns(g);
    if (e == 0 || n == 0 || f.excluded(g)) continue;
    const Eigen::MatrixXd vg = GatherCameraRows(f, g, v);
    Eigen::MatrixXd t = MarginalizationTimes(f, g, vg);
    // K^T (K v) = W^T R^-T (K v).
    Eigen::Map<const RowMatrix>(f.r(g), e, e).transpose().triangularView<Eigen::Lower>().solveInPlace(t);
    ScatterAddCameraRows(f, g, Eigen::Map<const RowMatrix>(f.w(g), e, n).transpose() * t, &out);
  }
  return out;
}

}  // namespace internal
}  // namespace ceres_sqrtba
