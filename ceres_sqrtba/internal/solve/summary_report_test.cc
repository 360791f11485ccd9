// summary_report.h on constructed inputs: what StartSummary records of the
// options (Ceres' stand-in solver types, the square-root fields, orderings,
// threads), the problem sizes from a ceres::Problem and from its structure
// (both against counts made by hand, and against a real ceres::Solve's
// "Original" column), the reduced problem and the orderings RecordStructure
// reports, the dense/sparse factorization's stand-in, RecordFailure, and the
// reports: BriefReport's suffix, FullReport as Ceres' report with the
// "Linear solver" row rewritten and the Precision / Reduced rows /
// Factorization rows added after the Schur structure row (or after the
// ordering without one), and Ceres' reports unchanged for CERES_LINEAR_SOLVER.
#include "ceres_sqrtba/internal/solve/summary_report.h"

#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/internal/common/wall_time.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/solver.h"
#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// r = A x + b over the residual block's parameter blocks, A all ones.
class Linear : public ceres::CostFunction {
 public:
  Linear(int num_residuals, const std::vector<int>& sizes) {
    set_num_residuals(num_residuals);
    for (int s : sizes) mutable_parameter_block_sizes()->push_back(s);
  }
  bool Evaluate(double const* const* x, double* r, double** j) const override {
    for (int i = 0; i < num_residuals(); ++i) r[i] = 1.0 + i;
    for (size_t b = 0; b < parameter_block_sizes().size(); ++b) {
      const int size = parameter_block_sizes()[b];
      for (int i = 0; i < num_residuals(); ++i) {
        for (int k = 0; k < size; ++k) {
          r[i] += x[b][k];
          if (j != nullptr && j[b] != nullptr) j[b][i * size + k] = 1.0;
        }
      }
    }
    return true;
  }
};

// Two points (3) seen by two cameras: c1 (6, a subset manifold: tangent 5)
// and c2 (4, a quaternion: tangent 3), 2 residuals per observation; a
// constant block k (2) with a residual block of 3 on it alone (fixed), and a
// block u (1) no residual block uses.
//   Original: 6 blocks, 3+3+6+4+2+1 = 19 parameters, 3+3+5+3+2+1 = 17
//             effective, 5 residual blocks, 4*2 + 3 = 11 residuals;
//   Reduced:  p, q, c1, c2: 4 blocks, 16 parameters, 14 effective,
//             4 residual blocks, 8 residuals.
struct SmallProblem {
  SmallProblem() {
    ceres::Problem::Options options;
    problem = std::make_unique<ceres::Problem>(options);
    problem->AddParameterBlock(c1, 6, new ceres::SubsetManifold(6, {0}));
    problem->AddParameterBlock(c2, 4, new ceres::QuaternionManifold);
    for (double* point : {p, q}) {
      problem->AddResidualBlock(new Linear(2, {6, 3}), nullptr, c1, point);
      problem->AddResidualBlock(new Linear(2, {4, 3}), nullptr, c2, point);
    }
    problem->AddResidualBlock(new Linear(3, {2}), nullptr, k);
    problem->SetParameterBlockConstant(k);
    problem->AddParameterBlock(u, 1);
  }
  double p[3] = {0.1, 0.2, 0.3}, q[3] = {0.4, 0.5, 0.6};
  double c1[6] = {0, 0, 0, 0, 0, 0}, c2[4] = {1, 0, 0, 0};
  double k[2] = {1, 2}, u[1] = {3};
  std::unique_ptr<ceres::Problem> problem;
};

void ExpectOriginalSizes(const ceres::Solver::Summary& s, const std::string& what) {
  EXPECT_EQ(s.num_parameter_blocks, 6) << what;
  EXPECT_EQ(s.num_parameters, 19) << what;
  EXPECT_EQ(s.num_effective_parameters, 17) << what;
  EXPECT_EQ(s.num_residual_blocks, 5) << what;
  EXPECT_EQ(s.num_residuals, 11) << what;
}

