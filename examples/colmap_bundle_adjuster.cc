// colmap_bundle_adjuster: refines a COLMAP model (a sparse/0 folder, text or
// binary) by bundle adjustment as COLMAP's `colmap bundle_adjuster` does, with
// any Ceres linear solver or the square-root solvers of ceres_sqrtba, and
// writes the refined model in the input's format to another folder.
// docs/colmap.md describes every flag and the mapping to COLMAP's options.
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "ceres_sqrtba/solver.h"
#if CERES_SQRTBA_EXAMPLES_MPI
#include "ceres_sqrtba/distributed_solver.h"
#endif
#include "cli_common.h"
#include "colmap_model.h"
#include "covariance_output.h"
#include "colmap_problem.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "mpi_launch.h"
#include "run_csv.h"

// COLMAP's own options (`colmap bundle_adjuster`): COLMAP spells them
// --BundleAdjustment.<name> and --BundleAdjustmentCeres.<name>, which this
// program accepts and rewrites to --BundleAdjustment_<name> (gflags names
// cannot hold a dot); both spellings work. COLMAP 4 moved the solver's
// options from BundleAdjustment to BundleAdjustmentCeres and renamed
// refine_extrinsics to refine_rig_from_world: the older names still work, and
// giving both names of one option with different values is an error.
DEFINE_string(input_path, "", "Folder of the COLMAP model to refine (text or binary).");
DEFINE_string(output_path, "",
              "Existing folder the refined model is written to, in the input's format and "
              "layout (must not be the input folder).");
DEFINE_int32(BundleAdjustmentCeres_max_num_iterations, 100, "Maximum minimizer iterations.");
DEFINE_int32(BundleAdjustmentCeres_max_linear_solver_iterations, 200,
             "Maximum iterations of iterative linear solvers per step.");
DEFINE_double(BundleAdjustmentCeres_function_tolerance, 0.0,
              "Solver::Options::function_tolerance.");
DEFINE_double(BundleAdjustmentCeres_gradient_tolerance, 1e-4,
              "Solver::Options::gradient_tolerance.");
DEFINE_double(BundleAdjustmentCeres_parameter_tolerance, 0.0,
              "Solver::Options::parameter_tolerance.");
DEFINE_int32(BundleAdjustmentCeres_max_num_images_direct_dense_cpu_solver, 50,
             "Automatic solver choice: DENSE_SCHUR up to this many images.");
DEFINE_int32(BundleAdjustmentCeres_max_num_images_direct_sparse_cpu_solver, 1000,
             "Automatic solver choice: SPARSE_SCHUR up to this many images, ITERATIVE_SCHUR "
             "above.");
DEFINE_int32(BundleAdjustmentCeres_min_num_residuals_for_cpu_multi_threading, 50000,
             "With --num_threads=-1: one thread below this many residuals.");
// COLMAP 3's names of the first five.
DEFINE_int32(BundleAdjustment_max_num_iterations, 100,
             "COLMAP 3's name of --BundleAdjustmentCeres.max_num_iterations.");
DEFINE_int32(BundleAdjustment_max_linear_solver_iterations, 200,
             "COLMAP 3's name of --BundleAdjustmentCeres.max_linear_solver_iterations.");
DEFINE_double(BundleAdjustment_function_tolerance, 0.0,
              "COLMAP 3's name of --BundleAdjustmentCeres.function_tolerance.");
DEFINE_double(BundleAdjustment_gradient_tolerance, 1e-4,
              "COLMAP 3's name of --BundleAdjustmentCeres.gradient_tolerance.");
DEFINE_double(BundleAdjustment_parameter_tolerance, 0.0,
              "COLMAP 3's name of --BundleAdjustmentCeres.parameter_tolerance.");
DEFINE_bool(BundleAdjustment_refine_focal_length, true, "Refine the focal lengths.");
DEFINE_bool(BundleAdjustment_refine_principal_point, false, "Refine the principal points.");
DEFINE_bool(BundleAdjustment_refine_extra_params, true,
            "Refine the extra (distortion) parameters.");
DEFINE_bool(BundleAdjustment_refine_rig_from_world, true,
            "Refine the frames' poses (every image's pose in a model without rigs).");
