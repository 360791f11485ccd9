#include "ceres_sqrtba/internal/direct/stacked_reduced_matrix.h"

#include <atomic>

namespace ceres_sqrtba {
namespace internal {
namespace {

// Rows a group contributes to A: its reduced rows, unless no variable camera
// sees it (then they hold only a constant of the cost).
int64_t GroupRows(const ProblemStructure& s, const ExplicitBlockLayout& layout, int g) {
  return s.groups[g].camera_columns > 0 ? layout.obs_rows[g] : 0;
}

}  // namespace

int64_t StackedReducedMatrix::NumNonzeros(const ProblemStructure& s,
                                          const ExplicitBlockLayout& layout) {
  int64_t nnz = s.num_camera_parameters;  // the pose damping rows
  for (size_t g = 0; g < s.groups.size(); ++g) {
    nnz += GroupRows(s, layout, static_cast<int>(g)) * s.groups[g].camera_columns;
  }
  return nnz;
}

int64_t StackedReducedMatrix::RequiredBytes(const ProblemStructure& s,
                                            const ExplicitBlockLayout& layout) {
  int64_t rows = s.num_camera_parameters;
  for (size_t g = 0; g < s.groups.size(); ++g) rows += GroupRows(s, layout, static_cast<int>(g));
  const int64_t nnz = NumNonzeros(s, layout);
  const int64_t indices = static_cast<int64_t>(s.groups.size() + s.group_cameras.size()) +
                          s.num_camera_parameters + 1;
  return nnz * static_cast<int64_t>(sizeof(int64_t) + sizeof(double)) +  // A
         rows * static_cast<int64_t>(sizeof(double)) +                    // b
         indices * static_cast<int64_t>(sizeof(int64_t));                 // offsets
}

StackedReducedMatrix::StackedReducedMatrix(const ProblemStructure& s,
                                           const ExplicitBlockLayout& layout)
    : s_(s) {
  const int num_groups = static_cast<int>(s.groups.size());
  group_row_begin_.resize(num_groups);
  for (int g = 0; g < num_groups; ++g) {
    group_row_begin_[g] = num_reduced_rows_;
    num_reduced_rows_ += GroupRows(s, layout, g);
  }
  const int np = s.num_camera_parameters;
  num_rows_ = num_reduced_rows_ + np;

  // Column counts: every camera column holds the reduced rows of each group
  // that sees the camera (in group order, so row indices ascend), then its
  // damping row.
  entry_offset_.assign(s.group_cameras.size(), 0);
  col_begin_.assign(np + 1, 0);
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.cameras[c]];
    int64_t count = 0;
    for (int k = s.camera_group_begin[c]; k < s.camera_group_begin[c + 1]; ++k) {
      entry_offset_[s.camera_group_entry[k]] = count;
      count += GroupRows(s, layout, s.camera_groups[k]);
    }
    const int j0 = pb.tangent_offset - s.camera_tangent_begin;
    for (int t = 0; t < pb.tangent_size; ++t) col_begin_[j0 + t + 1] = count + 1;
  }
  for (int j = 0; j < np; ++j) col_begin_[j + 1] += col_begin_[j];

  row_.resize(col_begin_[np]);
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    const ParameterBlockInfo& pb = s.parameter_blocks[s.cameras[c]];
    const int j0 = pb.tangent_offset - s.camera_tangent_begin;
    for (int t = 0; t < pb.tangent_size; ++t) {
      int64_t* out = row_.data() + col_begin_[j0 + t];
      for (int k = s.camera_group_begin[c]; k < s.camera_group_begin[c + 1]; ++k) {
        const int g = s.camera_groups[k];
        for (int64_t r = 0; r < GroupRows(s, layout, g); ++r) *out++ = group_row_begin_[g] + r;
      }
      *out = num_reduced_rows_ + j0 + t;
    }
  }
  values_.assign(row_.size(), 0.0);
  rhs_.assign(num_rows_, 0.0);  // the damping rows' entries stay 0
}

CscMatrixView StackedReducedMatrix::matrix() const {
  CscMatrixView view;
  view.num_rows = num_rows_;
  view.num_cols = s_.num_camera_parameters;
  view.col_begin = col_begin_.data();
  view.row = row_.data();
  view.values = values_.data();
  return view;
}

template <typename Scalar>
bool StackedReducedMatrix::Fill(ExplicitLandmarkBlocks<Scalar>* blocks, const double* pose_damping,
                                const WorkPartition& partition, ParallelContext* context) {
  // Finiteness is checked on the fly without branches: v * 0 is 0 for every
  // finite v and NaN for an infinite or NaN one, so a block's sum of v * 0
  // is non-zero exactly when one of its values is not finite.
  std::atomic<bool> finite{true};
  context->ForChunks(partition, [&](int, int gb, int ge) {
    for (int g = gb; g < ge; ++g) {
      const Group& group = s_.groups[g];
      if (group.camera_columns == 0) continue;
      const LandmarkBlock<Scalar> b = blocks->block(g);
      const int r0 = b.first_reduced_row();
      const int nr = b.num_reduced_rows();
      const int rc = b.residual_column();
      double check = 0.0;
      double* rhs = rhs_.data() + group_row_begin_[g];
      for (int r = 0; r < nr; ++r) {
        rhs[r] = b(r0 + r, rc);
        check += rhs[r] * 0.0;
      }
      int col = 0;
      for (int e = group.camera_begin; e < group.camera_end; ++e) {
        const ParameterBlockInfo& pb = s_.parameter_blocks[s_.group_cameras[e]];
        const int j0 = pb.tangent_offset - s_.camera_tangent_begin;
        for (int t = 0; t < pb.tangent_size; ++t, ++col) {
          double* out = values_.data() + col_begin_[j0 + t] + entry_offset_[e];
          for (int r = 0; r < nr; ++r) {
            out[r] = b(r0 + r, col);
            check += out[r] * 0.0;
          }
        }
      }
      if (check != 0.0) finite.store(false, std::memory_order_relaxed);
    }
  });
  double check = 0.0;
  for (int j = 0; j < s_.num_camera_parameters; ++j) {
    values_[col_begin_[j + 1] - 1] = pose_damping[j];
    check += pose_damping[j] * 0.0;
  }
  return finite.load(std::memory_order_relaxed) && check == 0.0;
}

template bool StackedReducedMatrix::Fill(ExplicitLandmarkBlocks<float>*, const double*,
                                         const WorkPartition&, ParallelContext*);
template bool StackedReducedMatrix::Fill(ExplicitLandmarkBlocks<double>*, const double*,
                                         const WorkPartition&, ParallelContext*);

}  // namespace internal
}  // namespace ceres_sqrtba
