// The structure of a bundle-adjustment-shaped ceres::Problem, read once through
// Ceres' public API: which parameter blocks are landmarks (eliminated by QR),
// which are cameras (kept in the reduced camera system), which are constant,
// and which residual blocks belong to which landmark.
//
// Landmarks are elimination group 0 of Solver::Options::linear_solver_ordering
// when the user gives an ordering with at least two groups; otherwise they are
// found as Ceres' Schur solvers find them: a greedy maximal independent set of
// the parameter-block co-occurrence graph, visiting blocks by increasing degree.
//
// A residual block touches at most one (variable) landmark and any number of
// other blocks. Residual blocks of one landmark form a "group", which becomes
// one landmark block in the linear solver; a residual block without a landmark
// (a prior, a pose-graph term) forms a group of its own with landmark size 0.
// Residual blocks whose parameter blocks are all constant contribute the fixed
// cost only, exactly as Ceres removes them from its reduced program.
//
// Tangent-space layout of the step vector: all landmarks first (in parameter
// block order), then all cameras; the cameras alone form the reduced camera
// vector, which starts at camera_tangent_begin.
#ifndef CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_STRUCTURE_H_
#define CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_STRUCTURE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ceres/ceres.h"
#include "ceres_sqrtba/float_jacobians.h"

namespace ceres_sqrtba {
namespace internal {

class ParallelContext;

struct ParameterBlockInfo {
  double* user_values = nullptr;
  int size = 0;          // ambient
  int tangent_size = 0;
  const ceres::Manifold* manifold = nullptr;
  bool is_constant = false;
  bool is_landmark = false;
  int state_offset = -1;    // into the ambient state vector; -1 if constant
  int tangent_offset = -1;  // into the tangent step vector; -1 if constant
  int camera_index = -1;    // index among variable cameras
  int landmark_index = -1;  // index among landmarks
  // Into ProblemStructure::lower_bounds/upper_bounds (size values each), or
  // -1: the block has no finite bound.
  int bounds_offset = -1;
};

// A residual block whose parameter blocks are all constant: it only adds to
// the fixed cost, as in Ceres' reduced program.
struct FixedResidualBlock {
  ceres::ResidualBlockId id = nullptr;
  int index = 0;  // in Problem::GetResidualBlocks order (Ceres' messages use it)
  const ceres::CostFunction* cost_function = nullptr;
  const ceres::LossFunction* loss_function = nullptr;
  std::vector<const double*> parameters;  // the user's values
};

struct ResidualBlockInfo {
  ceres::ResidualBlockId id = nullptr;
  const ceres::CostFunction* cost_function = nullptr;
  const ceres::LossFunction* loss_function = nullptr;
  // The cost function's FloatJacobians interface (float_jacobians.h), null
  // when it has none: single precision Jacobian passes call it instead.
  const FloatJacobians* float_jacobians = nullptr;
  int num_residuals = 0;
  int parameter_begin = 0;  // into ProblemStructure::residual_parameters
  int num_parameter_blocks = 0;
};

// One landmark block: the residual blocks of one landmark (or one landmark-free
// residual block) and the variable cameras they touch, in column order.
struct Group {
  int landmark = -1;        // parameter block index, -1 for no landmark
  int landmark_size = 0;    // tangent size d of the landmark (0 if none)
  int residual_begin = 0;   // into ProblemStructure::group_residuals
  int residual_end = 0;
  int camera_begin = 0;     // into ProblemStructure::group_cameras
  int camera_end = 0;
  int num_rows = 0;         // sum of the residual sizes
  int camera_columns = 0;   // sum of the camera tangent sizes
};

struct ProblemStructure {
  std::vector<ParameterBlockInfo> parameter_blocks;  // every block of the problem
  std::vector<ResidualBlockInfo> residual_blocks;    // those with a variable block
  std::vector<int> residual_parameters;  // flat: parameter block indices per residual
  std::vector<FixedResidualBlock> fixed_residual_blocks;

