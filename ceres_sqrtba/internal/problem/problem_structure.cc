#include "ceres_sqrtba/internal/problem/problem_structure.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/independent_set.h"
#include "ceres_sqrtba/internal/problem/problem_reader.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

std::string SizeString(const std::vector<int>& sizes) {
  if (sizes.empty()) return "d";
  for (int v : sizes) {
    if (v != sizes[0]) return "d";
  }
  return std::to_string(sizes[0]);
}

}  // namespace

std::vector<double> StateFromUser(const ProblemStructure& s) {
  std::vector<double> state(s.num_parameters);
  for (int p : s.variable_blocks) {
    const ParameterBlockInfo& pb = s.parameter_blocks[p];
    std::copy(pb.user_values, pb.user_values + pb.size, state.begin() + pb.state_offset);
  }
  return state;
}

void StateToUser(const ProblemStructure& s, const double* state) {
  for (int p : s.variable_blocks) {
    const ParameterBlockInfo& pb = s.parameter_blocks[p];
    std::copy(state + pb.state_offset, state + pb.state_offset + pb.size, pb.user_values);
  }
}

namespace {

std::string Address(const void* p) {
  std::ostringstream ss;
  ss << p;
  return ss.str();
}

// Landmarks: Ceres' choice of the blocks its Schur solvers eliminate. Ceres
// first drops from a user ordering the blocks its reduced program drops
// (constant blocks, and blocks no residual block uses), then requires the
// rest to be exactly the reduced program's blocks, whatever the number of
// groups; a single group left means "choose for me" (an independent set),
// and a first group left empty means nothing to eliminate. The variable
// blocks of the first group are the landmarks otherwise. ordering_groups: the
// groups that hold a variable block (0 when the choice is automatic).
bool ChooseLandmarks(const ProblemStructure& s, const std::vector<ResidualBlockInfo>& residuals,
                     const ceres::ParameterBlockOrdering* ordering, std::vector<bool>* is_landmark,
                     int* ordering_groups, std::string* error) {
  const int n = static_cast<int>(s.parameter_blocks.size());
  *ordering_groups = 0;
  if (ordering != nullptr) {
    int listed = 0, groups_with_variables = 0;
    bool first_group_has_variables = false, first_group = true;
    for (const auto& g : ordering->group_to_elements()) {
      bool has_variables = false;
      for (double* p : g.second) {
        const auto it = s.index_of.find(p);
        if (it == s.index_of.end()) {
          *error = "Solver::Options::linear_solver_ordering contains a parameter block (" + Address(p) +
                   ") that is not in the problem.";
          return false;
        }
        if (s.parameter_blocks[it->second].is_constant) continue;
        ++listed;
        has_variables = true;
      }
      if (first_group) first_group_has_variables = has_variables;
      first_group = false;
      groups_with_variables += has_variables ? 1 : 0;
    }
    int variable = 0;
    for (const ParameterBlockInfo& pb : s.parameter_blocks) variable += pb.is_constant ? 0 : 1;
    if (listed != variable) {
      // Ceres' message (its counts: the blocks of its reduced program), then
      // what it means.
      std::ostringstream msg;
      msg << "The program has " << variable << " parameter blocks, but the parameter block ordering has "
          << listed << " parameter blocks. (Solver::Options::linear_solver_ordering must contain every "
          << "variable parameter block of the problem; constant ones may be left out.)";
      *error = msg.str();
      return false;
    }
    // (An empty ordering of a problem without variable blocks has no first
    // group: nothing to eliminate either way.)
    if (!ordering->group_to_elements().empty() && (groups_with_variables > 1 || !first_group_has_variables)) {
      is_landmark->assign(n, false);
      for (double* p : ordering->group_to_elements().begin()->second) {
        const int idx = s.index_of.at(p);
        if (!s.parameter_blocks[idx].is_constant) (*is_landmark)[idx] = true;
      }
      *ordering_groups = groups_with_variables;
      return true;
    }
  }
  // The residual blocks as hyperedges over their parameter blocks: their
  // blocks lie back to back in residual_parameters, in residual order
  // (ReadResidualBlocks), so only the edges' starts are new.
  std::vector<bool> is_constant(n);
  for (int i = 0; i < n; ++i) is_constant[i] = s.parameter_blocks[i].is_constant;
  std::vector<int> edge_begin;
  edge_begin.reserve(residuals.size() + 1);
  int next = 0;
  for (const ResidualBlockInfo& rb : residuals) {
    DCHECK_EQ(rb.parameter_begin, next);
    edge_begin.push_back(rb.parameter_begin);
    next = rb.parameter_begin + rb.num_parameter_blocks;
  }
  DCHECK_EQ(next, static_cast<int>(s.residual_parameters.size()));
  edge_begin.push_back(next);
  *is_landmark = EliminationIndependentSet(n, is_constant, edge_begin, s.residual_parameters);
  return true;
}

// Every residual block may touch at most one landmark, once. Only a user's
// first elimination group can break this (the automatic choice is an
// independent set, and Ceres refuses a residual block that names a block
// twice): Ceres' message for that group, then the residual block that shows
// it.
bool CheckOneLandmarkPerResidual(const ProblemStructure& s, const std::vector<ResidualBlockInfo>& residuals,
                                 const std::vector<bool>& is_landmark, std::string* error) {
  for (const ResidualBlockInfo& rb : residuals) {
    int first = -1;
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const int p = s.residual_parameters[rb.parameter_begin + i];
      if (!is_landmark[p]) continue;
      if (first >= 0) {
        const size_t group_size = static_cast<size_t>(std::count(is_landmark.begin(), is_landmark.end(), true));
        std::ostringstream msg;
        msg << "The first elimination group in the parameter block ordering of size " << group_size
            << " is not an independent set: the " << NameOf(rb.id) << " depends on the "
            << NameOf(s.parameter_blocks[first].user_values);
        if (first != p) {
          msg << " and the " << NameOf(s.parameter_blocks[p].user_values) << ", both in it";
        } else {
          msg << " twice";
        }
        msg << ". The square-root solver eliminates every variable block of that group (its landmarks) and "
               "needs every residual block to depend on at most one of them.";
        *error = msg.str();
        return false;
      }
      first = p;
    }
  }
  return true;
}

