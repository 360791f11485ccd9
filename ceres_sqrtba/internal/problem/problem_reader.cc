#include "ceres_sqrtba/internal/problem/problem_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ceres_sqrtba/internal/common/parallel.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// The residual blocks as Problem::GetResidualBlocks lists them, each with
// its cost and loss function and its parameter blocks as indices into
// ProblemStructure::parameter_blocks (read once: every Ceres query touches
// the residual block's own heap object).
struct ResidualList {
  std::vector<ceres::ResidualBlockId> ids;
  std::vector<const ceres::CostFunction*> cost_functions;
  std::vector<const ceres::LossFunction*> loss_functions;
  std::vector<int> num_residuals;
  std::vector<int> begin{0};  // ids.size() + 1
  std::vector<int> blocks;
};

// The per-residual-block queries, in parallel: cost and loss function, the
// number of residuals and the parameter blocks (user pointers, per chunk of
// residual blocks, with the count of each residual block in counts).
constexpr int kQueryChunk = 4096;
void QueryResidualBlocks(const ceres::Problem& problem, ParallelContext* context, ResidualList* list,
                         std::vector<std::vector<double*>>* chunk_pointers, std::vector<int>* counts) {
  const int n = static_cast<int>(list->ids.size());
  list->cost_functions.resize(n);
  list->loss_functions.resize(n);
  list->num_residuals.resize(n);
  counts->resize(n);
  // Chunks of fixed size write their pointers into their own vector, read
  // in chunk order: the same result for any thread count (and no copy into
  // one vector, which would be fresh pages to fault in).
  const int num_chunks = (n + kQueryChunk - 1) / kQueryChunk;
  chunk_pointers->assign(num_chunks, {});
  auto query = [&](int cb, int ce) {
    std::vector<double*> params;
    for (int c = cb; c < ce; ++c) {
      std::vector<double*>& out = (*chunk_pointers)[c];
      out.reserve(2 * kQueryChunk);
      for (int r = c * kQueryChunk; r < std::min(n, (c + 1) * kQueryChunk); ++r) {
        const ceres::ResidualBlockId id = list->ids[r];
        list->cost_functions[r] = problem.GetCostFunctionForResidualBlock(id);
        list->loss_functions[r] = problem.GetLossFunctionForResidualBlock(id);
        list->num_residuals[r] = list->cost_functions[r]->num_residuals();
        problem.GetParameterBlocksForResidualBlock(id, &params);
        (*counts)[r] = static_cast<int>(params.size());
        out.insert(out.end(), params.begin(), params.end());
      }
    }
  };
  // The first chunks on this thread while the context starts its workers
  // (ParallelContext::ready), the rest in parallel.
  int done = 0;
  while (done < num_chunks && (context == nullptr || !context->ready())) {
    query(done, done + 1);
    ++done;
  }
  if (done < num_chunks) context->For(num_chunks - done, 1, [&](int b, int e) { query(done + b, done + e); });
}

// Parameter blocks in the order of first use by the residual blocks (Ceres'
// program order for blocks created by AddResidualBlock), then the unused ones
// in the order Problem::GetParameterBlocks lists them. GetParameterBlocks
// lists blocks by address, which changes from run to run; this order makes
// the structure, the work partition and every sum the same in every run.
// The per-block queries (sizes, manifold, constancy) are map lookups inside
// Ceres: they run in parallel (the bounds: BoundsReader).
void ReadParameterBlocks(const ceres::Problem& problem, ParallelContext* context, ProblemStructure* s,
                         ResidualList* residuals) {
  problem.GetResidualBlocks(&residuals->ids);
  std::vector<std::vector<double*>> chunk_pointers;
  std::vector<int> counts;
  QueryResidualBlocks(problem, context, residuals, &chunk_pointers, &counts);
  size_t total = 0;
  for (const auto& chunk : chunk_pointers) total += chunk.size();
  const int num_blocks = problem.NumParameterBlocks();
  std::vector<double*> blocks;
  blocks.reserve(num_blocks);
  s->index_of.reserve(num_blocks);
  auto add = [&](double* p) {
    const auto it = s->index_of.try_emplace(p, static_cast<int>(blocks.size()));
    if (it.second) blocks.push_back(p);
    return it.first->second;
  };
  residuals->begin.reserve(residuals->ids.size() + 1);
  residuals->blocks.resize(total);
  // Consecutive residual blocks often share a block in the same position (a
  // BAL file lists observations by camera or by point): no hash lookup then.
  constexpr int kRemembered = 4;
  double* last_pointer[kRemembered] = {nullptr, nullptr, nullptr, nullptr};
  int last_index[kRemembered] = {-1, -1, -1, -1};
  size_t at = 0;
  int r = 0;
  for (const std::vector<double*>& chunk : chunk_pointers) {
    const int end = std::min(static_cast<int>(counts.size()), r + kQueryChunk);
    double* const* next = chunk.data();
    for (; r < end; ++r) {
      for (int i = 0; i < counts[r]; ++i, ++at) {
        double* p = *next++;
        if (i < kRemembered && p == last_pointer[i]) {
          residuals->blocks[at] = last_index[i];
          continue;
        }
        const int index = add(p);
        residuals->blocks[at] = index;
        if (i < kRemembered) {
          last_pointer[i] = p;
          last_index[i] = index;
        }
      }
      residuals->begin.push_back(static_cast<int>(at));
    }
  }
  // Blocks no residual block uses: only Problem::GetParameterBlocks lists
  // them (a walk over Ceres' map of every block, skipped when none is unused).
  if (static_cast<int>(blocks.size()) < num_blocks) {
    std::vector<double*> by_address;
    problem.GetParameterBlocks(&by_address);
    for (double* p : by_address) add(p);
  }
  const int n = static_cast<int>(blocks.size());
  s->parameter_blocks.resize(n);
  auto read = [&](int b, int e) {
    for (int i = b; i < e; ++i) {
      ParameterBlockInfo& pb = s->parameter_blocks[i];
      pb.user_values = blocks[i];
      pb.size = problem.ParameterBlockSize(blocks[i]);
      pb.manifold = problem.GetManifold(blocks[i]);
      // Without a manifold the tangent space is the block's own: one lookup
      // in Ceres' map of blocks fewer (each walks a tree of all the blocks).
      pb.tangent_size = pb.manifold != nullptr ? problem.ParameterBlockTangentSize(blocks[i]) : pb.size;
      // A block with an empty tangent space cannot move: Ceres treats it as
      // constant, and so do we.
      pb.is_constant = problem.IsParameterBlockConstant(blocks[i]) || pb.tangent_size == 0;
    }
  };
  if (context != nullptr) {
    context->For(n, 1024, read);
  } else {
    read(0, n);
  }
}

