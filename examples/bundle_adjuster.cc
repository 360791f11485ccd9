// bundle_adjuster: solves a BAL problem (or a synthetic one) with any Ceres
// linear solver or with the square-root solver of ceres_sqrtba.
//
// Flags, defaults, problem building and preprocessing follow Ceres' own
// examples/bundle_adjuster.cc, so that the same command line gives the same
// problem and the same initial cost; every solve goes through
// ceres_sqrtba::Solve, so two runs differ only in the linear solver.
// docs/bundle_adjuster.md describes every flag and output.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <new>
#include <string>

#if CERES_SQRTBA_EXAMPLES_MPI
#include <mpi.h>

#include "ceres_sqrtba/distributed_solver.h"
#endif

#include "bal_problem.h"
#include "bal_random.h"
#include "build_problem.h"
#include "cli_common.h"
#include "covariance_output.h"
#include "ceres_sqrtba/solver.h"
#include "mpi_launch.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "run_csv.h"
#include "synthetic_problem.h"

// Flags shared with Ceres' example: same names, meanings and defaults.
DEFINE_string(input, "",
              "BAL problem file, plain text or .bz2. Empty: solve the "
              "synthetic problem described by the --synthetic_* flags.");
DEFINE_string(trust_region_strategy, "levenberg_marquardt",
              "levenberg_marquardt or dogleg.");
DEFINE_string(dogleg, "traditional_dogleg",
              "traditional_dogleg or subspace_dogleg.");
DEFINE_bool(inner_iterations, false,
            "Refine each successful trust region step by inner iterations.");
DEFINE_string(blocks_for_inner_iterations, "automatic",
              "automatic, cameras, points, cameras,points or points,cameras.");
DEFINE_string(linear_solver, "sparse_schur",
              "sparse_schur, dense_schur, iterative_schur, "
              "sparse_normal_cholesky, cgnr, dense_qr, dense_normal_cholesky, "
              "or sqrt_iterative_schur / sqrt_sparse_schur (square-root bundle "
              "adjustment with PCG / with a Cholesky of the reduced camera "
              "matrix formed from the marginalized rows).");
DEFINE_bool(explicit_schur_complement, false,
            "With iterative_schur, form the Schur complement explicitly.");
DEFINE_string(preconditioner, "jacobi",
              "identity, jacobi, schur_jacobi, cluster_jacobi or "
              "cluster_tridiagonal. With sqrt_iterative_schur the default is "
              "schur_jacobi.");
DEFINE_string(visibility_clustering, "canonical_views",
              "canonical_views or single_linkage.");
DEFINE_string(sparse_linear_algebra_library, "suite_sparse",
              "suite_sparse, cx_sparse, eigen_sparse, accelerate_sparse or "
              "no_sparse.");
DEFINE_string(dense_linear_algebra_library, "eigen", "eigen, lapack or cuda.");
DEFINE_string(ordering, "automatic",
              "automatic, or user (points eliminated first, then cameras).");
DEFINE_bool(use_quaternions, false,
            "Represent camera rotations by quaternions (10-value cameras) "
            "instead of angle-axis.");
DEFINE_bool(use_manifolds, false,
            "With --use_quaternions: quaternion manifold on the rotation.");
DEFINE_bool(robustify, false, "Huber loss (scale 1 pixel) on every residual.");
DEFINE_bool(float_jacobians, true,
            "Build the residuals with ceres_sqrtba::AutoDiffCostFunction: a single precision "
            "square-root solve evaluates their Jacobians in float. false: "
            "ceres::AutoDiffCostFunction (every Jacobian in double), for side-by-side runs.");
DEFINE_double(eta, 1e-2,
              "Accuracy of each truncated Newton step (iterative solvers).");
DEFINE_int32(num_threads, 1, "Number of threads.");
DEFINE_int32(num_iterations, 5, "Maximum number of minimizer iterations.");
DEFINE_double(max_solver_time, 1e32, "Maximum solve time in seconds.");
DEFINE_bool(nonmonotonic_steps, false,
            "Let the trust region algorithm take non-monotonic steps.");
