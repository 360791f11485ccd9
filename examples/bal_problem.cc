// BalProblem: writing, normalization, perturbation and preprocessing. The
// reader lives in bal_reader.cc.
#include "bal_problem.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <utility>

#include "bal_random.h"
#include "ceres/rotation.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

struct FileCloser {
  void operator()(FILE* file) const {
    if (file != nullptr) std::fclose(file);
  }
};
using FilePtr = std::unique_ptr<FILE, FileCloser>;

// The (n/2)-th smallest value (the upper median for even n). Reorders values.
double UpperMedian(std::vector<double>* values) {
  auto middle = values->begin() + values->size() / 2;
  std::nth_element(values->begin(), middle, values->end());
  return *middle;
}

std::string FormatDouble(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string SystemError(const std::string& path, const char* what) {
  return path + ": " + what + ": " + std::strerror(errno);
}

// Closes the file and reports whether everything written reached it.
bool FinishWriting(FilePtr file, const std::string& path, std::string* error) {
  const bool write_failed = std::ferror(file.get()) != 0;
  const int saved_errno = errno;
  const bool close_failed = std::fclose(file.release()) != 0;
  if (write_failed || close_failed) {
    errno = write_failed ? saved_errno : errno;
    *error = SystemError(path, "cannot write");
    return false;
  }
  return true;
}

}  // namespace

BalProblem BalProblem::FromArrays(int num_cameras, int num_points,
                                  std::vector<int> camera_index,
                                  std::vector<int> point_index,
                                  std::vector<double> observations,
                                  std::vector<double> cameras,
                                  std::vector<double> points,
                                  bool use_quaternions) {
  BalProblem problem;
  problem.num_cameras_ = num_cameras;
  problem.num_points_ = num_points;
  problem.camera_index_ = std::move(camera_index);
  problem.point_index_ = std::move(point_index);
  problem.observations_ = std::move(observations);
  problem.parameters_ = std::move(cameras);
  problem.parameters_.insert(problem.parameters_.end(), points.begin(),
                             points.end());
  if (use_quaternions) problem.ConvertToQuaternions();
  return problem;
}

void BalProblem::ConvertToQuaternions() {
  if (use_quaternions_) return;
  std::vector<double> converted;
  converted.reserve(parameters_.size() + num_cameras_);
  for (int i = 0; i < num_cameras_; ++i) {
    const double* angle_axis_camera = parameters_.data() + 9 * size_t{1} * i;
    double quaternion[4];
    ceres::AngleAxisToQuaternion(angle_axis_camera, quaternion);
    converted.insert(converted.end(), quaternion, quaternion + 4);
    converted.insert(converted.end(), angle_axis_camera + 3,
                     angle_axis_camera + 9);
  }
  converted.insert(converted.end(),
                   parameters_.begin() + 9 * size_t{1} * num_cameras_,
                   parameters_.end());
  parameters_ = std::move(converted);
  use_quaternions_ = true;
}

void BalProblem::GetRotationAndCenter(const double* camera,
                                      double angle_axis[3],
                                      double center[3]) const {
  if (use_quaternions_) {
    ceres::QuaternionToAngleAxis(camera, angle_axis);
  } else {
    std::copy(camera, camera + 3, angle_axis);
  }
  // c = -R^T t, with R^T the rotation by -angle_axis.
  const double inverse[3] = {-angle_axis[0], -angle_axis[1], -angle_axis[2]};
  const double* translation = camera + camera_block_size() - 6;
  ceres::AngleAxisRotatePoint(inverse, translation, center);
  for (int k = 0; k < 3; ++k) center[k] = -center[k];
}

void BalProblem::SetRotationAndCenter(const double angle_axis[3],
                                      const double center[3],
                                      double* camera) const {
  if (use_quaternions_) {
    ceres::AngleAxisToQuaternion(angle_axis, camera);
  } else {
    std::copy(angle_axis, angle_axis + 3, camera);
  }
  // t = -R c.
  double* translation = camera + camera_block_size() - 6;
  ceres::AngleAxisRotatePoint(angle_axis, center, translation);
  for (int k = 0; k < 3; ++k) translation[k] = -translation[k];
}

void BalProblem::CameraCenter(int camera_id, double center[3]) const {
  double angle_axis[3];
  GetRotationAndCenter(camera(camera_id), angle_axis, center);
}

double BalProblem::ObservationDepth(int observation) const {
  const double* cam = camera(camera_index_[observation]);
  const double* x = point(point_index_[observation]);
  double rotated[3];
  if (use_quaternions_) {
    ceres::QuaternionRotatePoint(cam, x, rotated);
  } else {
    ceres::AngleAxisRotatePoint(cam, x, rotated);
  }
  const double z = rotated[2] + cam[camera_block_size() - 4];
  return -z;
}

