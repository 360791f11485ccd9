#include "ceres_sqrtba/covariance.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "Eigen/Core"
#include "ceres_sqrtba/internal/common/ceres_version.h"
#include "ceres_sqrtba/internal/common/wall_time.h"
#include "ceres_sqrtba/internal/covariance/covariance_estimator.h"
#include "glog/logging.h"

namespace ceres_sqrtba {

using internal::CovarianceEstimator;
using internal::CovarianceEstimatorOptions;
using internal::NameOf;
using internal::ParameterBlockInfo;
using internal::StructureStatus;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

struct Covariance::Impl {
  explicit Impl(const Options& o) : options(o) {}
  Options options;
  ceres::Problem* problem = nullptr;
  bool computed = false;
  bool valid = false;
  std::unique_ptr<ceres::Covariance> ceres_covariance;  // problems without landmarks
  std::unique_ptr<CovarianceEstimator> estimator;
  // (a, b) with a < b by address, as Ceres orders its blocks -> offset into values.
  std::map<std::pair<const double*, const double*>, int64_t> blocks;
  std::vector<double> values;
  std::set<const double*> undetermined;  // left out by skip_undetermined_landmarks
  Summary summary;
  mutable std::string error;

  bool Fail(const std::string& message) const {
    error = message;
    LOG(ERROR) << message;
    return false;
  }
  const ParameterBlockInfo* Info(const double* block) const {
    const auto& s = estimator->structure();
    const auto it = s.index_of.find(block);
    return it == s.index_of.end() ? nullptr : &s.parameter_blocks[it->second];
  }
  bool GetBlock(const double* a, const double* b, bool lift, double* out) const;
  bool GetMatrix(const std::vector<const double*>& parameter_blocks, bool lift, double* out) const;
};

namespace {

template <typename T>
bool FindDuplicates(std::vector<T> items, std::string* which) {
  std::vector<T> sorted = items;
  std::sort(sorted.begin(), sorted.end());
  const auto it = std::adjacent_find(sorted.begin(), sorted.end());
  if (it == sorted.end()) return false;
  std::ostringstream msg;
  msg << "(";
  bool first = true;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i] == *it) {
      msg << (first ? "" : ", ") << i;
      first = false;
    }
  }
  msg << ")";
  *which = msg.str();
  return true;
}

}  // namespace

Covariance::Covariance(const Options& options) : impl_(new Impl(options)) {}
Covariance::~Covariance() = default;

const std::string& Covariance::error() const { return impl_->error; }
const Covariance::Summary& Covariance::summary() const { return impl_->summary; }

bool Covariance::Compute(const std::vector<const double*>& parameter_blocks, ceres::Problem* problem) {
  std::string which;
  if (FindDuplicates(parameter_blocks, &which)) {
    impl_->computed = true;
    impl_->valid = false;
    return impl_->Fail("Covariance::Compute called with duplicate blocks at indices " + which + ".");
  }
  std::vector<std::pair<const double*, const double*>> pairs;
  for (size_t i = 0; i < parameter_blocks.size(); ++i) {
    for (size_t j = i; j < parameter_blocks.size(); ++j) pairs.emplace_back(parameter_blocks[i], parameter_blocks[j]);
  }
  return Compute(pairs, problem);
}

