// The one-line switch (SQRT_AUTOMATIC), measured: for each SfM pipeline (COLMAP,
// GLOMAP, Theia, OpenMVG, OpenSfM, AliceVision) a problem of that pipeline's
// shape (tests/pipeline_shapes.h) at a pipeline-like size, solved with that
// pipeline's own ceres::Solver::Options (as read from its public sources; see
// docs/pipelines.md) once by ceres::Solve and once by ceres_sqrtba::Solve with
// the same options plus SQRT_AUTOMATIC, in double and in single precision.
// Then COLMAP's local bundle adjustment loop: many small DENSE_SCHUR solves.
//
// Runs are interleaved (repeat r runs the three variants in an order rotated
// by r) and medians are reported, so that the ratios of one run compare
// solves made under the same machine load. Prints markdown tables.
//
//   pipeline_benchmark [--repeats=3] [--scale=1] [--threads=2]
//                      [--local_ba_solves=300] [--only=<substring>]
//                      [--jacobians_at_candidates=true]   (the sqrt solves')
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/solver.h"
#include "pipeline_shapes.h"

namespace {

using ceres_sqrtba::Solver;
using namespace ceres_sqrtba::testing;

struct Flags {
  int repeats = 3;
  double scale = 1.0;
  int threads = 2;
  int local_ba_solves = 300;
  std::string only;
  bool jacobians_at_candidates = true;  // the square-root solver's default
};

bool ParseFlag(const std::string& arg, const std::string& name, std::string* value) {
  const std::string prefix = "--" + name + "=";
  if (arg.compare(0, prefix.size(), prefix) != 0) return false;
  *value = arg.substr(prefix.size());
  return true;
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// One variant of a solve: the pipeline's options as they are (ceres::Solve)
// or with SQRT_AUTOMATIC in one precision (ceres_sqrtba::Solve).
struct Variant {
  std::string name;
  bool sqrt;
  ceres_sqrtba::Precision precision;
};

const std::vector<Variant>& Variants() {
  static const std::vector<Variant> variants = {
      {"ceres::Solve", false, ceres_sqrtba::DOUBLE_PRECISION},
      {"sqrt double", true, ceres_sqrtba::DOUBLE_PRECISION},
      {"sqrt single", true, ceres_sqrtba::SINGLE_PRECISION},
  };
  return variants;
}

bool g_jacobians_at_candidates = true;

Solver::Options WithVariant(const Solver::Options& base, const Variant& v) {
  Solver::Options o = base;
  if (v.sqrt) {
    o.jacobians_at_candidates = g_jacobians_at_candidates;
    o.sqrt_linear_solver_type = ceres_sqrtba::SQRT_AUTOMATIC;
    o.precision = v.precision;
  }
  return o;
}

std::string WhatRan(const Solver::Summary& s) {
  if (s.sqrt_linear_solver_type_used != ceres_sqrtba::CERES_LINEAR_SOLVER) {
    return ceres_sqrtba::SqrtLinearSolverTypeToString(s.sqrt_linear_solver_type_used);
  }
  return std::string("ceres ") + ceres::LinearSolverTypeToString(s.linear_solver_type_used);
}

struct Case {
  std::string pipeline;  // and which of its solves
  std::string size;
  PipelineProblem problem;
  Solver::Options options;
};

struct Measured {
  std::vector<double> seconds, costs, iterations;
  std::string ran, termination;
};

std::string Fmt(const char* format, double x) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, x);
  return buffer;
}

void RunCase(const Case& c, const Flags& flags) {
  const std::vector<Variant>& variants = Variants();
  std::vector<Measured> measured(variants.size());
  for (int r = 0; r < flags.repeats; ++r) {
    for (size_t k = 0; k < variants.size(); ++k) {
      const size_t which = (k + r) % variants.size();
      double seconds = 0.0;
      const Solver::Summary s = SolvePipelineProblem(c.problem, WithVariant(c.options, variants[which]), &seconds);
      Measured& m = measured[which];
      m.seconds.push_back(seconds);
      m.costs.push_back(s.final_cost);
      m.iterations.push_back(static_cast<double>(s.iterations.size()) - 1.0);
      m.ran = WhatRan(s);
      m.termination = ceres::TerminationTypeToString(s.termination_type);
      if (!s.IsSolutionUsable()) std::cerr << c.pipeline << " " << variants[which].name << ": " << s.message << "\n";
    }
  }
  const double reference = Median(measured[0].seconds);
  for (size_t k = 0; k < variants.size(); ++k) {
    const Measured& m = measured[k];
    const double t = Median(m.seconds);
    std::cout << "| " << (k == 0 ? c.pipeline : "") << " | " << (k == 0 ? c.size : "") << " | "
              << variants[k].name << " | " << m.ran << " | " << Fmt("%.3f", t) << " | "
              << Fmt("%.6e", Median(m.costs)) << " | " << Fmt("%.0f", Median(m.iterations)) << " | "
              << m.termination << " | " << (k == 0 ? "1" : Fmt("%.2f", t / reference)) << " |\n"
              << std::flush;
  }
}

