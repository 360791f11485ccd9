// colmap_ba_covariance: COLMAP 4.1.1's own covariance estimator
// (EstimateBACovariance, src/colmap/estimators/covariance.cc) on a COLMAP
// model, as benchmarks/covariance_benchmarks.py compares it with
// ceres_sqrtba::Covariance. Built by scripts/build_colmap.sh against the
// stock COLMAP it installs (not part of the project's own build).
//
//   colmap_ba_covariance --input_path DIR [--name NAME]
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
#include <chrono>
#include <cstdio>
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
  std::cerr << "usage: colmap_ba_covariance --input_path DIR [--name NAME]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input_path, name;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--input_path" || arg == "--name") && i + 1 < argc) {
      (arg == "--name" ? name : input_path) = argv[++i];
    } else if (arg.rfind("--input_path=", 0) == 0) {
      input_path = arg.substr(13);
    } else if (arg.rfind("--name=", 0) == 0) {
      name = arg.substr(7);
    } else {
      return Usage();
    }
  }
  if (input_path.empty()) return Usage();

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
  const std::optional<colmap::BACovariance> covariance =
      colmap::EstimateBACovariance(covariance_options, reconstruction, *adjuster);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double peak = StatusMiB("VmHWM:");

  double pose_trace_sum = 0.0, point_trace_sum = 0.0;
  size_t poses = 0, points = 0;
  if (covariance) {
    for (const colmap::image_t image_id : reconstruction.RegImageIds()) {
      const std::optional<Eigen::MatrixXd> c = covariance->GetCamCovFromWorld(image_id);
      if (!c) continue;
      pose_trace_sum += c->trace();
      ++poses;
    }
    for (const auto& [point3D_id, point] : reconstruction.Points3D()) {
      const std::optional<Eigen::MatrixXd> c = covariance->GetPointCov(point3D_id);
      if (!c) continue;
      point_trace_sum += c->trace();
      ++points;
    }
  }
  std::printf(
      "{\"problem\": \"%s\", \"method\": \"colmap_own\", \"ok\": %s, \"seconds\": %.4f, \"peak_mib\": %.1f, "
      "\"baseline_mib\": %.1f, \"poses\": %zu, \"points\": %zu, \"observations\": %d, \"rows\": %d, "
      "\"pose_trace_sum\": %.12g, \"point_trace_sum\": %.12g, \"trace_sum\": %.12g, \"message\": \"%s\"}\n",
      Escape(name).c_str(), covariance ? "true" : "false", seconds, peak, baseline, poses, points,
      problem.NumResidualBlocks(), problem.NumResiduals(), pose_trace_sum, point_trace_sum,
      pose_trace_sum + point_trace_sum,
      covariance ? "" : "EstimateBACovariance returned no covariance (see its log)");
  return covariance ? 0 : 1;
}
