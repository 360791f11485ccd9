#include "ceres_sqrtba/solver.h"
#include "synthetic_problem.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "ceres/rotation.h"
#include "synthetic_random.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using synthetic::Normalized;
using synthetic::SplitMix;
using synthetic::Vec3;

constexpr double kPi = 3.14159265358979323846;
constexpr double kCameraDistance = 4.0;
constexpr double kMaxElevation = kPi / 6.0;  // 30 degrees

struct TrueCamera {
  double angle_axis[3];
  Vec3 center;
  double focal, k1, k2;
};

// Camera at `center` looking at the origin along its -z axis, rolled by
// `roll` radians about that axis.
void LookAtOrigin(const Vec3& center, double roll, double angle_axis[3]) {
  double rotation[9];
  CameraRotation(Normalized(center), /*z_forward=*/false, roll, rotation);
  ceres::RotationMatrixToAngleAxis(
      ceres::RowMajorAdapter3x3(static_cast<const double*>(rotation)),
      angle_axis);
}

// Pixel position of a world point in a camera (Snavely model). False when the
// point is not in front of the camera.
bool Project(const TrueCamera& camera, const Vec3& point, double pixel[2]) {
  const double relative[3] = {point.x - camera.center.x,
                              point.y - camera.center.y,
                              point.z - camera.center.z};
  double p[3];
  ceres::AngleAxisRotatePoint(camera.angle_axis, relative, p);
  if (p[2] >= 0.0) return false;
  const double u = -p[0] / p[2];
  const double v = -p[1] / p[2];
  const double r2 = u * u + v * v;
  const double scale = camera.focal * (1.0 + r2 * (camera.k1 + camera.k2 * r2));
  pixel[0] = scale * u;
  pixel[1] = scale * v;
  return true;
}

// The nine BAL values of a camera: rotation, t = -R c, f, k1, k2.
void ToBal(const TrueCamera& camera, double* out) {
  const double center[3] = {camera.center.x, camera.center.y, camera.center.z};
  double rotated[3];
  ceres::AngleAxisRotatePoint(camera.angle_axis, center, rotated);
  for (int k = 0; k < 3; ++k) {
    out[k] = camera.angle_axis[k];
    out[3 + k] = -rotated[k];
  }
  out[6] = camera.focal;
  out[7] = camera.k1;
  out[8] = camera.k2;
}

int MaxTrackLength(const SyntheticOptions& options) {
  return std::max(options.observations_per_point,
                  options.max_observations_per_point);
}

}  // namespace

bool ValidateSyntheticOptions(const SyntheticOptions& options,
                              std::string* error) {
  if (options.num_cameras < 2) {
    *error = "--synthetic_num_cameras must be at least 2, got " +
             std::to_string(options.num_cameras);
    return false;
  }
  // One point has no spread: the example's normalization (scale by the
  // points' median distance to their median) needs two.
  if (options.num_points < 2) {
    *error = "--synthetic_num_points must be at least 2, got " +
             std::to_string(options.num_points);
    return false;
  }
  if (options.observations_per_point < 2 ||
      options.observations_per_point > options.num_cameras) {
    *error = "--synthetic_observations_per_point must be between 2 and the "
             "number of cameras (" +
             std::to_string(options.num_cameras) + "), got " +
             std::to_string(options.observations_per_point);
    return false;
  }
  if (options.max_observations_per_point != 0 &&
      (options.max_observations_per_point < options.observations_per_point ||
       options.max_observations_per_point > options.num_cameras)) {
    *error = "--synthetic_max_observations_per_point must be 0 or between "
             "--synthetic_observations_per_point (" +
             std::to_string(options.observations_per_point) +
             ") and the number of cameras (" +
             std::to_string(options.num_cameras) + "), got " +
             std::to_string(options.max_observations_per_point);
    return false;
  }
  if (!(options.outlier_ratio >= 0.0 && options.outlier_ratio <= 1.0)) {
    *error = "--synthetic_outlier_ratio must be in [0, 1], got " +
             std::to_string(options.outlier_ratio);
    return false;
  }
  if (!(options.pixel_noise >= 0.0) || !std::isfinite(options.pixel_noise)) {
    *error = "--synthetic_pixel_noise must be a finite value >= 0, got " +
             std::to_string(options.pixel_noise);
    return false;
  }
  // The largest number of observations the track lengths allow.
  const double observations = static_cast<double>(options.num_points) *
                              MaxTrackLength(options);
  if (observations > INT_MAX) {
    *error = "the synthetic problem would have more than " +
             std::to_string(INT_MAX) + " observations";
    return false;
  }
  // The problem's own arrays, plus the generator's ground truth, plus what
  // the caller needs to solve it.
  const double bytes = observations * (24.0 + static_cast<double>(options.solve_bytes_per_observation)) +
                       static_cast<double>(options.num_points) * 48.0 +
                       static_cast<double>(options.num_cameras) * 160.0;
  int64_t limit = options.memory_limit_in_bytes;
  if (limit <= 0) limit = AvailableMemoryInBytes();
  if (limit > 0 && bytes > static_cast<double>(limit)) {
    *error = "the synthetic problem needs " +
             std::to_string(static_cast<long long>(bytes / 1048576.0)) +
             (options.solve_bytes_per_observation > 0 ? " MiB to generate and solve" : " MiB") + ", more than the " +
             std::to_string(static_cast<long long>(limit / 1048576)) +
             " MiB of memory available";
    return false;
  }
  return true;
}

