// A bundle adjustment problem in the BAL ("Bundle Adjustment in the Large")
// format, held in memory, with the file reader/writer and the preprocessing
// steps of the bundle_adjuster example.
//
// File layout (whitespace separated, one observation per line):
//   <num_cameras> <num_points> <num_observations>
//   <camera_index> <point_index> <x> <y>          (num_observations lines)
//   <camera parameters>                           (9 per camera)
//   <point coordinates>                           (3 per point)
// A camera is angle-axis rotation (3), translation (3), focal length, k1, k2,
// looking down its -z axis (Noah Snavely's Bundler model).
//
// Reading never aborts: every problem with the input is reported as one line
// "<file>:<line>: <what is wrong>" and the problem is left empty.
#ifndef CERES_SQRTBA_EXAMPLES_BAL_PROBLEM_H_
#define CERES_SQRTBA_EXAMPLES_BAL_PROBLEM_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ceres_sqrtba {
namespace examples {

class BalRandom;

struct BalReadOptions {
  // Store cameras as [quaternion (w, x, y, z), t, f, k1, k2] (10 values)
  // instead of the file's angle-axis form (9 values).
  bool use_quaternions = false;
  // The reader refuses a header whose counts need more memory than this many
  // bytes. 0: ceres_sqrtba::AvailableMemoryInBytes() (no limit beyond the
  // integer range when that is unknown).
  int64_t memory_limit_in_bytes = 0;
  // Bytes the caller needs per observation once the problem is read
  // (bundle_adjuster: kSolveBytesPerObservation, for the ceres::Problem and
  // the solve), counted in the same check: a header whose problem cannot be
  // solved in the memory there is is refused before anything is read.
  int64_t solve_bytes_per_observation = 0;
};

// What the paper's preprocessing removed.
struct PreprocessStats {
  int64_t dropped_observations = 0;  // depth below the threshold
  int64_t dropped_points = 0;        // fewer than the required observations
  int64_t dropped_cameras = 0;       // left without any observation
};

class BalProblem {
 public:
  BalProblem() = default;

  // Reads a BAL file, plain text or bzip2-compressed (recognised by its "BZh"
  // signature, whatever the file name). The .bz2 data is decompressed while it
  // is parsed. On failure returns false, sets *error to one line naming the
  // file and the line, and leaves *problem empty.
  static bool Read(const std::string& path, const BalReadOptions& options,
                   BalProblem* problem, std::string* error);

  // Reads BAL data held in memory (the bytes of a file: plain text or bzip2)
  // exactly as Read reads a file, with `name` in place of the path in
  // messages. The bytes are not copied and must outlive the call.
  static bool ReadFromMemory(const std::string& name, const void* data,
                             size_t size, const BalReadOptions& options,
                             BalProblem* problem, std::string* error);

  // Builds a problem from arrays (used by the synthetic generator and tests).
  // cameras holds 9 angle-axis values per camera. Indices must be in range.
  static BalProblem FromArrays(int num_cameras, int num_points,
                               std::vector<int> camera_index,
                               std::vector<int> point_index,
                               std::vector<double> observations,
                               std::vector<double> cameras,
                               std::vector<double> points,
                               bool use_quaternions);

  // Writes the problem in BAL text form (cameras in angle-axis), every number
  // with 17 significant digits so that reading it back gives the same values.
  bool Write(const std::string& path, std::string* error) const;

  // Writes camera centres (green) and points (white) as an ASCII PLY file.
  bool WritePly(const std::string& path, std::string* error) const;

  // Moves the per-axis median of the points to the origin and scales the
  // scene so that the median over points of the L1 distance to that median
  // becomes 100. Cameras keep their rotation; their centres move with the
  // points, so the reprojection error is unchanged. Fails (and changes
  // nothing) when that median distance is zero or not finite, or when a
  // point or camera would leave the range of a double.
  bool Normalize(std::string* error);

  // Adds Gaussian noise: point_sigma to every point coordinate (points first),
  // then for each camera rotation_sigma to its angle-axis rotation with the
  // camera centre held fixed, and translation_sigma to its translation. A
  // sigma of 0 draws nothing. The draws follow Ceres' example, so the same
  // seed gives the same problem. Sigmas must be >= 0.
  void Perturb(double rotation_sigma, double translation_sigma,
               double point_sigma, BalRandom* random);

  // The paper's preprocessing. Removes observations whose point lies at a
  // depth (distance along the camera's viewing direction, -z in the camera
  // frame) below min_depth.
  PreprocessStats DropObservationsBelowDepth(double min_depth);
  // Removes points with fewer than min_observations observations (and their
  // observations), then cameras left without observations, and renumbers.
  PreprocessStats DropPointsWithFewObservations(int min_observations);

  // Depth of an observation's point in its camera: -z of R X + t.
  double ObservationDepth(int observation) const;

  // Centre c = -R^T t of a camera.
  void CameraCenter(int camera, double center[3]) const;

  int camera_block_size() const { return use_quaternions_ ? 10 : 9; }
  int point_block_size() const { return 3; }
  int num_cameras() const { return num_cameras_; }
  int num_points() const { return num_points_; }
  int num_observations() const {
    return static_cast<int>(camera_index_.size());
  }
  bool use_quaternions() const { return use_quaternions_; }

  const std::vector<int>& camera_index() const { return camera_index_; }
  const std::vector<int>& point_index() const { return point_index_; }
  // x0, y0, x1, y1, ...
  const std::vector<double>& observations() const { return observations_; }
  // [camera 0, ..., camera n-1, point 0, ..., point m-1]
  const std::vector<double>& parameters() const { return parameters_; }

  double* mutable_camera(int i) {
    return parameters_.data() + static_cast<size_t>(camera_block_size()) * i;
  }
  const double* camera(int i) const {
    return parameters_.data() + static_cast<size_t>(camera_block_size()) * i;
  }
  double* mutable_point(int i) {
    return parameters_.data() + CameraValues() + 3 * static_cast<size_t>(i);
  }
  const double* point(int i) const {
    return parameters_.data() + CameraValues() + 3 * static_cast<size_t>(i);
  }

 private:
  // Read and ReadFromMemory: parses an open stream; `name` for messages.
  static bool ReadOpenFile(std::FILE* file, const std::string& name,
                           const BalReadOptions& options, BalProblem* problem,
                           std::string* error);
  size_t CameraValues() const {
    return static_cast<size_t>(camera_block_size()) * num_cameras_;
  }
  // Angle-axis rotation and centre of a camera, and back.
  void GetRotationAndCenter(const double* camera, double angle_axis[3],
                            double center[3]) const;
  void SetRotationAndCenter(const double angle_axis[3],
                            const double center[3], double* camera) const;
  // Converts the angle-axis cameras in parameters_ to quaternion form.
  void ConvertToQuaternions();

  int num_cameras_ = 0;
  int num_points_ = 0;
  bool use_quaternions_ = false;
  std::vector<int> camera_index_;
  std::vector<int> point_index_;
  std::vector<double> observations_;
  std::vector<double> parameters_;
};

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_BAL_PROBLEM_H_
