#include "ceres_sqrtba/internal/direct/reduced_camera_matrix.h"

#include <algorithm>
#include <cmath>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/direct/reduced_camera_kernels.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

// Pairs of different cameras of a group.
int64_t PairsOf(const Group& g) {
  const int64_t k = g.camera_end - g.camera_begin;
  return k * (k - 1) / 2;
}

// Doubles of W for every group: d x (its camera columns).
int64_t MarginalizedRowsSize(const ProblemStructure& s) {
  int64_t size = 0;
  for (const Group& g : s.groups) size += static_cast<int64_t>(g.landmark_size) * g.camera_columns;
  return size;
}

// At most one SharedItems per pair of variable cameras of a residual block
// (COLMAP's pose and intrinsics: one per observation).
int64_t SharedItemsBound(const ProblemStructure& s) {
  int64_t bound = 0;
  for (const ResidualBlockInfo& rb : s.residual_blocks) {
    int64_t cameras = 0;
    for (int i = rb.parameter_begin; i < rb.parameter_begin + rb.num_parameter_blocks; ++i) {
      cameras += s.parameter_blocks[s.residual_parameters[i]].camera_index >= 0 ? 1 : 0;
    }
    bound += cameras * (cameras - 1) / 2;
  }
  return bound;
}

constexpr int kPrefetchDistance = 2;

// Uninitialized (every group's W is written by its thin QR's visit before it
// is read), in 2 MiB pages when large: first touched in parallel. A failed
// allocation throws AllocationFailure (common/memory.h).
double* AllocateDoubles(int64_t n) {
  return static_cast<double*>(AllocateLarge(std::max<int64_t>(1, n) * static_cast<int64_t>(sizeof(double))));
}

}  // namespace

template <typename Scalar>
ReducedCameraMatrix<Scalar>::ReducedCameraMatrix(const ProblemStructure& s, const ProjectedBlockLayout& layout,
                                                 const ReducedCameraPattern& pattern,
                                                 const WorkPartition& partition)
    : s_(s),
      layout_(layout),
      pattern_(pattern),
      entry_column_(s.group_cameras.size()),
      w_offset_(s.groups.size() + 1, 0),
      w_(AllocateDoubles(MarginalizedRowsSize(s))),
      diagonal_sum_(s, partition),
      diagonal_(std::max(1, diagonal_sum_.size())),
      column_finite_(pattern.num_cameras(), 1) {
  for (size_t g = 0; g < s.groups.size(); ++g) {
    const Group& group = s.groups[g];
    int column = 0;
    for (int e = group.camera_begin; e < group.camera_end; ++e) {
      entry_column_[e] = column;
      column += s.parameter_blocks[s.group_cameras[e]].tangent_size;
    }
    DCHECK_EQ(column, group.camera_columns);
    w_offset_[g + 1] = w_offset_[g] + static_cast<int64_t>(group.landmark_size) * group.camera_columns;
  }
  BuildSchedule();
  pattern.ScalarPattern(&col_begin_, &rows_);
  values_.assign(static_cast<size_t>(std::max<int64_t>(1, pattern.num_nonzeros())), 0.0);
}