bool Covariance::Compute(const std::vector<std::pair<const double*, const double*>>& covariance_blocks,
                         ceres::Problem* problem) {
  Impl& m = *impl_;
  const double start = internal::WallTimeInSeconds();
  m.computed = true;
  m.valid = false;
  m.error.clear();
  m.blocks.clear();
  m.undetermined.clear();
  m.values.clear();
  m.ceres_covariance.reset();
  m.summary = Summary();
  m.problem = problem;
  if (problem == nullptr) return m.Fail("Covariance::Compute called with a null problem.");
  std::string which;
  if (FindDuplicates(covariance_blocks, &which)) {
    return m.Fail("Covariance::Compute called with duplicate blocks at indices " + which + ".");
  }
  for (const auto& pair : covariance_blocks) {
    for (const double* block : {pair.first, pair.second}) {
      if (!problem->HasParameterBlock(block)) {
        return m.Fail("Covariance::Compute: " + NameOf(block) + " is not a parameter block of the problem.");
      }
    }
  }
  CovarianceEstimatorOptions options;
  options.num_threads = m.options.num_threads;
  options.apply_loss_function = m.options.apply_loss_function;
  options.pseudo_inverse = m.options.algorithm_type == ceres::DENSE_SVD;
  options.min_reciprocal_condition_number = m.options.min_reciprocal_condition_number;
  options.null_space_rank = m.options.null_space_rank;
#if CERES_SQRTBA_CERES_2_2
  options.column_pivot_threshold = m.options.column_pivot_threshold;  // Ceres 2.2's option
#endif
  options.memory_limit_in_bytes = m.options.memory_limit_in_bytes;
  options.skip_undetermined_landmarks = m.options.skip_undetermined_landmarks;
  options.landmark_damping = m.options.landmark_damping;
  options.keep_camera_inverse = m.options.camera_pairs_on_demand;
  if (m.options.num_threads < 1) return m.Fail("Covariance::Options::num_threads must be at least 1.");
  if (m.options.null_space_rank < -1) return m.Fail("Covariance::Options::null_space_rank must be -1 or more.");
  if (!(m.options.min_reciprocal_condition_number >= 0.0 && m.options.min_reciprocal_condition_number < 1.0)) {
    return m.Fail("Covariance::Options::min_reciprocal_condition_number must be in [0, 1).");
  }
  if (!(m.options.landmark_damping >= 0.0 && std::isfinite(m.options.landmark_damping))) {
    return m.Fail("Covariance::Options::landmark_damping must be finite and at least 0.");
  }
  if (m.options.landmark_damping > 0.0 && m.options.algorithm_type == ceres::DENSE_SVD) {
    return m.Fail("Covariance::Options::landmark_damping > 0 needs algorithm_type = SPARSE_QR (the pseudo-inverse "
                  "of DENSE_SVD is the undamped problem's).");
  }
  m.estimator = std::make_unique<CovarianceEstimator>(options);
  std::string error;
  switch (m.estimator->Read(*problem, &error)) {
    case StructureStatus::kOk:
      break;
    case StructureStatus::kNoLandmarks: {
      m.ceres_covariance = std::make_unique<ceres::Covariance>(m.options);
      m.valid = m.ceres_covariance->Compute(covariance_blocks, problem);
      m.summary.seconds_total = internal::WallTimeInSeconds() - start;
      if (!m.valid) {
        return m.Fail("ceres::Covariance::Compute failed (the problem has no landmarks to eliminate, so it went to "
                      "ceres::Covariance; Ceres' log says why).");
      }
      return true;
    }
    case StructureStatus::kUnsupported:
    case StructureStatus::kInvalid:
      return m.Fail(error);
  }
  const internal::ProblemStructure& s = m.estimator->structure();
  std::vector<std::pair<int, int>> requests;
  std::vector<std::pair<const double*, const double*>> keys;
  for (const auto& pair : covariance_blocks) {
    const double* a = std::min(pair.first, pair.second);
    const double* b = std::max(pair.first, pair.second);
    const int ia = s.index_of.at(a), ib = s.index_of.at(b);
    if (s.parameter_blocks[ia].is_constant || s.parameter_blocks[ib].is_constant) continue;
    if (!m.blocks.emplace(std::make_pair(a, b), -1).second) continue;  // (a, b) and (b, a)
    requests.emplace_back(ia, ib);
    keys.emplace_back(a, b);
  }
  std::vector<int64_t> offsets;
  if (!m.estimator->Compute(*problem, requests, &m.values, &offsets, &error)) {
    m.blocks.clear();
    return m.Fail(error);
  }
  for (size_t i = 0; i < keys.size(); ++i) m.blocks[keys[i]] = offsets[i];
  for (int p : m.estimator->undetermined()) m.undetermined.insert(s.parameter_blocks[p].user_values);
  const internal::CovarianceStatistics& st = m.estimator->statistics();
  m.summary.square_root = true;
  m.summary.num_landmarks = static_cast<int>(s.landmarks.size());
  m.summary.num_cameras = static_cast<int>(s.cameras.size());
  m.summary.null_space_dimension = st.null_space_dimension;
  m.summary.factor_values = st.factor_values;
  m.summary.cameras_with_columns = st.cameras_with_columns;
  m.summary.weak_landmarks = st.weak_landmarks;
  m.summary.undetermined_landmarks = static_cast<int>(m.estimator->undetermined().size());
  m.summary.seconds_jacobian = st.seconds_jacobian;
  m.summary.seconds_factorization = st.seconds_factorization;
  m.summary.seconds_null_space = st.seconds_null_space;
  m.summary.seconds_inversion = st.seconds_inversion;
  m.summary.seconds_blocks = st.seconds_blocks;
  m.summary.seconds_total = internal::WallTimeInSeconds() - start;
  m.valid = true;
  return true;
}

