#include "covariance_output.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "Eigen/Dense"

namespace ceres_sqrtba {
namespace examples {
namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double LargestStd(const Eigen::Matrix3d& c) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eigen(c, Eigen::EigenvaluesOnly);
  return std::sqrt(std::max(0.0, eigen.eigenvalues()[2]));
}

struct Stats {
  std::vector<double> values;
  std::string Describe() const {
    if (values.empty()) return "none";
    std::vector<double> v = values;
    std::sort(v.begin(), v.end());
    char buffer[96];
    std::snprintf(buffer, sizeof(buffer), "median %.4g, worst %.4g", v[v.size() / 2], v.back());
    return buffer;
  }
};

class Output {
 public:
  bool Open(const std::string& path, bool binary, std::string* error) {
    file_.reset(std::fopen(path.c_str(), binary ? "wb" : "w"));
    binary_ = binary;
    path_ = path;
    if (file_ == nullptr) *error = "cannot write " + path;
    return file_ != nullptr;
  }
  void Header(const std::string& lines, uint64_t count) {
    if (binary_) {
      std::fwrite(&count, sizeof(count), 1, file_.get());
    } else {
      std::fprintf(file_.get(), "%s# Number of records: %llu\n", lines.c_str(), static_cast<unsigned long long>(count));
    }
  }
  template <typename Id>
  void Record(Id id, const Eigen::MatrixXd& c) {
    if (binary_) {
      std::fwrite(&id, sizeof(id), 1, file_.get());
    } else {
      std::fprintf(file_.get(), "%llu", static_cast<unsigned long long>(id));
    }
    for (int i = 0; i < c.rows(); ++i) {
      for (int j = i; j < c.cols(); ++j) {
        const double v = c(i, j);
        if (binary_) {
          std::fwrite(&v, sizeof(v), 1, file_.get());
        } else {
          std::fprintf(file_.get(), " %.17g", v);
        }
      }
    }
    if (!binary_) std::fputc('\n', file_.get());
  }
  bool Close(std::string* error) {
    const bool ok = std::ferror(file_.get()) == 0 && std::fclose(file_.release()) == 0;
    if (!ok) *error = "writing " + path_ + " failed";
    return ok;
  }

 private:
  struct Closer {
    void operator()(std::FILE* f) const {
      if (f != nullptr) std::fclose(f);
    }
  };
  std::unique_ptr<std::FILE, Closer> file_;
  bool binary_ = false;
  std::string path_;
};

}  // namespace

void SetColmapPoseConvention(CovarianceBlocks* blocks) {
  blocks->pose_written_size = 6;
  blocks->pose_written = [](const double* block, const Eigen::MatrixXd& ambient) {
    const ceres::ProductManifold<ceres::EigenQuaternionManifold, ceres::EuclideanManifold<3>> manifold;
    RowMatrix j(7, 6);
    manifold.PlusJacobian(block, j.data());
    const Eigen::MatrixXd lift = j.completeOrthogonalDecomposition().pseudoInverse();
    return Eigen::MatrixXd(lift * ambient * lift.transpose());
  };
  blocks->centre = [](const double* v) {
    const Eigen::Quaterniond q(v[3], v[0], v[1], v[2]);
    return Eigen::Vector3d(-(q.normalized().toRotationMatrix().transpose() * Eigen::Vector3d(v[4], v[5], v[6])));
  };
  blocks->pose_convention =
      "cam_from_world in the tangent space [w, t]: q <- Exp(w) * q (Ceres' EigenQuaternionManifold), "
      "t <- t + dt";
}

void SetBalCameraConvention(bool quaternions, CovarianceBlocks* blocks) {
  blocks->pose_written_size = 9;
  blocks->pose_written = [](const double* block, const Eigen::MatrixXd& ambient) {
    if (ambient.rows() == 9) return ambient;
    // [qw qx qy qz t f k1 k2] under Ceres' QuaternionManifold: into its
    // 9-dimensional tangent space.
    const ceres::ProductManifold<ceres::QuaternionManifold, ceres::EuclideanManifold<6>> manifold;
    RowMatrix j(10, 9);
    manifold.PlusJacobian(block, j.data());
    const Eigen::MatrixXd lift = j.completeOrthogonalDecomposition().pseudoInverse();
    return Eigen::MatrixXd(lift * ambient * lift.transpose());
  };
  if (quaternions) {
    blocks->centre = [](const double* v) {
      const Eigen::Quaterniond q(v[0], v[1], v[2], v[3]);
      return Eigen::Vector3d(-(q.normalized().toRotationMatrix().transpose() * Eigen::Vector3d(v[4], v[5], v[6])));
    };
  } else {
    blocks->centre = [](const double* v) {
      const Eigen::Vector3d r(v[0], v[1], v[2]);
      const double angle = r.norm();
      const Eigen::Matrix3d rotation =
          angle > 0.0 ? Eigen::AngleAxisd(angle, r / angle).toRotationMatrix() : Eigen::Matrix3d::Identity();
      return Eigen::Vector3d(-(rotation.transpose() * Eigen::Vector3d(v[3], v[4], v[5])));
    };
  }
  blocks->pose_convention = quaternions ? "BAL camera [qw qx qy qz tx ty tz f k1 k2] in the tangent space of "
                                          "QuaternionManifold x R^6 (9 coordinates)"
                                        : "BAL camera [rx ry rz tx ty tz f k1 k2] (angle-axis)";
}

