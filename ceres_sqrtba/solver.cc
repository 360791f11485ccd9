// The public entry points: the square-root solver's names, option checks,
// and Solve, which dispatches to ceres::Solve or to the square-root solve
// (internal/solve/solver_choice.h says which, square_root_solve.h how).
#include "ceres_sqrtba/solver.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/problem/options_validation.h"
#include "ceres_sqrtba/internal/solve/ceres_pass_through.h"
#include "ceres_sqrtba/internal/solve/solver_choice.h"
#include "ceres_sqrtba/internal/solve/square_root_solve.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace {

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

const char* SqrtLinearSolverTypeToString(SqrtLinearSolverType type) {
  switch (type) {
    case CERES_LINEAR_SOLVER:
      return "CERES_LINEAR_SOLVER";
    case SQRT_ITERATIVE_SCHUR:
      return "SQRT_ITERATIVE_SCHUR";
    case SQRT_SPARSE_SCHUR:
      return "SQRT_SPARSE_SCHUR";
    case SQRT_AUTOMATIC:
      return "SQRT_AUTOMATIC";
  }
  return "UNKNOWN";
}

bool StringToSqrtLinearSolverType(std::string value, SqrtLinearSolverType* type) {
  value = Upper(value);
  for (SqrtLinearSolverType t : {CERES_LINEAR_SOLVER, SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR, SQRT_AUTOMATIC}) {
    if (value == SqrtLinearSolverTypeToString(t)) {
      *type = t;
      return true;
    }
  }
  return false;
}

int64_t AvailableMemoryInBytes() { return internal::AvailableMemoryBytes(); }

const char* PrecisionToString(Precision precision) {
  switch (precision) {
    case DOUBLE_PRECISION:
      return "DOUBLE_PRECISION";
    case SINGLE_PRECISION:
      return "SINGLE_PRECISION";
  }
  return "UNKNOWN";
}

bool StringToPrecision(std::string value, Precision* precision) {
  value = Upper(value);
  if (value == "DOUBLE" || value == "DOUBLE_PRECISION") {
    *precision = DOUBLE_PRECISION;
    return true;
  }
  if (value == "SINGLE" || value == "FLOAT" || value == "SINGLE_PRECISION") {
    *precision = SINGLE_PRECISION;
    return true;
  }
  return false;
}

const char* ReducedCameraFactorizationToString(ReducedCameraFactorization factorization) {
  switch (factorization) {
    case AUTOMATIC_FACTORIZATION:
      return "AUTOMATIC_FACTORIZATION";
    case DENSE_FACTORIZATION:
      return "DENSE_FACTORIZATION";
    case SPARSE_FACTORIZATION:
      return "SPARSE_FACTORIZATION";
  }
  return "UNKNOWN";
}

bool StringToReducedCameraFactorization(std::string value, ReducedCameraFactorization* factorization) {
  value = Upper(value);
  for (ReducedCameraFactorization f : {AUTOMATIC_FACTORIZATION, DENSE_FACTORIZATION, SPARSE_FACTORIZATION}) {
    const std::string name = ReducedCameraFactorizationToString(f);
    if (value == name || value + "_FACTORIZATION" == name) {
      *factorization = f;
      return true;
    }
  }
  return false;
}

bool Solver::Options::IsValid(std::string* error) const {
  const internal::SolverChoice choice = internal::ChooseSolver(*this);
  if (choice.type == CERES_LINEAR_SOLVER) return internal::ValidateCeresOptions(*this, error);
  return internal::ValidateSqrtOptions(internal::WithChoice(*this, choice), error);
}

void Solve(const Solver::Options& options, ceres::Problem* problem, Solver::Summary* summary) {
  if (summary == nullptr) {
    LOG(ERROR) << "ceres_sqrtba::Solve was called with a null summary.";
    return;
  }
  const internal::SolverChoice choice = internal::ChooseSolver(options);
  if (choice.type == CERES_LINEAR_SOLVER) return internal::SolveWithCeres(options, choice.reason, problem, summary);
  if (options.sqrt_linear_solver_type != SQRT_AUTOMATIC) return internal::SolveSquareRoot(options, problem, summary);
  internal::SolveSquareRoot(internal::WithChoice(options, choice), problem, summary);
  summary->sqrt_linear_solver_type_given = SQRT_AUTOMATIC;
  summary->reduced_camera_factorization_given = options.reduced_camera_factorization;
}

void Solve(const Solver::Options& options, ceres::Problem* problem, ceres::Solver::Summary* summary) {
  if (summary == nullptr) {
    LOG(ERROR) << "ceres_sqrtba::Solve was called with a null summary.";
    return;
  }
  Solver::Summary full;
  Solve(options, problem, &full);
  *summary = full;
}

}  // namespace ceres_sqrtba