// The state layout: landmarks first, then cameras, each in parameter block
// order; the cameras alone form the reduced camera vector.
// camera_order (optional): each camera's position in the order the cameras
// are to be laid out in.
void LayOutState(const std::vector<bool>& is_landmark, const std::vector<int>* camera_order,
                 ProblemStructure* s) {
  for (size_t i = 0; i < s->parameter_blocks.size(); ++i) {
    ParameterBlockInfo& pb = s->parameter_blocks[i];
    if (pb.is_constant || !is_landmark[i]) continue;
    pb.is_landmark = true;
    pb.landmark_index = static_cast<int>(s->landmarks.size());
    s->landmarks.push_back(static_cast<int>(i));
  }
  for (size_t i = 0; i < s->parameter_blocks.size(); ++i) {
    const ParameterBlockInfo& pb = s->parameter_blocks[i];
    if (pb.is_constant || pb.is_landmark) continue;
    s->cameras.push_back(static_cast<int>(i));
  }
  if (camera_order != nullptr) {
    std::stable_sort(s->cameras.begin(), s->cameras.end(),
                     [&](int a, int b) { return (*camera_order)[a] < (*camera_order)[b]; });
  }
  for (size_t c = 0; c < s->cameras.size(); ++c) s->parameter_blocks[s->cameras[c]].camera_index = static_cast<int>(c);
  s->variable_blocks = s->landmarks;
  s->variable_blocks.insert(s->variable_blocks.end(), s->cameras.begin(), s->cameras.end());
  for (int p : s->variable_blocks) {
    ParameterBlockInfo& pb = s->parameter_blocks[p];
    pb.state_offset = s->num_parameters;
    pb.tangent_offset = s->num_effective_parameters;
    s->num_parameters += pb.size;
    s->num_effective_parameters += pb.tangent_size;
    if (pb.camera_index == 0) s->camera_tangent_begin = pb.tangent_offset;
  }
  if (s->cameras.empty()) s->camera_tangent_begin = s->num_effective_parameters;
  s->num_camera_parameters = s->num_effective_parameters - s->camera_tangent_begin;
}

