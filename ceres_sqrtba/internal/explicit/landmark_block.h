// One landmark block (paper, section 5.1 and figure 2): every row of the
// Jacobian that depends on one landmark, stored densely, together with its
// residuals and room for the landmark damping.
//
// Row-major, `stride` scalars per row, columns
//
//   [ camera columns (nc) | landmark columns (d) | residual (1) ]
//
// and rows
//
//   [ observation rows (obs_rows = max(m, d), m = residuals of the landmark;
//     rows past m are zero padding for landmarks seen too few times)
//   | d damping rows (zero unless damped) ]
//
// Marginalize() applies d Householder reflections to the observation rows
// (Q never formed), which leaves (paper eq. (q_linearized_residual), fig. 2c)
//
//   rows 0..d-1          [ Q1^T Jp | R1 | Q1^T r ]
//   rows d..obs_rows-1   [ Q2^T Jp |  0 | Q2^T r ]
//
// ApplyDamping() writes sqrt(lambda) D_l on the damping rows and zeroes it
// against R1 with d(d+1)/2 Givens rotations (fig. 3a-b), which it records;
// UndoDamping() applies them transposed in reverse order and clears the damping
// rows (fig. 3c), restoring the marginalized block up to round-off, so that a
// rejected step is re-solved with a new radius without re-evaluating or
// re-factorizing. After damping, rows d..obs_rows+d-1 hold the damped
// marginalized rows [Q^_2^T Jp | 0 | Q^_2^T r] of the reduced camera system,
// and rows 0..d-1 the damped R^ used by back substitution (paper eq.
// (backsub_nm)). A landmark-free block (d = 0) is just rows of the reduced
// system.
//
// The sign convention is Ceres': the linear solver finds y minimizing
// |J y - r|^2 + |D y|^2 and the step is -y.
#ifndef CERES_SQRTBA_INTERNAL_EXPLICIT_LANDMARK_BLOCK_H_
#define CERES_SQRTBA_INTERNAL_EXPLICIT_LANDMARK_BLOCK_H_

#include <cstdint>

namespace ceres_sqrtba {
namespace internal {

template <typename Scalar>
class LandmarkBlock {
 public:
  LandmarkBlock(Scalar* data, int obs_rows, int landmark_size, int camera_columns,
                int stride)
      : data_(data), obs_rows_(obs_rows), d_(landmark_size), nc_(camera_columns),
        stride_(stride) {}

  // Scalars a block needs, and its row stride (columns padded for alignment).
  static int Stride(int camera_columns, int landmark_size);
  static int64_t Size(int obs_rows, int landmark_size, int camera_columns) {
    return static_cast<int64_t>(obs_rows + landmark_size) *
           Stride(camera_columns, landmark_size);
  }
  static int ObservationRows(int num_residuals, int landmark_size) {
    return num_residuals > landmark_size ? num_residuals : landmark_size;
  }
  // Number of Givens rotations (c, s pairs) of the landmark damping.
  static int NumRotations(int landmark_size) {
    return landmark_size * (landmark_size + 1) / 2;
  }

  int obs_rows() const { return obs_rows_; }
  int landmark_size() const { return d_; }
  int camera_columns() const { return nc_; }
  int cols() const { return nc_ + d_ + 1; }
  int rows() const { return obs_rows_ + d_; }
  int stride() const { return stride_; }
  int residual_column() const { return nc_ + d_; }
  // Reduced camera system rows: [first_reduced_row, rows()).
  int first_reduced_row() const { return d_; }
  int num_reduced_rows() const { return obs_rows_; }
  Scalar* row(int r) { return data_ + static_cast<int64_t>(r) * stride_; }
  const Scalar* row(int r) const { return data_ + static_cast<int64_t>(r) * stride_; }
  Scalar& operator()(int r, int c) { return row(r)[c]; }
  Scalar operator()(int r, int c) const { return row(r)[c]; }

  void SetZero();
  // Multiplies column c by scale[c] (c < nc + d; the residual is not scaled).
  void ScaleColumns(const Scalar* scale);
  // Adds the squared norms of the landmark columns over the observation rows
  // to norms[0..d).
  void AddLandmarkColumnNorms(double* norms) const;

  // In-place QR of the landmark columns over the observation rows.
  // scratch: at least obs_rows() + cols() scalars.
  void Marginalize(Scalar* scratch);

  // sqrt_lambda_dl: d diagonal damping values; rotations: 2 * NumRotations(d).
  void ApplyDamping(const Scalar* sqrt_lambda_dl, Scalar* rotations);
  void UndoDamping(const Scalar* rotations);

  // Reduced rows times a gathered camera vector x (nc): t = B x (num_reduced_rows).
  void MultiplyReduced(const Scalar* x, Scalar* t) const;
  // y (nc) += B^T t.
  void MultiplyReducedTransposeAdd(const Scalar* t, Scalar* y) const;
  // y (nc) += B^T r^, the right-hand side of the reduced system.
  void AddReducedRhs(Scalar* y) const;
  // y (nc) = B^T B x, fused so that the block is streamed once (y is
  // overwritten: no separate clearing pass).
  void MultiplyReducedNormal(const Scalar* x, Scalar* y) const;
  // Lower triangle (i >= k) of gram (n x n, row-major, double) +=
  // A[r, c0:c0+n]^T A[r, c0:c0+n] summed over rows [row_begin, row_end); the
  // strict upper triangle is left untouched (callers symmetrize once, after
  // summing over all blocks).
  void AddColumnGramLower(int c0, int n, int row_begin, int row_end, double* gram) const;

  // Back substitution (paper eq. (backsub_nm)): y_l = R^-1 (Q1^T r - Q1^T Jp y_p)
  // for a gathered camera solution y_p (nc). Returns |Q1^T r|^2 through
  // top_residual_squared_norm (used for the model cost).
  void BackSubstitute(const Scalar* y_p, Scalar* y_l,
                      double* top_residual_squared_norm) const;

 private:
  Scalar* data_;
  int obs_rows_;
  int d_;
  int nc_;
  int stride_;
};

extern template class LandmarkBlock<float>;
extern template class LandmarkBlock<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_EXPLICIT_LANDMARK_BLOCK_H_
