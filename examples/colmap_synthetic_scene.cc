#include "colmap_synthetic_scene.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "ceres/rotation.h"
#include "ceres_sqrtba/solver.h"
#include "colmap_camera_models.h"
#include "synthetic_random.h"

namespace ceres_sqrtba {
namespace examples {
namespace {

using synthetic::Cross;
using synthetic::Dot;
using synthetic::Normalized;
using synthetic::SplitMix;
using synthetic::Vec3;

constexpr double kPi = 3.14159265358979323846;
constexpr double kTailExponent = 1.3;        // P(length >= k) = (min / k)^1.3
constexpr double kUnmatchedFraction = 0.2;    // 2D points without a 3D point
constexpr double kMaxTangent = 1.0;  // |x|/z, |y|/z: 45 degrees off the axis
constexpr double kMinDepth = 0.1;
// A point is kept only when two of its observations' rays (point to camera
// centre) are at least this far apart, above the 1.5 degrees under which
// COLMAP's mapper drops a point (Mapper.filter_min_tri_angle): a point seen
// along nearly one ray is free to slide along it, and a solve moves such
// points far away or behind their cameras.
constexpr double kMinTriangulationAngle = 2.0 * kPi / 180.0;
constexpr int kObservationsPerImage = 700;
constexpr int kLongTrackObservationsPerImage = 2500;
constexpr int kLongTrackMinImages = 400;
constexpr int64_t kMaxObservations = 500000000;
// The model's memory per observation: a 2D point (24 bytes, plus the
// unmatched ones), a track element (8), the point's share (about 80 bytes
// over a short track), the generator's own arrays.
constexpr double kBytesPerObservation = 120.0;

// A camera: model, size, parameters in COLMAP's order.
struct CameraTemplate {
  int model_id;
  uint64_t width, height;
  std::vector<double> params;
};

CameraTemplate Template(int index, SplitMix* random) {
  using namespace colmap_models;
  CameraTemplate camera;
  switch (index % 3) {
    case 0:
      camera = {kOpenCV, 1600, 1200, {1150, 1154, 801.5, 598.5, -0.08, 0.015, 4e-4, -3e-4}};
      break;
    case 1:
      camera = {kSimpleRadial, 2048, 1536, {1650, 1024, 768, -0.035}};
      break;
    default:
      camera = {kPinhole, 1280, 960, {1000, 1002, 640.5, 479.5}};
      break;
  }
  if (index >= 3) {  // further cameras: other focal lengths and distortions
    const ModelInfo* info = FindModel(camera.model_id);
    const double focal_scale = 1.0 + random->Uniform(-0.15, 0.15);
    for (int k = 0; k < info->num_focal; ++k) camera.params[k] *= focal_scale;
    const double distortion_scale = random->Uniform(0.5, 1.5);
    for (size_t k = info->first_extra; k < camera.params.size(); ++k) {
      camera.params[k] *= distortion_scale;
    }
  }
  return camera;
}

struct TruePose {
  double rotation[9];  // world to camera, row major
  Vec3 center;
};

// Camera at `center` looking at `target` (COLMAP's frame: x right, y down,
// z forward), rolled by `roll` radians about its axis.
TruePose LookAt(const Vec3& center, const Vec3& target, double roll) {
  TruePose pose;
  CameraRotation(Normalized(target - center), /*z_forward=*/true, roll, pose.rotation);
  pose.center = center;
  return pose;
}

Vec3 ToCamera(const TruePose& pose, const Vec3& point) {
  const Vec3 d = point - pose.center;
  const double* r = pose.rotation;
  return {r[0] * d.x + r[1] * d.y + r[2] * d.z, r[3] * d.x + r[4] * d.y + r[5] * d.z,
          r[6] * d.x + r[7] * d.y + r[8] * d.z};
}

// The COLMAP pose (q as (w, x, y, z), t = -R c) of a rotation and centre.
void ToColmapPose(const double rotation[9], const Vec3& center, double qvec[4], double tvec[3]) {
  ceres::RotationMatrixToQuaternion(
      ceres::RowMajorAdapter3x3(static_cast<const double*>(rotation)), qvec);
  const double* r = rotation;
  tvec[0] = -(r[0] * center.x + r[1] * center.y + r[2] * center.z);
  tvec[1] = -(r[3] * center.x + r[4] * center.y + r[5] * center.z);
  tvec[2] = -(r[6] * center.x + r[7] * center.y + r[8] * center.z);
}

// The k-th non-reference camera of a rig (k >= 1): rotation (sensor from
// rig, row major) and centre in the rig's (reference camera's) frame.
void RigSensor(int k, double rotation[9], Vec3* center) {
  const double side = k % 2 == 1 ? 1.0 : -1.0;
  const int step = (k + 1) / 2;
  // Turned outwards about the camera's vertical axis (y, down in COLMAP's
  // frame): a camera to the right looks further right.
  const double yaw = side * step * 20.0 * kPi / 180.0;
  const double c = std::cos(yaw);
  const double s = std::sin(yaw);
  const double r[9] = {c, 0.0, -s, 0.0, 1.0, 0.0, s, 0.0, c};
  std::copy(r, r + 9, rotation);
  *center = {side * step * 0.12, 0.0, 0.0};
}

// The pose of a camera with this sensor_from_rig on a rig at `rig`.
TruePose Compose(const double sensor_rotation[9], const Vec3& sensor_center, const TruePose& rig) {
  TruePose pose;
  const double* a = sensor_rotation;
  const double* b = rig.rotation;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      pose.rotation[3 * r + c] = a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c];
    }
  }
  // centre = rig centre + R_rig^T c_sensor.
  const Vec3& s = sensor_center;
  pose.center = rig.center + Vec3{b[0] * s.x + b[3] * s.y + b[6] * s.z,
                                  b[1] * s.x + b[4] * s.y + b[7] * s.z,
                                  b[2] * s.x + b[5] * s.y + b[8] * s.z};
  return pose;
}