// A row of the Given/Used table, written out: label padded to 20, values
// right-aligned in 25 characters.
std::string Row(const std::string& label, const std::string& given, const std::string& used) {
  return label + std::string(20 - label.size(), ' ') + std::string(25 - given.size(), ' ') + given +
         std::string(25 - used.size(), ' ') + used;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Ceres' report of the same summary with the Linear solver row replaced by
// `solver_row` and `rows` inserted after the line starting with `after`.
std::string Expected(const Solver::Summary& s, const std::string& solver_row, const std::string& after,
                     const std::vector<std::string>& rows) {
  std::vector<std::string> out;
  for (const std::string& line : Lines(static_cast<const ceres::Solver::Summary&>(s).FullReport())) {
    const bool solver = StartsWith(line, "Linear solver ") && !StartsWith(line, "Linear solver ordering");
    out.push_back(solver ? solver_row : line);
    if (StartsWith(line, after)) out.insert(out.end(), rows.begin(), rows.end());
  }
  return Join(out);
}

TEST(StartSummary, RecordsTheOptionsAndResetsTheRest) {
  double a[1], b[1], c[1], d[1];
  ceres::ParameterBlockOrdering ordering, inner;
  ordering.AddElementToGroup(a, 0);
  ordering.AddElementToGroup(b, 0);
  ordering.AddElementToGroup(c, 0);
  ordering.AddElementToGroup(d, 1);
  inner.AddElementToGroup(a, 0);
  inner.AddElementToGroup(b, 1);
  inner.AddElementToGroup(c, 1);
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.precision = SINGLE_PRECISION;
  o.use_explicit_reduced_rows = true;
  o.reduced_camera_factorization = DENSE_FACTORIZATION;
  o.preconditioner_type = ceres::SCHUR_JACOBI;
  o.trust_region_strategy_type = ceres::DOGLEG;
  o.dogleg_type = ceres::SUBSPACE_DOGLEG;
  o.line_search_interpolation_type = ceres::QUADRATIC;
  o.sparse_linear_algebra_library_type = ceres::EIGEN_SPARSE;
  o.num_threads = 1;
  o.use_inner_iterations = true;
  o.linear_solver_ordering = std::shared_ptr<ceres::ParameterBlockOrdering>(&ordering, [](auto*) {});
  o.inner_iteration_ordering = std::shared_ptr<ceres::ParameterBlockOrdering>(&inner, [](auto*) {});

  Solver::Summary s;
  s.message = "left over";
  s.termination_type = ceres::CONVERGENCE;
  s.iterations.resize(3);
  s.precision_switch_iteration = 4;
  s.num_line_search_steps = 9;
  StartSummary(o, &s);
  EXPECT_EQ(s.termination_type, ceres::FAILURE);
  EXPECT_EQ(s.message, Solver::Summary().message);
  EXPECT_TRUE(s.iterations.empty());
  EXPECT_EQ(s.precision_switch_iteration, -1);
  EXPECT_EQ(s.num_line_search_steps, 0);
  EXPECT_EQ(s.sqrt_linear_solver_type_given, SQRT_ITERATIVE_SCHUR);
  EXPECT_EQ(s.sqrt_linear_solver_type_used, SQRT_ITERATIVE_SCHUR);
  EXPECT_EQ(s.precision_given, SINGLE_PRECISION);
  EXPECT_EQ(s.precision_used, SINGLE_PRECISION);
  EXPECT_TRUE(s.explicit_reduced_rows_used);
  EXPECT_EQ(s.reduced_camera_factorization_given, DENSE_FACTORIZATION);
  EXPECT_EQ(s.reduced_camera_factorization_used, DENSE_FACTORIZATION);
  EXPECT_EQ(s.minimizer_type, ceres::TRUST_REGION);
  EXPECT_EQ(s.trust_region_strategy_type, ceres::DOGLEG);
  EXPECT_EQ(s.dogleg_type, ceres::SUBSPACE_DOGLEG);
  EXPECT_EQ(s.line_search_interpolation_type, ceres::QUADRATIC);
  // Ceres' stand-in for SQRT_ITERATIVE_SCHUR.
  EXPECT_EQ(s.linear_solver_type_given, ceres::ITERATIVE_SCHUR);
  EXPECT_EQ(s.linear_solver_type_used, ceres::ITERATIVE_SCHUR);
  EXPECT_EQ(s.preconditioner_type_given, ceres::SCHUR_JACOBI);
  EXPECT_EQ(s.preconditioner_type_used, ceres::SCHUR_JACOBI);
  EXPECT_EQ(s.sparse_linear_algebra_library_type, ceres::EIGEN_SPARSE);
  EXPECT_EQ(s.num_threads_given, 1);
  EXPECT_EQ(s.num_threads_used, 1);
  EXPECT_TRUE(s.inner_iterations_given);
  EXPECT_FALSE(s.inner_iterations_used);
  EXPECT_EQ(s.linear_solver_ordering_given, (std::vector<int>{3, 1}));
  EXPECT_EQ(s.inner_iteration_ordering_given, (std::vector<int>{1, 2}));
  EXPECT_FALSE(s.is_constrained);
}

TEST(StartSummary, SparseSchurStandsInAsSparseSchurWithSuiteSparse) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  o.use_explicit_reduced_rows = true;  // not used by SQRT_SPARSE_SCHUR
  o.sparse_linear_algebra_library_type = ceres::EIGEN_SPARSE;
  Solver::Summary s;
  StartSummary(o, &s);
  EXPECT_EQ(s.linear_solver_type_given, ceres::SPARSE_SCHUR);
  EXPECT_EQ(s.linear_solver_type_used, ceres::SPARSE_SCHUR);
  EXPECT_EQ(s.sparse_linear_algebra_library_type, ceres::SUITE_SPARSE);
  EXPECT_FALSE(s.explicit_reduced_rows_used);
  EXPECT_EQ(s.reduced_camera_factorization_given, AUTOMATIC_FACTORIZATION);
}