std::string SyntheticProblemName(const SyntheticOptions& options) {
  std::string tracks = std::to_string(options.observations_per_point);
  if (MaxTrackLength(options) > options.observations_per_point) {
    tracks += "-" + std::to_string(MaxTrackLength(options));
  }
  return "synthetic-c" + std::to_string(options.num_cameras) + "-p" +
         std::to_string(options.num_points) + "-k" + tracks + "-seed" +
         std::to_string(options.seed);
}

bool MakeSyntheticProblem(const SyntheticOptions& options, BalProblem* problem,
                          std::string* error, SyntheticTruth* truth) {
  if (!ValidateSyntheticOptions(options, error)) return false;
  SplitMix random(options.seed);
  const int num_cameras = options.num_cameras;
  const int num_points = options.num_points;
  const int min_per_point = options.observations_per_point;
  const int max_per_point = MaxTrackLength(options);

  // Cameras: golden-angle azimuths, elevations evenly spread over the band.
  const double golden_angle = kPi * (3.0 - std::sqrt(5.0));
  std::vector<TrueCamera> cameras(num_cameras);
  std::vector<Vec3> directions(num_cameras);
  for (int i = 0; i < num_cameras; ++i) {
    const double height =
        std::sin(kMaxElevation) * (2.0 * (i + 0.5) / num_cameras - 1.0);
    const double elevation = std::asin(height);
    const double azimuth = golden_angle * i;
    directions[i] = {std::cos(elevation) * std::cos(azimuth),
                     std::cos(elevation) * std::sin(azimuth), height};
    TrueCamera& camera = cameras[i];
    camera.center = kCameraDistance * directions[i];
    LookAtOrigin(camera.center, random.Uniform(-0.2, 0.2), camera.angle_axis);
    camera.focal = 500.0 * (1.0 + random.Uniform(-0.1, 0.1));
    camera.k1 = -0.05 + 0.01 * random.Normal();
    camera.k2 = 0.01 + 0.002 * random.Normal();
  }

  // Points, uniformly in the unit ball.
  std::vector<Vec3> points(num_points);
  for (Vec3& point : points) {
    do {
      point = {random.Uniform(-1.0, 1.0), random.Uniform(-1.0, 1.0),
               random.Uniform(-1.0, 1.0)};
    } while (Dot(point, point) > 1.0);
  }

  // Observations, point by point. With varying track lengths the memory is
  // reserved for the mean length.
  const size_t num_observations =
      static_cast<size_t>(num_points) * (min_per_point + max_per_point) / 2;
  std::vector<int> camera_index;
  std::vector<int> point_index;
  std::vector<double> observations;
  camera_index.reserve(num_observations);
  point_index.reserve(num_observations);
  observations.reserve(2 * num_observations);
  std::vector<char> outlier;
  if (truth != nullptr) outlier.reserve(num_observations);
  std::vector<int> order(num_cameras);
  std::vector<double> closeness(num_cameras);
  for (int j = 0; j < num_points; ++j) {
    // Track length: drawn only when it varies, so that problems of one fixed
    // length keep the random sequence (and the values) they always had.
    int per_point = min_per_point;
    if (max_per_point > min_per_point) {
      const uint64_t lengths =
          static_cast<uint64_t>(max_per_point - min_per_point + 1);
      per_point += static_cast<int>(random.Next() % lengths);
    }
    // Jittered viewing direction of the point.
    const Vec3 jitter = {random.Normal(), random.Normal(), random.Normal()};
    const Vec3 look = points[j] + 0.3 * jitter;
    for (int i = 0; i < num_cameras; ++i) closeness[i] = Dot(directions[i], look);
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + per_point, order.end(),
                      [&closeness](int a, int b) {
                        return closeness[a] > closeness[b] ||
                               (closeness[a] == closeness[b] && a < b);
                      });
    std::sort(order.begin(), order.begin() + per_point);
    for (int k = 0; k < per_point; ++k) {
      const int i = order[k];
      double pixel[2] = {0.0, 0.0};
      Project(cameras[i], points[j], pixel);  // always in front (depth >= 3)
      pixel[0] += options.pixel_noise * random.Normal();
      pixel[1] += options.pixel_noise * random.Normal();
      const bool is_outlier = random.Uniform() < options.outlier_ratio;
      if (truth != nullptr) outlier.push_back(is_outlier ? 1 : 0);
      if (is_outlier) {
        const double angle = random.Uniform(0.0, 2.0 * kPi);
        const double distance = random.Uniform(20.0, 100.0);
        pixel[0] += distance * std::cos(angle);
        pixel[1] += distance * std::sin(angle);
      }
      camera_index.push_back(i);
      point_index.push_back(j);
      observations.push_back(pixel[0]);
      observations.push_back(pixel[1]);
    }
  }

  // Initial values: the ground truth perturbed.
  std::vector<double> camera_values(9 * static_cast<size_t>(num_cameras));
  for (int i = 0; i < num_cameras; ++i) {
    TrueCamera start = cameras[i];
    for (double& a : start.angle_axis) a += 0.005 * random.Normal();
    start.center = start.center + 0.02 * Vec3{random.Normal(), random.Normal(),
                                              random.Normal()};
    start.focal *= 1.0 + 0.01 * random.Normal();
    start.k1 += 0.005 * random.Normal();
    start.k2 += 0.005 * random.Normal();
    ToBal(start, &camera_values[9 * static_cast<size_t>(i)]);
  }
  std::vector<double> point_values(3 * static_cast<size_t>(num_points));
  for (int j = 0; j < num_points; ++j) {
    point_values[3 * static_cast<size_t>(j) + 0] = points[j].x + 0.02 * random.Normal();
    point_values[3 * static_cast<size_t>(j) + 1] = points[j].y + 0.02 * random.Normal();
    point_values[3 * static_cast<size_t>(j) + 2] = points[j].z + 0.02 * random.Normal();
  }

  if (truth != nullptr) {
    std::vector<double> true_cameras(9 * static_cast<size_t>(num_cameras));
    for (int i = 0; i < num_cameras; ++i) {
      ToBal(cameras[i], &true_cameras[9 * static_cast<size_t>(i)]);
    }
    std::vector<double> true_points;
    true_points.reserve(3 * static_cast<size_t>(num_points));
    for (const Vec3& point : points) {
      true_points.insert(true_points.end(), {point.x, point.y, point.z});
    }
    truth->problem = BalProblem::FromArrays(
        num_cameras, num_points, camera_index, point_index, observations,
        std::move(true_cameras), std::move(true_points),
        options.use_quaternions);
    truth->outlier = std::move(outlier);
  }
  *problem = BalProblem::FromArrays(
      num_cameras, num_points, std::move(camera_index), std::move(point_index),
      std::move(observations), std::move(camera_values),
      std::move(point_values), options.use_quaternions);
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