// Options common to the cases: silent, the machine's threads.
Solver::Options Base(const Flags& flags) {
  Solver::Options o;
  o.logging_type = ceres::SILENT;
  o.num_threads = flags.threads;
  return o;
}

std::vector<Case> Cases(const Flags& flags) {
  const int images = 200;
  const int points = std::max(100, static_cast<int>(10000 * flags.scale));
  const int track = 6;
  std::ostringstream size;
  size << images << " img, " << points << " pts, " << track << " obs/pt";
  std::vector<Case> cases;

  // COLMAP, global bundle adjustment: its solver options by number of
  // images (<= 50 DENSE_SCHUR, <= 1000 SPARSE_SCHUR, else ITERATIVE_SCHUR
  // with SCHUR_JACOBI), gradient tolerance 1 and 50 iterations for the global
  // BA, no function or parameter tolerance, threads when >= 50000 residuals.
  auto colmap = [&](const Flags& f, ceres::LinearSolverType type) {
    Solver::Options o = Base(f);
    o.linear_solver_type = type;
    o.preconditioner_type = ceres::SCHUR_JACOBI;
    o.function_tolerance = 0.0;
    o.gradient_tolerance = 1.0;
    o.parameter_tolerance = 0.0;
    o.max_num_iterations = 50;
    o.max_linear_solver_iterations = 200;
    o.max_num_consecutive_invalid_steps = 10;
    o.max_consecutive_nonmonotonic_steps = 10;
    return o;
  };
  {
    const int small_points = std::max(100, static_cast<int>(4000 * flags.scale));
    std::ostringstream small;
    small << 40 << " img, " << small_points << " pts, " << track << " obs/pt";
    cases.push_back({"COLMAP global BA (<= 50 images)", small.str(),
                     ColmapProblem(MakeScene(40, small_points, 1001, track)), colmap(flags, ceres::DENSE_SCHUR)});
  }
  cases.push_back({"COLMAP global BA (51-1000 images)", size.str(), ColmapProblem(MakeScene(images, points, 1002, track)),
                   colmap(flags, ceres::SPARSE_SCHUR)});
  cases.push_back({"COLMAP global BA (> 1000 images: its choice, forced here)", size.str(),
                   ColmapProblem(MakeScene(images, points, 1002, track)), colmap(flags, ceres::ITERATIVE_SCHUR)});

  // GLOMAP: global positioning (SPARSE_SCHUR, CLUSTER_TRIDIAGONAL; function
  // tolerance 1e-5, 100 iterations, Huber 0.1) and its bundle adjustment
  // (the same solver, 200 iterations; here on COLMAP's problem shape).
  {
    Solver::Options o = Base(flags);
    o.linear_solver_type = ceres::SPARSE_SCHUR;
    o.preconditioner_type = ceres::CLUSTER_TRIDIAGONAL;
    o.function_tolerance = 1e-5;
    o.max_num_iterations = 100;
    // A fifth of the points: its reduced system holds the points too (only
    // the scales are eliminated), 100 iterations with a line search each.
    const int positioning_points = std::max(100, points / 5);
    std::ostringstream positioning_size;
    positioning_size << images << " img, " << positioning_points << " pts, " << track << " obs/pt";
    cases.push_back({"GLOMAP global positioning", positioning_size.str(),
                     GlomapPositioningProblem(MakeScene(images, positioning_points, 1003, track), 1004), o});
    o.max_num_iterations = 200;
    cases.push_back({"GLOMAP bundle adjustment", size.str(),
                     ColmapProblem(MakeScene(images, points, 1005, track)), o});
  }

  // Theia: SPARSE_SCHUR for its mid-sized reconstructions, SCHUR_JACOBI,
  // CANONICAL_VIEWS, 500 iterations, function 1e-6, gradient 1e-10,
  // parameter 1e-8, trust region radius at most 1e12, inner iterations on.
  {
    Solver::Options o = Base(flags);
    o.linear_solver_type = ceres::SPARSE_SCHUR;
    o.preconditioner_type = ceres::SCHUR_JACOBI;
    o.visibility_clustering_type = ceres::CANONICAL_VIEWS;
    o.max_num_iterations = 500;
    o.max_solver_time_in_seconds = 3600.0;
    o.function_tolerance = 1e-6;
    o.gradient_tolerance = 1e-10;
    o.parameter_tolerance = 1e-8;
    o.max_trust_region_radius = 1e12;
    o.use_inner_iterations = true;
    const PipelineProblem theia = TheiaProblem(MakeScene(images, points, 1006, track));
    cases.push_back({"Theia (use_inner_iterations = true, its default)", size.str(), theia, o});
    o.use_inner_iterations = false;
    cases.push_back({"Theia (use_inner_iterations = false)", size.str(), theia, o});
  }

  // OpenMVG: SPARSE_SCHUR with SuiteSparse, JACOBI preconditioner, 500
  // iterations, parameter tolerance 1e-8, Huber(16); 20 control points.
  {
    Solver::Options o = Base(flags);
    o.linear_solver_type = ceres::SPARSE_SCHUR;
    o.preconditioner_type = ceres::JACOBI;
    o.sparse_linear_algebra_library_type = ceres::SUITE_SPARSE;
    o.max_num_iterations = 500;
    o.parameter_tolerance = 1e-8;
    cases.push_back({"OpenMVG (Brown T2, 20 control points)", size.str(),
                     OpenMvgProblem(MakeScene(images, points, 1007, track), 16.0, 20), o});
  }

  // OpenSfM: SPARSE_SCHUR, bundle_max_iterations (100), everything else
  // Ceres' defaults.
  {
    Solver::Options o = Base(flags);
    o.linear_solver_type = ceres::SPARSE_SCHUR;
    o.max_num_iterations = 100;
    cases.push_back({"OpenSfM", size.str(), OpenSfmProblem(MakeScene(images, points, 1008, track)), o});
  }

  // AliceVision: above 100 poses setSparseBA (SPARSE_SCHUR, JACOBI), 50
  // iterations, Huber(16).
  {
    Solver::Options o = Base(flags);
    o.linear_solver_type = ceres::SPARSE_SCHUR;
    o.preconditioner_type = ceres::JACOBI;
    o.max_num_iterations = 50;
    cases.push_back({"AliceVision", size.str(), AliceVisionProblem(MakeScene(images, points, 1009, track), 16.0), o});
  }
  return cases;
}