template <typename Scalar>
void ReducedCameraMatrix<Scalar>::BuildSchedule() {
  const int num_cameras = pattern_.num_cameras();
  visit_begin_.assign(num_cameras + 1, 0);
  int64_t pairs = 0;
  for (const Group& g : s_.groups) pairs += PairsOf(g);
  pairs_.reserve(static_cast<size_t>(pairs));
  shared_.reserve(static_cast<size_t>(SharedItemsBound(s_)));
  visits_.reserve(s_.group_cameras.size() + 1);
  for (int c = 0; c < num_cameras; ++c) {
    for (int slot = s_.camera_group_begin[c]; slot < s_.camera_group_begin[c + 1]; ++slot) {
      const int g = s_.camera_groups[slot];
      const Group& group = s_.groups[g];
      const int d = group.landmark_size;
      Visit visit;
      visit.w = w_offset_[g];
      visit.w_size = static_cast<int>(w_offset_[g + 1] - w_offset_[g]);
      visit.entry = s_.camera_group_entry[slot];
      visit.w_col = d * entry_column_[visit.entry];
      visit.group = g;
      visit.pair_begin = static_cast<int64_t>(pairs_.size());
      visit.d = d;
      for (int e = group.camera_begin; e < group.camera_end; ++e) {
        const ParameterBlockInfo& pb = s_.parameter_blocks[s_.group_cameras[e]];
        if (pb.camera_index >= c) continue;
        const int64_t k = pattern_.FindBlock(pb.camera_index, c);
        if (k < 0) continue;  // a block a preconditioner's pattern leaves out
        const int shared_begin = static_cast<int>(shared_.size());
        AddSharedItems(e, visit.entry);
        pairs_.push_back(Pair{d * entry_column_[e], pattern_.position(k), pb.tangent_size, shared_begin,
                              static_cast<int>(shared_.size())});
        for (int i = shared_begin; i < static_cast<int>(shared_.size()); ++i) {
          const bool first = visit.shared_row_end == visit.shared_row_begin;
          visit.shared_row_begin = first ? shared_[i].row : std::min(visit.shared_row_begin, shared_[i].row);
          visit.shared_row_end = std::max(visit.shared_row_end, shared_[i].row + shared_[i].rows);
        }
      }
      if (static_cast<int64_t>(pairs_.size()) > visit.pair_begin) visits_.push_back(visit);
    }
    visit_begin_[c + 1] = static_cast<int64_t>(visits_.size());
  }
  Visit sentinel;
  sentinel.pair_begin = static_cast<int64_t>(pairs_.size());
  visits_.push_back(sentinel);
}

template <typename Scalar>
void ReducedCameraMatrix<Scalar>::AddSharedItems(int e_row, int e_col) {
  for (int ir = layout_.entry_item_begin[e_row]; ir < layout_.entry_item_begin[e_row + 1]; ++ir) {
    const ProjectedBlockLayout::Item& row_item = layout_.items[layout_.entry_items[ir]];
    const int col_item = layout_.EntryItemAtRow(e_col, row_item.row);
    if (col_item < 0) continue;
    const ProjectedBlockLayout::Item& item = layout_.items[col_item];
    DCHECK_EQ(item.row, row_item.row);
    DCHECK_EQ(item.rows, row_item.rows);
    shared_.push_back(SharedItems{row_item.row, row_item.rows, row_item.column, item.column});
  }
}

template <typename Scalar>
int64_t ReducedCameraMatrix<Scalar>::RequiredBytes(const ProblemStructure& s, const ReducedCameraPattern& pattern,
                                                   const WorkPartition& partition) {
  int64_t diagonal = 0;
  for (int c = 0; c < pattern.num_cameras(); ++c) diagonal += static_cast<int64_t>(pattern.camera_size(c)) * pattern.camera_size(c);
  // The schedule: at most one visit per (camera, landmark block) and one
  // pair per two cameras of a block.
  int64_t pairs = 0;
  for (const Group& g : s.groups) pairs += PairsOf(g);
  const int64_t schedule_bytes = (static_cast<int64_t>(s.group_cameras.size()) + 1) * static_cast<int64_t>(sizeof(Visit)) +
                                 pairs * static_cast<int64_t>(sizeof(Pair)) +
                                 SharedItemsBound(s) * static_cast<int64_t>(sizeof(SharedItems)) +
                                 (pattern.num_cameras() + 1) * static_cast<int64_t>(sizeof(int64_t));
  const int64_t index_bytes = static_cast<int64_t>(s.group_cameras.size()) * static_cast<int64_t>(sizeof(int)) +
                              static_cast<int64_t>(s.groups.size() + 1) * static_cast<int64_t>(sizeof(int64_t)) +
                              pattern.num_cameras() + schedule_bytes;
  return (MarginalizedRowsSize(s) + diagonal) * static_cast<int64_t>(sizeof(double)) + pattern.ScalarBytes() +
         CameraBlockSum<double>::RequiredBytes(s, partition) + index_bytes;
}

template <typename Scalar>
void ReducedCameraMatrix<Scalar>::BeginChunk(int chunk) {
  if (diagonal_sum_.chunked()) diagonal_sum_.BeginChunk(chunk);
}