bool BalProblem::Write(const std::string& path, std::string* error) const {
  FilePtr file(std::fopen(path.c_str(), "w"));
  if (file == nullptr) {
    *error = SystemError(path, "cannot open for writing");
    return false;
  }
  FILE* out = file.get();
  std::fprintf(out, "%d %d %d\n", num_cameras_, num_points_,
               num_observations());
  for (int i = 0; i < num_observations(); ++i) {
    std::fprintf(out, "%d %d %.17g %.17g\n", camera_index_[i], point_index_[i],
                 observations_[2 * size_t{1} * i],
                 observations_[2 * size_t{1} * i + 1]);
  }
  for (int i = 0; i < num_cameras_; ++i) {
    const double* cam = camera(i);
    double values[9];
    if (use_quaternions_) {
      ceres::QuaternionToAngleAxis(cam, values);
      std::copy(cam + 4, cam + 10, values + 3);
    } else {
      std::copy(cam, cam + 9, values);
    }
    for (double v : values) std::fprintf(out, "%.17g\n", v);
  }
  for (int i = 0; i < num_points_; ++i) {
    const double* x = point(i);
    std::fprintf(out, "%.17g\n%.17g\n%.17g\n", x[0], x[1], x[2]);
  }
  return FinishWriting(std::move(file), path, error);
}

bool BalProblem::WritePly(const std::string& path, std::string* error) const {
  FilePtr file(std::fopen(path.c_str(), "w"));
  if (file == nullptr) {
    *error = SystemError(path, "cannot open for writing");
    return false;
  }
  FILE* out = file.get();
  std::fprintf(out,
               "ply\nformat ascii 1.0\nelement vertex %d\n"
               "property float x\nproperty float y\nproperty float z\n"
               "property uchar red\nproperty uchar green\n"
               "property uchar blue\nend_header\n",
               num_cameras_ + num_points_);
  for (int i = 0; i < num_cameras_; ++i) {
    double center[3];
    CameraCenter(i, center);
    std::fprintf(out, "%.9g %.9g %.9g 0 255 0\n", center[0], center[1],
                 center[2]);
  }
  for (int i = 0; i < num_points_; ++i) {
    const double* x = point(i);
    std::fprintf(out, "%.9g %.9g %.9g 255 255 255\n", x[0], x[1], x[2]);
  }
  return FinishWriting(std::move(file), path, error);
}

bool BalProblem::Normalize(std::string* error) {
  if (num_points_ == 0) {
    *error = "cannot normalize a problem without points";
    return false;
  }
  std::vector<double> values(num_points_);
  double median[3];
  for (int axis = 0; axis < 3; ++axis) {
    for (int i = 0; i < num_points_; ++i) values[i] = point(i)[axis];
    median[axis] = UpperMedian(&values);
  }
  for (int i = 0; i < num_points_; ++i) {
    const double* x = point(i);
    values[i] = std::abs(x[0] - median[0]) + std::abs(x[1] - median[1]) +
                std::abs(x[2] - median[2]);
  }
  const double deviation = UpperMedian(&values);
  if (!(deviation > 0.0) || !std::isfinite(deviation)) {
    *error =
        "cannot normalize: the median distance of the points to their median "
        "is " +
        std::to_string(deviation);
    // Zero: at least half of the points sit at the median (or there is one).
    if (deviation == 0.0) {
      *error += num_points_ == 1 ? " (the problem has a single point)"
                                 : " (at least half of the " + std::to_string(num_points_) +
                                       " points are at one place)";
    }
    return false;
  }
  const double scale = 100.0 / deviation;
  if (!std::isfinite(scale)) {
    *error = "cannot normalize: the median distance of the points to their median is " + FormatDouble(deviation) +
             ", too small to scale to 100 (100 / " + FormatDouble(deviation) + " overflows a double)";
    return false;
  }
  // The new values go to a copy first: the problem changes only when every
  // one of them is finite (a point or camera centre far from the others can
  // leave the range of a double once centred and scaled).
  std::vector<double> normalized = parameters_;
  for (int i = 0; i < num_points_; ++i) {
    double* x = normalized.data() + CameraValues() + 3 * static_cast<size_t>(i);
    for (int k = 0; k < 3; ++k) x[k] = scale * (x[k] - median[k]);
    if (!std::isfinite(x[0]) || !std::isfinite(x[1]) || !std::isfinite(x[2])) {
      *error = "cannot normalize: point " + std::to_string(i) +
               " leaves the range of a double when the scene is centred and "
               "scaled by " + FormatDouble(scale);
      return false;
    }
  }
  for (int i = 0; i < num_cameras_; ++i) {
    double* cam =
        normalized.data() + static_cast<size_t>(camera_block_size()) * i;
    double angle_axis[3];
    double center[3];
    GetRotationAndCenter(cam, angle_axis, center);
    for (int k = 0; k < 3; ++k) center[k] = scale * (center[k] - median[k]);
    SetRotationAndCenter(angle_axis, center, cam);
    for (int k = 0; k < camera_block_size(); ++k) {
      if (!std::isfinite(cam[k])) {
        *error = "cannot normalize: camera " + std::to_string(i) +
                 " leaves the range of a double when the scene is centred "
                 "and scaled by " + FormatDouble(scale);
        return false;
      }
    }
  }
  parameters_ = std::move(normalized);
  return true;
}

