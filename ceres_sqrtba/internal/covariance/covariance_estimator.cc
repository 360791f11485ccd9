#include "ceres_sqrtba/internal/covariance/covariance_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <sstream>

#include "Eigen/Dense"
#include "glog/logging.h"
#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/common/wall_time.h"
#include "ceres_sqrtba/internal/covariance/landmark_factorization.h"
#include "ceres_sqrtba/internal/covariance/null_space.h"
#include "ceres_sqrtba/internal/covariance/selected_inversion.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_pattern.h"
#include "ceres_sqrtba/internal/direct/sparse_cholesky.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

using Matrix = Eigen::MatrixXd;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Below this pivot ratio L_kk^2 / S_kk the Cholesky of S does not vouch for
// full rank and the null space is searched (SPARSE_QR semantics; DENSE_SVD
// semantics always search, for the condition-number test).
constexpr double kScreenPivotRatio = 1e-8;
constexpr int kMinSubspace = 16;

// One side of a requested block: a camera, or a landmark with the cameras
// that see it (whose camera-space rows feed its covariance through K).
struct Side {
  int parameter = -1;
  int size = 0;
  int group = -1;            // landmark: its group
  std::vector<int> cameras;  // camera indices: the camera itself, or C(l)
  Matrix minus_k;            // landmark: -K_l (e x camera columns); camera: I
};

}  // namespace

// S's factor and what the inverse's camera blocks need (Compute's
// camera-side state), kept by keep_camera_inverse for CameraBlock.
struct CovarianceEstimator::CameraInverse {
  std::unique_ptr<ReducedCameraPattern> pattern;
  SparseCholeskyPlan plan;
  std::vector<int64_t> col_begin, rows;  // S's scalar pattern (the factor's analysis reads it)
  std::unique_ptr<SparseCameraCholesky> cholesky;
  SelectedInverse z;
  std::vector<int> camera_offset;  // per camera + 1: its first coordinate in S
  std::vector<char> fixed;         // coordinates held for the generalized inverse
  int drop = 0;                    // directions projected out (pseudo-inverse)
  Matrix null_camera, y_camera;    // nc x drop: N's and Y = Sigma_g N's camera rows
  Matrix nty;                      // drop x drop: N^T Y
  std::mutex solve_mutex;          // CHOLMOD's solves share its workspace

  // G v for camera vectors (columns of v), the held coordinates zero.
  bool ApplyG(Matrix* v, std::string* error) {
    const int nc = static_cast<int>(fixed.size());
    Eigen::VectorXd column(nc);
    std::lock_guard<std::mutex> lock(solve_mutex);
    for (int j = 0; j < v->cols(); ++j) {
      column = v->col(j);
      for (int i = 0; i < nc; ++i) {
        if (fixed[i]) column[i] = 0.0;
      }
      const LinearSolverSummary solved = cholesky->Solve(column.data(), column.data());
      if (solved.termination != LinearSolverTermination::kSuccess) {
        *error = solved.message;
        return false;
      }
      for (int i = 0; i < nc; ++i) {
        if (fixed[i]) column[i] = 0.0;
      }
      v->col(j) = column;
    }
    return true;
  }
};

CovarianceEstimator::CovarianceEstimator(const CovarianceEstimatorOptions& options) : options_(options) {}
CovarianceEstimator::~CovarianceEstimator() = default;

StructureStatus CovarianceEstimator::Read(const ceres::Problem& problem, std::string* error) {
  context_ = std::make_unique<ParallelContext>(std::max(1, options_.num_threads));
  return BuildProblemStructure(problem, nullptr, &s_, error, context_.get());
}