DEFINE_double(rotation_sigma, 0.0,
              "Standard deviation of the camera rotation perturbation "
              "(radians, angle-axis, camera centre kept).");
DEFINE_double(translation_sigma, 0.0,
              "Standard deviation of the camera translation perturbation.");
DEFINE_double(point_sigma, 0.0,
              "Standard deviation of the point perturbation.");
DEFINE_int32(random_seed, 38401,
             "Seed of the perturbations (and of the synthetic problem).");
DEFINE_bool(line_search, false,
            "Use a line search minimizer instead of a trust region.");
DEFINE_bool(mixed_precision_solves, false,
            "Ceres' mixed precision solves (Cholesky based solvers).");
DEFINE_int32(max_num_refinement_iterations, 0,
             "Iterative refinement iterations of mixed precision solves.");
DEFINE_string(initial_ply, "",
              "Write the problem as read (before normalization) to this PLY "
              "file.");
DEFINE_string(final_ply, "", "Write the solved problem to this PLY file.");

// Flags added by this project.
DEFINE_string(precision, "double",
              "double or single: floating point type of the square-root "
              "solver's linear algebra (only with sqrt_iterative_schur, or "
              "sqrt_sparse_schur, whose reduced camera matrix and Cholesky "
              "are always double).");
DEFINE_bool(sqrt_automatic, false,
            "Solve with sqrt_linear_solver_type = SQRT_AUTOMATIC: the "
            "square-root counterpart of --linear_solver (dense_schur, "
            "sparse_schur -> sqrt_sparse_schur; iterative_schur -> "
            "sqrt_iterative_schur; other solvers, and options the square-root "
            "solvers lack, by Ceres), as a pipeline would switch.");
DEFINE_string(reduced_camera_factorization, "automatic",
              "With sqrt_sparse_schur: automatic, dense or sparse Cholesky "
              "of the reduced camera matrix (automatic: dense when it needs "
              "at most 4 times the flops of the sparse one).");
DEFINE_bool(jacobians_at_candidates, true,
            "Square-root solvers: once a step was accepted, evaluate the next candidate's Jacobian with its cost "
            "(Solver::Options::jacobians_at_candidates).");
DEFINE_bool(explicit_reduced_rows, false,
            "With sqrt_iterative_schur, store each landmark's marginalized "
            "rows Q2^T Jp explicitly (the paper's landmark blocks) instead of "
            "applying them through the projector I - Q1 Q1^T.");
DEFINE_string(csv, "",
              "Write one CSV row per minimizer iteration to this file.");
DEFINE_string(summary_csv, "",
              "Write a CSV header and one summary row of the run to this file.");
DEFINE_int32(max_linear_solver_iterations, 500,
             "Maximum iterations of iterative linear solvers per step.");
DEFINE_bool(jacobi_scaling, true, "Scale the Jacobian columns (as Ceres).");
DEFINE_double(parameter_tolerance, 1e-8,
              "Solver::Options::parameter_tolerance (Ceres' default; Ceres "
              "2.2's example sets 1e-16).");
DEFINE_string(write_bal, "",
              "Write the problem as read or generated (before normalization, "
              "perturbation and preprocessing) to this file in BAL text form, "
              "cameras in angle-axis, 17 significant digits.");
DEFINE_bool(write_bal_only, false,
            "With --write_bal: write the file and exit without solving.");
DEFINE_string(covariance, "none",
              "After the solve: poses (cameras), points or all: write their covariances into "
              "--covariance_path (the pseudo-inverse: a BAL problem's gauge is free; docs/covariance.md).");
DEFINE_string(covariance_path, ".", "Folder for --covariance's files.");
DEFINE_bool(covariance_binary, false, "Write --covariance's files in the binary format.");
DEFINE_int32(synthetic_num_cameras, 32, "Cameras of the synthetic problem.");
DEFINE_int32(synthetic_num_points, 10000, "Points of the synthetic problem.");
DEFINE_int32(synthetic_observations_per_point, 5,
             "Cameras that see each point of the synthetic problem.");
DEFINE_int32(synthetic_max_observations_per_point, 0,
             "0: every point is seen by --synthetic_observations_per_point "
             "cameras. Larger: each point's number of cameras is drawn "
             "uniformly between the two (long tracks).");