// COLMAP's local bundle adjustment: about 10 free images and their
// neighbours held constant, a few thousand points, DENSE_SCHUR (few images),
// 25 iterations, gradient tolerance 10, no function or parameter tolerance,
// 100 linear solver iterations, Soft-L1(1), one thread (< 50000 residuals).
void RunLocalBundleAdjustmentLoop(const Flags& flags) {
  const int num_images = 16, free_begin = 3, free_end = 13;  // images 3..12 free
  const int points = std::max(50, static_cast<int>(1500 * flags.scale));
  const int track = 4;
  std::vector<int> constant;
  for (int i = 0; i < num_images; ++i) {
    if (i < free_begin || i >= free_end) constant.push_back(i);
  }
  std::vector<PipelineProblem> problems;
  for (unsigned k = 0; k < 8; ++k) {
    problems.push_back(ColmapProblem(MakeScene(num_images, points, 2000 + k, track), 1.0, constant));
  }
  Solver::Options o;
  o.logging_type = ceres::SILENT;
  o.linear_solver_type = ceres::DENSE_SCHUR;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  o.function_tolerance = 0.0;
  o.gradient_tolerance = 10.0;
  o.parameter_tolerance = 0.0;
  o.max_num_iterations = 25;
  o.max_linear_solver_iterations = 100;
  o.max_num_consecutive_invalid_steps = 10;
  o.max_consecutive_nonmonotonic_steps = 10;
  o.num_threads = 1;

  const std::vector<Variant>& variants = Variants();
  std::vector<double> total(variants.size(), 0.0), iterations(variants.size(), 0.0), cost(variants.size(), 0.0);
  // Where a solve's time goes, from the summaries (seconds, summed).
  struct Parts {
    double preprocessor = 0, residuals = 0, jacobians = 0, linear_solver = 0, minimizer = 0, postprocessor = 0;
  };
  std::vector<Parts> parts(variants.size());
  std::vector<std::string> ran(variants.size());
  for (int n = 0; n < flags.local_ba_solves; ++n) {
    const PipelineProblem& p = problems[n % problems.size()];
    for (size_t k = 0; k < variants.size(); ++k) {
      const size_t which = (k + n) % variants.size();
      double seconds = 0.0;
      const Solver::Summary s = SolvePipelineProblem(p, WithVariant(o, variants[which]), &seconds);
      total[which] += seconds;
      iterations[which] += static_cast<double>(s.iterations.size()) - 1.0;
      cost[which] += s.final_cost;
      ran[which] = WhatRan(s);
      Parts& q = parts[which];
      q.preprocessor += s.preprocessor_time_in_seconds;
      q.residuals += s.residual_evaluation_time_in_seconds;
      q.jacobians += s.jacobian_evaluation_time_in_seconds;
      q.linear_solver += s.linear_solver_time_in_seconds;
      q.minimizer += s.minimizer_time_in_seconds;
      q.postprocessor += s.postprocessor_time_in_seconds;
    }
  }
  std::cout << "\nCOLMAP local bundle adjustment loop: " << flags.local_ba_solves << " solves of " << num_images
            << " images (" << free_end - free_begin << " free, " << num_images - (free_end - free_begin)
            << " constant), " << points << " points, " << track << " obs/pt; 8 scenes in turn, variants interleaved\n\n";
  std::cout << "| variant | ran | total time (s) | per solve (ms) | mean iterations | mean final cost | time / Ceres |\n"
            << "|---|---|---|---|---|---|---|\n";
  const double solves = flags.local_ba_solves;
  for (size_t k = 0; k < variants.size(); ++k) {
    std::cout << "| " << variants[k].name << " | " << ran[k] << " | " << Fmt("%.2f", total[k]) << " | "
              << Fmt("%.2f", 1e3 * total[k] / solves) << " | " << Fmt("%.1f", iterations[k] / solves) << " | "
              << Fmt("%.6e", cost[k] / solves) << " | " << Fmt("%.2f", total[k] / total[0]) << " |\n";
  }
  std::cout << "\nPer solve, from the summaries (ms): the minimizer's time less residual and Jacobian evaluations\n"
               "and linear solves is its own bookkeeping (steps, trust region, state updates).\n\n"
            << "| variant | preprocessor | residual evaluations | Jacobian evaluations | linear solver | "
               "minimizer, rest | postprocessor | wall |\n"
            << "|---|---|---|---|---|---|---|---|\n";
  for (size_t k = 0; k < variants.size(); ++k) {
    const Parts& q = parts[k];
    const double rest = q.minimizer - q.residuals - q.jacobians - q.linear_solver;
    std::cout << "| " << variants[k].name << " | " << Fmt("%.2f", 1e3 * q.preprocessor / solves) << " | "
              << Fmt("%.2f", 1e3 * q.residuals / solves) << " | " << Fmt("%.2f", 1e3 * q.jacobians / solves) << " | "
              << Fmt("%.2f", 1e3 * q.linear_solver / solves) << " | " << Fmt("%.2f", 1e3 * rest / solves) << " | "
              << Fmt("%.2f", 1e3 * q.postprocessor / solves) << " | " << Fmt("%.2f", 1e3 * total[k] / solves)
              << " |\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string value;
    if (ParseFlag(arg, "repeats", &value)) {
      flags.repeats = std::max(1, std::atoi(value.c_str()));
    } else if (ParseFlag(arg, "scale", &value)) {
      flags.scale = std::atof(value.c_str());
    } else if (ParseFlag(arg, "threads", &value)) {
      flags.threads = std::max(1, std::atoi(value.c_str()));
    } else if (ParseFlag(arg, "local_ba_solves", &value)) {
      flags.local_ba_solves = std::max(0, std::atoi(value.c_str()));
    } else if (ParseFlag(arg, "jacobians_at_candidates", &value)) {
      flags.jacobians_at_candidates = value != "false" && value != "0";
    } else if (ParseFlag(arg, "only", &value)) {
      flags.only = value;
    } else {
      std::cerr << "usage: " << argv[0]
                << " [--repeats=3] [--scale=1] [--threads=2] [--local_ba_solves=300] [--only=<substring>]"
                   " [--jacobians_at_candidates=true]\n";
      return 2;
    }
  }
  g_jacobians_at_candidates = flags.jacobians_at_candidates;
  std::cout << "CPU: " << CpuModel() << ", threads per solve: " << flags.threads << ", repeats: " << flags.repeats
            << ", load average at start: " << LoadAverage() << "\n\n";
  std::cout << "| pipeline | size | variant | ran | median time (s) | final cost | iterations | termination | "
               "time / Ceres |\n"
            << "|---|---|---|---|---|---|---|---|---|\n";
  for (const Case& c : Cases(flags)) {
    if (!flags.only.empty() && c.pipeline.find(flags.only) == std::string::npos) continue;
    RunCase(c, flags);
  }
  if (flags.local_ba_solves > 0 &&
      (flags.only.empty() || std::string("COLMAP local BA loop").find(flags.only) != std::string::npos)) {
    RunLocalBundleAdjustmentLoop(flags);
  }
  std::cout << "\nload average at end: " << LoadAverage() << "\n";
  return 0;
}