bool Inside(const ColmapCamera& camera, const double pixel[2]) {
  return pixel[0] >= 0.0 && pixel[1] >= 0.0 && pixel[0] < static_cast<double>(camera.width) &&
         pixel[1] < static_cast<double>(camera.height);
}

int MaxTrackLength(const ColmapSceneOptions& options, int num_images) {
  return std::min(options.max_track_length, num_images);
}

int NumImages(const ColmapSceneOptions& options) {
  return options.num_images > 0 ? options.num_images : DefaultNumImages(options);
}

}  // namespace

void SetLongTracks(ColmapSceneOptions* options) {
  options->track_lengths = ColmapSceneOptions::TrackLengths::kUniform;
  options->min_track_length = 100;
  options->max_track_length = 300;
}

int DefaultNumImages(const ColmapSceneOptions& options) {
  const bool long_tracks = options.track_lengths == ColmapSceneOptions::TrackLengths::kUniform &&
                           options.min_track_length >= 100;
  const int64_t per_image = long_tracks ? kLongTrackObservationsPerImage : kObservationsPerImage;
  const int64_t minimum = long_tracks ? kLongTrackMinImages : 2;
  const int64_t images = (std::max<int64_t>(options.num_observations, 0) + per_image / 2) / per_image;
  return static_cast<int>(std::min<int64_t>(std::max(images, minimum), 1000000));
}