// Groups: one per landmark (its residual blocks in problem order), then one
// per landmark-free residual block.
void BuildGroups(std::vector<ResidualBlockInfo> residuals, ProblemStructure* s) {
  s->residual_blocks = std::move(residuals);
  const int num_landmarks = static_cast<int>(s->landmarks.size());
  std::vector<int> landmark_of(s->residual_blocks.size(), -1);
  std::vector<int> per_landmark(num_landmarks + 1, 0);
  for (size_t r = 0; r < s->residual_blocks.size(); ++r) {
    const ResidualBlockInfo& rb = s->residual_blocks[r];
    s->num_residuals += rb.num_residuals;
    for (int i = 0; i < rb.num_parameter_blocks; ++i) {
      const ParameterBlockInfo& pb = s->parameter_blocks[s->residual_parameters[rb.parameter_begin + i]];
      if (pb.is_landmark) landmark_of[r] = pb.landmark_index;
    }
    if (landmark_of[r] >= 0) ++per_landmark[landmark_of[r] + 1];
  }
  std::partial_sum(per_landmark.begin(), per_landmark.end(), per_landmark.begin());
  s->group_residuals.resize(per_landmark[num_landmarks]);
  std::vector<int> fill(per_landmark.begin(), per_landmark.end() - 1);
  for (size_t r = 0; r < s->residual_blocks.size(); ++r) {
    if (landmark_of[r] >= 0) s->group_residuals[fill[landmark_of[r]]++] = static_cast<int>(r);
  }
  s->groups.reserve(num_landmarks);
  for (int l = 0; l < num_landmarks; ++l) {
    Group g;
    g.landmark = s->landmarks[l];
    g.landmark_size = s->parameter_blocks[g.landmark].tangent_size;
    g.residual_begin = per_landmark[l];
    g.residual_end = per_landmark[l + 1];
    s->groups.push_back(g);
  }
  for (size_t r = 0; r < s->residual_blocks.size(); ++r) {
    if (landmark_of[r] >= 0) continue;
    Group g;
    g.residual_begin = static_cast<int>(s->group_residuals.size());
    s->group_residuals.push_back(static_cast<int>(r));
    g.residual_end = g.residual_begin + 1;
    s->groups.push_back(g);
  }
  // The residual blocks renumbered in group order (group_residuals becomes
  // the identity): every pass over the Jacobian visits them group by group,
  // and in the problem's order a landmark's blocks lie scattered (BAL files
  // list the observations camera by camera), a cache miss per block on large
  // problems. The renumbering costs 0.7 ms on problem-21 (1.9 ms on
  // problem-16), which the first Jacobian pass gains back: iteration 0 and
  // whole runs came out equal or slightly shorter (four interleaved pairs
  // each). The table is permuted in place, one cycle of the permutation at a
  // time: a second copy would be fresh memory, a page fault per 4 KiB
  // (~1.2 us here; 311 of them on problem-49) before the first iteration.
  std::vector<int>& order = s->group_residuals;
  std::vector<ResidualBlockInfo>& blocks = s->residual_blocks;
  std::vector<int> parameters;
  parameters.reserve(s->residual_parameters.size());
  for (size_t k = 0; k < order.size(); ++k) {
    ResidualBlockInfo& rb = blocks[order[k]];
    const int begin = static_cast<int>(parameters.size());
    parameters.insert(parameters.end(), s->residual_parameters.begin() + rb.parameter_begin,
                      s->residual_parameters.begin() + rb.parameter_begin + rb.num_parameter_blocks);
    rb.parameter_begin = begin;
  }
  // blocks[k] becomes the old blocks[order[k]]; order[j] = j marks j done.
  for (int k = 0; k < static_cast<int>(order.size()); ++k) {
    if (order[k] == k) continue;
    const ResidualBlockInfo first = blocks[k];
    int j = k;
    while (true) {
      const int from = order[j];
      order[j] = j;
      if (from == k) {
        blocks[j] = first;
        break;
      }
      blocks[j] = blocks[from];
      j = from;
    }
  }
  s->residual_parameters = std::move(parameters);
}

