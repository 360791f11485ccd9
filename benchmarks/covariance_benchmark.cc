// covariance_benchmark: the covariance of every pose (camera) block and every
// point of one problem by one method, timed, with its peak memory; one JSON
// line on stdout. Run once per method (benchmarks/covariance_benchmarks.py),
// so that each process's peak memory is its method's.
//
//   --bal=FILE | --synthetic_points=N ... | --colmap=DIR   the problem
//   --method=sqrtba | ceres_sparse_qr | ceres_dense_svd | colmap
//   --solve_iterations=K   first K iterations of SQRT_ITERATIVE_SCHUR (all
//                          methods then see the same values)
//
// ceres_sqrtba::Covariance skips undetermined landmarks (counted in the JSON
// line; ceres::Covariance fails on them, COLMAP's method damps them).
// The gauge is held as a pipeline holds it: BAL and synthetic problems with
// their first two cameras constant (as in ceres-solver#280's tries), COLMAP
// models as COLMAP's bundle adjuster holds it (one pose and one translation
// coordinate). Peak memory: the process's VmHWM, reset (/proc/self/clear_refs)
// after the problem is built and solved, so it is the method's own.
//
// "colmap" is COLMAP 4.1.1's EstimateBACovariance (src/colmap/estimators/
// covariance.cc) as its source describes the method, re-implemented here
// with the same library calls: the Jacobian from ceres::Problem::Evaluate, the
// points' blocks inverted one by one (with COLMAP's default damping 1e-8) as
// the point covariances, the pose-and-other Schur complement by Eigen sparse
// products, the other (camera intrinsics) blocks eliminated with Eigen's
// SimplicialLLT, Eigen's SimplicialLDLT of the pose Schur complement and the
// dense inverse of its factor, whose column blocks give the pose covariances.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "Eigen/Dense"
#include "Eigen/Sparse"
#include "bal_problem.h"
#include "build_problem.h"
#include "ceres/ceres.h"
#include "ceres_sqrtba/covariance.h"
#include "ceres_sqrtba/solver.h"
#include "colmap_model.h"
#include "colmap_problem.h"
#include "gflags/gflags.h"
#include "process_status.h"
#include "synthetic_problem.h"

DEFINE_string(bal, "", "BAL file (.txt or .bz2).");
DEFINE_int32(synthetic_points, 0, "With no --bal/--colmap: a synthetic BAL problem of this many points.");
DEFINE_int32(synthetic_cameras, 32, "Cameras of the synthetic problem.");
DEFINE_int32(synthetic_observations_per_point, 5, "Track length of the synthetic problem.");
DEFINE_string(colmap, "", "COLMAP model folder.");
DEFINE_string(method, "sqrtba", "sqrtba, ceres_sparse_qr, ceres_dense_svd or colmap.");
DEFINE_int32(solve_iterations, 0, "SQRT_ITERATIVE_SCHUR iterations before the covariance.");
DEFINE_int32(num_threads, 2, "Threads.");
DEFINE_string(name, "", "Problem name for the JSON line.");

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

using ceres_sqrtba::benchmarks::Escape;
using ceres_sqrtba::benchmarks::ResetPeak;
using ceres_sqrtba::benchmarks::StatusMiB;

struct Blocks {
  std::vector<const double*> poses, others, points;
};

