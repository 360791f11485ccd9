#include "ceres_sqrtba/internal/solve/distributed_structure.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include <typeinfo>

#include "ceres_sqrtba/internal/solve/options_validation.h"
#include "ceres_sqrtba/internal/solve/square_root_solve.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// FNV-1a over the bytes of what is added.
class Fingerprint {
 public:
  template <typename T>
  void Add(const T& value) {
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    for (unsigned char b : bytes) hash_ = (hash_ ^ b) * 1099511628211ULL;
  }
  uint64_t value() const { return hash_; }

 private:
  uint64_t hash_ = 14695981039346656037ULL;
};

uint64_t CamerasAndOptions(const ProblemStructure& s, const Solver::Options& o) {
  Fingerprint f;
  f.Add(s.cameras.size());
  for (int c : s.cameras) {
    const ParameterBlockInfo& pb = s.parameter_blocks[c];
    f.Add(pb.size);
    f.Add(pb.tangent_size);
    f.Add(pb.manifold != nullptr);
    if (pb.manifold != nullptr) {
      for (const char* c = typeid(*pb.manifold).name(); *c != '\0'; ++c) f.Add(*c);
    }
    for (int k = 0; k < pb.size; ++k) f.Add(pb.user_values[k]);
    f.Add(pb.bounds_offset >= 0);
    if (pb.bounds_offset >= 0) {
      for (int k = 0; k < pb.size; ++k) {
        f.Add(s.lower_bounds[pb.bounds_offset + k]);
        f.Add(s.upper_bounds[pb.bounds_offset + k]);
      }
    }
  }
  // The options every decision of the solve depends on.
  const MinimizerOptions m = MinimizerOptionsOf(o);
  f.Add(m.max_num_iterations);
  f.Add(m.max_solver_time_in_seconds);
  f.Add(m.function_tolerance);
  f.Add(m.gradient_tolerance);
  f.Add(m.parameter_tolerance);
  f.Add(m.min_trust_region_radius);
  f.Add(m.max_num_consecutive_invalid_steps);
  f.Add(m.min_relative_decrease);
  f.Add(m.max_consecutive_nonmonotonic_steps);
  f.Add(m.eta);
  f.Add(m.jacobi_scaling);
  f.Add(m.levenberg_marquardt.initial_radius);
  f.Add(m.levenberg_marquardt.max_radius);
  f.Add(m.levenberg_marquardt.min_diagonal);
  f.Add(m.levenberg_marquardt.max_diagonal);
  f.Add(m.line_search.interpolation_type);
  f.Add(m.line_search.sufficient_decrease);
  f.Add(m.line_search.max_step_contraction);
  f.Add(m.line_search.min_step_contraction);
  f.Add(m.line_search.min_step_size);
  f.Add(m.line_search.max_num_iterations);
  f.Add(o.minimizer_type);
  f.Add(o.trust_region_strategy_type);
  f.Add(o.use_inner_iterations);
  f.Add(o.use_explicit_reduced_rows);
  f.Add(o.precision);
  f.Add(o.sqrt_linear_solver_type);
  f.Add(o.preconditioner_type);
  f.Add(o.max_num_iterations);
  f.Add(o.max_linear_solver_iterations);
  f.Add(o.min_linear_solver_iterations);
  f.Add(o.eta);
  f.Add(o.function_tolerance);
  f.Add(o.gradient_tolerance);
  f.Add(o.parameter_tolerance);
  f.Add(o.initial_trust_region_radius);
  f.Add(o.max_trust_region_radius);
  f.Add(o.min_relative_decrease);
  f.Add(o.use_nonmonotonic_steps);
  f.Add(o.jacobi_scaling);
  f.Add(o.jacobians_at_candidates);
  return f.value();
}

}  // namespace

StructureStatus DistributedStructure(StructureStatus status, const Solver::Options& options,
                                     const ProcessGroup& processes, const ProblemStructure& structure,
                                     std::string* error) {
  const std::string first = processes.FirstError(status == StructureStatus::kOk ? std::string() : *error);
  if (!first.empty()) {
    *error = first;
    return StructureStatus::kInvalid;
  }
  if (!processes.AllEqual(CamerasAndOptions(structure, options))) {
    *error =
        "The processes of the solve do not hold the same camera-side parameter blocks (their number, order, "
        "sizes, values and bounds must be the same on every process) or were given different options.";
    return StructureStatus::kInvalid;
  }
  const std::string shared = SharedLandmarks(structure, processes);
  if (!shared.empty()) {
    *error = shared;
    return StructureStatus::kInvalid;
  }
  return StructureStatus::kOk;
}

