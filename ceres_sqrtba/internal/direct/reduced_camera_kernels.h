// The per-landmark kernels of the reduced camera matrix (reduced_camera_matrix.h):
//
//   W = Q1^T Jp                      once per landmark and radius,
//   S(c', c) += Jp_c'^T Jp_c - W_c'^T W_c   once per pair of its cameras
//                                           (c' = c: the diagonal block),
//
// in double, from Q1 in double and the camera Jacobian as stored (Scalar).
//
// Why a header of their own: as the projected product (projected_product_kernels.h),
// each kernel has a fixed-size version for uniform groups at the sizes of
// fixed_size_dispatch.h (BAL: 2 x 9 camera rows, d = 3, 9 x 9 blocks: the
// 3 x 9 by 3 x 9 product stays in registers) and a dynamic one for every
// other group; the callers choose through DispatchBlockSizes only.
//
// W of group g: per camera entry e of the group, a d x f_e row-major block
// at d * column(e) (column(e): the camera's first column among the group's
// camera columns). An off-diagonal block k of S's block column c: column a
// of camera c starts at values + col_begin[a] + position (col_begin of the
// camera's first scalar column on; reduced_camera_pattern.h). Diagonal
// blocks are summed per camera apart (camera_block_sum.h).
#ifndef CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_KERNELS_H_
#define CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_KERNELS_H_

#include <cstdint>

#include <Eigen/Core>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "ceres_sqrtba/internal/projected/projected_gram_kernels.h"
#include "glog/logging.h"

