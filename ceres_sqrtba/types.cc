// The names of the square-root solver's choices (types.h) and their parsers:
// the enum names, case-insensitively, and the short forms the comments in
// types.h list.
#include "ceres_sqrtba/types.h"

#include <algorithm>
#include <cctype>
#include <string>

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
  for (SqrtLinearSolverType t :
       {CERES_LINEAR_SOLVER, SQRT_ITERATIVE_SCHUR, SQRT_SPARSE_SCHUR, SQRT_AUTOMATIC}) {
    if (value == SqrtLinearSolverTypeToString(t)) {
      *type = t;
      return true;
    }
  }
  return false;
}

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

bool StringToReducedCameraFactorization(std::string value,
                                        ReducedCameraFactorization* factorization) {
  value = Upper(value);
  for (ReducedCameraFactorization f :
       {AUTOMATIC_FACTORIZATION, DENSE_FACTORIZATION, SPARSE_FACTORIZATION}) {
    const std::string name = ReducedCameraFactorizationToString(f);
    if (value == name || value + "_FACTORIZATION" == name) {
      *factorization = f;
      return true;
    }
  }
  return false;
}

}  // namespace ceres_sqrtba
