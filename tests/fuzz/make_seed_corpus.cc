// Writes the generated part of the fuzzers' seed corpus (tests/fuzz/corpus):
// small synthetic BAL problems from the example's generator, and numerically
// awkward variants of one of them. The committed files were made with
//
//   build/tests/fuzz/make_fuzz_seed_corpus tests/fuzz/corpus
//
// (hand-made broken files live beside them; tests/fuzz/README.md lists all).
// Values are written with 7 significant digits to keep the seeds small.
#include <bzlib.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bal_problem.h"
#include "synthetic_problem.h"

namespace {

using ceres_sqrtba::examples::BalProblem;
using ceres_sqrtba::examples::MakeSyntheticProblem;
using ceres_sqrtba::examples::SyntheticOptions;

// A BAL problem as plain arrays, easy to edit.
struct Bal {
  int num_cameras = 0;
  int num_points = 0;
  std::vector<int> camera_index, point_index;
  std::vector<double> observations;  // x, y per observation
  std::vector<double> cameras;       // 9 per camera
  std::vector<double> points;        // 3 per point

  void AddObservation(int camera, int point, double x, double y) {
    camera_index.push_back(camera);
    point_index.push_back(point);
    observations.push_back(x);
    observations.push_back(y);
  }
};

Bal FromProblem(const BalProblem& p) {
  Bal b;
  b.num_cameras = p.num_cameras();
  b.num_points = p.num_points();
  b.camera_index = p.camera_index();
  b.point_index = p.point_index();
  b.observations = p.observations();
  b.cameras.assign(p.parameters().begin(), p.parameters().begin() + 9 * p.num_cameras());
  b.points.assign(p.parameters().begin() + 9 * p.num_cameras(), p.parameters().end());
  return b;
}

std::string Text(const Bal& b) {
  std::string out;
  char line[128];
  std::snprintf(line, sizeof(line), "%d %d %zu\n", b.num_cameras, b.num_points,
                b.camera_index.size());
  out += line;
  for (size_t i = 0; i < b.camera_index.size(); ++i) {
    std::snprintf(line, sizeof(line), "%d %d %.7g %.7g\n", b.camera_index[i], b.point_index[i],
                  b.observations[2 * i], b.observations[2 * i + 1]);
    out += line;
  }
  for (double v : b.cameras) {
    std::snprintf(line, sizeof(line), "%.7g\n", v);
    out += line;
  }
  for (double v : b.points) {
    std::snprintf(line, sizeof(line), "%.7g\n", v);
    out += line;
  }
  return out;
}

std::string Bzip2(const std::string& data) {
  unsigned int size = static_cast<unsigned int>(data.size() + data.size() / 100 + 600);
  std::string out(size, '\0');
  if (BZ2_bzBuffToBuffCompress(&out[0], &size, const_cast<char*>(data.data()),
                               static_cast<unsigned int>(data.size()), 9, 0, 0) != BZ_OK) {
    std::fprintf(stderr, "bzip2 compression failed\n");
    std::exit(1);
  }
  out.resize(size);
  return out;
}

bool WriteFile(const std::string& path, const std::string& contents) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  return std::fclose(f) == 0 && ok;
}