// The cameras of every group in order of first appearance, and for every
// camera the groups that see it (camera-major CSR).
void IndexCameras(ProblemStructure* s) {
  std::vector<int> last_group(s->parameter_blocks.size(), -1);
  std::vector<int> camera_count(s->cameras.size() + 1, 0);
  s->group_cameras.reserve(s->residual_parameters.size());  // a bound: one per (residual, block) pair
  for (size_t gi = 0; gi < s->groups.size(); ++gi) {
    Group& g = s->groups[gi];
    g.camera_begin = static_cast<int>(s->group_cameras.size());
    for (int k = g.residual_begin; k < g.residual_end; ++k) {
      const ResidualBlockInfo& rb = s->residual_blocks[s->group_residuals[k]];
      g.num_rows += rb.num_residuals;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const int p = s->residual_parameters[rb.parameter_begin + i];
        const ParameterBlockInfo& pb = s->parameter_blocks[p];
        if (pb.camera_index < 0 || last_group[p] == static_cast<int>(gi)) continue;
        last_group[p] = static_cast<int>(gi);
        s->group_cameras.push_back(p);
        g.camera_columns += pb.tangent_size;
        ++camera_count[pb.camera_index + 1];
      }
    }
    g.camera_end = static_cast<int>(s->group_cameras.size());
  }
  std::partial_sum(camera_count.begin(), camera_count.end(), camera_count.begin());
  s->camera_group_begin = camera_count;
  s->camera_groups.resize(camera_count.back());
  s->camera_group_entry.resize(camera_count.back());
  std::vector<int> fill(camera_count.begin(), camera_count.end() - 1);
  for (size_t gi = 0; gi < s->groups.size(); ++gi) {
    const Group& g = s->groups[gi];
    for (int c = g.camera_begin; c < g.camera_end; ++c) {
      const ParameterBlockInfo& pb = s->parameter_blocks[s->group_cameras[c]];
      const int slot = fill[pb.camera_index]++;
      s->camera_groups[slot] = static_cast<int>(gi);
      s->camera_group_entry[slot] = c;
    }
  }
}

// What Ceres would print as "Schur structure": residual rows, landmark and
// camera tangent sizes, each a number or "d" when they vary.
void DescribeSchurStructure(ProblemStructure* s) {
  std::vector<int> row_sizes, e_sizes, f_sizes;
  for (const Group& g : s->groups) {
    if (g.landmark < 0) continue;
    e_sizes.push_back(g.landmark_size);
    for (int k = g.residual_begin; k < g.residual_end; ++k) {
      row_sizes.push_back(s->residual_blocks[s->group_residuals[k]].num_residuals);
    }
  }
  for (int p : s->cameras) f_sizes.push_back(s->parameter_blocks[p].tangent_size);
  s->schur_structure = SizeString(row_sizes) + "," + SizeString(e_sizes) + "," + SizeString(f_sizes);
}

// Debug builds: what the evaluator, the storages and the camera side take for
// granted about a built structure. Any failure is a bug of this file.
void DCheckInvariants(const ProblemStructure& s) {
#ifndef NDEBUG
  int tangent = 0;
  for (size_t k = 0; k < s.variable_blocks.size(); ++k) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.variable_blocks[k]];
    DCHECK(!pb.is_constant);
    DCHECK_EQ(pb.tangent_offset, tangent);  // landmarks first, then cameras, contiguous
    DCHECK_EQ(pb.is_landmark, k < s.landmarks.size());
    tangent += pb.tangent_size;
  }
  DCHECK_EQ(tangent, s.num_effective_parameters);
  // Every residual block in exactly one group, groups' residual ranges back to back.
  std::vector<int> seen(s.residual_blocks.size(), 0);
  int end = 0, rows = 0;
  for (const Group& g : s.groups) {
    DCHECK_EQ(g.residual_begin, end);
    DCHECK_LT(g.residual_begin, g.residual_end);
    DCHECK(g.landmark < 0 || s.parameter_blocks[g.landmark].is_landmark);
    for (int k = g.residual_begin; k < g.residual_end; ++k) ++seen[s.group_residuals[k]];
    end = g.residual_end;
    rows += g.num_rows;
  }
  DCHECK_EQ(end, static_cast<int>(s.group_residuals.size()));
  DCHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  DCHECK_EQ(rows, s.num_residuals);
  // The camera-major index lists every (group, camera) pair once.
  DCHECK_EQ(s.camera_group_begin.size(), s.cameras.size() + 1);
  DCHECK_EQ(s.camera_group_begin.back(), static_cast<int>(s.group_cameras.size()));
  DCHECK_EQ(s.camera_groups.size(), s.group_cameras.size());
#else
  (void)s;
#endif
}

}  // namespace