DEFINE_double(synthetic_outlier_ratio, 0.02,
              "Fraction of synthetic observations moved 20-100 px away.");
DEFINE_double(synthetic_pixel_noise, 1.0,
              "Standard deviation (pixels) of the synthetic pixel noise.");
DEFINE_bool(filter_min_depth, false,
            "Preprocessing of the paper: after normalization and "
            "perturbation, drop observations whose point is less than "
            "--min_depth in front of the camera (or behind it).");
DEFINE_double(min_depth, 0.1,
              "Depth threshold of --filter_min_depth, in the normalized "
              "scene's units (the median absolute deviation of the points is "
              "100).");
DEFINE_bool(drop_single_observation_points, false,
            "Preprocessing of the paper: drop points left with fewer than "
            "two observations (after --filter_min_depth), and cameras left "
            "with none.");

namespace ceres_sqrtba {
namespace examples {
namespace {

constexpr char kProgram[] = "bundle_adjuster";

// The one-line error of this program (cli_common.h).
int Fail(const std::string& message) { return FailWithMessage(kProgram, message); }

// Under mpirun (a build with ceres_sqrtba_mpi): this process's rank and the
// number of ranks. Every rank reads the input and keeps its share of the
// points; rank 0 prints and writes.
int g_rank = 0;
int g_ranks = 1;

// Everything the flags say about the solver, checked.
struct Setup {
  Solver::Options options;
  std::string solver_name;     // for the summary CSV
  std::string precision_name;  // for the summary CSV
};

bool SetSolverOptions(Setup* setup, std::string* error) {
  Solver::Options& options = setup->options;
  const std::string linear_solver = Lower(FLAGS_linear_solver);
  const bool sqrt_solver = linear_solver == "sqrt_iterative_schur" ||
                           linear_solver == "sqrt_sparse_schur";
  if (sqrt_solver) {
    StringToSqrtLinearSolverType(linear_solver, &options.sqrt_linear_solver_type);
    options.linear_solver_type =
        options.sqrt_linear_solver_type == SQRT_SPARSE_SCHUR ? ceres::SPARSE_SCHUR
                                                             : ceres::ITERATIVE_SCHUR;
  } else if (!ceres::StringToLinearSolverType(linear_solver,
                                              &options.linear_solver_type)) {
    *error = "unknown --linear_solver '" + FLAGS_linear_solver +
             "' (expected sparse_schur, dense_schur, iterative_schur, "
             "sparse_normal_cholesky, cgnr, dense_qr, dense_normal_cholesky, "
             "sqrt_iterative_schur or sqrt_sparse_schur)";
    return false;
  }
  if (sqrt_solver && FlagIsDefault("preconditioner")) {
    // The square-root solver's preconditioner is the block diagonal of the
    // reduced camera system, which is what SCHUR_JACOBI means in Ceres.
    options.preconditioner_type = ceres::SCHUR_JACOBI;
  } else if (!ParsePreconditionerFlag(FLAGS_preconditioner, nullptr, &options.preconditioner_type, error)) {
    return false;
  }
  if (!ParsePrecisionFlag(FLAGS_precision, &options.precision, error)) return false;
  if (FLAGS_sqrt_automatic) {
    if (sqrt_solver) {
      *error = "--sqrt_automatic chooses the square-root counterpart of a "
               "Ceres --linear_solver; --linear_solver=" + FLAGS_linear_solver +
               " already is a square-root solver";
      return false;
    }
    options.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  }
  if (!sqrt_solver && !FLAGS_sqrt_automatic &&
      options.precision != DOUBLE_PRECISION) {
    *error = "--precision=" + FLAGS_precision +
             " needs --linear_solver=sqrt_iterative_schur or sqrt_sparse_schur, "
             "or --sqrt_automatic (Ceres' solvers are double precision; see "
             "--mixed_precision_solves, which sparse solvers support with "
             "--sparse_linear_algebra_library=eigen_sparse)";
    return false;
  }
  if (!StringToReducedCameraFactorization(FLAGS_reduced_camera_factorization,
                                          &options.reduced_camera_factorization)) {
    *error = "unknown --reduced_camera_factorization '" +
             FLAGS_reduced_camera_factorization +
             "' (expected automatic, dense or sparse)";
    return false;
  }
  if (!ceres::StringToVisibilityClusteringType(
          FLAGS_visibility_clustering, &options.visibility_clustering_type)) {
    *error = "unknown --visibility_clustering '" + FLAGS_visibility_clustering +
             "' (expected canonical_views or single_linkage)";
    return false;
  }
  if (!ceres::StringToSparseLinearAlgebraLibraryType(
          FLAGS_sparse_linear_algebra_library,
          &options.sparse_linear_algebra_library_type)) {
    *error = "unknown --sparse_linear_algebra_library '" +
             FLAGS_sparse_linear_algebra_library +
             "' (expected suite_sparse, cx_sparse, eigen_sparse, "
             "accelerate_sparse or no_sparse)";
    return false;
  }
  if (!ceres::StringToDenseLinearAlgebraLibraryType(
          FLAGS_dense_linear_algebra_library,
          &options.dense_linear_algebra_library_type)) {
    *error = "unknown --dense_linear_algebra_library '" +
             FLAGS_dense_linear_algebra_library +
             "' (expected eigen, lapack or cuda)";
    return false;
  }
  if (!ceres::StringToTrustRegionStrategyType(
          FLAGS_trust_region_strategy, &options.trust_region_strategy_type)) {
    *error = "unknown --trust_region_strategy '" + FLAGS_trust_region_strategy +
             "' (expected levenberg_marquardt or dogleg)";
    return false;
  }
  if (!ceres::StringToDoglegType(FLAGS_dogleg, &options.dogleg_type)) {
    *error = "unknown --dogleg '" + FLAGS_dogleg +
             "' (expected traditional_dogleg or subspace_dogleg)";
    return false;
  }
  if (FLAGS_ordering != "automatic" && FLAGS_ordering != "user") {
    *error = "unknown --ordering '" + FLAGS_ordering +
             "' (expected automatic or user)";
    return false;
  }
  if (FLAGS_num_threads < 1) {
    *error = "--num_threads must be at least 1, got " +
             std::to_string(FLAGS_num_threads);
    return false;
  }
  if (FLAGS_num_iterations < 0) {
    *error = "--num_iterations must be at least 0, got " +
             std::to_string(FLAGS_num_iterations);
    return false;
  }
  if (!(FLAGS_max_solver_time > 0.0)) {
    *error = "--max_solver_time must be positive";
    return false;
  }
  if (!(FLAGS_eta > 0.0) || !std::isfinite(FLAGS_eta)) {
    *error = "--eta must be a positive number";
    return false;
  }
  if (FLAGS_max_linear_solver_iterations < 1) {
    *error = "--max_linear_solver_iterations must be at least 1, got " +
             std::to_string(FLAGS_max_linear_solver_iterations);
    return false;
  }
  if (FLAGS_max_num_refinement_iterations < 0) {
    *error = "--max_num_refinement_iterations must be at least 0";
    return false;
  }
  const double sigmas[3] = {FLAGS_rotation_sigma, FLAGS_translation_sigma,
                            FLAGS_point_sigma};
  const char* sigma_names[3] = {"rotation_sigma", "translation_sigma",
                                "point_sigma"};
  for (int k = 0; k < 3; ++k) {
    if (!(sigmas[k] >= 0.0) || !std::isfinite(sigmas[k])) {
      *error = std::string("--") + sigma_names[k] +
               " must be a finite value >= 0";
      return false;
    }
  }
  if (!std::isfinite(FLAGS_min_depth)) {
    *error = "--min_depth must be finite";
    return false;
  }
  if (FLAGS_use_manifolds && !FLAGS_use_quaternions) {
    *error = "--use_manifolds can only be used with --use_quaternions";
    return false;
  }
  if (!(FLAGS_parameter_tolerance >= 0.0) ||
      !std::isfinite(FLAGS_parameter_tolerance)) {
    *error = "--parameter_tolerance must be a finite value >= 0";
    return false;
  }
  if (FLAGS_write_bal_only && FLAGS_write_bal.empty()) {
    *error = "--write_bal_only needs --write_bal=FILE";
    return false;
  }

  options.max_num_iterations = FLAGS_num_iterations;
  options.minimizer_progress_to_stdout = true;
  options.num_threads = FLAGS_num_threads;
  options.eta = FLAGS_eta;
  options.max_solver_time_in_seconds = FLAGS_max_solver_time;
  options.use_nonmonotonic_steps = FLAGS_nonmonotonic_steps;
  if (FLAGS_line_search) options.minimizer_type = ceres::LINE_SEARCH;
  options.use_inner_iterations = FLAGS_inner_iterations;
  options.use_explicit_schur_complement = FLAGS_explicit_schur_complement;
  options.use_explicit_reduced_rows = FLAGS_explicit_reduced_rows;
  options.jacobians_at_candidates = FLAGS_jacobians_at_candidates;
  options.use_mixed_precision_solves = FLAGS_mixed_precision_solves;
  options.max_num_refinement_iterations = FLAGS_max_num_refinement_iterations;
  options.max_linear_solver_iterations = FLAGS_max_linear_solver_iterations;
  options.jacobi_scaling = FLAGS_jacobi_scaling;
  options.gradient_tolerance = 1e-16;
  options.function_tolerance = 1e-16;
  options.parameter_tolerance = FLAGS_parameter_tolerance;

  if (sqrt_solver) {
    setup->solver_name = linear_solver;
    setup->precision_name =
        options.precision == SINGLE_PRECISION ? "single" : "double";
  } else {
    setup->solver_name =
        Lower(ceres::LinearSolverTypeToString(options.linear_solver_type));
    if (options.linear_solver_type == ceres::ITERATIVE_SCHUR ||
        options.linear_solver_type == ceres::CGNR) {
      setup->solver_name +=
          "+" + Lower(ceres::PreconditionerTypeToString(
                    options.preconditioner_type));
    }
    setup->precision_name =
        options.use_mixed_precision_solves ? "mixed" : "double";
    if (FLAGS_sqrt_automatic) {
      setup->solver_name = "sqrt_automatic+" + setup->solver_name;
      setup->precision_name =
          options.precision == SINGLE_PRECISION ? "single" : "double";
    }
  }
  return true;
}

int Run() {
  Setup setup;
  std::string error;
  if (!SetSolverOptions(&setup, &error)) return Fail(error);

  // The problem: a file, or the synthetic one.
  BalProblem bal;
  std::string problem_name;
  if (!FLAGS_input.empty()) {
    BalReadOptions read_options;
    read_options.use_quaternions = FLAGS_use_quaternions;
    read_options.solve_bytes_per_observation = kSolveBytesPerObservation;
    if (!BalProblem::Read(FLAGS_input, read_options, &bal, &error)) {
      return Fail(error);
    }
    problem_name = BaseName(FLAGS_input);
  } else {
    SyntheticOptions synthetic;
    synthetic.num_cameras = FLAGS_synthetic_num_cameras;
    synthetic.num_points = FLAGS_synthetic_num_points;
    synthetic.observations_per_point = FLAGS_synthetic_observations_per_point;
    synthetic.max_observations_per_point =
        FLAGS_synthetic_max_observations_per_point;
    synthetic.outlier_ratio = FLAGS_synthetic_outlier_ratio;
    synthetic.pixel_noise = FLAGS_synthetic_pixel_noise;
    synthetic.seed = static_cast<uint32_t>(FLAGS_random_seed);
    synthetic.use_quaternions = FLAGS_use_quaternions;
    synthetic.solve_bytes_per_observation = kSolveBytesPerObservation;
    if (!MakeSyntheticProblem(synthetic, &bal, &error)) return Fail(error);
    problem_name = SyntheticProblemName(synthetic);
  }

  // The problem as it is about to be solved, before this program's own
  // normalization and perturbation, so that another program (Ceres' own
  // bundle_adjuster) can read it and apply the same steps.
  if (!FLAGS_write_bal.empty()) {
    if (!bal.Write(FLAGS_write_bal, &error)) return Fail(error);
    std::printf("Wrote %s: %d cameras, %d points, %d observations\n",
                Printable(FLAGS_write_bal).c_str(), bal.num_cameras(), bal.num_points(),
                bal.num_observations());
    if (FLAGS_write_bal_only) return 0;
  }

  if (!FLAGS_initial_ply.empty() && !bal.WritePly(FLAGS_initial_ply, &error)) {
    return Fail(error);
  }

  // Errors name the file as the reader's do (the path as given); the
  // synthetic problem by its name.
  const std::string source = FLAGS_input.empty() ? problem_name : FLAGS_input;
  if (!bal.Normalize(&error)) return Fail(source + ": " + error);
  BalRandom random(static_cast<uint32_t>(FLAGS_random_seed));
  bal.Perturb(FLAGS_rotation_sigma, FLAGS_translation_sigma, FLAGS_point_sigma,
              &random);
  for (double v : bal.parameters()) {
    if (!std::isfinite(v)) {
      return Fail(source +
                  ": the perturbation (--rotation_sigma, --translation_sigma, "
                  "--point_sigma) made a parameter non-finite");
    }
  }

  if (FLAGS_filter_min_depth) {
    const PreprocessStats stats = bal.DropObservationsBelowDepth(FLAGS_min_depth);
    std::printf("Preprocessing: dropped %lld observations with depth below %g\n",
                static_cast<long long>(stats.dropped_observations),
                FLAGS_min_depth);
  }
  if (FLAGS_drop_single_observation_points) {
    const PreprocessStats stats = bal.DropPointsWithFewObservations(2);
    std::printf(
        "Preprocessing: dropped %lld points left with fewer than 2 "
        "observations (with their %lld remaining observations) and %lld "
        "cameras left without observations\n",
        static_cast<long long>(stats.dropped_points),
        static_cast<long long>(stats.dropped_observations),
        static_cast<long long>(stats.dropped_cameras));
  }
  if (bal.num_observations() == 0) {
    return Fail(source + ": preprocessing removed every observation");
  }
  std::printf("Problem %s: %d cameras, %d points, %d observations\n",
              Printable(problem_name).c_str(), bal.num_cameras(), bal.num_points(),
              bal.num_observations());

  CovarianceSelection covariance = CovarianceSelection::kNone;
  if (!ParseCovarianceSelection(FLAGS_covariance, &covariance, &error)) return Fail(error);
  ceres::Problem problem;
  BuildOptions build_options;
  build_options.robustify = FLAGS_robustify;
  build_options.use_manifolds = FLAGS_use_manifolds;
  build_options.float_jacobians = FLAGS_float_jacobians;
  // Spread over MPI ranks: each keeps the points of its share (contiguous,
  // balanced by observations) and every camera.
  std::vector<int> point_rank;
  if (g_ranks > 1) {
    if (covariance != CovarianceSelection::kNone) return Fail("--covariance cannot be used under mpirun");
    std::vector<int> observations(bal.num_points(), 0);
    for (int i = 0; i < bal.num_observations(); ++i) ++observations[bal.point_index()[i]];
#if CERES_SQRTBA_EXAMPLES_MPI
    point_rank = BalancedLandmarkShares(observations, g_ranks);
#endif
    build_options.point_rank = &point_rank;
    build_options.rank = g_rank;
  }
  if (!BuildProblem(build_options, &bal, &problem, &error)) return Fail(error);

  Solver::Options& options = setup.options;
  if (FLAGS_ordering == "user") {
    options.linear_solver_ordering = PointsFirstOrdering(&bal, problem);
  }
  if (options.use_inner_iterations &&
      !InnerIterationOrdering(FLAGS_blocks_for_inner_iterations, &bal, problem,
                              &options.inner_iteration_ordering, &error)) {
    return Fail(error);
  }
  if (!options.IsValid(&error)) return Fail("invalid solver options: " + error);
  if (!CheckWritable("final_ply", FLAGS_final_ply, &error) ||
      !CheckWritable("summary_csv", FLAGS_summary_csv, &error)) {
    return Fail(error);
  }

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
    std::vector<double*> cameras;
    for (int c = 0; c < bal.num_cameras(); ++c) cameras.push_back(bal.mutable_camera(c));
    DistributedStatistics statistics;
    SolveDistributed(options, MPI_COMM_WORLD, cameras, &problem, &summary, &statistics);
    BroadcastLandmarkShares(point_rank, 3, bal.mutable_point(0));
    if (g_rank == 0) {
      std::printf("Ranks: %d; rank 0 sent %lld bytes over %d iterations\n", g_ranks,
                  static_cast<long long>(statistics.bytes_sent), static_cast<int>(summary.iterations.size()));
    }
#endif
  }
  if (g_rank != 0) {
    // Rank 0 reports and writes; the others only say whether they failed.
    return summary.termination_type == ceres::FAILURE ? 1 : 0;
  }
  std::cout << summary.FullReport() << "\n";
  std::cout.flush();

