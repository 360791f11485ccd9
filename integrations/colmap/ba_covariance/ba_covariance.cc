// colmap_ba_covariance: COLMAP 4.1.1's own covariance estimator
// (EstimateBACovariance, src/colmap/estimators/covariance.cc) on a COLMAP
// model, as benchmarks/covariance_benchmarks.py compares it with
// ceres_sqrtba::Covariance. Built by scripts/build_colmap.sh against the
// stock COLMAP it installs (not part of the project's own build).
//
//   colmap_ba_covariance --input_path DIR [--name NAME] [--use_sqrtba 0|1]
//                        [--pose_covariances FILE]
//
// The problem is the one `colmap bundle_adjuster` builds with its defaults:
// every registered image, COLMAP's default BundleAdjustmentOptions (focal
// length and extra parameters refined, principal points constant, trivial
// loss), gauge TWO_CAMS_FROM_WORLD. EstimateBACovariance is asked for the
// poses and the points (BACovarianceOptions::Params::POSES_AND_POINTS, its
// default damping). Its point covariances are conditional (every other
// variable held fixed), so only the poses' traces are comparable with
// ceres_sqrtba's marginal ones; both sums are printed.
//
// One JSON line on stdout with the fields of benchmarks/covariance_benchmark
// (method "colmap_own"): seconds and peak memory (VmHWM, reset after the
// problem is built) of EstimateBACovariance alone.
//
// Built against a COLMAP patched with integrations/colmap/sqrtba.patch and
// SQRTBA_ENABLED (scripts/build_colmap.sh: <cache>/sqrtba/bin), --use_sqrtba
// chooses BACovarianceOptions::use_sqrtba (default 1, the patch's default;
// method "colmap_sqrtba", else "colmap_own"). --pose_covariances writes every
// pose block (image id, then its 6 x 6 tangent-space covariance row by row,
// 17 digits) for benchmarks/covariance_benchmarks.py to compare the two.
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "colmap/estimators/bundle_adjustment.h"
#include "colmap/estimators/bundle_adjustment_ceres.h"
#include "colmap/estimators/covariance.h"
#include "colmap/scene/reconstruction.h"
#include "process_status.h"  // benchmarks/

namespace {

using ceres_sqrtba::benchmarks::Escape;
using ceres_sqrtba::benchmarks::ResetPeak;
using ceres_sqrtba::benchmarks::StatusMiB;

int Usage() {
  std::cerr << "usage: colmap_ba_covariance --input_path DIR [--name NAME] [--use_sqrtba 0|1] "
               "[--pose_covariances FILE]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input_path, name, pose_path, use_sqrtba;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    std::string* target = key == "--input_path"         ? &input_path
                          : key == "--name"             ? &name
                          : key == "--pose_covariances" ? &pose_path
                          : key == "--use_sqrtba"       ? &use_sqrtba
                                                        : nullptr;
    if (target == nullptr) return Usage();
    if (eq != std::string::npos) {
      *target = arg.substr(eq + 1);
    } else if (i + 1 < argc) {
      *target = argv[++i];
    } else {
      return Usage();
    }
  }
  if (input_path.empty() || (!use_sqrtba.empty() && use_sqrtba != "0" && use_sqrtba != "1")) return Usage();
#ifdef COLMAP_SQRTBA_ENABLED
  if (use_sqrtba.empty()) use_sqrtba = "1";  // the patch's default
  const std::string method = use_sqrtba == "1" ? "colmap_sqrtba" : "colmap_own";
#else
  if (use_sqrtba == "1") {
    std::cerr << "colmap_ba_covariance: --use_sqrtba 1 needs COLMAP built with SQRTBA_ENABLED; this one is stock\n";
    return 2;
  }
  const std::string method = "colmap_own";
#endif

  colmap::Reconstruction reconstruction;
  try {
    reconstruction.Read(input_path);
  } catch (const std::exception& e) {
    std::cerr << "colmap_ba_covariance: cannot read " << input_path << ": " << e.what() << "\n";
    return 1;
  }
  colmap::BundleAdjustmentOptions options;
  options.print_summary = false;
  colmap::BundleAdjustmentConfig config;
  for (const colmap::image_t image_id : reconstruction.RegImageIds()) config.AddImage(image_id);
  config.FixGauge(colmap::BundleAdjustmentGauge::TWO_CAMS_FROM_WORLD);
  std::unique_ptr<colmap::CeresBundleAdjuster> adjuster =
      colmap::CreateDefaultCeresBundleAdjuster(options, config, reconstruction);
  ceres::Problem& problem = *adjuster->Problem();

  ResetPeak();
  const double baseline = StatusMiB("VmRSS:");
  const auto start = std::chrono::steady_clock::now();
  colmap::BACovarianceOptions covariance_options;
  covariance_options.params = colmap::BACovarianceOptions::Params::POSES_AND_POINTS;
#ifdef COLMAP_SQRTBA_ENABLED
  covariance_options.use_sqrtba = use_sqrtba == "1";
#endif
  const std::optional<colmap::BACovariance> covariance =
      colmap::EstimateBACovariance(covariance_options, reconstruction, *adjuster);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double peak = StatusMiB("VmHWM:");

  double pose_trace_sum = 0.0, point_trace_sum = 0.0;
  size_t poses = 0, points = 0;
  if (covariance) {
    std::ofstream pose_file;
    if (!pose_path.empty()) {
      pose_file.open(pose_path);
      pose_file << std::setprecision(17);
    }
    for (const colmap::image_t image_id : reconstruction.RegImageIds()) {
      const std::optional<Eigen::MatrixXd> c = covariance->GetCamCovFromWorld(image_id);
      if (!c) continue;
      pose_trace_sum += c->trace();
      ++poses;
      if (pose_file.is_open()) {
        pose_file << image_id << " " << c->rows();
        for (int i = 0; i < c->rows(); ++i) {
          for (int j = 0; j < c->cols(); ++j) pose_file << " " << (*c)(i, j);
        }
        pose_file << "\n";
      }
    }
    if (!pose_path.empty() && !pose_file) {
      std::cerr << "colmap_ba_covariance: cannot write " << pose_path << "\n";
      return 1;
    }
    for (const auto& [point3D_id, point] : reconstruction.Points3D()) {
      const std::optional<Eigen::MatrixXd> c = covariance->GetPointCov(point3D_id);
      if (!c) continue;
      point_trace_sum += c->trace();
      ++points;
    }
  }
  std::printf(
      "{\"problem\": \"%s\", \"method\": \"%s\", \"ok\": %s, \"seconds\": %.4f, \"peak_mib\": %.1f, "
      "\"baseline_mib\": %.1f, \"poses\": %zu, \"points\": %zu, \"observations\": %d, \"rows\": %d, "
      "\"pose_trace_sum\": %.12g, \"point_trace_sum\": %.12g, \"trace_sum\": %.12g, \"message\": \"%s\"}\n",
      Escape(name).c_str(), method.c_str(), covariance ? "true" : "false", seconds, peak, baseline, poses, points,
      problem.NumResidualBlocks(), problem.NumResiduals(), pose_trace_sum, point_trace_sum,
      pose_trace_sum + point_trace_sum,
      covariance ? "" : "EstimateBACovariance returned no covariance (see its log)");
  return covariance ? 0 : 1;
}