// COLMAP 4.1.1's method (see the file comment); false with its reason.
bool ColmapMethod(ceres::Problem* problem, const Blocks& b, double* trace_sum, double* pose_trace_sum,
                  std::string* message) {
  using SparseMatrix = Eigen::SparseMatrix<double>;
  constexpr double kDamping = 1e-8;  // BACovarianceOptions::damping
  ceres::Problem::EvaluateOptions evaluate;
  int pose_params = 0, other_params = 0, point_params = 0;
  for (const double* p : b.poses) {
    evaluate.parameter_blocks.push_back(const_cast<double*>(p));
    pose_params += problem->ParameterBlockTangentSize(p);
  }
  for (const double* p : b.others) {
    evaluate.parameter_blocks.push_back(const_cast<double*>(p));
    other_params += problem->ParameterBlockTangentSize(p);
  }
  for (const double* p : b.points) {
    evaluate.parameter_blocks.push_back(const_cast<double*>(p));
    point_params += problem->ParameterBlockTangentSize(p);
  }
  ceres::CRSMatrix crs;
  if (!problem->Evaluate(evaluate, nullptr, nullptr, nullptr, &crs)) {
    *message = "Evaluate failed";
    return false;
  }
  const Eigen::Map<const Eigen::SparseMatrix<double, Eigen::RowMajor>> j(
      crs.num_rows, crs.num_cols, static_cast<int>(crs.values.size()), crs.rows.data(), crs.cols.data(),
      crs.values.data());
  const int na = pose_params + other_params;
  const SparseMatrix j_a = j.block(0, 0, j.rows(), na);
  const SparseMatrix j_p = j.block(0, na, j.rows(), point_params);
  const SparseMatrix h_aa = j_a.transpose() * j_a;
  const SparseMatrix h_ap = j_a.transpose() * j_p;
  SparseMatrix h_pp = j_p.transpose() * j_p;
  *trace_sum = 0.0;
  for (int k = 0; k < point_params; k += 3) {
    const Eigen::Matrix3d block =
        Eigen::Matrix3d(h_pp.block(k, k, 3, 3)) + kDamping * Eigen::Matrix3d::Identity();
    const Eigen::Matrix3d inverse = block.inverse();
    *trace_sum += inverse.trace();
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) h_pp.coeffRef(k + r, k + c) = inverse(r, c);
    }
  }
  h_pp.makeCompressed();
  SparseMatrix s = h_aa - h_ap * h_pp * SparseMatrix(h_ap.transpose());
  if (other_params > 0) {
    const SparseMatrix s_cc = s.block(0, 0, pose_params, pose_params);
    const SparseMatrix s_co = s.block(0, pose_params, pose_params, other_params);
    SparseMatrix s_oo = s.block(pose_params, pose_params, other_params, other_params);
    for (int i = 0; i < other_params; ++i) s_oo.coeffRef(i, i) += kDamping;
    Eigen::SimplicialLLT<SparseMatrix> llt(s_oo);
    if (llt.info() != Eigen::Success) {
      *message = "SimplicialLLT of the other parameters failed";
      return false;
    }
    const SparseMatrix s_oc = s_co.transpose();
    s = s_cc - s_co * SparseMatrix(llt.solve(s_oc));
  }
  Eigen::SimplicialLDLT<SparseMatrix> ldlt(s);
  if (ldlt.info() != Eigen::Success) {
    *message = "SimplicialLDLT failed";
    return false;
  }
  const Eigen::VectorXd d = ldlt.vectorD();
  if ((d.array().abs() > 1e-6).count() < s.rows()) {
    *message = "the pose Schur complement is rank deficient";
    return false;
  }
  const SparseMatrix l = ldlt.matrixL();
  Eigen::MatrixXd l_inverse = Eigen::MatrixXd::Identity(l.rows(), l.cols());
  l.triangularView<Eigen::Lower>().solveInPlace(l_inverse);
  for (int i = 0; i < s.rows(); ++i) l_inverse.row(i) *= 1.0 / std::max(std::sqrt(std::max(d(i), 0.0)), 1e-300);
  l_inverse = l_inverse * ldlt.permutationP();
  int offset = 0;
  for (const double* p : b.poses) {
    const int size = problem->ParameterBlockTangentSize(p);
    const Eigen::MatrixXd c = l_inverse.middleCols(offset, size).transpose() * l_inverse.middleCols(offset, size);
    *pose_trace_sum += c.trace();
    offset += size;
  }
  *trace_sum += *pose_trace_sum;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  ceres_sqrtba::examples::BalProblem bal;
  ceres_sqrtba::examples::ColmapModel model;
  ceres_sqrtba::examples::ColmapProblem colmap;
  ceres::Problem problem;
  Blocks blocks;
  std::string error;
  if (!FLAGS_colmap.empty()) {
    ceres_sqrtba::examples::ColmapFormat format;
    if (!ceres_sqrtba::examples::ReadColmapModel(FLAGS_colmap, {}, &model, &format, &error) ||
        !colmap.Build({}, model, &problem, &error)) {
      std::cerr << error << "\n";
      return 1;
    }
    std::vector<uint64_t> ids;
    colmap.ImagePoseBlocks(model, &ids, &blocks.poses);
    ids.clear();
    colmap.PointBlocks(model, &ids, &blocks.points);
  } else {
    if (!FLAGS_bal.empty()) {
      if (!ceres_sqrtba::examples::BalProblem::Read(FLAGS_bal, {}, &bal, &error)) {
        std::cerr << error << "\n";
        return 1;
      }
    } else {
      ceres_sqrtba::examples::SyntheticOptions o;
      o.num_points = FLAGS_synthetic_points;
      o.num_cameras = FLAGS_synthetic_cameras;
      o.observations_per_point = FLAGS_synthetic_observations_per_point;
      if (!ceres_sqrtba::examples::MakeSyntheticProblem(o, &bal, &error)) {
        std::cerr << error << "\n";
        return 1;
      }
    }
    if (!ceres_sqrtba::examples::BuildProblem({}, &bal, &problem, &error)) {
      std::cerr << error << "\n";
      return 1;
    }
    for (int i = 0; i < bal.num_cameras(); ++i) {
      if (problem.HasParameterBlock(bal.camera(i))) blocks.poses.push_back(bal.camera(i));
    }
    for (int i = 0; i < bal.num_points(); ++i) {
      if (problem.HasParameterBlock(bal.point(i))) blocks.points.push_back(bal.point(i));
    }
    for (int i = 0; i < 2 && i < static_cast<int>(blocks.poses.size()); ++i) {
      problem.SetParameterBlockConstant(const_cast<double*>(blocks.poses[i]));
    }
  }
  // Every other variable block (COLMAP's intrinsics) is an "other" block.
  std::vector<double*> all;
  problem.GetParameterBlocks(&all);
  std::unordered_set<const double*> known(blocks.poses.begin(), blocks.poses.end());
  known.insert(blocks.points.begin(), blocks.points.end());
  for (double* p : all) {
    if (!known.count(p) && !problem.IsParameterBlockConstant(p)) blocks.others.push_back(p);
  }
  auto variable = [&](std::vector<const double*>* v) {
    std::vector<const double*> kept;
    for (const double* p : *v) {
      if (!problem.IsParameterBlockConstant(const_cast<double*>(p))) kept.push_back(p);
    }
    *v = kept;
  };
  variable(&blocks.poses);
  variable(&blocks.points);
  if (FLAGS_solve_iterations > 0) {
    ceres_sqrtba::Solver::Options options;
    options.sqrt_linear_solver_type = ceres_sqrtba::SQRT_ITERATIVE_SCHUR;
    options.max_num_iterations = FLAGS_solve_iterations;
    options.num_threads = FLAGS_num_threads;
    options.logging_type = ceres::SILENT;
    ceres_sqrtba::Solver::Summary summary;
    ceres_sqrtba::Solve(options, &problem, &summary);
  }
  std::vector<std::pair<const double*, const double*>> requests;
  for (const double* p : blocks.poses) requests.emplace_back(p, p);
  for (const double* p : blocks.points) requests.emplace_back(p, p);

  int columns = 0;
  for (double* p : all) {
    if (!problem.IsParameterBlockConstant(p)) columns += problem.ParameterBlockTangentSize(p);
  }
  ResetPeak();
  const double baseline = StatusMiB("VmRSS:");
  const auto start = Clock::now();
  bool ok = false;
  double trace_sum = 0.0, pose_trace_sum = 0.0;
  std::string message, details;
  if (FLAGS_method == "sqrtba") {
    ceres_sqrtba::Covariance::Options options;
    options.num_threads = FLAGS_num_threads;
    options.skip_undetermined_landmarks = true;
    ceres_sqrtba::Covariance covariance(options);
    ok = covariance.Compute(requests, &problem);
    message = covariance.error();
    if (ok) {
      for (size_t k = 0; k < requests.size(); ++k) {
        const double* p = requests[k].first;
        const int n = problem.ParameterBlockTangentSize(p);
        std::vector<double> c(n * n);
        if (!covariance.GetCovarianceBlockInTangentSpace(p, p, c.data())) continue;
        for (int i = 0; i < n; ++i) (k < blocks.poses.size() ? pose_trace_sum : trace_sum) += c[i * n + i];
      }
      trace_sum += pose_trace_sum;
      const auto& s = covariance.summary();
      std::ostringstream d;
      d << "\"undetermined_landmarks\": " << s.undetermined_landmarks << ", \"weak_landmarks\": " << s.weak_landmarks << ", \"factor_values\": " << s.factor_values << ", \"seconds_jacobian\": " << s.seconds_jacobian
        << ", \"seconds_factorization\": " << s.seconds_factorization << ", \"seconds_null_space\": "
        << s.seconds_null_space << ", \"seconds_inversion\": " << s.seconds_inversion << ", \"seconds_blocks\": "
        << s.seconds_blocks << ", ";
      details = d.str();
    }
  } else if (FLAGS_method == "ceres_sparse_qr" || FLAGS_method == "ceres_dense_svd") {
    ceres::Covariance::Options options;
    options.num_threads = FLAGS_num_threads;
    options.algorithm_type = FLAGS_method == "ceres_sparse_qr" ? ceres::SPARSE_QR : ceres::DENSE_SVD;
    ceres::Covariance covariance(options);
    ok = covariance.Compute(requests, &problem);
    if (!ok) message = "ceres::Covariance::Compute returned false (see its log)";
    if (ok) {
      for (size_t k = 0; k < requests.size(); ++k) {
        const double* p = requests[k].first;
        const int n = problem.ParameterBlockTangentSize(p);
        std::vector<double> c(n * n);
        covariance.GetCovarianceBlockInTangentSpace(p, p, c.data());
        for (int i = 0; i < n; ++i) (k < blocks.poses.size() ? pose_trace_sum : trace_sum) += c[i * n + i];
      }
      trace_sum += pose_trace_sum;
    }
  } else if (FLAGS_method == "colmap") {
    ok = ColmapMethod(&problem, blocks, &trace_sum, &pose_trace_sum, &message);
  } else {
    std::cerr << "unknown --method " << FLAGS_method << "\n";
    return 2;
  }
  const double seconds = Seconds(start);
  std::printf(
      "{\"problem\": \"%s\", \"method\": \"%s\", \"ok\": %s, \"seconds\": %.4f, \"peak_mib\": %.1f, "
      "\"baseline_mib\": %.1f, "
      "\"poses\": %zu, \"points\": %zu, \"observations\": %d, \"rows\": %d, \"columns\": %d, %s"
      "\"pose_trace_sum\": %.12g, \"trace_sum\": %.12g, \"message\": \"%s\"}\n",
      Escape(FLAGS_name).c_str(), FLAGS_method.c_str(), ok ? "true" : "false", seconds, StatusMiB("VmHWM:"), baseline,
      blocks.poses.size(), blocks.points.size(), problem.NumResidualBlocks(), problem.NumResiduals(), columns,
      details.c_str(), pose_trace_sum, trace_sum,
      Escape(message).c_str());
  return 0;
}
