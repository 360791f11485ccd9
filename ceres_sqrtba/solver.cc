// Temporary stub: string conversions and the pass-through. Replaced by the
// square-root solver.
#include "ceres_sqrtba/solver.h"

#include <algorithm>
#include <cctype>

namespace ceres_sqrtba {
namespace {
std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return s;
}
}  // namespace

const char* SqrtLinearSolverTypeToString(SqrtLinearSolverType type) {
  switch (type) {
    case CERES_LINEAR_SOLVER: return "CERES_LINEAR_SOLVER";
    case SQRT_ITERATIVE_SCHUR: return "SQRT_ITERATIVE_SCHUR";
  }
  return "UNKNOWN";
}
bool StringToSqrtLinearSolverType(std::string value, SqrtLinearSolverType* type) {
  value = Upper(value);
  if (value == "CERES_LINEAR_SOLVER") { *type = CERES_LINEAR_SOLVER; return true; }
  if (value == "SQRT_ITERATIVE_SCHUR") { *type = SQRT_ITERATIVE_SCHUR; return true; }
  return false;
}
const char* PrecisionToString(Precision p) {
  return p == SINGLE_PRECISION ? "SINGLE_PRECISION" : "DOUBLE_PRECISION";
}
bool StringToPrecision(std::string value, Precision* p) {
  value = Upper(value);
  if (value == "DOUBLE" || value == "DOUBLE_PRECISION") { *p = DOUBLE_PRECISION; return true; }
  if (value == "SINGLE" || value == "FLOAT" || value == "SINGLE_PRECISION") { *p = SINGLE_PRECISION; return true; }
  return false;
}
bool Solver::Options::IsValid(std::string* error) const {
  return ceres::Solver::Options::IsValid(error);
}
void Solve(const Solver::Options& options, ceres::Problem* problem,
           ceres::Solver::Summary* summary) {
  ceres::Solve(options, problem, summary);
}
}  // namespace ceres_sqrtba