bool Covariance::Impl::GetBlock(const double* a, const double* b, bool lift, double* out) const {
  if (!computed) return Fail("Covariance::GetCovarianceBlock called before Covariance::Compute.");
  if (!valid) return Fail("Covariance::GetCovarianceBlock called when Covariance::Compute returned false.");
  if (ceres_covariance != nullptr) {
    return lift ? ceres_covariance->GetCovarianceBlock(a, b, out)
                : ceres_covariance->GetCovarianceBlockInTangentSpace(a, b, out);
  }
  const ParameterBlockInfo* pa = Info(a);
  const ParameterBlockInfo* pb = Info(b);
  if (pa == nullptr || pb == nullptr) {
    return Fail("Covariance::GetCovarianceBlock: " + NameOf(pa == nullptr ? a : b) +
                " is not a parameter block of the problem.");
  }
  const int rows = lift ? pa->size : pa->tangent_size;
  const int cols = lift ? pb->size : pb->tangent_size;
  Eigen::Map<RowMatrix> result(out, rows, cols);
  if (pa->is_constant || pb->is_constant) {
    result.setZero();
    return true;
  }
  for (const double* x : {a, b}) {
    if (undetermined.count(x) > 0) {
      return Fail("Covariance::GetCovarianceBlock: the landmark " + NameOf(x) +
                  " is not determined by its residuals and was left out (skip_undetermined_landmarks).");
    }
  }
  const bool transpose = a > b;
  const auto it = blocks.find(transpose ? std::make_pair(b, a) : std::make_pair(a, b));
  const ParameterBlockInfo* first = transpose ? pb : pa;
  const ParameterBlockInfo* second = transpose ? pa : pb;
  RowMatrix tangent;
  if ((it == blocks.end() || it->second < 0) && options.camera_pairs_on_demand && !pa->is_landmark &&
      !pb->is_landmark) {
    // Not requested: a pair of camera-side blocks, from the kept factor.
    tangent.resize(pa->tangent_size, pb->tangent_size);
    std::string why;
    const auto& index = estimator->structure().index_of;
    if (!estimator->CameraBlock(index.at(a), index.at(b), tangent.data(), &why)) {
      return Fail("Covariance::GetCovarianceBlock: " + why);
    }
  } else if (it == blocks.end() || it->second < 0) {
    std::ostringstream msg;
    msg << "Unable to find covariance block for " << a << " " << b << " (it was not requested from Compute"
        << (options.camera_pairs_on_demand ? "; camera_pairs_on_demand answers pairs of blocks that are not landmarks"
                                           : "")
        << ").";
    return Fail(msg.str());
  } else {
    Eigen::Map<const RowMatrix> stored(values.data() + it->second, first->tangent_size, second->tangent_size);
    tangent = transpose ? RowMatrix(stored.transpose()) : RowMatrix(stored);
  }
  if (!lift || (pa->manifold == nullptr && pb->manifold == nullptr)) {
    result = tangent;
    return true;
  }
  auto plus_jacobian = [](const ParameterBlockInfo* p) {
    RowMatrix j(p->size, p->tangent_size);
    if (p->manifold == nullptr) {
      j.setIdentity();
    } else {
      p->manifold->PlusJacobian(p->user_values, j.data());
    }
    return j;
  };
  const RowMatrix ja = plus_jacobian(pa);
  const RowMatrix jb = a == b ? ja : plus_jacobian(pb);
  result = ja * tangent * jb.transpose();
  return true;
}

bool Covariance::Impl::GetMatrix(const std::vector<const double*>& parameter_blocks, bool lift,
                                 double* out) const {
  if (!computed) return Fail("Covariance::GetCovarianceMatrix called before Covariance::Compute.");
  if (!valid) return Fail("Covariance::GetCovarianceMatrix called when Covariance::Compute returned false.");
  if (ceres_covariance != nullptr) {
    return lift ? ceres_covariance->GetCovarianceMatrix(parameter_blocks, out)
                : ceres_covariance->GetCovarianceMatrixInTangentSpace(parameter_blocks, out);
  }
  std::vector<int> begin(parameter_blocks.size() + 1, 0);
  for (size_t i = 0; i < parameter_blocks.size(); ++i) {
    const ParameterBlockInfo* p = Info(parameter_blocks[i]);
    if (p == nullptr) {
      return Fail("Covariance::GetCovarianceMatrix: " + NameOf(parameter_blocks[i]) +
                  " is not a parameter block of the problem.");
    }
    begin[i + 1] = begin[i] + (lift ? p->size : p->tangent_size);
  }
  const int n = begin.back();
  Eigen::Map<RowMatrix> result(out, n, n);
  for (size_t i = 0; i < parameter_blocks.size(); ++i) {
    for (size_t j = i; j < parameter_blocks.size(); ++j) {
      const int ri = begin[i + 1] - begin[i], cj = begin[j + 1] - begin[j];
      RowMatrix block(ri, cj);
      if (!GetBlock(parameter_blocks[i], parameter_blocks[j], lift, block.data())) return false;
      result.block(begin[i], begin[j], ri, cj) = block;
      if (i != j) result.block(begin[j], begin[i], cj, ri) = block.transpose();
    }
  }
  return true;
}

bool Covariance::GetCovarianceBlock(const double* parameter_block1, const double* parameter_block2,
                                    double* covariance_block) const {
  return impl_->GetBlock(parameter_block1, parameter_block2, true, covariance_block);
}

bool Covariance::GetCovarianceBlockInTangentSpace(const double* parameter_block1, const double* parameter_block2,
                                                  double* covariance_block) const {
  return impl_->GetBlock(parameter_block1, parameter_block2, false, covariance_block);
}

bool Covariance::GetCovarianceMatrix(const std::vector<const double*>& parameter_blocks,
                                     double* covariance_matrix) const {
  return impl_->GetMatrix(parameter_blocks, true, covariance_matrix);
}

bool Covariance::GetCovarianceMatrixInTangentSpace(const std::vector<const double*>& parameter_blocks,
                                                   double* covariance_matrix) const {
  return impl_->GetMatrix(parameter_blocks, false, covariance_matrix);
}

}  // namespace ceres_sqrtba