namespace ceres_sqrtba {
namespace internal {

// ---------------------------------------------------------------------------
// W = Q1^T Jp of group g (w zeroed by the caller).

// One item's share: we (d x f_item, row-major) += Q1's rows times the
// item's camera rows (h: the group's hot rows, hs their stride).
template <typename Scalar>
void MarginalizedRowsItemDynamic(const ProjectedBlockLayout::Item& item, int d, const double* q1,
                                 const Scalar* h, int hs, double* we) {
  const int f = item.size;
  for (int r = item.row; r < item.row + item.rows; ++r) {
    const double* q = q1 + static_cast<int64_t>(r) * d;
    const Scalar* j = h + static_cast<int64_t>(r) * hs + item.column;
    for (int k = 0; k < d; ++k) {
      for (int i = 0; i < f; ++i) we[k * f + i] += q[k] * static_cast<double>(j[i]);
    }
  }
}

// One item's share of W (d = E, camera size F) in a group that is not
// uniform (COLMAP's pose and intrinsics items): we (E x F, row-major) +=
// Q1's rows times the item's camera rows.
template <int E, int F, typename Scalar>
inline void MarginalizedRowsItemFixed(const ProjectedBlockLayout::Item& item, const double* q1, const Scalar* h,
                                      int hs, double* we) {
  using WMatrix = Eigen::Matrix<double, E, F, F == 1 ? Eigen::ColMajor : Eigen::RowMajor>;
  using Row = Eigen::Matrix<Scalar, 1, F>;
  Eigen::Map<WMatrix> w(we);
  for (int r = item.row; r < item.row + item.rows; ++r) {
    w.noalias() += Eigen::Map<const Eigen::Matrix<double, E, 1>>(q1 + static_cast<int64_t>(r) * E) *
                   Eigen::Map<const Row>(h + static_cast<int64_t>(r) * hs + item.column).template cast<double>();
  }
}

// Any group; with d = 3 each item at a fixed size of
// FixedPairCameraSizesList (COLMAP's two-item groups), else dynamic.
template <typename Scalar>
void MarginalizedRowsDynamic(const ProjectedBlockLayout& layout, int g, const double* q1,
                             const Scalar* h, const int* entry_column, double* w) {
  const int d = layout.landmark_size[g];
  const int hs = layout.hot_stride(g);
  for (int sg = layout.segment_begin[g]; sg < layout.segment_end[g]; ++sg) {
    const ProjectedBlockLayout::Segment& seg = layout.segments[sg];
    for (int it = seg.item_begin; it < seg.item_end; ++it) {
      const ProjectedBlockLayout::Item& item = layout.items[it];
      double* we = w + static_cast<int64_t>(d) * entry_column[item.entry];
      DispatchPairCameraSize(d == 3 ? item.size : kDynamic, [&](auto fixed) {
        using S = decltype(fixed);
        if constexpr (S::kFixed) {
          MarginalizedRowsItemFixed<3, S::kF>(item, q1, h, hs, we);
        } else {
          MarginalizedRowsItemDynamic(item, d, q1, h, hs, we);
        }
      });
    }
  }
}

// A uniform group of sizes (R, E, F) with k observations (items: one per
// observation, in row order; hot rows [J (F) | Q1 (E)]).
template <int R, int E, int F, typename Scalar>
inline void MarginalizedRowsFixed(const double* q1, const Scalar* h, int k,
                                  const ProjectedBlockLayout::Item* items, const int* entry_column,
                                  double* w) {
  using WMatrix = Eigen::Matrix<double, E, F, Eigen::RowMajor>;
  using Row = Eigen::Matrix<Scalar, 1, F>;
  constexpr int kStride = F + E;
  for (int s = 0; s < k; ++s) {
    DCHECK_EQ(items[s].size, F);
    DCHECK_EQ(items[s].row, R * s);
    Eigen::Map<WMatrix> we(w + E * entry_column[items[s].entry]);
    for (int a = 0; a < R; ++a) {
      const int r = R * s + a;
      we.noalias() += Eigen::Map<const Eigen::Matrix<double, E, 1>>(q1 + r * E) *
                      Eigen::Map<const Row>(h + r * kStride).template cast<double>();
    }
  }
}

// ---------------------------------------------------------------------------
// The diagonal block of camera entry e of group g: the sum of J^T J over its
// residual blocks (the entry's items: two when the camera sees the landmark
// twice) minus W_e^T W_e, added to the lower triangle of acc (n x n,
// row-major: acc[a * n + i], i <= a, which is S's upper triangle read
// column-wise).

template <typename Scalar>
void AddDiagonalDynamic(const ProjectedBlockLayout& layout, int g, int e, int n, const Scalar* h,
                        const double* w, double* acc) {
  AddCameraGramLower(layout, g, e, n, h, acc);  // sum J^T J (projected_gram_kernels.h)
  const int d = layout.landmark_size[g];
  for (int k = 0; k < d; ++k) {
    const double* wk = w + k * n;
    for (int a = 0; a < n; ++a) {
      for (int i = 0; i <= a; ++i) acc[a * n + i] -= wk[a] * wk[i];
    }
  }
}

// A uniform group of sizes (R, E, F).
template <int R, int E, int F, typename Scalar>
inline void AddDiagonalFixed(const ProjectedBlockLayout& layout, int e, const Scalar* h, const double* w,
                             double* acc) {
  for (int ii = layout.entry_item_begin[e]; ii < layout.entry_item_begin[e + 1]; ++ii) {
    const ProjectedBlockLayout::Item& item = layout.items[layout.entry_items[ii]];
    DCHECK_EQ(item.rows, R);
    for (int r = item.row; r < item.row + R; ++r) {
      const Scalar* js = h + static_cast<int64_t>(r) * (F + E);
      double j[F];
      for (int i = 0; i < F; ++i) j[i] = js[i];
      for (int a = 0; a < F; ++a) {
        for (int i = 0; i <= a; ++i) acc[a * F + i] += j[a] * j[i];
      }
    }
  }
  for (int k = 0; k < E; ++k) {
    const double* wk = w + k * F;
    for (int a = 0; a < F; ++a) {
      for (int i = 0; i <= a; ++i) acc[a * F + i] -= wk[a] * wk[i];
    }
  }
}

// AddDiagonalDynamic at fixed sizes d = E, n = N, for a group that is not
// uniform: its residual blocks' rows counted at run time. The block's sum
// is formed apart and then added to acc.
template <int E, int N, typename Scalar>
inline void AddDiagonalItemsFixed(const ProjectedBlockLayout& layout, int hs, int e, const Scalar* h,
                                  const double* w, double* acc) {
  using Block = Eigen::Matrix<double, N, N>;
  using Vector = Eigen::Matrix<double, N, 1>;
  Block sum = Block::Zero();
  for (int ii = layout.entry_item_begin[e]; ii < layout.entry_item_begin[e + 1]; ++ii) {
    const ProjectedBlockLayout::Item& item = layout.items[layout.entry_items[ii]];
    DCHECK_EQ(item.size, N);
    for (int r = item.row; r < item.row + item.rows; ++r) {
      const Vector j = Eigen::Map<const Eigen::Matrix<Scalar, N, 1>>(h + static_cast<int64_t>(r) * hs + item.column)
                           .template cast<double>();
      sum.noalias() += j * j.transpose();
    }
  }
  const Eigen::Map<const Eigen::Matrix<double, E, N, N == 1 ? Eigen::ColMajor : Eigen::RowMajor>> we(w);
  sum.noalias() -= we.transpose() * we;
  // acc's row a (lower triangle) is sum's column a, above the diagonal.
  for (int a = 0; a < N; ++a) {
    for (int i = 0; i <= a; ++i) acc[a * N + i] += sum(i, a);
  }
}

// ---------------------------------------------------------------------------
// Two different cameras of a group: S's block (row camera, column camera)
// += Jp_row^T Jp_col - W_row^T W_col, all of it (an off-diagonal block).

// The residual blocks that have both cameras of a pair, found once (the
// schedule of reduced_camera_matrix.h): per such residual block its rows in
// the group and the two cameras' first columns in the hot rows (the
// ProjectedBlockLayout::Item fields the kernels read, copied so that they
// read no item at random).
struct SharedItems {
  int row;         // first row of the residual block in the group
  int rows;        // its rows
  int row_column;  // the row camera's first compact column
  int col_column;  // the column camera's
};

// Any group: cameras of sizes f_row, f_col; [shared, shared_end): the
// residual blocks that have both (none: only -W_row^T W_col).
template <typename Scalar>
void AddPairDynamic(const ProjectedBlockLayout& layout, int g, int f_row, int f_col, const Scalar* h,
                    const double* w_row, const double* w_col, const int64_t* col_begin, int position,
                    const SharedItems* shared, const SharedItems* shared_end, double* values) {
  const int d = layout.landmark_size[g];
  const int hs = layout.hot_stride(g);
  for (int a = 0; a < f_col; ++a) {
    double* col = values + col_begin[a] + position;
    for (int i = 0; i < f_row; ++i) {
      double v = 0.0;
      for (int k = 0; k < d; ++k) v += w_row[k * f_row + i] * w_col[k * f_col + a];
      col[i] -= v;
    }
  }
  // Jp_row^T Jp_col over the residual blocks that have both cameras.
  for (const SharedItems* m = shared; m != shared_end; ++m) {
    for (int r = m->row; r < m->row + m->rows; ++r) {
      const Scalar* jr = h + static_cast<int64_t>(r) * hs + m->row_column;
      const Scalar* jc = h + static_cast<int64_t>(r) * hs + m->col_column;
      for (int a = 0; a < f_col; ++a) {
        double* col = values + col_begin[a] + position;
        const double ja = jc[a];
        for (int i = 0; i < f_row; ++i) col[i] += static_cast<double>(jr[i]) * ja;
      }
    }
  }
}

// AddPairDynamic at fixed sizes: landmark size E, row camera FR, column
// camera FC (the sizes of FixedPairCameraSizesList in any pairing:
// COLMAP's pose 6 and intrinsics 1-4, BAL's 9);
// the number of rows per residual block stays a runtime value.
template <int E, int FR, int FC, typename Scalar>
inline void AddPairFixed(int hs, const Scalar* h, const double* w_row,
                         const double* w_col, const int64_t* col_begin, int position, const SharedItems* shared,
                         const SharedItems* shared_end, double* values) {
  // W_row^T (FR x E, column-major: each of its columns one vector) and each
  // column's sum over k formed in a vector before it is stored: the sums run
  // on SIMD packets (values may alias W as far as the compiler knows, which
  // keeps it from vectorizing the scalar loops).
  using Column = Eigen::Matrix<double, FR, 1>;
  const Eigen::Matrix<double, FR, E> wr =
      Eigen::Map<const Eigen::Matrix<double, E, FR, FR == 1 ? Eigen::ColMajor : Eigen::RowMajor>>(w_row)
          .transpose();
  for (int a = 0; a < FC; ++a) {
    Column v = wr.col(0) * w_col[a];
    for (int k = 1; k < E; ++k) v += wr.col(k) * w_col[k * FC + a];
    Eigen::Map<Column>(values + col_begin[a] + position) -= v;
  }
  for (const SharedItems* m = shared; m != shared_end; ++m) {
    for (int r = m->row; r < m->row + m->rows; ++r) {
      const Eigen::Matrix<double, FR, 1> jr =
          Eigen::Map<const Eigen::Matrix<Scalar, FR, 1>>(h + static_cast<int64_t>(r) * hs + m->row_column)
              .template cast<double>();
      const Scalar* jc = h + static_cast<int64_t>(r) * hs + m->col_column;
      for (int a = 0; a < FC; ++a) {
        Eigen::Map<Column>(values + col_begin[a] + position) += jr * static_cast<double>(jc[a]);
      }
    }
  }
}

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_DIRECT_REDUCED_CAMERA_KERNELS_H_