bool CovarianceEstimator::Compute(const ceres::Problem& problem, const std::vector<std::pair<int, int>>& requests,
                                  std::vector<double>* values, std::vector<int64_t>* offsets, std::string* error) {
  statistics_ = CovarianceStatistics();
  camera_inverse_.reset();
  ProblemStructure& s = s_;
  auto kept = std::make_unique<CameraInverse>();
  CameraInverse& k = *kept;
  if (!options_.apply_loss_function) {
    for (ResidualBlockInfo& rb : s.residual_blocks) rb.loss_function = nullptr;
  }
  const int nc = s.num_camera_parameters;
  const int num_cameras = static_cast<int>(s.cameras.size());
  std::vector<int> group_of(s.parameter_blocks.size(), -1);
  for (int g = 0; g < static_cast<int>(s.groups.size()); ++g) {
    if (s.groups[g].landmark >= 0) group_of[s.groups[g].landmark] = g;
  }
  std::vector<int>& camera_offset = k.camera_offset;
  camera_offset.assign(num_cameras + 1, 0);
  for (int c = 0; c < num_cameras; ++c) {
    camera_offset[c + 1] = camera_offset[c] + s.parameter_blocks[s.cameras[c]].tangent_size;
  }

  // The memory plan, before anything large is allocated.
  k.pattern = std::make_unique<ReducedCameraPattern>(s);
  ReducedCameraPattern& pattern = *k.pattern;
  k.plan = PlanSparseCholesky(pattern);
  const SparseCholeskyPlan& plan = k.plan;
  if (num_cameras > 0 && plan.camera_order.empty()) {
    *error = plan.error;
    return false;
  }
  offsets->assign(requests.size() + 1, 0);
  for (size_t i = 0; i < requests.size(); ++i) {
    (*offsets)[i + 1] = (*offsets)[i] + static_cast<int64_t>(s.parameter_blocks[requests[i].first].tangent_size) *
                                            s.parameter_blocks[requests[i].second].tangent_size;
  }
  // Cameras whose column of G a request needs, by S's block pattern (an
  // upper bound: the factor's pattern holds more).
  auto cameras_of = [&](int p) {
    std::vector<int> cameras;
    const ParameterBlockInfo& pb = s.parameter_blocks[p];
    if (!pb.is_landmark) {
      cameras.push_back(pb.camera_index);
      return cameras;
    }
    const Group& group = s.groups[group_of[p]];
    for (int c = group.camera_begin; c < group.camera_end; ++c) {
      cameras.push_back(s.parameter_blocks[s.group_cameras[c]].camera_index);
    }
    return cameras;
  };
  auto in_s = [&](int c1, int c2) { return pattern.FindBlock(std::min(c1, c2), std::max(c1, c2)) >= 0; };
  std::vector<char> needs_column(num_cameras, 0);
  for (const auto& request : requests) {
    if (request.first == request.second) continue;  // a block's own cameras are neighbours in S
    const std::vector<int> a = cameras_of(request.first), b = cameras_of(request.second);
    for (int c2 : b) {
      if (needs_column[c2]) continue;
      for (int c1 : a) {
        if (!in_s(c1, c2)) {
          needs_column[c2] = 1;
          break;
        }
      }
    }
  }
  const int64_t columns = std::count(needs_column.begin(), needs_column.end(), 1);
  std::vector<int64_t>& col_begin = k.col_begin;
  std::vector<int64_t>& rows = k.rows;
  {
    const int64_t bytes = LandmarkFactorization::RequiredBytes(s) + pattern.ScalarBytes() +
                          8 * pattern.num_nonzeros() + plan.RequiredBytes(pattern) +
                          SelectedInverse::RequiredBytes(static_cast<int64_t>(1.25 * plan.factor_size), nc) +
                          8 * offsets->back() + 8 * columns * nc * 6 + 8 * int64_t{nc} * 64;
    const MemoryBudget budget(options_.memory_limit_in_bytes, "Covariance::Options::memory_limit_in_bytes");
    std::ostringstream what;
    what << "The covariance's Jacobian, reduced camera matrix (" << nc << " x " << nc << "), its factor and inverse ("
         << plan.factor_size << " values each) and " << requests.size() << " blocks";
    if (!budget.Fits(bytes, what.str(), error)) return false;
  }

  double t0 = WallTimeInSeconds();
  LandmarkFactorization f(s, context_.get(), options_.landmark_damping);
  if (!f.Compute(&problem, error)) return false;
  undetermined_.clear();
  std::vector<char> is_undetermined(s.parameter_blocks.size(), 0);
  for (int g = 0; g < static_cast<int>(s.groups.size()); ++g) {
    if (f.LandmarkIsRankDeficient(g) && options_.skip_undetermined_landmarks) {
      f.Exclude(g);
      undetermined_.push_back(s.groups[g].landmark);
      is_undetermined[s.groups[g].landmark] = 1;
      continue;
    }
    if (f.LandmarkIsRankDeficient(g)) {
      std::ostringstream msg;
      msg << "Jacobian matrix is rank deficient: the landmark "
          << NameOf(s.parameter_blocks[s.groups[g].landmark].user_values)
          << " (tangent size " << s.groups[g].landmark_size << ") is not determined by its " << s.groups[g].num_rows
          << " residuals (its columns of the Jacobian are linearly dependent: the smallest pivot of their QR is "
          << f.SmallestPivot(g) << "); remove it, hold it constant, or set "
             "Covariance::Options::skip_undetermined_landmarks.";
      *error = msg.str();
      return false;
    }
  }
  {
    const double global = 20.0 * (s.num_residuals + s.num_effective_parameters) *
                          std::numeric_limits<double>::epsilon() * f.max_column_norm();
    for (int g = 0; g < static_cast<int>(s.groups.size()); ++g) {
      if (s.groups[g].landmark >= 0 && !f.excluded(g) && !(f.SmallestPivot(g) > global)) {
        ++statistics_.weak_landmarks;
      }
    }
  }
  pattern.ScalarPattern(&col_begin, &rows);
  std::vector<double> reduced(static_cast<size_t>(std::max<int64_t>(1, pattern.num_nonzeros())));
  f.AssembleReducedCameraMatrix(pattern, col_begin, reduced.data());
  double t1 = WallTimeInSeconds();
  statistics_.seconds_jacobian = t1 - t0;

  k.cholesky = std::make_unique<SparseCameraCholesky>(pattern, plan, col_begin.data(), rows.data());
  SparseCameraCholesky& cholesky = *k.cholesky;
  LinearSolverSummary factored = cholesky.Factorize(reduced.data());
  if (factored.termination == LinearSolverTermination::kFatalError) {
    *error = factored.message;
    return false;
  }
  bool search = options_.pseudo_inverse || factored.termination != LinearSolverTermination::kSuccess;
  if (!search && nc > 0) {
    SupernodalFactor l;
    if (!cholesky.GetSupernodalFactor(&l)) {
      *error = "the Cholesky factor of the reduced camera matrix is not supernodal";
      return false;
    }
    for (int64_t t = 0; t < l.num_supernodes && !search; ++t) {
      const int64_t ld = l.row_begin[t + 1] - l.row_begin[t];
      for (int64_t j = l.super[t]; j < l.super[t + 1]; ++j) {
        const double pivot = l.values[l.value_begin[t] + (j - l.super[t]) * (ld + 1)];
        const int64_t original = l.perm[j];
        const double diagonal = reduced[col_begin[original + 1] - 1];
        if (!(pivot * pivot > kScreenPivotRatio * diagonal)) {
          search = true;
          break;
        }
      }
    }
  }
  double t2 = WallTimeInSeconds();
  statistics_.seconds_factorization = t2 - t1;

  // The gauge: how many directions are dropped, and which coordinates of S
  // are held for the generalized inverse.
  int& drop = k.drop;
  Matrix& null_camera = k.null_camera;  // nc x drop
  std::vector<char>& fixed = k.fixed;
  fixed.assign(nc, 0);
  const int num_columns = s.num_effective_parameters;
  if (search && nc > 0) {
    const double lambda_max = LargestEigenvalue(f, 30);
    if (!(lambda_max > 0.0)) {
      *error = "Jacobian matrix is rank deficient: it is zero at the current parameter values.";
      return false;
    }
    std::vector<double> d(nc);
    for (int j = 0; j < nc; ++j) {
      const double diagonal = reduced[col_begin[j + 1] - 1];
      d[j] = diagonal > 0.0 ? 1.0 / std::sqrt(diagonal) : 1.0;
    }
    std::vector<double> shifted = reduced;
    for (int j = 0; j < nc; ++j) {
      for (int64_t k = col_begin[j]; k < col_begin[j + 1]; ++k) shifted[k] *= d[rows[k]] * d[j];
      shifted[col_begin[j + 1] - 1] += kNullSpaceShift;
    }
    factored = cholesky.Factorize(shifted.data());
    if (factored.termination != LinearSolverTermination::kSuccess) {
      *error = "The shifted reduced camera matrix could not be factorized: " + factored.message;
      return false;
    }
    const double tolerance = options_.column_pivot_threshold >= 0.0
                                 ? options_.column_pivot_threshold
                                 : 20.0 * (s.num_residuals + num_columns) * std::numeric_limits<double>::epsilon() *
                                       f.max_column_norm();
    int p = std::min(nc, std::max(kMinSubspace, options_.null_space_rank + 8));
    NearNullSpace space;
    int below = 0;
    for (;;) {
      if (!FindNearNullSpace(f, &cholesky, d, p, &space, error)) return false;
      below = 0;
      for (double theta : space.theta) {
        const bool is_null = options_.pseudo_inverse
                                 ? theta < options_.min_reciprocal_condition_number * lambda_max
                                 : !(std::sqrt(std::max(theta, 0.0)) > tolerance);
        if (is_null) ++below;
      }
      if (VLOG_IS_ON(1)) {
        std::ostringstream ratios;
        for (double theta : space.theta) ratios << " " << theta / lambda_max;
        VLOG(1) << "ceres_sqrtba::Covariance: lambda_max " << lambda_max << ", rank tolerance " << tolerance
                << ", Ritz values / lambda_max:" << ratios.str();
      }
      if (below < p || p == nc) break;
      p = std::min(nc, 2 * p);
    }
    if (!options_.pseudo_inverse) {
      if (below > 0) {
        std::ostringstream msg;
        msg << "Jacobian matrix is rank deficient. Number of columns: " << num_columns
            << " rank: " << num_columns - below
            << " (the free directions: a bundle adjustment without constant blocks has 7, the similarity of "
               "the scene; hold the gauge with constant blocks or manifolds, or use algorithm_type = DENSE_SVD "
               "for the pseudo-inverse).";
        *error = msg.str();
        return false;
      }
      if (factored.termination != LinearSolverTermination::kSuccess) {
        *error = "The reduced camera matrix is not numerically positive definite.";
        return false;
      }
    } else {
      drop = options_.null_space_rank < 0 ? below : std::min(options_.null_space_rank, p);
      if (drop < static_cast<int>(space.theta.size())) {
        const double ratio = space.theta[drop] / lambda_max;
        if (ratio < options_.min_reciprocal_condition_number) {
          std::ostringstream msg;
          msg << "Error: Covariance matrix is near rank deficient and the user did not specify a non-zero "
                 "Covariance::Options::null_space_rank to enable the computation of a Pseudo-Inverse. "
                 "Reciprocal condition number: "
              << ratio << " min_reciprocal_condition_number: " << options_.min_reciprocal_condition_number;
          *error = msg.str();
          return false;
        }
      }
      statistics_.null_space_dimension = drop;
      if (drop > 0) {
        null_camera = space.camera.leftCols(drop);
        Eigen::ColPivHouseholderQR<Matrix> pivoted(null_camera.transpose());
        for (int k = 0; k < drop; ++k) fixed[pivoted.colsPermutation().indices()[k]] = 1;
      }
    }
    std::vector<double> held = reduced;
    if (drop > 0) {
      for (int j = 0; j < nc; ++j) {
        for (int64_t k = col_begin[j]; k < col_begin[j + 1]; ++k) {
          const int64_t i = rows[k];
          if (fixed[i] || fixed[j]) held[k] = i == j ? 1.0 : 0.0;
        }
      }
    }
    factored = cholesky.Factorize(held.data());
    if (factored.termination != LinearSolverTermination::kSuccess) {
      *error = "The reduced camera matrix with the gauge held is not positive definite: " + factored.message;
      return false;
    }
  }
  double t3 = WallTimeInSeconds();
  statistics_.seconds_null_space = t3 - t2;
  // S's values are not needed any more (the factor is): their memory goes
  // before the selected inverse takes as much as the factor.
  std::vector<double>().swap(reduced);

  SelectedInverse& z = k.z;
  if (nc > 0) {
    SupernodalFactor l;
    if (!cholesky.GetSupernodalFactor(&l)) {
      *error = "the Cholesky factor of the reduced camera matrix is not supernodal";
      return false;
    }
    statistics_.factor_values = l.value_begin[l.num_supernodes];
    if (!z.Compute(l, error)) return false;
  }
  // G v for camera vectors (columns of v), the held coordinates zero.
  auto apply_g = [&](Matrix* v) { return k.ApplyG(v, error); };
  // Columns of G for far requests.
  std::vector<int64_t> column_slot(num_cameras, -1);
  Matrix column_store;
  {
    int64_t width = 0;
    for (int c = 0; c < num_cameras; ++c) {
      if (needs_column[c]) {
        column_slot[c] = width;
        width += camera_offset[c + 1] - camera_offset[c];
      }
    }
    column_store.setZero(nc, width);
    for (int c = 0; c < num_cameras; ++c) {
      if (!needs_column[c]) continue;
      for (int a = camera_offset[c]; a < camera_offset[c + 1]; ++a) {
        column_store(a, column_slot[c] + a - camera_offset[c]) = 1.0;
      }
    }
    if (!apply_g(&column_store)) return false;
    statistics_.cameras_with_columns = static_cast<int>(columns);
  }
  double t4 = WallTimeInSeconds();
  statistics_.seconds_inversion = t4 - t3;

  std::vector<int> camera_of_scalar(nc);
  for (int c = 0; c < num_cameras; ++c) {
    for (int a = camera_offset[c]; a < camera_offset[c + 1]; ++a) camera_of_scalar[a] = c;
  }
  auto g_entry = [&](int i, int j, double* value) {
    if (fixed[i] || fixed[j]) {
      *value = 0.0;
      return true;
    }
    if (z.Entry(i, j, value)) return true;
    const int cj = camera_of_scalar[j], ci = camera_of_scalar[i];
    if (column_slot[cj] >= 0) {
      *value = column_store(i, column_slot[cj] + j - camera_offset[cj]);
      return true;
    }
    if (column_slot[ci] >= 0) {
      *value = column_store(j, column_slot[ci] + i - camera_offset[ci]);
      return true;
    }
    return false;
  };

  // The pseudo-inverse's terms: N and Y = Sigma_g N, row blocks per side.
  Matrix& y_camera = k.y_camera;  // nc x drop
  Matrix& nty = k.nty;            // drop x drop
  auto make_side = [&](int p) {
    Side side;
    side.parameter = p;
    const ParameterBlockInfo& pb = s.parameter_blocks[p];
    side.size = pb.tangent_size;
    side.cameras = cameras_of(p);
    if (!pb.is_landmark) {
      side.minus_k = Matrix::Identity(side.size, side.size);
      return side;
    }
    side.group = group_of[p];
    const Group& group = s.groups[side.group];
    RowMatrix k(group.landmark_size, group.camera_columns);
    if (group.camera_columns > 0) f.Marginalization(side.group, k.data());
    side.minus_k = -k;
    return side;
  };
  auto camera_rows = [&](const Side& side, const Matrix& v) {
    int total = 0;
    for (int c : side.cameras) total += camera_offset[c + 1] - camera_offset[c];
    Matrix out(total, v.cols());
    int row = 0;
    for (int c : side.cameras) {
      const int size = camera_offset[c + 1] - camera_offset[c];
      out.middleRows(row, size) = v.middleRows(camera_offset[c], size);
      row += size;
    }
    return out;
  };
  auto n_rows = [&](const Side& side) -> Matrix { return side.minus_k * camera_rows(side, null_camera); };
  auto y_rows = [&](const Side& side) -> Matrix {
    Matrix y = side.minus_k * camera_rows(side, y_camera);
    if (side.group >= 0) {
      RowMatrix c(side.size, side.size);
      f.LandmarkInverse(side.group, c.data());
      y += c * n_rows(side);
    }
    return y;
  };
  if (drop > 0) {
    y_camera = AddLandmarkMetric(f, null_camera);
    if (!apply_g(&y_camera)) return false;
    nty = null_camera.transpose() * y_camera;
    for (int g = 0; g < static_cast<int>(s.groups.size()); ++g) {
      if (s.groups[g].landmark < 0 || f.excluded(g)) continue;
      const Side side = make_side(s.groups[g].landmark);
      nty += n_rows(side).transpose() * y_rows(side);
    }
  }

  values->assign(static_cast<size_t>(std::max<int64_t>(1, offsets->back())), 0.0);
  std::vector<char> failed(requests.size(), 0);
  context_->For(static_cast<int>(requests.size()), 16, [&](int rb, int re) {
    std::vector<double> g_storage;  // one buffer per chunk: a long track's G is (6 k)^2 doubles
    for (int r = rb; r < re; ++r) {
      if (is_undetermined[requests[r].first] || is_undetermined[requests[r].second]) continue;
      const bool same = requests[r].first == requests[r].second;
      const Side a = make_side(requests[r].first);
      const Side b = same ? Side() : make_side(requests[r].second);
      const Side& bs = same ? a : b;
      int rows_a = 0, cols_b = 0;
      for (int c : a.cameras) rows_a += camera_offset[c + 1] - camera_offset[c];
      for (int c : bs.cameras) cols_b += camera_offset[c + 1] - camera_offset[c];
      if (g_storage.size() < static_cast<size_t>(rows_a) * cols_b) g_storage.resize(static_cast<size_t>(rows_a) * cols_b);
      Eigen::Map<Matrix> g(g_storage.data(), rows_a, cols_b);
      int row = 0;
      bool ok = true;
      for (size_t i1 = 0; i1 < a.cameras.size(); ++i1) {
        const int c1 = a.cameras[i1];
        int col = 0;
        for (size_t i2 = 0; i2 < bs.cameras.size(); ++i2) {
          const int c2 = bs.cameras[i2];
          const int f1 = camera_offset[c1 + 1] - camera_offset[c1], f2 = camera_offset[c2 + 1] - camera_offset[c2];
          if (same && i2 > i1) break;  // the upper blocks: mirrored below
          const bool any_fixed = drop > 0 && (std::any_of(&fixed[camera_offset[c1]], &fixed[camera_offset[c1]] + f1,
                                                          [](char x) { return x != 0; }) ||
                                              std::any_of(&fixed[camera_offset[c2]], &fixed[camera_offset[c2]] + f2,
                                                          [](char x) { return x != 0; }));
          if (any_fixed ||
              !z.Block(camera_offset[c1], f1, camera_offset[c2], f2, &g(row, col), static_cast<int>(g.rows()))) {
            for (int i = camera_offset[c1]; i < camera_offset[c1 + 1] && ok; ++i) {
              for (int j = camera_offset[c2]; j < camera_offset[c2 + 1] && ok; ++j) {
                ok = g_entry(i, j, &g(row + i - camera_offset[c1], col + j - camera_offset[c2]));
              }
            }
          }
          col += f2;
        }
        row += camera_offset[c1 + 1] - camera_offset[c1];
      }
      if (same) {
        // G is symmetric: its upper triangle from the lower one (the same
        // bits, and half the reads of the inverse, which dominate this pass).
        for (int j = 1; j < cols_b; ++j) {
          for (int i = 0; i < j; ++i) g(i, j) = g(j, i);
        }
      }
      if (!ok) {
        failed[r] = 1;
        continue;
      }
      const Matrix ag = a.minus_k * g;
      Matrix block = ag * bs.minus_k.transpose();
      if (same && a.group >= 0) {
        RowMatrix c(a.size, a.size);
        f.LandmarkInverse(a.group, c.data());
        block += c;
      }
      if (drop > 0) {
        const Matrix na = n_rows(a), nb = n_rows(bs), ya = y_rows(a), yb = y_rows(bs);
        block -= na * yb.transpose() + ya * nb.transpose();
        block += na * nty * nb.transpose();
      }
      Eigen::Map<RowMatrix>(values->data() + (*offsets)[r], a.size, bs.size) = block;
    }
  });
  if (std::find(failed.begin(), failed.end(), 1) != failed.end()) {
    *error = "internal error: a block of the inverse reduced camera matrix was neither selected nor solved for";
    return false;
  }
  statistics_.seconds_blocks = WallTimeInSeconds() - t4;
  if (options_.keep_camera_inverse) camera_inverse_ = std::move(kept);
  return true;
}