// "   1.5 nan 2 ": the values as Ceres prints them in its messages.
std::string ValuesString(const double* values, int size) {
  std::string out;
  char buffer[32];
  for (int i = 0; i < size; ++i) {
    std::snprintf(buffer, sizeof(buffer), "%12g ", values[i]);
    out += buffer;
  }
  return out;
}

// As Ceres checks the user's values before it solves: every parameter block
// of the problem, constant or not, used or not, must be finite.
bool CheckParameterValuesAreFinite(const ProblemStructure& s, std::string* error) {
  for (const ParameterBlockInfo& pb : s.parameter_blocks) {
    for (int k = 0; k < pb.size; ++k) {
      if (std::isfinite(pb.user_values[k])) continue;
      char head[160];
      std::snprintf(head, sizeof(head),
                    "ParameterBlock: %p with size %d has at least one invalid value.\n"
                    "First invalid value is at index: %d.\nParameter block values: ",
                    static_cast<const void*>(pb.user_values), pb.size, k);
      *error = head + ValuesString(pb.user_values, pb.size);
      return false;
    }
  }
  return true;
}

// The residual blocks with at least one variable block; the others only add
// to the fixed cost, as Ceres removes them from its reduced program. Variable
// blocks no residual block uses are not part of the reduced problem either
// (Ceres removes them too): they are marked constant and keep their values.
std::vector<ResidualBlockInfo> ReadResidualBlocks(const ResidualList& list,
                                                  ProblemStructure* s) {
  std::vector<ResidualBlockInfo> residuals;
  residuals.reserve(list.ids.size());
  s->residual_parameters.reserve(list.blocks.size());
  std::vector<bool> used(s->parameter_blocks.size(), false);
  for (size_t r = 0; r < list.ids.size(); ++r) {
    ResidualBlockInfo rb;
    rb.id = list.ids[r];
    rb.cost_function = list.cost_functions[r];
    rb.loss_function = list.loss_functions[r];
    rb.float_jacobians = dynamic_cast<const FloatJacobians*>(rb.cost_function);
    rb.num_residuals = list.num_residuals[r];
    rb.num_parameter_blocks = list.begin[r + 1] - list.begin[r];
    bool any_variable = false;
    for (int i = list.begin[r]; i < list.begin[r + 1]; ++i) {
      any_variable |= !s->parameter_blocks[list.blocks[i]].is_constant;
    }
    if (!any_variable) {
      FixedResidualBlock fixed;
      fixed.id = rb.id;
      fixed.index = static_cast<int>(r);
      fixed.cost_function = rb.cost_function;
      fixed.loss_function = rb.loss_function;
      for (int i = list.begin[r]; i < list.begin[r + 1]; ++i) {
        fixed.parameters.push_back(s->parameter_blocks[list.blocks[i]].user_values);
      }
      s->fixed_residual_blocks.push_back(std::move(fixed));
      continue;
    }
    rb.parameter_begin = static_cast<int>(s->residual_parameters.size());
    for (int i = list.begin[r]; i < list.begin[r + 1]; ++i) {
      s->residual_parameters.push_back(list.blocks[i]);
      used[list.blocks[i]] = true;
    }
    residuals.push_back(rb);
  }
  for (size_t i = 0; i < used.size(); ++i) {
    if (!used[i]) s->parameter_blocks[i].is_constant = true;
  }
  return residuals;
}

}  // namespace