  if (csv != nullptr && !csv->Close(&error)) return Fail(error);
  if (!FLAGS_final_ply.empty() && !bal.WritePly(FLAGS_final_ply, &error)) {
    return Fail(error);
  }
  if (!FLAGS_summary_csv.empty()) {
    RunDescription run;
    run.solver = setup.solver_name;
    run.precision = setup.precision_name;
    run.problem = problem_name;
    run.num_cameras = bal.num_cameras();
    run.num_points = bal.num_points();
    run.num_observations = bal.num_observations();
    run.precision_switch_iteration = summary.precision_switch_iteration;
    if (!WriteSummaryCsv(FLAGS_summary_csv, run, summary, &error)) {
      return Fail(error);
    }
  }
  if (summary.termination_type == ceres::FAILURE) {
    return Fail("solver failed: " + summary.message);
  }
  // Ceres' own solvers accept a cost that overflows double (every residual
  // finite, their squares not) and may report CONVERGENCE on it.
  if (!std::isfinite(summary.final_cost)) {
    return Fail("the final cost is not finite: the residuals' squares "
                "overflow double precision (check the input's scale)");
  }
  if (covariance != CovarianceSelection::kNone) {
    CovarianceBlocks blocks;
    SetBalCameraConvention(bal.use_quaternions(), &blocks);
    for (int i = 0; i < bal.num_cameras(); ++i) {
      blocks.pose_ids.push_back(i);
      blocks.poses.push_back(bal.camera(i));
    }
    for (int i = 0; i < bal.num_points(); ++i) {
      blocks.point_ids.push_back(i);
      blocks.points.push_back(bal.point(i));
    }
    // Nothing is held: the similarity's 7 directions are dropped as Ceres'
    // DENSE_SVD drops them (null_space_rank = -1).
    Covariance::Options covariance_options;
    covariance_options.algorithm_type = ceres::DENSE_SVD;
    covariance_options.null_space_rank = -1;
    covariance_options.num_threads = options.num_threads;
    if (!WriteCovariances(&problem, covariance_options, covariance, blocks, FLAGS_covariance_path,
                          FLAGS_covariance_binary, "bundle_adjuster", &error)) {
      return Fail(error);
    }
  }
  return 0;
}

}  // namespace
}  // namespace examples
}  // namespace ceres_sqrtba

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "bundle_adjuster [--input=problem.txt[.bz2]] [flags]\n"
      "Solves a BAL bundle adjustment problem (or a synthetic one when "
      "--input is empty). See docs/bundle_adjuster.md.");
  // Log to the terminal rather than to files in /tmp; --logtostderr=false
  // restores glog's default.
  FLAGS_logtostderr = true;
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  // Under mpirun (a build with ceres_sqrtba_mpi), one solve over the ranks.
  return ceres_sqrtba::examples::RunWithMpiIfLaunched(
      &argc, &argv, &ceres_sqrtba::examples::g_rank, &ceres_sqrtba::examples::g_ranks, [&] {
        return ceres_sqrtba::examples::RunAfterFlags(ceres_sqrtba::examples::kProgram, argc, argv,
                                                     ceres_sqrtba::examples::Run);
      });
}