// As Ceres: no more threads are used than the machine has.
TEST(StartSummary, ThreadsUsedAreCappedByTheMachine) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.num_threads = 1 << 20;
  Solver::Summary s;
  StartSummary(o, &s);
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(s.num_threads_given, 1 << 20);
  EXPECT_EQ(s.num_threads_used, hardware > 0 ? hardware : 1 << 20);
}

TEST(RecordProblemSizes, FromTheProblemAndFromItsStructureAsCeresCounts) {
  SmallProblem small;
  Solver::Summary from_problem;
  RecordProblemSizes(*small.problem, &from_problem);
  ExpectOriginalSizes(from_problem, "from the problem");

  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*small.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  Solver::Summary from_structure;
  RecordProblemSizes(s, &from_structure);
  ExpectOriginalSizes(from_structure, "from the structure");

  // Ceres' own "Original" column of the same problem.
  ceres::Solver::Options options;
  options.max_num_iterations = 1;
  options.logging_type = ceres::SILENT;
  ceres::Solver::Summary ceres_summary;
  ceres::Solve(options, small.problem.get(), &ceres_summary);
  ExpectOriginalSizes(ceres_summary, "ceres::Solve");
}

TEST(RecordStructure, TheReducedProblemAndTheAutomaticOrdering) {
  SmallProblem small;
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*small.problem, nullptr, &s, &error), StructureStatus::kOk) << error;
  ASSERT_EQ(s.landmarks.size(), 2u);
  ASSERT_EQ(s.cameras.size(), 2u);
  Solver::Summary summary;
  summary.linear_solver_ordering_used = {7, 7, 7};
  RecordStructure(s, nullptr, &summary);
  EXPECT_EQ(summary.num_parameter_blocks_reduced, 4);
  EXPECT_EQ(summary.num_parameters_reduced, 16);
  EXPECT_EQ(summary.num_effective_parameters_reduced, 14);
  EXPECT_EQ(summary.num_residual_blocks_reduced, 4);
  EXPECT_EQ(summary.num_residuals_reduced, 8);
  EXPECT_FALSE(summary.is_constrained);
  EXPECT_FALSE(s.schur_structure.empty());
  EXPECT_EQ(summary.schur_structure_given, s.schur_structure);
  EXPECT_EQ(summary.schur_structure_used, s.schur_structure);
  // Landmarks, then cameras.
  EXPECT_EQ(summary.linear_solver_ordering_used, (std::vector<int>{2, 2}));
}

// A user ordering is reported group by group, counting the variable blocks
// only: a group holding only the constant block k is left out, the unused
// block u is not counted.
TEST(RecordStructure, AUserOrderingGroupByGroupWithoutConstantBlocks) {
  SmallProblem small;
  small.problem->SetParameterLowerBound(small.c1, 1, -10.0);
  ceres::ParameterBlockOrdering ordering;
  ordering.AddElementToGroup(small.p, 0);
  ordering.AddElementToGroup(small.q, 0);
  ordering.AddElementToGroup(small.c1, 1);
  ordering.AddElementToGroup(small.k, 2);
  ordering.AddElementToGroup(small.c2, 3);
  ordering.AddElementToGroup(small.u, 3);
  ProblemStructure s;
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*small.problem, &ordering, &s, &error), StructureStatus::kOk) << error;
  ASSERT_GT(s.ordering_groups, 0);
  Solver::Summary summary;
  RecordStructure(s, &ordering, &summary);
  EXPECT_EQ(summary.linear_solver_ordering_used, (std::vector<int>{2, 1, 1}));
  EXPECT_TRUE(summary.is_constrained);  // c1's bound
}