  // Bounds of the blocks that have a finite one (ParameterBlockInfo::
  // bounds_offset), -/+DBL_MAX where a component has none.
  std::vector<double> lower_bounds, upper_bounds;
  // Some variable block of the reduced problem has a finite bound (Ceres'
  // Summary::is_constrained): the trust-region loop projects and searches.
  bool is_constrained = false;

  std::vector<Group> groups;
  // Flat: residual block indices per group. The residual blocks are
  // numbered in group order (each group's in the problem's order), so this
  // is the identity; code reads a group's blocks through it all the same.
  std::vector<int> group_residuals;
  std::vector<int> group_cameras;    // flat: parameter block indices per group

  std::vector<int> landmarks;  // parameter block indices, landmark_index order
  std::vector<int> cameras;    // parameter block indices, camera_index order
  std::vector<int> variable_blocks;  // state order (landmarks, then cameras)

  int num_parameters = 0;          // ambient size of the state vector
  int num_effective_parameters = 0;  // tangent size of the step vector
  int camera_tangent_begin = 0;    // first camera entry in the step vector
  int num_camera_parameters = 0;   // size of the reduced camera vector
  int num_residuals = 0;           // rows of the Jacobian (variable part)

  // For every camera, the groups that see it: flat CSR over camera_index.
  std::vector<int> camera_group_begin;  // size cameras.size() + 1
  std::vector<int> camera_groups;       // group index
  std::vector<int> camera_group_entry;  // index into group_cameras

  // The groups of the user's linear_solver_ordering that hold a variable
  // block when the landmarks are its first group's; 0 when they were chosen
  // automatically (no ordering, or one whose variable blocks all lie in one
  // group, as Ceres reads it).
  int ordering_groups = 0;

  // What Ceres reports as the Schur structure.
  std::string schur_structure;            // e.g. "2,3,9", "d" for varying sizes

  // Index into parameter_blocks of every user block.
  std::unordered_map<const double*, int> index_of;

  int64_t TotalCameraSlices() const { return static_cast<int64_t>(camera_groups.size()); }
  // Bytes the structure holds on the heap (for the memory plan).
  int64_t AllocatedBytes() const;
  // True for a user block that is part of the reduced problem (variable and
  // used by a residual block).
  bool IsVariable(const double* user_block) const {
    const auto it = index_of.find(user_block);
    return it != index_of.end() && !parameter_blocks[it->second].is_constant;
  }
};

enum class StructureStatus {
  kOk,
  // No variable block can be eliminated (elimination group 0 empty or
  // constant, or nothing variable): such problems go to ceres::Solve.
  kNoLandmarks,
  // A shape the square-root solver cannot take; the message names it.
  kUnsupported,
  // What Ceres refuses too (a parameter value that is not finite), with
  // Ceres' message.
  kInvalid,
};

// The ambient state vector (size num_parameters) holding the current values
// of the user's variable parameter blocks, and the way back.
std::vector<double> StateFromUser(const ProblemStructure& s);
void StateToUser(const ProblemStructure& s, const double* state);

// Reads the structure of `problem`. Anything but kOk comes with a message
// naming the reason (a residual block touching two landmarks, a bad
// ordering, no landmarks...) and the user's blocks as Ceres names them (by
// address).
// How one process of a solve spread over several reads its share.
struct StructureOptions {
  // Non-null: the camera-side blocks, in the order the cameras are laid out
  // (the same on every process); every other variable block is a landmark,
  // whatever the ordering says. A process may then hold no landmark.
  const std::vector<double*>* camera_blocks = nullptr;
};

// context (optional): runs the per-block queries to Ceres in parallel.
StructureStatus BuildProblemStructure(const ceres::Problem& problem,
                                      const ceres::ParameterBlockOrdering* ordering,
                                      ProblemStructure* structure, std::string* error,
                                      ParallelContext* context = nullptr,
                                      const StructureOptions& options = StructureOptions());

// "parameter block 0x55d1c2a0" / "residual block 0x55d1c2b8": how messages
// name the user's blocks, as Ceres' do.
std::string NameOf(const double* parameter_block);
std::string NameOf(ceres::ResidualBlockId residual_block);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROBLEM_PROBLEM_STRUCTURE_H_