int64_t ProblemStructure::AllocatedBytes() const {
  int64_t bytes = VectorBytes(parameter_blocks) + VectorBytes(residual_blocks) + VectorBytes(residual_parameters) +
                  VectorBytes(fixed_residual_blocks) + VectorBytes(lower_bounds) + VectorBytes(upper_bounds) +
                  VectorBytes(groups) + VectorBytes(group_residuals) + VectorBytes(group_cameras) +
                  VectorBytes(landmarks) + VectorBytes(cameras) + VectorBytes(variable_blocks) +
                  VectorBytes(camera_group_begin) + VectorBytes(camera_groups) +
                  VectorBytes(camera_group_entry);
  for (const FixedResidualBlock& fixed : fixed_residual_blocks) bytes += VectorBytes(fixed.parameters);
  // The hash map: a bucket pointer each, and a node (key, value, next) per block.
  bytes += static_cast<int64_t>(index_of.bucket_count()) * 8 + static_cast<int64_t>(index_of.size()) * 32;
  return bytes;
}

std::string NameOf(const double* parameter_block) { return "parameter block " + Address(parameter_block); }
std::string NameOf(ceres::ResidualBlockId residual_block) { return "residual block " + Address(residual_block); }

StructureStatus BuildProblemStructure(const ceres::Problem& problem,
                                      const ceres::ParameterBlockOrdering* ordering,
                                      ProblemStructure* out, std::string* error, ParallelContext* context,
                                      const StructureOptions& options) {
  const bool given_cameras = options.camera_blocks != nullptr;
  ProblemStructure s;
  std::vector<ResidualBlockInfo> residuals;
  // The bounds are read aside while the rest is built; an infeasible box is
  // reported before anything found after the reading (Ceres' order).
  BoundsReader bounds(problem, context);
  if (!ReadProblem(problem, context, &s, &residuals, &bounds, error)) return StructureStatus::kInvalid;
  std::vector<bool> is_landmark(s.parameter_blocks.size(), false);
  // With the cameras given: their positions in the list, the cameras' order.
  std::vector<int> camera_position;
  if (given_cameras) {
    camera_position.assign(s.parameter_blocks.size(), -1);
    const std::vector<double*>& cameras = *options.camera_blocks;
    for (size_t k = 0; k < cameras.size(); ++k) {
      const auto it = s.index_of.find(cameras[k]);
      if (it == s.index_of.end()) {
        *error = "The camera-side block " + Address(cameras[k]) + " (number " + std::to_string(k) +
                 " of the list) is not a parameter block of the problem.";
        return StructureStatus::kInvalid;
      }
      if (camera_position[it->second] >= 0) {
        *error = "The camera-side block " + Address(cameras[k]) + " is listed twice.";
        return StructureStatus::kInvalid;
      }
      camera_position[it->second] = static_cast<int>(k);
      // A camera that no residual block of this process uses is a camera
      // all the same (its residual blocks are on other processes).
      ParameterBlockInfo& pb = s.parameter_blocks[it->second];
      pb.is_constant = problem.IsParameterBlockConstant(cameras[k]) || pb.tangent_size == 0;
    }
    for (size_t i = 0; i < s.parameter_blocks.size(); ++i) {
      is_landmark[i] = !s.parameter_blocks[i].is_constant && camera_position[i] < 0;
    }
  }
  if ((!given_cameras && !ChooseLandmarks(s, residuals, ordering, &is_landmark, &s.ordering_groups, error)) ||
      !CheckOneLandmarkPerResidual(s, residuals, is_landmark, error)) {
    return bounds.Finish(&s, error) ? StructureStatus::kUnsupported : StructureStatus::kInvalid;
  }
  LayOutState(is_landmark, given_cameras ? &camera_position : nullptr, &s);
  if (s.landmarks.empty() && !given_cameras) {
    if (!bounds.Finish(&s, error)) return StructureStatus::kInvalid;
    *error =
        "The problem has no landmarks: no variable parameter block can be "
        "eliminated (elimination group 0 is empty or constant). The "
        "square-root solver needs a bundle-adjustment-shaped problem.";
    return StructureStatus::kNoLandmarks;
  }
  BuildGroups(std::move(residuals), &s);
  IndexCameras(&s);
  DescribeSchurStructure(&s);
  if (!bounds.Finish(&s, error)) return StructureStatus::kInvalid;
  for (int p : s.variable_blocks) s.is_constrained |= s.parameter_blocks[p].bounds_offset >= 0;
  DCheckInvariants(s);
  *out = std::move(s);
  return StructureStatus::kOk;
}

}  // namespace internal
}  // namespace ceres_sqrtba
