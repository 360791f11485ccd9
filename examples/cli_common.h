// Command line helpers shared by the example programs (bundle_adjuster,
// colmap_bundle_adjuster): the one-line error, text from the user made
// printable, flag checks, output paths checked before a solve, and the memory
// a solve needs per observation.
#ifndef CERES_SQRTBA_EXAMPLES_CLI_COMMON_H_
#define CERES_SQRTBA_EXAMPLES_CLI_COMMON_H_

#include <cstdint>
#include <string>

#include "ceres/ceres.h"
#include "ceres_sqrtba/solver.h"

namespace ceres_sqrtba {
namespace examples {

// Memory a run takes per observation beyond the reader's arrays, at least:
// the ceres::Problem (a cost function and a residual block each) and the
// solver's Jacobian and working storage. Measured on bundle_adjuster's
// synthetic problems (1 000 cameras, 0.2M to 3M observations, peak resident
// memory): 700 bytes with sqrt_iterative_schur in single precision, 785 with
// iterative_schur, 795 with sparse_schur, more with the direct solvers'
// camera matrices. A problem whose declared size needs more than the memory
// available even at this rate is refused before it is read, rather than left
// to the kernel's out-of-memory killer.
constexpr int64_t kSolveBytesPerObservation = 600;

// Text from the user (a file name may hold a newline or a terminal escape)
// as the programs print it: control characters shown as \xNN, so that every
// line printed is one line and changes nothing on the terminal.
std::string Printable(const std::string& text);

// Prints "<program>: error: <message>" (printable, one line) to stderr after
// flushing stdout, and returns 1 (the exit status).
int FailWithMessage(const char* program, const std::string& message);

// Lower-case ASCII copy.
std::string Lower(std::string text);

// Whether the gflags flag `name` was left at its default.
bool FlagIsDefault(const char* name);

// --preconditioner=<value> (Ceres' names, any case) into *type; false with a
// message naming the flag, the value and the names accepted (`also`: names
// the program accepts besides Ceres', e.g. "automatic", listed first).
bool ParsePreconditionerFlag(const std::string& value, const char* also, ceres::PreconditionerType* type,
                             std::string* error);
// --precision=<value> (double or single) into *precision; false with a
// message naming the flag and the value.
bool ParsePrecisionFlag(const std::string& value, Precision* precision, std::string* error);

// The file name without its folders.
std::string BaseName(const std::string& path);

// The end of each example's main, once gflags has parsed the flags: an
// argument left over (argc > 1) is refused with an error line; otherwise
// run() is the program and its exit status is returned. The readers,
// generators and solvers check their sizes against the available memory
// before they allocate, and the solvers report a failed allocation as a
// FAILURE; an allocation that fails anyway (an estimate that fell short,
// memory taken meanwhile by others) ends with an error line, not an abort.
int RunAfterFlags(const char* program, int argc, char** argv, int (*run)());

// Whether the file named by --flag can be written, checked before the solve
// so that a typo in a path does not cost a whole run. The path is only looked
// at, never opened or created (opening a named pipe would block, and
// creating then removing a file could remove one that was there): an
// existing file must be writable and not a directory, a new one needs a
// directory it can be created in. An empty path is fine (nothing to write).
bool CheckWritable(const char* flag, const std::string& path, std::string* error);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_CLI_COMMON_H_