bool ReadProblem(const ceres::Problem& problem, ParallelContext* context, ProblemStructure* s,
                 std::vector<ResidualBlockInfo>* residuals, BoundsReader* bounds, std::string* error) {
  ResidualList list;
  ReadParameterBlocks(problem, context, s, &list);
  if (!CheckParameterValuesAreFinite(*s, error)) return false;
  // Before ReadResidualBlocks marks the unused blocks constant: Ceres checks
  // the boxes of the problem as the user left it.
  bounds->Start(*s);
  *residuals = ReadResidualBlocks(list, s);
  return true;
}

BoundsReader::BoundsReader(const ceres::Problem& problem, ParallelContext* context)
    : problem_(problem), context_(context) {}

BoundsReader::~BoundsReader() {
  if (running_) {
    try {
      context_->WaitAside();
    } catch (...) {
      // Leaving on another failure: that one is reported.
    }
  }
}

void BoundsReader::Start(const ProblemStructure& s) {
  const size_t n = s.parameter_blocks.size();
  values_.resize(n);
  sizes_.resize(n);
  constant_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    values_[i] = s.parameter_blocks[i].user_values;
    sizes_[i] = s.parameter_blocks[i].size;
    constant_[i] = s.parameter_blocks[i].is_constant;
  }
  if (context_ == nullptr) {
    Read();
    return;
  }
  running_ = true;
  context_->RunAside([this] { Read(); });
}

// A block is bounded when one of its values has a bound other than Ceres'
// "none" (-/+DBL_MAX); its bounds are then kept for all its values, in block
// order. Every value costs two lookups at most: those read while searching
// are kept.
void BoundsReader::Read() {
  const int n = static_cast<int>(values_.size());
  offsets_.assign(n, -1);
  std::vector<double> lower, upper;
  for (int i = 0; i < n; ++i) {
    lower.clear();
    upper.clear();
    bool bounded = false;
    for (int k = 0; k < sizes_[i] && !bounded; ++k) {
      lower.push_back(problem_.GetParameterLowerBound(values_[i], k));
      upper.push_back(problem_.GetParameterUpperBound(values_[i], k));
      bounded = lower.back() > -std::numeric_limits<double>::max() ||
                upper.back() < std::numeric_limits<double>::max();
    }
    if (!bounded) continue;
    for (int k = static_cast<int>(lower.size()); k < sizes_[i]; ++k) {
      lower.push_back(problem_.GetParameterLowerBound(values_[i], k));
      upper.push_back(problem_.GetParameterUpperBound(values_[i], k));
    }
    offsets_[i] = static_cast<int>(lower_.size());
    lower_.insert(lower_.end(), lower.begin(), lower.end());
    upper_.insert(upper_.end(), upper.begin(), upper.end());
  }
}

// As Ceres checks bounds before it solves, on every block of the problem:
// a constant block must start inside its box (Ceres cannot move it there),
// a variable one must have a non-empty box (lower < upper).
bool BoundsReader::Finish(ProblemStructure* s, std::string* error) {
  if (running_) {
    running_ = false;
    context_->WaitAside();
  }
  const int n = static_cast<int>(values_.size());
  for (int i = 0; i < n; ++i) {
    if (offsets_[i] < 0) continue;
    const double* lower = lower_.data() + offsets_[i];
    const double* upper = upper_.data() + offsets_[i];
    for (int k = 0; k < sizes_[i]; ++k) {
      const double v = values_[i][k];
      char head[320];
      if (constant_[i] && (v < lower[k] || v > upper[k])) {
        std::snprintf(head, sizeof(head),
                      "ParameterBlock: %p with size %d has at least one infeasible value.\n"
                      "First infeasible value is at index: %d.\n"
                      "Lower bound: %e, value: %e, upper bound: %e\nParameter block values: ",
                      static_cast<const void*>(values_[i]), sizes_[i], k, lower[k], v, upper[k]);
      } else if (!constant_[i] && lower[k] >= upper[k]) {
        std::snprintf(head, sizeof(head),
                      "ParameterBlock: %p with size %d has at least one infeasible bound.\n"
                      "First infeasible bound is at index: %d.\n"
                      "Lower bound: %e, upper bound: %e\nParameter block values: ",
                      static_cast<const void*>(values_[i]), sizes_[i], k, lower[k], upper[k]);
      } else {
        continue;
      }
      *error = head + ValuesString(values_[i], sizes_[i]);
      return false;
    }
  }
  for (int i = 0; i < n; ++i) s->parameter_blocks[i].bounds_offset = offsets_[i];
  s->lower_bounds = std::move(lower_);
  s->upper_bounds = std::move(upper_);
  return true;
}

}  // namespace internal
}  // namespace ceres_sqrtba