TEST(RecordReducedCameraFactorization, DenseStandsInAsDenseSchurWithEigen) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  o.dense_linear_algebra_library_type = ceres::LAPACK;
  Solver::Summary s;
  StartSummary(o, &s);
  RecordReducedCameraFactorization(true, &s);
  EXPECT_EQ(s.reduced_camera_factorization_given, AUTOMATIC_FACTORIZATION);
  EXPECT_EQ(s.reduced_camera_factorization_used, DENSE_FACTORIZATION);
  EXPECT_EQ(s.linear_solver_type_given, ceres::SPARSE_SCHUR);
  EXPECT_EQ(s.linear_solver_type_used, ceres::DENSE_SCHUR);
  EXPECT_EQ(s.dense_linear_algebra_library_type, ceres::EIGEN);

  StartSummary(o, &s);
  RecordReducedCameraFactorization(false, &s);
  EXPECT_EQ(s.reduced_camera_factorization_used, SPARSE_FACTORIZATION);
  EXPECT_EQ(s.linear_solver_type_used, ceres::SPARSE_SCHUR);
  EXPECT_EQ(s.dense_linear_algebra_library_type, ceres::LAPACK);
}

TEST(RecordFailure, SetsTheMessageAndLogsUnlessSilent) {
  for (const ceres::LoggingType logging : {ceres::SILENT, ceres::PER_MINIMIZER_ITERATION}) {
    Solver::Options o;
    o.logging_type = logging;
    Solver::Summary s;
    s.termination_type = ceres::CONVERGENCE;
    const double start = WallTimeInSeconds() - 2.0;  // began two seconds ago
    ::testing::internal::CaptureStderr();
    RecordFailure(o, "the reason", start, &s);
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(s.termination_type, ceres::FAILURE);
    EXPECT_EQ(s.message, "the reason");
    EXPECT_GE(s.total_time_in_seconds, 2.0);
    EXPECT_LT(s.total_time_in_seconds, 60.0);
    if (logging == ceres::SILENT) {
      EXPECT_EQ(err, "");
    } else {
      EXPECT_NE(err.find("Terminating: the reason"), std::string::npos) << err;
    }
  }
}

TEST(BriefReport, NamesTheSolverAndPrecisionAfterCeresReport) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.precision = SINGLE_PRECISION;
  Solver::Summary s;
  StartSummary(o, &s);
  s.num_successful_steps = 3;
  s.initial_cost = 2.0;
  s.final_cost = 0.5;
  s.termination_type = ceres::CONVERGENCE;
  const std::string ceres_report = static_cast<const ceres::Solver::Summary&>(s).BriefReport();
  EXPECT_EQ(s.BriefReport(), ceres_report + ", Linear solver: SQRT_ITERATIVE_SCHUR, Precision: SINGLE");
  s.sqrt_linear_solver_type_used = SQRT_SPARSE_SCHUR;
  s.precision_used = DOUBLE_PRECISION;
  EXPECT_EQ(s.BriefReport(), ceres_report + ", Linear solver: SQRT_SPARSE_SCHUR, Precision: DOUBLE");
  // Passed through to ceres::Solve: Ceres' report as it is.
  s.sqrt_linear_solver_type_used = CERES_LINEAR_SOLVER;
  EXPECT_EQ(s.BriefReport(), ceres_report);
}

TEST(FullReport, CeresLinearSolverIsCeresReport) {
  Solver::Summary s;
  s.linear_solver_type_given = s.linear_solver_type_used = ceres::DENSE_SCHUR;
  EXPECT_EQ(s.FullReport(), static_cast<const ceres::Solver::Summary&>(s).FullReport());
}