Bal Synthetic(int cameras, int points, int per_point, uint64_t seed) {
  SyntheticOptions o;
  o.num_cameras = cameras;
  o.num_points = points;
  o.observations_per_point = per_point;
  o.outlier_ratio = 0.1;
  o.seed = seed;
  BalProblem p;
  std::string error;
  if (!MakeSyntheticProblem(o, &p, &error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    std::exit(1);
  }
  return FromProblem(p);
}

// Centre of camera c: -R^T t (R from the angle-axis vector).
void Centre(const Bal& b, int c, double centre[3]) {
  const double* cam = &b.cameras[9 * c];
  const double theta = std::sqrt(cam[0] * cam[0] + cam[1] * cam[1] + cam[2] * cam[2]);
  const double* t = cam + 3;
  // Rotate t by -angle_axis (Rodrigues), then negate.
  double k[3] = {0, 0, 0};
  if (theta > 0) {
    for (int i = 0; i < 3; ++i) k[i] = -cam[i] / theta;
  }
  const double c0 = std::cos(theta), s0 = std::sin(theta);
  const double kt = k[0] * t[0] + k[1] * t[1] + k[2] * t[2];
  const double cross[3] = {k[1] * t[2] - k[2] * t[1], k[2] * t[0] - k[0] * t[2],
                           k[0] * t[1] - k[1] * t[0]};
  for (int i = 0; i < 3; ++i) centre[i] = -(t[i] * c0 + cross[i] * s0 + k[i] * kt * (1 - c0));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output folder>\n", argv[0]);
    return 1;
  }
  const std::string dir = argv[1];
  int failures = 0;
  auto write = [&](const std::string& name, const std::string& contents) {
    if (!WriteFile(dir + "/" + name, contents)) {
      std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), name.c_str());
      ++failures;
    }
  };

  // Valid problems of a few sizes (the last one beyond the solve fuzzer's
  // bound of 300 observations: read, then skipped).
  const Bal small = Synthetic(3, 8, 2, 1);
  write("gen_synthetic_c3_p8_k2.txt", Text(small));
  write("gen_synthetic_c5_p24_k3.txt.bz2", Bzip2(Text(Synthetic(5, 24, 3, 2))));
  write("gen_synthetic_c12_p90_k3.txt", Text(Synthetic(12, 90, 3, 3)));
  write("gen_synthetic_c8_p160_k2_too_large.txt.bz2", Bzip2(Text(Synthetic(8, 160, 2, 4))));

  // Awkward variants of the small one.
  const std::vector<std::pair<std::string, std::function<void(Bal*)>>> variants = {
      {"point_at_camera_centre", [](Bal* b) { Centre(*b, 0, &b->points[0]); }},
      {"point_far_away",  // nearly parallel rays
       [](Bal* b) {
         for (int k = 0; k < 3; ++k) b->points[k] *= 1e7;
       }},
      {"point_seen_once",
       [](Bal* b) {
         b->points.insert(b->points.end(), {0.1, -0.2, 0.3});
         b->AddObservation(1, b->num_points++, 3.0, -4.0);
       }},
      {"camera_sees_nothing",
       [](Bal* b) {
         b->cameras.insert(b->cameras.end(), {0.1, 0.2, 0.3, 0, 0, -4, 500, 0, 0});
         ++b->num_cameras;
       }},
      {"point_seen_twice_by_one_camera",
       [](Bal* b) { b->AddObservation(b->camera_index[0], b->point_index[0], 1.0, 2.0); }},
      {"all_points_equal",  // Normalize refuses it
       [](Bal* b) {
         for (size_t i = 3; i < b->points.size(); ++i) b->points[i] = b->points[i % 3];
       }},
      {"huge_observations",  // residuals beyond float: single precision falls back
       [](Bal* b) {
         for (double& v : b->observations) v *= 1e30;
       }},
      {"huge_focal_length",
       [](Bal* b) {
         for (int c = 0; c < b->num_cameras; ++c) b->cameras[9 * c + 6] = 1e36;
       }},
      {"zero_focal_length",
       [](Bal* b) {
         for (int c = 0; c < b->num_cameras; ++c) b->cameras[9 * c + 6] = 0.0;
       }},
      {"tiny_values",
       [](Bal* b) {
         for (double& v : b->observations) v *= 1e-300;
       }},
      {"large_rotation",
       [](Bal* b) {
         for (int k = 0; k < 3; ++k) b->cameras[k] = 1e6 * (k + 1);
       }},
  };
  for (const auto& v : variants) {
    Bal b = small;
    v.second(&b);
    write("gen_" + v.first + ".txt", Text(b));
  }

  // The smallest problems: one observation; one camera and two points.
  Bal one;
  one.num_cameras = 1;
  one.num_points = 1;
  one.cameras = {0, 0, 0, 0, 0, -5, 500, 0, 0};
  one.points = {0.1, 0.2, 0.3};
  one.AddObservation(0, 0, -10.0, -20.0);
  write("gen_one_observation.txt", Text(one));  // Normalize refuses it
  one.points.insert(one.points.end(), {-0.2, 0.1, 0.4});
  one.AddObservation(0, one.num_points++, 20.0, -10.0);
  write("gen_one_camera_two_points.txt", Text(one));
  return failures == 0 ? 0 : 1;
}