std::string SharedLandmarks(const ProblemStructure& s, const ProcessGroup& processes) {
  // Each landmark's values and, per residual block, the values of the
  // block's other parameter blocks (cameras, constant or not: the same on
  // every process), hashed, go to the process the hash names; each process
  // looks for a hash that two processes sent.
  const int size = processes.size();
  std::vector<std::vector<uint64_t>> to(size);
  std::vector<uint64_t> neighbours;
  for (const Group& group : s.groups) {
    if (group.landmark < 0) continue;
    const ParameterBlockInfo& pb = s.parameter_blocks[group.landmark];
    Fingerprint f;
    f.Add(pb.size);
    for (int k = 0; k < pb.size; ++k) f.Add(pb.user_values[k]);
    neighbours.clear();
    for (int k = group.residual_begin; k < group.residual_end; ++k) {
      const ResidualBlockInfo& rb = s.residual_blocks[s.group_residuals[k]];
      Fingerprint n;
      for (int i = 0; i < rb.num_parameter_blocks; ++i) {
        const int p = s.residual_parameters[rb.parameter_begin + i];
        if (p == group.landmark) continue;
        const ParameterBlockInfo& other = s.parameter_blocks[p];
        n.Add(other.size);
        for (int j = 0; j < other.size; ++j) n.Add(other.user_values[j]);
      }
      neighbours.push_back(n.value());
    }
    // In any order of the residual blocks.
    std::sort(neighbours.begin(), neighbours.end());
    for (uint64_t n : neighbours) f.Add(n);
    to[f.value() % static_cast<uint64_t>(size)].push_back(f.value());
  }
  std::vector<uint64_t> received;
  std::vector<int> from;
  processes.Exchange(to, &received, &from);
  std::vector<int> order(received.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return received[a] != received[b] ? received[a] < received[b] : from[a] < from[b];
  });
  std::string message;
  for (size_t i = 1; i < order.size() && message.empty(); ++i) {
    const int a = order[i - 1];
    const int b = order[i];
    if (received[a] == received[b] && from[a] != from[b]) {
      message = "A landmark of rank " + std::to_string(from[a]) + " and a landmark of rank " +
                std::to_string(from[b]) +
                " hold the same values and are seen by the same cameras: each landmark, with all of its "
                "residual blocks, must be on exactly one process.";
    }
  }
  // The lowest checking rank's finding, the same on every process.
  return processes.FirstMessage(message, nullptr);
}

void RecordDistributedSizes(const ProblemStructure& s, const std::vector<double*>& camera_blocks,
                            const ProcessGroup& processes, Solver::Summary* summary) {
  // The cameras' share of each size: the same on every process.
  double cameras[6] = {static_cast<double>(camera_blocks.size()), 0.0, 0.0,
                       static_cast<double>(s.cameras.size()), 0.0, static_cast<double>(s.num_camera_parameters)};
  for (double* block : camera_blocks) {
    const auto it = s.index_of.find(block);
    if (it == s.index_of.end()) continue;
    cameras[1] += s.parameter_blocks[it->second].size;
    cameras[2] += s.parameter_blocks[it->second].tangent_size;
  }
  for (int c : s.cameras) cameras[4] += s.parameter_blocks[c].size;
  double sizes[10] = {static_cast<double>(summary->num_parameter_blocks),
                      static_cast<double>(summary->num_parameters),
                      static_cast<double>(summary->num_effective_parameters),
                      static_cast<double>(summary->num_parameter_blocks_reduced),
                      static_cast<double>(summary->num_parameters_reduced),
                      static_cast<double>(summary->num_effective_parameters_reduced),
                      static_cast<double>(summary->num_residual_blocks),
                      static_cast<double>(summary->num_residuals),
                      static_cast<double>(summary->num_residual_blocks_reduced),
                      static_cast<double>(summary->num_residuals_reduced)};
  for (int k = 0; k < 6; ++k) sizes[k] -= cameras[k];
  processes.Sum(sizes, 10);  // exact: integers far below 2^53
  for (int k = 0; k < 6; ++k) sizes[k] += cameras[k];
  summary->num_parameter_blocks = static_cast<int>(sizes[0]);
  summary->num_parameters = static_cast<int>(sizes[1]);
  summary->num_effective_parameters = static_cast<int>(sizes[2]);
  summary->num_parameter_blocks_reduced = static_cast<int>(sizes[3]);
  summary->num_parameters_reduced = static_cast<int>(sizes[4]);
  summary->num_effective_parameters_reduced = static_cast<int>(sizes[5]);
  summary->num_residual_blocks = static_cast<int>(sizes[6]);
  summary->num_residuals = static_cast<int>(sizes[7]);
  summary->num_residual_blocks_reduced = static_cast<int>(sizes[8]);
  summary->num_residuals_reduced = static_cast<int>(sizes[9]);
  // The orderings' groups but the last (the cameras', the same on every
  // process) are this process's landmarks: summed too, where every process
  // lists as many groups (a process without landmarks lists the cameras'
  // alone, and the orderings then stay its own).
  for (std::vector<int>* ordering : {&summary->linear_solver_ordering_given, &summary->linear_solver_ordering_used}) {
    if (!processes.AllEqual(ordering->size()) || ordering->size() < 2) continue;
    std::vector<double> groups(ordering->begin(), ordering->end() - 1);
    processes.Sum(groups.data(), static_cast<int>(groups.size()));
    for (size_t g = 0; g < groups.size(); ++g) (*ordering)[g] = static_cast<int>(groups[g]);
  }
}

std::string UnsupportedDistributedSolverType(const Solver::Options& options) {
  if (options.sqrt_linear_solver_type != SQRT_ITERATIVE_SCHUR &&
      options.sqrt_linear_solver_type != SQRT_SPARSE_SCHUR) {
    return "A solve spread over processes needs Solver::Options::sqrt_linear_solver_type = "
           "SQRT_ITERATIVE_SCHUR or SQRT_SPARSE_SCHUR.";
  }
  return "";
}

std::string UnsupportedDistributedOption(const Solver::Options& options) {
  const std::string solver = UnsupportedDistributedSolverType(options);
  if (!solver.empty()) return solver;
  const std::string sqrt = UnsupportedSqrtOption(options);
  if (!sqrt.empty()) return sqrt;
  if (options.use_explicit_reduced_rows) {
    return "A solve spread over processes needs Solver::Options::use_explicit_reduced_rows = false.";
  }
  if (options.use_inner_iterations) {
    return "A solve spread over processes needs Solver::Options::use_inner_iterations = false.";
  }
  return "";
}

}  // namespace internal
}  // namespace ceres_sqrtba