TEST(FullReport, IterativeSchurRowsAfterTheSchurStructure) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.precision = SINGLE_PRECISION;
  Solver::Summary s;
  StartSummary(o, &s);
  s.schur_structure_given = s.schur_structure_used = "2,3,6";
  const std::string report = s.FullReport();
  const std::string solver_row = Row("Linear solver", "SQRT_ITERATIVE_SCHUR", "SQRT_ITERATIVE_SCHUR");
  const std::vector<std::string> rows = {Row("Precision", "SINGLE", "SINGLE"),
                                         Row("Reduced rows", "PROJECTED", "PROJECTED")};
  EXPECT_EQ(report, Expected(s, solver_row, "Schur structure", rows));
  EXPECT_EQ(report.find("Factorization"), std::string::npos) << report;
  // Written out once, so that the helper above is checked too.
  EXPECT_NE(report.find("\nLinear solver            SQRT_ITERATIVE_SCHUR     SQRT_ITERATIVE_SCHUR\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("2,3,6\nPrecision                              SINGLE                   SINGLE\n"
                        "Reduced rows                        PROJECTED                PROJECTED\n"),
            std::string::npos)
      << report;

  s.explicit_reduced_rows_used = true;
  EXPECT_NE(s.FullReport().find(Row("Reduced rows", "EXPLICIT", "EXPLICIT")), std::string::npos);
}

// "DOUBLE from iteration 12" fits its 25 characters; with iteration 127 it
// fills them and is set apart by a space.
TEST(FullReport, PrecisionSwitchIteration) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  o.precision = SINGLE_PRECISION;
  Solver::Summary s;
  StartSummary(o, &s);
  s.precision_used = DOUBLE_PRECISION;
  s.precision_switch_iteration = 12;
  const std::string precision_given = "\nPrecision                              SINGLE";
  EXPECT_NE(s.FullReport().find(precision_given + " DOUBLE from iteration 12\n"), std::string::npos)
      << s.FullReport();
  s.precision_switch_iteration = 127;
  EXPECT_NE(s.FullReport().find(precision_given + " DOUBLE from iteration 127\n"), std::string::npos)
      << s.FullReport();
}

TEST(FullReport, SparseSchurAddsTheFactorization) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_SPARSE_SCHUR;
  Solver::Summary s;
  StartSummary(o, &s);
  RecordReducedCameraFactorization(true, &s);
  EXPECT_EQ(s.FullReport(),
            Expected(s, Row("Linear solver", "SQRT_SPARSE_SCHUR", "SQRT_SPARSE_SCHUR"), "Schur structure",
                     {Row("Precision", "DOUBLE", "DOUBLE"), Row("Reduced rows", "PROJECTED", "PROJECTED"),
                      Row("Factorization", "AUTOMATIC_FACTORIZATION", "DENSE_FACTORIZATION")}));
}

// SQRT_AUTOMATIC handed to ceres::Solve: the row names what was asked and
// the Ceres solver that ran; nothing of the square-root solver is added.
TEST(FullReport, AutomaticPassedThroughNamesCeresSolver) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_AUTOMATIC;
  Solver::Summary s;
  StartSummary(o, &s);
  s.sqrt_linear_solver_type_used = CERES_LINEAR_SOLVER;
  s.linear_solver_type_given = s.linear_solver_type_used = ceres::DENSE_QR;
  const std::string report = s.FullReport();
  EXPECT_EQ(report, Expected(s, Row("Linear solver", "SQRT_AUTOMATIC", "DENSE_QR"), "", {}));
  EXPECT_EQ(report.find("\nPrecision"), std::string::npos) << report;
}

// Without a Schur structure row (Ceres prints none for a used type that is
// not a Schur solver) the rows follow the ordering row.
TEST(FullReport, WithoutSchurStructureRowsFollowTheOrdering) {
  Solver::Options o;
  o.sqrt_linear_solver_type = SQRT_ITERATIVE_SCHUR;
  Solver::Summary s;
  StartSummary(o, &s);
  s.linear_solver_type_used = ceres::DENSE_QR;
  const std::string ceres_report = static_cast<const ceres::Solver::Summary&>(s).FullReport();
  ASSERT_EQ(ceres_report.find("Schur structure"), std::string::npos) << ceres_report;
  const std::string solver_row = Row("Linear solver", "SQRT_ITERATIVE_SCHUR", "SQRT_ITERATIVE_SCHUR");
  const std::vector<std::string> rows = {Row("Precision", "DOUBLE", "DOUBLE"),
                                         Row("Reduced rows", "PROJECTED", "PROJECTED")};
  EXPECT_EQ(s.FullReport(), Expected(s, solver_row, "Linear solver ordering", rows));
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
