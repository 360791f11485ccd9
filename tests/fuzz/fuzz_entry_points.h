// The bodies of the libFuzzer targets, as plain functions, so that the
// fuzzers (tests/fuzz/*_fuzzer.cc, clang only) and the regression tests
// (tests/fuzz/fuzz_regression_test.cc, every compiler) run the very same code
// on an input.
//
// FuzzBalReader and FuzzSolve take the bytes of a BAL file (plain text or
// bzip2) and read them with BalProblem::ReadFromMemory, the in-memory twin of
// BalProblem::Read; FuzzColmapReader takes a COLMAP model's files packed in
// one input (PackColmapInput). Each checks the invariants the example and
// the library promise and calls abort() (a crash for libFuzzer, a failed
// test for GoogleTest) with a message on stderr when one is violated. They
// return what happened, so that a regression test can assert the clear
// error outcome of an input.
#ifndef CERES_SQRTBA_TESTS_FUZZ_FUZZ_ENTRY_POINTS_H_
#define CERES_SQRTBA_TESTS_FUZZ_FUZZ_ENTRY_POINTS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "colmap_model.h"

namespace ceres_sqrtba {
namespace fuzz {

// The name inputs are read under: messages start with "<kInputName>:".
constexpr char kInputName[] = "fuzz-input";

// Memory the reader may assume for the header's counts (instead of the
// machine's MemAvailable, so that the outcome does not depend on the machine).
constexpr int64_t kReaderMemoryLimit = int64_t{64} << 20;

struct ReadOutcome {
  bool ok = false;
  std::string error;  // one line, when !ok
  int num_cameras = 0;
  int num_points = 0;
  int num_observations = 0;
};

// Reads the input as BalProblem::Read reads a file and checks:
//  - failure: one line "fuzz-input:...", an empty problem left behind;
//  - success: counts, indices and sizes consistent, every value finite, and
//    the same problem with use_quaternions (10-value cameras);
//  - plain text (not starting with "BZh") gives exactly the same outcome
//    (problem or message) when it is bzip2-compressed first, in one stream or
//    split into two concatenated streams.
ReadOutcome FuzzBalReader(const uint8_t* data, size_t size);

// Bounds of the problems the solve fuzzer solves (larger ones are skipped).
constexpr int kMaxSolveObservations = 300;
constexpr int kMaxSolveCameras = 50;
constexpr int kMaxSolvePoints = 300;

// One way of solving the problem (see FuzzSolve).
struct SolveRun {
  std::string variant;
  // "normalize", "preprocess", "build" or "solve": the last stage reached.
  std::string stage;
  std::string error;       // example's message when a stage before Solve failed
  int termination = -1;    // ceres::TerminationType of the solve
  std::string message;     // summary.message
  int num_iterations = 0;  // summary.iterations.size()
  double initial_cost = 0.0;
  double final_cost = 0.0;
};

struct SolveOutcome {
  ReadOutcome read;
  bool too_large = false;  // read, but beyond the bounds above: not solved
  std::vector<SolveRun> runs;
};

// Reads the input (as FuzzBalReader, without its checks), skips problems
// beyond the bounds above, and then, as bundle_adjuster does (normalize,
// optionally perturb and preprocess, BuildProblem, ceres_sqrtba::Solve with
// SQRT_ITERATIVE_SCHUR and 2 iterations), solves it in these variants:
//   "double":  angle-axis cameras, no loss, automatic ordering, 1 thread;
//   "single":  the same in single precision (no loss: residuals beyond the
//              range of a float reach the landmark blocks as they are);
//   "single-quaternions-huber-cluster-tridiagonal": single precision,
//              quaternion cameras with manifolds, Huber loss, points-first
//              ordering, perturbation and the paper's preprocessing, 2
//              threads, the CLUSTER_TRIDIAGONAL preconditioner;
//   "double-2threads": "double" again with 2 threads, which must give
//              bit-identical parameters, costs and iterations.
// Checks: the termination type is one a solve without callbacks can give; a
// usable solution has finite costs, final <= initial, and finite parameters;
// a FAILURE leaves the parameters untouched.
SolveOutcome FuzzSolve(const uint8_t* data, size_t size);

// ---- The COLMAP model reader (colmap_bundle_adjuster).

// An input of the COLMAP fuzzer holds the files of a model:
//   byte 0:    bit 0 set: binary files, else text; bit 1 set: rigs.* is
//              there; bit 2 set: frames.* is there;
//   then a length (4 bytes, little-endian, clamped to what remains) of each
//   file there but the last, in the order cameras.*, images.*, points3D.*,
//   rigs.*, frames.*; then those files in that order, the last one taking
//   the rest.
// A legacy model (bits 1 and 2 clear) so has a 9-byte header: two lengths,
// then cameras.*, images.* and points3D.*. Inputs shorter than their header
// are read as three empty text files.
std::string PackColmapInput(bool binary, const examples::ColmapFiles& files);
// A legacy model's three files.
std::string PackColmapInput(bool binary, const std::string& cameras, const std::string& images,
                            const std::string& points3D);

struct ColmapReadOutcome {
  bool ok = false;
  bool binary = false;
  bool rigs_and_frames = false;  // read as a rig model
  std::string error;  // one line, when !ok
  int num_cameras = 0;
  int num_images = 0;
  int num_points = 0;
  int num_rigs = 0;
  int num_frames = 0;
  int num_observations = 0;  // in the bundle adjustment problem, when built
};

// Reads the files as ReadColmapModel reads a folder named "fuzz-input"
// (memory limit kReaderMemoryLimit) and checks:
//  - failure: one line starting "fuzz-input/<file>", an empty model;
//  - success: every value finite, every id cross-reference resolved; in a
//    rig model each frame's rig there, each image in a frame, its pose the
//    one derived from frame and rig; the model written in its format (five
//    files for a rig model, three for a legacy one) reads back
//    bit-identical and writes the same bytes again; written in the other
//    format (text only when every image name is non-empty and free of white
//    space) it reads back bit-identical;
//  - models with at most kMaxSolveObservations observations: the bundle
//    adjustment problem builds (or says, in one line, that there is nothing
//    to adjust) with one residual block per observation of a point seen at
//    least twice, and its cost evaluates whenever every residual is finite.
ColmapReadOutcome FuzzColmapReader(const uint8_t* data, size_t size);

}  // namespace fuzz
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_FUZZ_FUZZ_ENTRY_POINTS_H_