DEFINE_bool(BundleAdjustment_refine_extrinsics, true,
            "COLMAP 3's name of --BundleAdjustment.refine_rig_from_world.");
DEFINE_bool(BundleAdjustment_refine_sensor_from_rig, true,
            "Refine the rigs' calibration (each non-reference camera's pose in its rig).");
DEFINE_bool(BundleAdjustment_refine_points3D, true, "Refine the 3D points.");
DEFINE_bool(BundleAdjustment_constant_rig_from_world_rotation, false,
            "Refine only the frames' positions, not their rotations.");
DEFINE_int32(BundleAdjustment_min_track_length, 0,
             "Leave out points with shorter tracks (0: every point seen at least twice).");
DEFINE_string(BundleAdjustment_loss_function_type, "TRIVIAL",
              "TRIVIAL, SOFT_L1, CAUCHY or HUBER (COLMAP's loss_function_type).");
DEFINE_double(BundleAdjustment_loss_function_scale, 1.0, "Scale of the loss, pixels.");

// This project's own.
DEFINE_string(linear_solver, "automatic",
              "automatic (COLMAP's rule by the number of images: dense_schur up to 50, "
              "sparse_schur up to 1000, iterative_schur + schur_jacobi above), any Ceres "
              "linear solver (dense_schur, sparse_schur, iterative_schur, "
              "sparse_normal_cholesky, cgnr, dense_qr, dense_normal_cholesky), or "
              "sqrt_iterative_schur / sqrt_sparse_schur.");
DEFINE_bool(sqrt_automatic, false,
            "With --linear_solver=automatic: run the square-root counterpart of COLMAP's "
            "choice (sqrt_linear_solver_type = SQRT_AUTOMATIC: dense_schur and sparse_schur "
            "-> sqrt_sparse_schur; iterative_schur -> sqrt_iterative_schur).");
DEFINE_string(preconditioner, "automatic",
              "automatic (schur_jacobi for iterative_schur and sqrt_iterative_schur, as "
              "COLMAP, else Ceres' default), or identity, jacobi, schur_jacobi, "
              "cluster_jacobi, cluster_tridiagonal.");
DEFINE_bool(float_jacobians, true,
            "Build the residuals with ceres_sqrtba::AutoDiffCostFunction: a single precision "
            "square-root solve evaluates their Jacobians in float. false: "
            "ceres::AutoDiffCostFunction (every Jacobian in double), for side-by-side runs.");
DEFINE_string(precision, "double",
              "double or single: floating point type of the square-root solvers' linear "
              "algebra.");
DEFINE_int32(num_iterations, -1,
             "Maximum minimizer iterations; -1: --BundleAdjustment.max_num_iterations.");
DEFINE_int32(num_threads, -1,
             "Threads; -1: COLMAP's rule (1 below 50 000 residuals, else every core).");
DEFINE_string(csv, "", "Write one CSV row per minimizer iteration to this file.");
DEFINE_string(summary_csv, "",
              "Write a CSV header and one summary row of the run to this file (the columns "
              "of bundle_adjuster's).");
DEFINE_string(covariance, "none",
              "After the solve: poses, points or all: write their covariances beside the output model "
              "(docs/covariance.md).");

