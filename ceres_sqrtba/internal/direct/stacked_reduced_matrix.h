// The damped reduced camera system of SQRT_SPARSE_SCHUR as one sparse
// least-squares problem (paper section 5.4, first paragraph, eq. (reduced)
// with the damping of section 5.3):
//
//   min |A x - b|,   A = [ Q^_2^T Jp of block 0 ]     b = [ Q^_2^T r of block 0 ]
//                        [ Q^_2^T Jp of block 1 ]         [ Q^_2^T r of block 1 ]
//                        [         ...          ]         [         ...         ]
//                        [   sqrt(lambda) D_p   ]         [          0          ]
//
// Each landmark block contributes its damped marginalized rows
// [first_reduced_row, rows()), dense over the block's camera columns, which are
// scattered to their columns of the reduced camera vector; the pose damping
// adds one row per camera parameter. A^T A and A^T b are the damped Schur
// complement and its right-hand side (eqs. (red_H), (red_b)), but the normal
// equations are never formed: A goes to a sparse QR as it is.
//
// The sparsity pattern depends on the problem structure only, so it is built
// once, in compressed sparse column form (what SuiteSparseQR reads); Fill()
// then only writes the values, in parallel and without allocating, after every
// change of the blocks or of the damping. Values are double whatever the
// precision of the landmark blocks: the sparse QR runs in double.
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_STACKED_REDUCED_MATRIX_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_STACKED_REDUCED_MATRIX_H_

#include <cstdint>
#include <vector>

#include "ceres_sqrtba/internal/explicit/explicit_landmark_blocks.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

// A compressed-sparse-column matrix held elsewhere: column j has the entries
// col_begin[j] .. col_begin[j + 1] - 1, row indices sorted.
struct CscMatrixView {
  int64_t num_rows = 0;
  int64_t num_cols = 0;
  const int64_t* col_begin = nullptr;  // num_cols + 1
  const int64_t* row = nullptr;        // nonzeros
  const double* values = nullptr;      // nonzeros
};

class StackedReducedMatrix {
 public:
  StackedReducedMatrix(const ProblemStructure& s, const ExplicitBlockLayout& layout);

  // Nonzeros and bytes of A and b for a problem, before anything is allocated.
  static int64_t NumNonzeros(const ProblemStructure& s, const ExplicitBlockLayout& layout);
  static int64_t RequiredBytes(const ProblemStructure& s, const ExplicitBlockLayout& layout);

  // Writes the values of A and b from the blocks (marginalized and damped)
  // and the pose damping sqrt(lambda) D_p (num_camera_parameters values).
  // Returns false when an entry is not finite.
  template <typename Scalar>
  bool Fill(ExplicitLandmarkBlocks<Scalar>* blocks, const double* pose_damping,
            const WorkPartition& partition, ParallelContext* context);

  CscMatrixView matrix() const;
  const double* rhs() const { return rhs_.data(); }
  int64_t num_rows() const { return num_rows_; }
  int64_t num_cols() const { return s_.num_camera_parameters; }
  int64_t num_nonzeros() const { return static_cast<int64_t>(values_.size()); }

 private:
  const ProblemStructure& s_;
  int64_t num_reduced_rows_ = 0;  // rows from the landmark blocks
  int64_t num_rows_ = 0;          // plus one pose damping row per column
  std::vector<int64_t> group_row_begin_;  // per group: its first row of A
  // Per entry of ProblemStructure::group_cameras: where the group's rows start
  // within each column of that camera (all its columns share the pattern).
  std::vector<int64_t> entry_offset_;
  std::vector<int64_t> col_begin_;
  std::vector<int64_t> row_;
  std::vector<double> values_;
  std::vector<double> rhs_;
};

extern template bool StackedReducedMatrix::Fill(ExplicitLandmarkBlocks<float>*, const double*,
                                                const WorkPartition&, ParallelContext*);
extern template bool StackedReducedMatrix::Fill(ExplicitLandmarkBlocks<double>*, const double*,
                                                const WorkPartition&, ParallelContext*);

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_STACKED_REDUCED_MATRIX_H_