bool ParseCovarianceSelection(const std::string& value, CovarianceSelection* selection, std::string* error) {
  if (value.empty() || value == "none") {
    *selection = CovarianceSelection::kNone;
  } else if (value == "poses") {
    *selection = CovarianceSelection::kPoses;
  } else if (value == "points") {
    *selection = CovarianceSelection::kPoints;
  } else if (value == "all") {
    *selection = CovarianceSelection::kAll;
  } else {
    *error = "--covariance must be none, poses, points or all, not '" + value + "'";
    return false;
  }
  return true;
}

bool WriteCovariances(ceres::Problem* problem, const Covariance::Options& options, CovarianceSelection selection,
                      const CovarianceBlocks& blocks, const std::string& folder, bool binary,
                      const std::string& program, std::string* error) {
  if (selection == CovarianceSelection::kNone) return true;
  const bool poses = selection != CovarianceSelection::kPoints;
  const bool points = selection != CovarianceSelection::kPoses;
  std::vector<std::pair<const double*, const double*>> requests;
  if (poses) {
    for (const double* b : blocks.poses) requests.emplace_back(b, b);
  }
  if (points) {
    for (const double* b : blocks.points) requests.emplace_back(b, b);
  }
  Covariance covariance(options);
  if (!covariance.Compute(requests, problem)) {
    *error = "covariance: " + covariance.error();
    return false;
  }
  const Covariance::Summary& s = covariance.summary();
  Stats centre_std, point_std;
  const std::string extension = binary ? ".bin" : ".txt";
  if (poses) {
    Output out;
    if (!out.Open(folder + "/pose_covariances" + extension, binary, error)) return false;
    out.Header("# Pose covariances written by " + program + " --covariance (ceres_sqrtba::Covariance)\n" +
                   "# Per pose: ID, then the upper triangle of its " + std::to_string(blocks.pose_written_size) +
                   "x" + std::to_string(blocks.pose_written_size) + " covariance, row by row\n# " +
                   blocks.pose_convention + "\n",
               blocks.poses.size());
    for (size_t i = 0; i < blocks.poses.size(); ++i) {
      const double* b = blocks.poses[i];
      const int size = problem->ParameterBlockSize(b);
      RowMatrix ambient(size, size);
      if (!covariance.GetCovarianceBlock(b, b, ambient.data())) {
        *error = "covariance: " + covariance.error();
        return false;
      }
      out.Record(static_cast<uint32_t>(blocks.pose_ids[i]), blocks.pose_written(b, ambient));
      if (problem->IsParameterBlockConstant(const_cast<double*>(b))) continue;
      // The centre's Jacobian by central differences on the values.
      Eigen::Matrix<double, 3, Eigen::Dynamic> j(3, size);
      std::vector<double> x(b, b + size);
      for (int k = 0; k < size; ++k) {
        const double h = 1e-6 * std::max(1.0, std::abs(x[k]));
        const double keep = x[k];
        x[k] = keep + h;
        const Eigen::Vector3d plus = blocks.centre(x.data());
        x[k] = keep - h;
        const Eigen::Vector3d minus = blocks.centre(x.data());
        x[k] = keep;
        j.col(k) = (plus - minus) / (2.0 * h);
      }
      centre_std.values.push_back(LargestStd(j * ambient * j.transpose()));
    }
    if (!out.Close(error)) return false;
  }
  size_t points_written = 0;
  if (points) {
    // Left-out points (skip_undetermined_landmarks) have no record: the
    // count in the header is the records'.
    std::vector<std::pair<uint64_t, Eigen::MatrixXd>> records;
    records.reserve(blocks.points.size());
    for (size_t i = 0; i < blocks.points.size(); ++i) {
      const double* b = blocks.points[i];
      RowMatrix m(3, 3);
      if (!covariance.GetCovarianceBlock(b, b, m.data())) {
        if (s.undetermined_landmarks > 0) continue;
        *error = "covariance: " + covariance.error();
        return false;
      }
      const Eigen::Matrix3d c = m;
      records.emplace_back(blocks.point_ids[i], Eigen::MatrixXd(c));
      if (!problem->IsParameterBlockConstant(const_cast<double*>(b))) point_std.values.push_back(LargestStd(c));
    }
    Output out;
    if (!out.Open(folder + "/point_covariances" + extension, binary, error)) return false;
    out.Header("# Point covariances written by " + program +
                   " --covariance (ceres_sqrtba::Covariance)\n"
                   "# Per point: POINT3D_ID, then its 3x3 covariance's upper triangle: xx xy xz yy yz zz\n"
                   "# (marginal: the cameras' uncertainty included)\n",
               records.size());
    for (const auto& record : records) out.Record(record.first, record.second);
    if (!out.Close(error)) return false;
    points_written = records.size();
  }
  std::printf("Covariance (%s, %d threads): %zu poses, %zu points in %.3f s", s.square_root ? "square root" : "ceres",
              options.num_threads, poses ? blocks.poses.size() : size_t{0},
              points_written, s.seconds_total);
  if (s.null_space_dimension > 0) std::printf(", %d gauge directions projected out", s.null_space_dimension);
  if (s.undetermined_landmarks > 0) {
    std::printf(", %d points not determined by their observations left out", s.undetermined_landmarks);
  }
  std::printf("\n");
  if (poses) std::printf("Camera centre standard deviation: %s\n", centre_std.Describe().c_str());
  if (points) std::printf("Point standard deviation: %s\n", point_std.Describe().c_str());
  std::printf("Wrote %s/%s%s\n", folder.c_str(),
              poses && points ? "{pose,point}_covariances" : (poses ? "pose_covariances" : "point_covariances"),
              extension.c_str());
  return true;
}

}  // namespace examples
}  // namespace ceres_sqrtba