namespace ceres_sqrtba {
namespace examples {
namespace {

constexpr char kProgram[] = "colmap_bundle_adjuster";

int Fail(const std::string& message) { return FailWithMessage(kProgram, message); }

// Under mpirun (a build with ceres_sqrtba_mpi): this process's rank and the
// number of ranks. Every rank reads the model and keeps its share of the 3D
// points; rank 0 prints and writes.
int g_rank = 0;
int g_ranks = 1;

bool GivenOnCommandLine(const char* name) {
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(name, &info) && !info.is_default;
}

// "BundleAdjustmentCeres_x" -> "--BundleAdjustmentCeres.x".
std::string Spelled(const std::string& name) {
  const size_t underscore = name.find('_');
  return "--" + name.substr(0, underscore) + "." + name.substr(underscore + 1);
}

// The value of an option with a COLMAP 4 and a COLMAP 3 name: the one given
// (COLMAP 4's when neither is); both given with different values is an
// error. *spelling: how the user named it, for messages.
template <typename T>
bool ResolveAlias(const char* name, const T& value, const char* old_name, const T& old_value,
                  T* resolved, std::string* spelling, std::string* error) {
  const bool given = GivenOnCommandLine(name);
  const bool old_given = GivenOnCommandLine(old_name);
  if (given && old_given && !(value == old_value)) {
    *error = Spelled(name) + " and " + Spelled(old_name) +
             " (COLMAP 3's name of the same option) are both given, with different values";
    return false;
  }
  *resolved = old_given && !given ? old_value : value;
  *spelling = Spelled(old_given && !given ? old_name : name);
  return true;
}

// COLMAP's automatic choice of linear solver for a problem with this many
// images (CeresBundleAdjustmentOptions::CreateSolverOptions).
void ColmapAutomaticSolver(int num_images, bool has_sparse, Solver::Options* options) {
  if (num_images <= FLAGS_BundleAdjustmentCeres_max_num_images_direct_dense_cpu_solver) {
    options->linear_solver_type = ceres::DENSE_SCHUR;
  } else if (has_sparse &&
             num_images <= FLAGS_BundleAdjustmentCeres_max_num_images_direct_sparse_cpu_solver) {
    options->linear_solver_type = ceres::SPARSE_SCHUR;
  } else {
    options->linear_solver_type = ceres::ITERATIVE_SCHUR;
    options->preconditioner_type = ceres::SCHUR_JACOBI;
  }
}

struct Setup {
  Solver::Options options;
  std::string solver_name;
  std::string precision_name;
  std::string choice;  // how the solver was chosen, for the log
};

bool SetSolverOptions(int num_images, int num_residuals, Setup* setup, std::string* error) {
  Solver::Options& options = setup->options;
  const std::string name = Lower(FLAGS_linear_solver);
  if (name == "automatic") {
    const bool has_sparse = options.sparse_linear_algebra_library_type != ceres::NO_SPARSE;
    ColmapAutomaticSolver(num_images, has_sparse, &options);
    setup->choice = "automatic, COLMAP's rule for " + std::to_string(num_images) + " images: " +
                    Lower(ceres::LinearSolverTypeToString(options.linear_solver_type));
    if (FLAGS_sqrt_automatic) {
      // The library maps the choice to its square-root counterpart:
      // DENSE_SCHUR -> SQRT_SPARSE_SCHUR (dense factorization), SPARSE_SCHUR ->
      // SQRT_SPARSE_SCHUR, ITERATIVE_SCHUR -> SQRT_ITERATIVE_SCHUR.
      options.sqrt_linear_solver_type = SQRT_AUTOMATIC;
      setup->choice += ", its square-root counterpart by SQRT_AUTOMATIC";
    }
  } else if (name == "sqrt_iterative_schur" || name == "sqrt_sparse_schur") {
    if (FLAGS_sqrt_automatic) {
      *error = "--sqrt_automatic needs --linear_solver=automatic";
      return false;
    }
    StringToSqrtLinearSolverType(name, &options.sqrt_linear_solver_type);
    options.linear_solver_type = options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR
                                     ? ceres::SPARSE_SCHUR
                                     : ceres::ITERATIVE_SCHUR;
    setup->choice = "given";
  } else if (ceres::StringToLinearSolverType(name, &options.linear_solver_type)) {
    if (FLAGS_sqrt_automatic) {
      *error = "--sqrt_automatic needs --linear_solver=automatic";
      return false;
    }
    setup->choice = "given";
  } else {
    *error = "unknown --linear_solver '" + FLAGS_linear_solver +
             "' (expected automatic, dense_schur, sparse_schur, iterative_schur, "
             "sparse_normal_cholesky, cgnr, dense_qr, dense_normal_cholesky, "
             "sqrt_iterative_schur or sqrt_sparse_schur)";
    return false;
  }
  const bool sqrt_solver = options.sqrt_linear_solver_type != CERES_LINEAR_SOLVER;
  if (Lower(FLAGS_preconditioner) == "automatic") {
    if (options.linear_solver_type == ceres::ITERATIVE_SCHUR) {
      options.preconditioner_type = ceres::SCHUR_JACOBI;
    }
  } else if (!ParsePreconditionerFlag(FLAGS_preconditioner, "automatic", &options.preconditioner_type, error)) {
    return false;
  }
  if (!ParsePrecisionFlag(FLAGS_precision, &options.precision, error)) return false;
  if (!sqrt_solver && options.precision != DOUBLE_PRECISION) {
    *error = "--precision=" + FLAGS_precision +
             " needs a square-root solver (--linear_solver=sqrt_iterative_schur or "
             "sqrt_sparse_schur, or automatic with --sqrt_automatic and a Schur choice)";
    return false;
  }
  if (FLAGS_BundleAdjustmentCeres_max_num_images_direct_dense_cpu_solver >=
      FLAGS_BundleAdjustmentCeres_max_num_images_direct_sparse_cpu_solver) {
    *error = "--BundleAdjustmentCeres.max_num_images_direct_dense_cpu_solver must be less than "
             "--BundleAdjustmentCeres.max_num_images_direct_sparse_cpu_solver";
    return false;
  }
  int max_iterations = 0;
  int max_linear_iterations = 0;
  double tolerances[3] = {0.0, 0.0, 0.0};
  std::string spelling;
  std::string linear_spelling;
  std::string tolerance_spellings[3];
  if (!ResolveAlias("BundleAdjustmentCeres_max_num_iterations",
                    FLAGS_BundleAdjustmentCeres_max_num_iterations,
                    "BundleAdjustment_max_num_iterations", FLAGS_BundleAdjustment_max_num_iterations,
                    &max_iterations, &spelling, error) ||
      !ResolveAlias("BundleAdjustmentCeres_max_linear_solver_iterations",
                    FLAGS_BundleAdjustmentCeres_max_linear_solver_iterations,
                    "BundleAdjustment_max_linear_solver_iterations",
                    FLAGS_BundleAdjustment_max_linear_solver_iterations, &max_linear_iterations,
                    &linear_spelling, error) ||
      !ResolveAlias("BundleAdjustmentCeres_function_tolerance",
                    FLAGS_BundleAdjustmentCeres_function_tolerance,
                    "BundleAdjustment_function_tolerance", FLAGS_BundleAdjustment_function_tolerance,
                    &tolerances[0], &tolerance_spellings[0], error) ||
      !ResolveAlias("BundleAdjustmentCeres_gradient_tolerance",
                    FLAGS_BundleAdjustmentCeres_gradient_tolerance,
                    "BundleAdjustment_gradient_tolerance", FLAGS_BundleAdjustment_gradient_tolerance,
                    &tolerances[1], &tolerance_spellings[1], error) ||
      !ResolveAlias("BundleAdjustmentCeres_parameter_tolerance",
                    FLAGS_BundleAdjustmentCeres_parameter_tolerance,
                    "BundleAdjustment_parameter_tolerance",
                    FLAGS_BundleAdjustment_parameter_tolerance, &tolerances[2],
                    &tolerance_spellings[2], error)) {
    return false;
  }
  const int iterations = FLAGS_num_iterations >= 0 ? FLAGS_num_iterations : max_iterations;
  if (iterations < 0) {
    *error = spelling + " must be at least 0";
    return false;
  }
  if (FLAGS_num_iterations < -1) {
    *error = "--num_iterations must be at least 0 (or -1)";
    return false;
  }
  if (max_linear_iterations < 1) {
    *error = linear_spelling + " must be at least 1";
    return false;
  }
  for (int k = 0; k < 3; ++k) {
    if (!(tolerances[k] >= 0.0) || !std::isfinite(tolerances[k])) {
      *error = tolerance_spellings[k] + " must be a finite value >= 0";
      return false;
    }
  }
  if (FLAGS_num_threads == 0 || FLAGS_num_threads < -1) {
    *error = "--num_threads must be at least 1 (or -1 for COLMAP's rule)";
    return false;
  }
  int threads = FLAGS_num_threads;
  if (threads == -1) {
    threads = num_residuals < FLAGS_BundleAdjustmentCeres_min_num_residuals_for_cpu_multi_threading
                  ? 1
                  : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  options.max_num_iterations = iterations;
  options.max_linear_solver_iterations = max_linear_iterations;
  options.function_tolerance = tolerances[0];
  options.gradient_tolerance = tolerances[1];
  options.parameter_tolerance = tolerances[2];
  // COLMAP's other solver settings.
  options.max_num_consecutive_invalid_steps = 10;
  options.max_consecutive_nonmonotonic_steps = 10;
  options.num_threads = threads;
  options.minimizer_progress_to_stdout = true;

  if (options.sqrt_linear_solver_type == SQRT_AUTOMATIC) {
    // As bundle_adjuster names it: what SQRT_AUTOMATIC was given.
    setup->solver_name =
        "sqrt_automatic+" + Lower(ceres::LinearSolverTypeToString(options.linear_solver_type));
    setup->precision_name = options.precision == SINGLE_PRECISION ? "single" : "double";
  } else if (sqrt_solver) {
    setup->solver_name = Lower(SqrtLinearSolverTypeToString(options.sqrt_linear_solver_type));
    setup->precision_name = options.precision == SINGLE_PRECISION ? "single" : "double";
  } else {
    setup->solver_name = Lower(ceres::LinearSolverTypeToString(options.linear_solver_type));
    if (options.linear_solver_type == ceres::ITERATIVE_SCHUR ||
        options.linear_solver_type == ceres::CGNR) {
      setup->solver_name +=
          "+" + Lower(ceres::PreconditionerTypeToString(options.preconditioner_type));
    }
    setup->precision_name = "double";
  }
  return true;
}

bool IsFolder(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// The output folder: an existing, writable folder that is not the input's.
bool CheckOutputFolder(const std::string& input, const std::string& output, std::string* error) {
  if (output.empty()) {
    *error = "--output_path is required (an existing folder for the refined model)";
    return false;
  }
  if (!IsFolder(output)) {
    *error = "--output_path=" + output + ": not an existing folder (create it first, as COLMAP "
                                         "requires)";
    return false;
  }
  if (access(output.c_str(), W_OK | X_OK) != 0) {
    *error = "--output_path=" + output + ": cannot write into this folder";
    return false;
  }
  struct stat in_info;
  struct stat out_info;
  if (stat(input.c_str(), &in_info) == 0 && stat(output.c_str(), &out_info) == 0 &&
      in_info.st_dev == out_info.st_dev && in_info.st_ino == out_info.st_ino) {
    *error = "--output_path=" + output + " is the input folder; the input is never overwritten";
    return false;
  }
  return true;
}

std::string ProblemName(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return BaseName(path);
}

int Run() {
  std::string error;
  if (FLAGS_input_path.empty()) {
    return Fail("--input_path is required (a COLMAP model folder, e.g. sparse/0)");
  }
  ColmapBundleOptions ba;
  ba.refine_focal_length = FLAGS_BundleAdjustment_refine_focal_length;
  ba.refine_principal_point = FLAGS_BundleAdjustment_refine_principal_point;
  ba.refine_extra_params = FLAGS_BundleAdjustment_refine_extra_params;
  {
    std::string spelling;
    if (!ResolveAlias("BundleAdjustment_refine_rig_from_world",
                      FLAGS_BundleAdjustment_refine_rig_from_world,
                      "BundleAdjustment_refine_extrinsics", FLAGS_BundleAdjustment_refine_extrinsics,
                      &ba.refine_rig_from_world, &spelling, &error)) {
      return Fail(error);
    }
  }
  ba.refine_sensor_from_rig = FLAGS_BundleAdjustment_refine_sensor_from_rig;
  ba.refine_points3D = FLAGS_BundleAdjustment_refine_points3D;
  ba.constant_rig_from_world_rotation = FLAGS_BundleAdjustment_constant_rig_from_world_rotation;
  ba.min_track_length = FLAGS_BundleAdjustment_min_track_length;
  ba.float_jacobians = FLAGS_float_jacobians;
  if (ba.min_track_length < 0) return Fail("--BundleAdjustment.min_track_length must be at least 0");
  if (!StringToColmapLoss(FLAGS_BundleAdjustment_loss_function_type, &ba.loss)) {
    return Fail("unknown --BundleAdjustment.loss_function_type '" +
                FLAGS_BundleAdjustment_loss_function_type +
                "' (expected TRIVIAL, SOFT_L1, CAUCHY or HUBER)");
  }
  ba.loss_scale = FLAGS_BundleAdjustment_loss_function_scale;
  if (!(ba.loss_scale > 0.0) || !std::isfinite(ba.loss_scale)) {
    return Fail("--BundleAdjustment.loss_function_scale must be a finite value > 0");
  }
  // Flags that do not depend on the problem are checked before it is read.
  {
    Setup probe;
    if (!SetSolverOptions(1, 0, &probe, &error)) return Fail(error);
  }
  if (!CheckOutputFolder(FLAGS_input_path, FLAGS_output_path, &error)) return Fail(error);
  if (!CheckWritable("summary_csv", FLAGS_summary_csv, &error) ||
      !CheckWritable("csv", FLAGS_csv, &error)) {
    return Fail(error);
  }

  ColmapReadOptions read_options;
  read_options.solve_bytes_per_observation = kSolveBytesPerObservation;
  ColmapModel model;
  ColmapFormat format = ColmapFormat::kBinary;
  if (!ReadColmapModel(FLAGS_input_path, read_options, &model, &format, &error)) {
    return Fail(error);
  }
  const std::string rig_counts = model.has_rigs_and_frames
                                     ? ", " + std::to_string(model.rigs.size()) + " rigs, " +
                                           std::to_string(model.frames.size()) + " frames"
                                     : "";
  std::printf("Read %s (%s%s): %zu cameras, %zu images, %zu 3D points, %lld observations%s\n",
              Printable(FLAGS_input_path).c_str(),
              format == ColmapFormat::kText ? "text" : "binary",
              model.has_rigs_and_frames ? ", with rigs and frames" : "", model.cameras.size(),
              model.images.size(), model.points3D.size(),
              static_cast<long long>(model.NumTrackElements()), rig_counts.c_str());

  // The output folder must not hold files that would disagree with the
  // model written there (a model of the other format, or rigs and frames a
  // legacy model does not replace): refused before the solve.
  if (!CheckColmapOutputFolder(model, FLAGS_output_path, format, &error)) {
    return Fail("--output_path=" + error);
  }

  CovarianceSelection covariance = CovarianceSelection::kNone;
  if (!ParseCovarianceSelection(FLAGS_covariance, &covariance, &error)) return Fail(error);
  // Spread over MPI ranks: each keeps a share of the 3D points (consecutive in
  // the model's order, balanced by observations) and every camera-side block.
  std::vector<int> point_rank;
  if (g_ranks > 1) {
    if (covariance != CovarianceSelection::kNone) return Fail("--covariance cannot be used under mpirun");
    std::vector<int> observations(model.points3D.size(), 0);
    for (size_t p = 0; p < model.points3D.size(); ++p) {
      observations[p] = static_cast<int>(model.points3D[p].track.size());
    }
#if CERES_SQRTBA_EXAMPLES_MPI
    point_rank = BalancedLandmarkShares(observations, g_ranks);
#endif
    ba.point_rank = &point_rank;
    ba.rank = g_rank;
  }
  ceres::Problem problem;
  ColmapProblem colmap_problem;
  if (!colmap_problem.Build(ba, model, &problem, &error)) {
    return Fail(FLAGS_input_path + ": " + error);
  }
  std::printf("Bundle adjustment: %d images, %d cameras, %d points, %d observations",
              colmap_problem.num_images(), colmap_problem.num_cameras(),
              colmap_problem.num_points(), colmap_problem.num_observations());
  if (colmap_problem.skipped_observations() > 0) {
    std::printf(" (%d observations of points seen fewer than twice left out)",
                colmap_problem.skipped_observations());
  }
  std::printf("\n");
  if (model.has_rigs_and_frames) {
    std::printf("Rigs: %d frames, %d sensor_from_rig poses (%s)\n", colmap_problem.num_frames(),
                colmap_problem.num_sensor_poses(),
                ba.refine_sensor_from_rig ? "refined" : "constant");
  }
  if (colmap_problem.gauge_images().size() == 2 && model.has_rigs_and_frames) {
    std::printf("Gauge: pose of frame %u (image %u) fixed, one translation coordinate of frame %u "
                "(image %u) fixed\n",
                colmap_problem.gauge_frames()[0], colmap_problem.gauge_images()[0],
                colmap_problem.gauge_frames()[1], colmap_problem.gauge_images()[1]);
  } else if (colmap_problem.gauge_images().size() == 2) {
    std::printf("Gauge: pose of image %u fixed, one translation coordinate of image %u fixed\n",
                colmap_problem.gauge_images()[0], colmap_problem.gauge_images()[1]);
  } else if (ba.refine_rig_from_world) {
    std::printf("Gauge: no second image away from the first; %d points fixed\n",
                colmap_problem.gauge_fixed_points());
  }

  Setup setup;
  // The whole problem's residuals (2 per observation), the same on every rank.
  if (!SetSolverOptions(colmap_problem.num_images(), 2 * colmap_problem.num_observations(), &setup, &error)) {
    return Fail(error);
  }
  Solver::Options& options = setup.options;
  if (g_ranks > 1 && options.sqrt_linear_solver_type != SQRT_ITERATIVE_SCHUR &&
      options.sqrt_linear_solver_type != SQRT_SPARSE_SCHUR) {
    return Fail("under mpirun the solver must be sqrt_iterative_schur or sqrt_sparse_schur (--linear_solver "
                "sqrt_iterative_schur); this run's is " + setup.solver_name + " (" + setup.choice + ")");
  }
  options.linear_solver_ordering = colmap_problem.PointsFirstOrdering();
  if (!options.IsValid(&error)) return Fail("invalid solver options: " + error);
  std::printf("Linear solver: %s (%s), %s precision, %d threads\n", setup.solver_name.c_str(),
              setup.choice.c_str(), setup.precision_name.c_str(), options.num_threads);

  int64_t not_projected = 0;
  const double error_before = colmap_problem.MeanReprojectionError(&not_projected);
  std::printf("Mean reprojection error before: %.6f px", error_before);
  if (not_projected > 0) {
    std::printf(" (%lld observations behind their camera left out)",
                static_cast<long long>(not_projected));
  }
  std::printf("\n");

  std::unique_ptr<IterationCsvWriter> csv;
  if (!FLAGS_csv.empty() && g_rank == 0) {
    csv = IterationCsvWriter::Create(FLAGS_csv, &error);
    if (csv == nullptr) return Fail(error);
    options.callbacks.push_back(csv.get());
  }
  Solver::Summary summary;
  if (g_ranks == 1) {
    Solve(options, &problem, &summary);
  } else {
#if CERES_SQRTBA_EXAMPLES_MPI
    DistributedStatistics statistics;
    SolveDistributed(options, MPI_COMM_WORLD, colmap_problem.CameraBlocks(), &problem, &summary, &statistics);
    // Every rank's points to every rank, so that every rank holds the whole
    // solved model.
    BroadcastLandmarkShares(point_rank, 3, colmap_problem.mutable_point(0));
    std::printf("Ranks: %d; rank 0 sent %lld bytes over %d iterations\n", g_ranks,
                static_cast<long long>(statistics.bytes_sent), static_cast<int>(summary.iterations.size()));
#endif
  }
  if (g_rank != 0) {
    // Rank 0 reports and writes; the others only say whether they failed.
    return summary.termination_type == ceres::FAILURE || !std::isfinite(summary.final_cost) ? 1 : 0;
  }
  std::cout << summary.FullReport() << "\n";
  std::cout.flush();
  if (options.sqrt_linear_solver_type == SQRT_AUTOMATIC) {
    std::printf("SQRT_AUTOMATIC ran: %s\n",
                summary.sqrt_linear_solver_type_used == CERES_LINEAR_SOLVER
                    ? ("ceres::Solve (" + summary.message + ")").c_str()
                    : Lower(SqrtLinearSolverTypeToString(summary.sqrt_linear_solver_type_used))
                          .c_str());
  }
  if (csv != nullptr && !csv->Close(&error)) return Fail(error);

  const double error_after = colmap_problem.MeanReprojectionError(&not_projected);
  std::printf("Mean reprojection error after: %.6f px", error_after);
  if (not_projected > 0) {
    std::printf(" (%lld observations behind their camera left out)",
                static_cast<long long>(not_projected));
  }
  std::printf("\n");

  if (!FLAGS_summary_csv.empty()) {
    RunDescription run;
    run.solver = setup.solver_name;
    run.precision = setup.precision_name;
    run.problem = ProblemName(FLAGS_input_path);
    run.num_cameras = colmap_problem.num_images();
    run.num_points = colmap_problem.num_points();
    run.num_observations = colmap_problem.num_observations();
    run.precision_switch_iteration = summary.precision_switch_iteration;
    if (!WriteSummaryCsv(FLAGS_summary_csv, run, summary, &error)) return Fail(error);
  }
  if (summary.termination_type == ceres::FAILURE) {
    return Fail("solver failed, nothing written: " + summary.message);
  }
  if (!std::isfinite(summary.final_cost)) {
    return Fail("the final cost is not finite, nothing written (check the input's scale)");
  }
  colmap_problem.WriteBack(&model);
  if (!WriteColmapModel(model, FLAGS_output_path, format, &error)) return Fail(error);
  std::printf("Wrote %s (%s)\n", Printable(FLAGS_output_path).c_str(),
              format == ColmapFormat::kText ? "text" : "binary");
  CovarianceBlocks blocks;
  SetColmapPoseConvention(&blocks);
  colmap_problem.ImagePoseBlocks(model, &blocks.pose_ids, &blocks.poses);
  colmap_problem.PointBlocks(model, &blocks.point_ids, &blocks.points);
  Covariance::Options covariance_options;  // the loss applied, as COLMAP's EstimateBACovariance
  covariance_options.num_threads = options.num_threads;
  covariance_options.skip_undetermined_landmarks = true;
  if (!WriteCovariances(&problem, covariance_options, covariance, blocks, FLAGS_output_path,
                        format == ColmapFormat::kBinary, kProgram, &error)) {
    return Fail(error);
  }
  return 0;
}

// COLMAP's spelling --BundleAdjustment[Ceres].<name> [value] as gflags reads
// it: --BundleAdjustment[Ceres]_<name>, and a boolean's separate 0/1/true/false value
// joined with '='.
std::vector<std::string> RewriteColmapArguments(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    std::string prefix;
    for (const char* group : {"--BundleAdjustment.", "--BundleAdjustmentCeres."}) {
      if (arg.compare(0, std::strlen(group), group) == 0) prefix = group;
    }
    if (i > 0 && !prefix.empty()) {
      arg = prefix.substr(0, prefix.size() - 1) + "_" + arg.substr(prefix.size());
      if (arg.find('=') == std::string::npos && i + 1 < argc) {
        gflags::CommandLineFlagInfo info;
        const std::string next = argv[i + 1];
        if (gflags::GetCommandLineFlagInfo(arg.substr(2).c_str(), &info) &&
            info.type == "bool" &&
            (next == "0" || next == "1" || next == "true" || next == "false")) {
          arg += "=" + next;
          ++i;
        }
      }
    }
    args.push_back(arg);
  }
  return args;
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "colmap_bundle_adjuster --input_path=sparse/0 --output_path=refined [flags]\n"
      "Refines a COLMAP model by bundle adjustment as `colmap bundle_adjuster` does. "
      "See docs/colmap.md.");
  FLAGS_logtostderr = true;
  std::vector<std::string> args = ceres_sqrtba::examples::RewriteColmapArguments(argc, argv);
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(&arg[0]);
  pointers.push_back(nullptr);
  int new_argc = static_cast<int>(args.size());
  char** new_argv = pointers.data();
  gflags::ParseCommandLineFlags(&new_argc, &new_argv, true);
  google::InitGoogleLogging(argv[0]);
  // Under mpirun (a build with ceres_sqrtba_mpi), one solve over the ranks;
  // only rank 0 prints to the standard output.
  return ceres_sqrtba::examples::RunWithMpiIfLaunched(
      &new_argc, &new_argv, &ceres_sqrtba::examples::g_rank, &ceres_sqrtba::examples::g_ranks, [&] {
        if (ceres_sqrtba::examples::g_rank != 0 && std::freopen("/dev/null", "w", stdout) == nullptr) {
          return 1;
        }
        return ceres_sqrtba::examples::RunAfterFlags(ceres_sqrtba::examples::kProgram, new_argc, new_argv,
                                                     ceres_sqrtba::examples::Run);
      });
}