template <typename Scalar>
void ReducedCameraMatrix<Scalar>::VisitGroup(int chunk, int g, const double* q1, const Scalar* hot) {
  double* w = w_.get() + w_offset_[g];
  std::fill(w, w + (w_offset_[g + 1] - w_offset_[g]), 0.0);
  if (q1 != nullptr) {
    DispatchBlockSizes(layout_.uniform_sizes[g], [&](auto fixed) {
      using S = decltype(fixed);
      if constexpr (S::kFixed) {
        const int sb = layout_.segment_begin[g], se = layout_.segment_end[g];
        DCHECK_EQ(layout_.landmark_size[g], S::kE);
        DCHECK_EQ(layout_.camera_width[g], S::kF);
        MarginalizedRowsFixed<S::kRow, S::kE, S::kF>(q1, hot, se - sb,
                                                      layout_.items.data() + layout_.segments[sb].item_begin,
                                                      entry_column_.data(), w);
      } else {
        MarginalizedRowsDynamic(layout_, g, q1, hot, entry_column_.data(), w);
      }
    });
  }
  if (diagonal_sum_.chunked()) {
    diagonal_sum_.AddGroup(g, diagonal_sum_.ChunkSums(chunk),
                           [&](int, int e, int, int n, double* acc) { AddDiagonalBlock(g, e, n, hot, acc); });
  }
}

template <typename Scalar>
void ReducedCameraMatrix<Scalar>::AddDiagonalBlock(int g, int e, int n, const Scalar* hot, double* acc) const {
  const double* w = w_.get() + w_offset_[g] + static_cast<int64_t>(s_.groups[g].landmark_size) * entry_column_[e];
  DispatchBlockSizes(layout_.uniform_sizes[g], [&](auto fixed) {
    using S = decltype(fixed);
    if constexpr (S::kFixed) {
      DCHECK_EQ(n, S::kF);
      AddDiagonalFixed<S::kRow, S::kE, S::kF>(layout_, e, hot, w, acc);
    } else {
      DispatchPairCameraSize(layout_.landmark_size[g] == 3 ? n : kDynamic, [&](auto item) {
        using N = decltype(item);
        if constexpr (N::kFixed) {
          AddDiagonalItemsFixed<3, N::kF>(layout_, layout_.hot_stride(g), e, hot, w, acc);
        } else {
          AddDiagonalDynamic(layout_, g, e, n, hot, w, acc);
        }
      });
    }
  });
}