bool CovarianceEstimator::CameraBlock(int a, int b, double* out, std::string* error) const {
  if (camera_inverse_ == nullptr) {
    *error = "internal error: CameraBlock without a kept camera inverse";
    return false;
  }
  CameraInverse& k = *camera_inverse_;
  const ParameterBlockInfo& pa = s_.parameter_blocks[a];
  const ParameterBlockInfo& pb = s_.parameter_blocks[b];
  if (pa.is_landmark || pb.is_landmark || pa.is_constant || pb.is_constant) {
    *error = "internal error: CameraBlock of a landmark or a constant block";
    return false;
  }
  const int o1 = k.camera_offset[pa.camera_index], f1 = k.camera_offset[pa.camera_index + 1] - o1;
  const int o2 = k.camera_offset[pb.camera_index], f2 = k.camera_offset[pb.camera_index + 1] - o2;
  auto held = [&](int o, int size) {
    return std::any_of(&k.fixed[o], &k.fixed[o] + size, [](char x) { return x != 0; });
  };
  Matrix g(f1, f2);
  if (held(o1, f1) || held(o2, f2) || !k.z.Block(o1, f1, o2, f2, g.data(), f1)) {
    // Off the factor's pattern (or a held coordinate): b's columns of G.
    const int nc = static_cast<int>(k.fixed.size());
    Matrix columns = Matrix::Zero(nc, f2);
    for (int j = 0; j < f2; ++j) columns(o2 + j, j) = 1.0;
    if (!k.ApplyG(&columns, error)) return false;
    g = columns.middleRows(o1, f1);
  }
  if (k.drop > 0) {
    const Matrix na = k.null_camera.middleRows(o1, f1), nb = k.null_camera.middleRows(o2, f2);
    const Matrix ya = k.y_camera.middleRows(o1, f1), yb = k.y_camera.middleRows(o2, f2);
    g -= na * yb.transpose() + ya * nb.transpose();
    g += na * k.nty * nb.transpose();
  }
  Eigen::Map<RowMatrix>(out, f1, f2) = g;
  return true;
}

}  // namespace internal
}  // namespace ceres_sqrtba