bool ValidateColmapSceneOptions(const ColmapSceneOptions& options, std::string* error) {
  if (options.num_observations < 2 || options.num_observations > kMaxObservations) {
    *error = "the number of observations must be between 2 and " +
             std::to_string(kMaxObservations) + ", got " +
             std::to_string(options.num_observations);
    return false;
  }
  if (options.num_images != 0 && (options.num_images < 2 || options.num_images > 1000000)) {
    *error = "the number of images must be between 2 and 1000000 (or 0: from the number of "
             "observations), got " + std::to_string(options.num_images);
    return false;
  }
  const int num_images = NumImages(options);
  if (options.num_cameras < 1 || options.num_cameras > num_images) {
    *error = "the number of cameras must be between 1 and the number of images (" +
             std::to_string(num_images) + "), got " + std::to_string(options.num_cameras);
    return false;
  }
  if (options.num_rigs < 0 || options.num_rigs > options.num_cameras) {
    *error = "the number of rigs must be between 0 (no rigs) and the number of cameras (" +
             std::to_string(options.num_cameras) + "), got " + std::to_string(options.num_rigs);
    return false;
  }
  if (options.min_track_length < 2 || options.max_track_length < options.min_track_length) {
    *error = "track lengths must satisfy 2 <= min <= max, got min " +
             std::to_string(options.min_track_length) + ", max " +
             std::to_string(options.max_track_length);
    return false;
  }
  if (options.min_track_length > num_images) {
    *error = "the minimum track length (" + std::to_string(options.min_track_length) +
             ") exceeds the number of images (" + std::to_string(num_images) + ")";
    return false;
  }
  if (!(options.perturbation >= 0.0) || !(options.perturbation <= 10.0)) {
    *error = "the perturbation must be in [0, 10], got " + std::to_string(options.perturbation);
    return false;
  }
  if (!(options.pixel_noise >= 0.0) || !std::isfinite(options.pixel_noise) ||
      options.pixel_noise > 100.0) {
    *error = "the pixel noise must be a finite value in [0, 100], got " +
             std::to_string(options.pixel_noise);
    return false;
  }
  const double bytes =
      static_cast<double>(options.num_observations) *
          (kBytesPerObservation + static_cast<double>(options.solve_bytes_per_observation)) +
      static_cast<double>(num_images) * 200.0;
  int64_t limit = options.memory_limit_in_bytes;
  if (limit <= 0) limit = AvailableMemoryInBytes();
  if (limit > 0 && bytes > static_cast<double>(limit)) {
    *error = "the scene needs " + std::to_string(static_cast<long long>(bytes / 1048576.0)) +
             " MiB" + (options.solve_bytes_per_observation > 0 ? " to generate and solve" : "") +
             ", more than the " + std::to_string(static_cast<long long>(limit / 1048576)) +
             " MiB of memory available";
    return false;
  }
  return true;
}