template <typename Scalar>
void ReducedCameraMatrix<Scalar>::AccumulateColumn(int c, const ProjectedLandmarkBlocks<Scalar>& blocks,
                                                   const double* pose_damping) {
  const int f = pattern_.camera_size(c);
  const int offset = pattern_.camera_offset(c);
  const int64_t* cb = col_begin_.data() + offset;
  double* values = values_.data();
  std::fill(values + cb[0], values + cb[f], 0.0);
  // The off-diagonal blocks (c', c), c' < c, from the schedule.
  for (int64_t v = visit_begin_[c]; v < visit_begin_[c + 1]; ++v) {
    if (v + kPrefetchDistance < visit_begin_[c + 1]) {
      // The W of a later visit: the landmark blocks are read at random.
      const Visit& next = visits_[v + kPrefetchDistance];
      for (int i = 0; i < next.w_size; i += 8) __builtin_prefetch(w_.get() + next.w + i);
      if (next.shared_row_end > next.shared_row_begin) {
        // And the camera rows its shared pairs read (COLMAP's pose and
        // intrinsics): the other random reads of the pass.
        const int next_hs = layout_.hot_stride(next.group);
        const char* rows = reinterpret_cast<const char*>(blocks.hot_rows(next.group) +
                                                         static_cast<int64_t>(next.shared_row_begin) * next_hs);
        const int64_t bytes = static_cast<int64_t>(next.shared_row_end - next.shared_row_begin) * next_hs *
                              static_cast<int64_t>(sizeof(Scalar));
        for (int64_t i = 0; i < bytes; i += 64) __builtin_prefetch(rows + i);
      }
    }
    const Visit& visit = visits_[v];
    const double* w = w_.get() + visit.w;
    const Pair* begin = pairs_.data() + visit.pair_begin;
    const Pair* end = pairs_.data() + visits_[v + 1].pair_begin;
    // The pair kernels depend on (d, f', f) alone, whatever the group's
    // rows: with d = 3 and both cameras of a listed size (COLMAP's poses and
    // intrinsics, shared or not; BAL's cameras) AddPairFixed, else
    // AddPairDynamic.
    const Scalar* hot = blocks.hot_rows(visit.group);
    const int hs = layout_.hot_stride(visit.group);
    const SharedItems* shared = shared_.data();
    auto dynamic = [&](const Pair* pair) {
      AddPairDynamic(layout_, visit.group, pair->size, f, hot, w + pair->w_row, w + visit.w_col, cb,
                     pair->position, shared + pair->shared_begin, shared + pair->shared_end, values);
    };
    DispatchPairCameraSize(visit.d == 3 ? f : kDynamic, [&](auto fc) {
      using C = decltype(fc);
      for (const Pair* pair = begin; pair != end; ++pair) {
        if constexpr (!C::kFixed) {
          dynamic(pair);
        } else {
          DispatchPairCameraSize(pair->size, [&](auto fr) {
            using R = decltype(fr);
            if constexpr (!R::kFixed) {
              dynamic(pair);
            } else {
              AddPairFixed<3, R::kF, C::kF>(hs, hot, w + pair->w_row, w + visit.w_col, cb,
                                            pair->position, shared + pair->shared_begin,
                                            shared + pair->shared_end, values);
            }
          });
        }
      }
    });
  }
  // The diagonal block's upper triangle (the sums' lower triangle read
  // row-wise) plus lambda D_p^2.
  const double* diagonal = diagonal_.data() + diagonal_sum_.offset(c);
  const int position = pattern_.position(pattern_.block_end(c) - 1);
  for (int a = 0; a < f; ++a) {
    double* col = values + cb[a] + position;
    for (int i = 0; i <= a; ++i) col[i] = diagonal[a * f + i];
    const double dp = pose_damping[offset + a];
    col[a] += dp * dp;
  }
  bool finite = true;
  for (int64_t i = cb[0]; i < cb[f]; ++i) finite &= std::isfinite(values[i]);
  column_finite_[c] = finite;
}

template <typename Scalar>
bool ReducedCameraMatrix<Scalar>::Accumulate(const ProjectedLandmarkBlocks<Scalar>& blocks,
                                             const double* pose_damping, ParallelContext* context) {
  if (diagonal_sum_.chunked()) {
    diagonal_sum_.Reduce(context, diagonal_.data());
  } else {
    diagonal_sum_.Run(context, diagonal_.data(), [&](int g, int e, int, int n, double* acc) {
      AddDiagonalBlock(g, e, n, blocks.hot_rows(g), acc);
    });
  }
  context->For(pattern_.num_cameras(), 1, [&](int begin, int end) {
    for (int c = begin; c < end; ++c) AccumulateColumn(c, blocks, pose_damping);
  });
  const ProcessGroup* processes = context->processes();
  if (processes == nullptr) {
    return std::all_of(column_finite_.begin(), column_finite_.end(), [](char ok) { return ok != 0; });
  }
  // Spread over processes: the diagonal blocks (and the damping) are already
  // the sums over all processes (CameraBlockSum::Reduce adds them), the
  // off-diagonal blocks this process's own. Every process but the first
  // zeroes its diagonal blocks, so that the sum over processes in rank order
  // gives the first's unchanged (x + 0 + ... = x) and the off-diagonal sums.
  double* values = values_.data();
  if (processes->rank() != 0) {
    for (int c = 0; c < pattern_.num_cameras(); ++c) {
      const int f = pattern_.camera_size(c);
      const int64_t* cb = col_begin_.data() + pattern_.camera_offset(c);
      const int position = pattern_.position(pattern_.block_end(c) - 1);
      for (int a = 0; a < f; ++a) std::fill(values + cb[a] + position, values + cb[a] + position + a + 1, 0.0);
    }
  }
  processes->Sum(values, pattern_.num_nonzeros());
  return std::all_of(values, values + pattern_.num_nonzeros(), [](double v) { return std::isfinite(v); });
}

template class ReducedCameraMatrix<float>;
template class ReducedCameraMatrix<double>;

}  // namespace internal
}  // namespace ceres_sqrtba