void BalProblem::Perturb(double rotation_sigma, double translation_sigma,
                         double point_sigma, BalRandom* random) {
  auto add_noise = [random](double sigma, double* v) {
    for (int k = 0; k < 3; ++k) v[k] += random->Normal() * sigma;
  };
  if (point_sigma > 0.0) {
    for (int i = 0; i < num_points_; ++i) add_noise(point_sigma, mutable_point(i));
  }
  for (int i = 0; i < num_cameras_; ++i) {
    double* cam = mutable_camera(i);
    double angle_axis[3];
    double center[3];
    GetRotationAndCenter(cam, angle_axis, center);
    if (rotation_sigma > 0.0) add_noise(rotation_sigma, angle_axis);
    SetRotationAndCenter(angle_axis, center, cam);
    if (translation_sigma > 0.0) {
      add_noise(translation_sigma, cam + camera_block_size() - 6);
    }
  }
}

PreprocessStats BalProblem::DropObservationsBelowDepth(double min_depth) {
  PreprocessStats stats;
  size_t kept = 0;
  const size_t n = camera_index_.size();
  for (size_t i = 0; i < n; ++i) {
    if (ObservationDepth(static_cast<int>(i)) < min_depth) {
      ++stats.dropped_observations;
      continue;
    }
    camera_index_[kept] = camera_index_[i];
    point_index_[kept] = point_index_[i];
    observations_[2 * kept] = observations_[2 * i];
    observations_[2 * kept + 1] = observations_[2 * i + 1];
    ++kept;
  }
  camera_index_.resize(kept);
  point_index_.resize(kept);
  observations_.resize(2 * kept);
  return stats;
}

PreprocessStats BalProblem::DropPointsWithFewObservations(
    int min_observations) {
  PreprocessStats stats;
  std::vector<int> point_count(num_points_, 0);
  for (int p : point_index_) ++point_count[p];

  // Drop the observations of the points that go.
  size_t kept = 0;
  std::vector<int> camera_count(num_cameras_, 0);
  for (size_t i = 0; i < camera_index_.size(); ++i) {
    if (point_count[point_index_[i]] < min_observations) continue;
    camera_index_[kept] = camera_index_[i];
    point_index_[kept] = point_index_[i];
    observations_[2 * kept] = observations_[2 * i];
    observations_[2 * kept + 1] = observations_[2 * i + 1];
    ++camera_count[camera_index_[kept]];
    ++kept;
  }
  stats.dropped_observations =
      static_cast<int64_t>(camera_index_.size() - kept);
  camera_index_.resize(kept);
  point_index_.resize(kept);
  observations_.resize(2 * kept);

  // New numbering of the cameras and points that stay.
  std::vector<int> new_camera(num_cameras_, -1);
  std::vector<int> new_point(num_points_, -1);
  int cameras_kept = 0;
  for (int i = 0; i < num_cameras_; ++i) {
    if (camera_count[i] > 0) new_camera[i] = cameras_kept++;
  }
  int points_kept = 0;
  for (int i = 0; i < num_points_; ++i) {
    if (point_count[i] >= min_observations) new_point[i] = points_kept++;
  }
  stats.dropped_cameras = num_cameras_ - cameras_kept;
  stats.dropped_points = num_points_ - points_kept;
  if (stats.dropped_cameras == 0 && stats.dropped_points == 0) return stats;

  std::vector<double> parameters;
  parameters.reserve(static_cast<size_t>(camera_block_size()) * cameras_kept +
                     3 * static_cast<size_t>(points_kept));
  for (int i = 0; i < num_cameras_; ++i) {
    if (new_camera[i] >= 0) {
      parameters.insert(parameters.end(), camera(i),
                        camera(i) + camera_block_size());
    }
  }
  for (int i = 0; i < num_points_; ++i) {
    if (new_point[i] >= 0) {
      parameters.insert(parameters.end(), point(i), point(i) + 3);
    }
  }
  for (size_t i = 0; i < camera_index_.size(); ++i) {
    camera_index_[i] = new_camera[camera_index_[i]];
    point_index_[i] = new_point[point_index_[i]];
  }
  parameters_ = std::move(parameters);
  num_cameras_ = cameras_kept;
  num_points_ = points_kept;
  return stats;
}

}  // namespace examples
}  // namespace ceres_sqrtba