bool MakeColmapScene(const ColmapSceneOptions& options, ColmapModel* model, std::string* error,
                     ColmapModel* truth) {
  *model = ColmapModel();
  if (truth != nullptr) *truth = ColmapModel();
  if (!ValidateColmapSceneOptions(options, error)) return false;
  SplitMix random(options.seed);
  const int num_images = NumImages(options);
  const int num_cameras = options.num_cameras;
  const int min_track = options.min_track_length;
  const int max_track = MaxTrackLength(options, num_images);
  const bool uniform = options.track_lengths == ColmapSceneOptions::TrackLengths::kUniform;

  ColmapModel scene;  // the ground truth
  for (int c = 0; c < num_cameras; ++c) {
    CameraTemplate t = Template(c, &random);
    ColmapCamera camera;
    camera.id = static_cast<uint32_t>(c + 1);
    camera.model_id = t.model_id;
    camera.width = t.width;
    camera.height = t.height;
    camera.params = std::move(t.params);
    scene.cameras.push_back(std::move(camera));
  }
  // Frames (one per image without rigs): the reference camera's pose.
  const int num_rigs = options.num_rigs;
  std::vector<std::vector<int>> rig_cameras(std::max(num_rigs, 1));
  for (int c = 0; c < num_cameras; ++c) {
    rig_cameras[num_rigs > 0 ? c % num_rigs : 0].push_back(c);
  }
  std::vector<std::vector<TruePose>> sensor_poses(rig_cameras.size());  // rig, k >= 1
  if (num_rigs > 0) {
    scene.has_rigs_and_frames = true;
    for (int r = 0; r < num_rigs; ++r) {
      ColmapRig rig;
      rig.id = static_cast<uint32_t>(r + 1);
      rig.has_ref_sensor = true;
      rig.ref_sensor = {ColmapSensorType::kCamera, static_cast<uint32_t>(rig_cameras[r][0] + 1)};
      for (size_t k = 1; k < rig_cameras[r].size(); ++k) {
        TruePose sensor;
        RigSensor(static_cast<int>(k), sensor.rotation, &sensor.center);
        sensor_poses[r].push_back(sensor);
        ColmapRigSensor entry;
        entry.sensor = {ColmapSensorType::kCamera, static_cast<uint32_t>(rig_cameras[r][k] + 1)};
        entry.has_sensor_from_rig = true;
        ToColmapPose(sensor.rotation, sensor.center, entry.sensor_from_rig.qvec,
                     entry.sensor_from_rig.tvec);
        rig.sensors.push_back(entry);
      }
      scene.rigs.push_back(std::move(rig));
    }
  }
  std::vector<TruePose> poses;
  std::vector<int> image_camera;  // per image, index in scene.cameras
  for (int f = 0; static_cast<int>(poses.size()) < num_images; ++f) {
    const double distance = random.Uniform(2.5, 5.0);
    const double azimuth = random.Uniform(0.0, 2.0 * kPi);
    const double elevation = random.Uniform(0.0, 35.0 * kPi / 180.0);
    const Vec3 center = {distance * std::cos(elevation) * std::cos(azimuth),
                         distance * std::cos(elevation) * std::sin(azimuth),
                         distance * std::sin(elevation)};
    const Vec3 target = {0.3 * random.Normal(), 0.3 * random.Normal(), 0.3 * random.Normal()};
    const TruePose frame_pose = LookAt(center, target, 0.05 * random.Normal());
    if (num_rigs == 0) {
      const int i = f;
      poses.push_back(frame_pose);
      image_camera.push_back(i % num_cameras);
      ColmapImage image;
      image.id = static_cast<uint32_t>(i + 1);
      image.camera_id = static_cast<uint32_t>(i % num_cameras + 1);
      char name[64];
      std::snprintf(name, sizeof(name), "camera%u/image%06d.jpg", image.camera_id, i + 1);
      image.name = name;
      ToColmapPose(frame_pose.rotation, frame_pose.center, image.qvec, image.tvec);
      scene.images.push_back(std::move(image));
      continue;
    }
    const int r = f % num_rigs;
    ColmapFrame frame;
    frame.id = static_cast<uint32_t>(f + 1);
    frame.rig_id = static_cast<uint32_t>(r + 1);
    ToColmapPose(frame_pose.rotation, frame_pose.center, frame.rig_from_world.qvec,
                 frame.rig_from_world.tvec);
    for (size_t k = 0; k < rig_cameras[r].size(); ++k) {
      const int c = rig_cameras[r][k];
      poses.push_back(k == 0 ? frame_pose
                             : Compose(sensor_poses[r][k - 1].rotation,
                                       sensor_poses[r][k - 1].center, frame_pose));
      image_camera.push_back(c);
      ColmapImage image;
      image.id = static_cast<uint32_t>(poses.size());
      image.camera_id = static_cast<uint32_t>(c + 1);
      char name[80];
      std::snprintf(name, sizeof(name), "rig%u/camera%u/frame%06d.jpg", frame.rig_id,
                    image.camera_id, f + 1);
      image.name = name;
      frame.data_ids.push_back({{ColmapSensorType::kCamera, image.camera_id}, image.id});
      scene.images.push_back(std::move(image));
    }
    scene.frames.push_back(std::move(frame));
  }
  const int num_scene_images = static_cast<int>(poses.size());
  if (scene.has_rigs_and_frames) {
    scene.BuildIndex();
    DeriveColmapImagePoses(&scene);
  }

  // Points, one at a time, until the observations reach the target.
  std::vector<double> score(num_scene_images);
  std::vector<int> order(num_scene_images);
  int64_t observations = 0;
  int64_t failures_in_a_row = 0;
  while (observations < options.num_observations) {
    Vec3 point;
    Vec3 normal;
    if (random.Uniform() < 0.7) {  // on the object
      Vec3 direction;
      do {
        direction = {random.Normal(), random.Normal(), random.Normal()};
      } while (Dot(direction, direction) < 1e-12);
      normal = Normalized(direction);
      point = (1.0 + 0.05 * random.Uniform(-1.0, 1.0)) * normal;
    } else {  // on the ground around it
      const double radius = std::sqrt(random.Uniform(1.0, 9.0));
      const double angle = random.Uniform(0.0, 2.0 * kPi);
      point = {radius * std::cos(angle), radius * std::sin(angle), -1.0};
      normal = Normalized(Vec3{0.5 * std::cos(angle), 0.5 * std::sin(angle), 1.0});
    }
    int length = min_track;
    if (uniform) {
      length += static_cast<int>(random.Next() % static_cast<uint64_t>(max_track - min_track + 1));
    } else {
      const double u = 1.0 - random.Uniform();  // (0, 1]
      const double drawn = min_track * std::pow(u, -1.0 / kTailExponent);
      length = drawn >= max_track ? max_track : std::max(min_track, static_cast<int>(drawn));
    }
    const Vec3 side = normal + 0.4 * Vec3{random.Normal(), random.Normal(), random.Normal()};
    for (int i = 0; i < num_scene_images; ++i) {
      score[i] = Dot(Normalized(poses[i].center - point), side);
    }
    std::iota(order.begin(), order.end(), 0);
    auto closer = [&score](int a, int b) {
      return score[a] > score[b] || (score[a] == score[b] && a < b);
    };
    // The best candidates first; the rest sorted only when they are needed.
    const int head = std::min(num_scene_images, 2 * length + 16);
    std::partial_sort(order.begin(), order.begin() + head, order.end(), closer);
    struct Seen {
      int image;
      double pixel[2];
    };
    std::vector<Seen> seen;
    for (int k = 0; k < num_scene_images && static_cast<int>(seen.size()) < length; ++k) {
      if (k == head) std::sort(order.begin() + head, order.end(), closer);
      const int i = order[k];
      const Vec3 p = ToCamera(poses[i], point);
      if (p.z < kMinDepth || std::abs(p.x) > kMaxTangent * p.z ||
          std::abs(p.y) > kMaxTangent * p.z) {
        continue;
      }
      const ColmapCamera& camera = scene.cameras[image_camera[i]];
      const double xyz[3] = {p.x, p.y, p.z};
      Seen s;
      s.image = i;
      if (!colmap_models::ProjectWithModel(camera.model_id, camera.params.data(), xyz,
                                           s.pixel) ||
          !Inside(camera, s.pixel)) {
        continue;
      }
      s.pixel[0] += options.pixel_noise * random.Normal();
      s.pixel[1] += options.pixel_noise * random.Normal();
      if (!Inside(camera, s.pixel)) continue;
      seen.push_back(s);
    }
    bool triangulated = false;
    if (seen.size() >= 2) {
      const Vec3 first = Normalized(poses[seen[0].image].center - point);
      const double max_cosine = std::cos(kMinTriangulationAngle);
      for (size_t k = 1; k < seen.size() && !triangulated; ++k) {
        triangulated = Dot(first, Normalized(poses[seen[k].image].center - point)) <= max_cosine;
      }
    }
    if (!triangulated) {
      if (++failures_in_a_row > 10000) {
        *error = "the images see too few of the scene's points (10000 points in a row seen by "
                 "fewer than 2 images at least 2 degrees apart)";
        return false;
      }
      continue;
    }
    failures_in_a_row = 0;
    std::sort(seen.begin(), seen.end(),
              [](const Seen& a, const Seen& b) { return a.image < b.image; });
    ColmapPoint3D point3D;
    point3D.id = scene.points3D.size() + 1;
    point3D.xyz[0] = point.x;
    point3D.xyz[1] = point.y;
    point3D.xyz[2] = point.z;
    const uint64_t color = random.Next();
    for (int k = 0; k < 3; ++k) point3D.color[k] = static_cast<uint8_t>(color >> (8 * k));
    for (const Seen& s : seen) {
      ColmapImage& image = scene.images[s.image];
      ColmapPoint2D point2D;
      point2D.x = s.pixel[0];
      point2D.y = s.pixel[1];
      point2D.point3D_id = point3D.id;
      point3D.track.push_back(
          {image.id, static_cast<uint32_t>(image.points2D.size())});
      image.points2D.push_back(point2D);
    }
    observations += static_cast<int64_t>(seen.size());
    scene.points3D.push_back(std::move(point3D));
  }

  // 2D points without a 3D point (features that were not triangulated).
  for (ColmapImage& image : scene.images) {
    const ColmapCamera& camera = scene.cameras[image.camera_id - 1];
    const size_t unmatched =
        static_cast<size_t>(kUnmatchedFraction * static_cast<double>(image.points2D.size()));
    for (size_t k = 0; k < unmatched; ++k) {
      ColmapPoint2D point2D;
      point2D.x = random.Uniform(0.0, static_cast<double>(camera.width));
      point2D.y = random.Uniform(0.0, static_cast<double>(camera.height));
      image.points2D.push_back(point2D);
    }
  }

  // The initial values: the ground truth perturbed.
  scene.BuildIndex();
  ColmapModel start = scene;
  PerturbColmapModel(options.perturbation, random.Next(), &start);
  UpdateColmapPointErrors(&scene);
  *model = std::move(start);
  if (truth != nullptr) {
    *truth = std::move(scene);
  }
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
