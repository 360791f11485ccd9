// A deterministic synthetic bundle adjustment problem with BAL's camera model.
//
// Ground truth: num_points points uniformly in a ball of radius 1 around the
// origin; num_cameras cameras spread over a spherical band (elevation within
// +-30 degrees, golden-angle azimuths, so a ring when there are few) at
// distance 4 from the origin, each looking at the origin with a small random
// roll. Every camera has its own focal length (about 500 px) and small radial
// distortion. Each point is seen by observations_per_point distinct cameras
// (or, when max_observations_per_point is larger, by a number drawn uniformly
// from observations_per_point..max_observations_per_point for each point: long
// tracks): those whose viewing direction is closest to a jittered direction of
// the point, so that neighbouring cameras share points as in a real capture.
// Observations are the projections plus Gaussian pixel noise; a fraction
// outlier_ratio of them is moved 20 to 100 px away in a random direction.
// The problem's parameters are the ground truth perturbed: points by 0.02,
// camera centres by 0.02, rotations by 0.005 rad (centre kept), focal lengths
// by 1 % and distortion by 0.005 (all standard deviations).
//
// The same options (and seed) always give the same problem: the generator
// draws from its own random number generator (splitmix64), not the C
// library's.
#ifndef CERES_SQRTBA_EXAMPLES_SYNTHETIC_PROBLEM_H_
#define CERES_SQRTBA_EXAMPLES_SYNTHETIC_PROBLEM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "bal_problem.h"

namespace ceres_sqrtba {
namespace examples {

struct SyntheticOptions {
  int num_cameras = 32;
  int num_points = 10000;
  int observations_per_point = 5;
  // 0 (or equal to observations_per_point): every point has
  // observations_per_point observations. Larger: each point's track length is
  // drawn uniformly from [observations_per_point, max_observations_per_point].
  int max_observations_per_point = 0;
  double outlier_ratio = 0.02;
  double pixel_noise = 1.0;  // standard deviation, pixels
  uint64_t seed = 38401;
  bool use_quaternions = false;
  // As BalReadOptions::memory_limit_in_bytes and
  // BalReadOptions::solve_bytes_per_observation.
  int64_t memory_limit_in_bytes = 0;
  int64_t solve_bytes_per_observation = 0;
};

// Checks the options (false with a message naming the --synthetic_ flag).
bool ValidateSyntheticOptions(const SyntheticOptions& options,
                              std::string* error);

// What the generator started from, for tests.
struct SyntheticTruth {
  // The same observations with the true (unperturbed) parameters.
  BalProblem problem;
  // Per observation: 1 when it was made an outlier.
  std::vector<char> outlier;
};

// Generates the problem; false with a message when the options are invalid.
// When truth is not null it receives the ground truth.
bool MakeSyntheticProblem(const SyntheticOptions& options, BalProblem* problem,
                          std::string* error, SyntheticTruth* truth = nullptr);

// A short name such as "synthetic-c32-p10000-k5-seed38401"
// ("...-k100-300-..." when the track lengths vary).
std::string SyntheticProblemName(const SyntheticOptions& options);

}  // namespace examples
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_EXAMPLES_SYNTHETIC_PROBLEM_H_
