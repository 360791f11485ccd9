// The landmark blocks of SQRT_ITERATIVE_SCHUR in projected form: the reduced
// camera system's rows B = Q^_2^T [Jp; 0] of each landmark (paper eq.
// (q_linearized_residual)) applied through the projector onto the nullspace
// of the landmark columns instead of being stored.
//
// Why. Q^ = [Q^_1 Q^_2] is the orthogonal factor of the damped landmark
// columns [Jl; sqrt(lambda) D_l] (paper eq. (damped_qr)), so
//
//   Q^_2 Q^_2^T = I - Q^_1 Q^_1^T,
//   B^T B x = Jp^T (u - Q1 (Q1^T u)),   u = Jp x,                    (1)
//   B^T r^  = Jp^T (r - Q1 (Q1^T r)),
//
// where Q1 is the first m rows (the observation rows) of the thin factor
// Q^_1, because [Jp; 0] and [r; 0] are zero on the d damping rows. Jp is
// block-sparse: every observation row has entries only in the columns of its
// own residual block's cameras. So a landmark seen k times costs per product
// 2k rows of (camera columns + d) scalars, 24 per 2-d observation of a 9-d
// camera and a 3-d landmark, where the explicit landmark block (landmark_block.h)
// streams its (2k) x (9k) dense rows B, 18k per observation. The reduced system
// is still never formed (neither the Schur complement nor (Jl^T Jl)^-1):
// landmarks are eliminated by an orthogonal factorization, and Q1 is
// orthonormal to working precision whatever the conditioning of Jl, because
// it comes from Householder reflections (in double), not from R^-1.
//
// Storage, one contiguous allocation per kind:
//   hot  (streamed by every product): per observation row
//        [ compact camera Jacobian (camera_width) | Q1 row (d) ]
//        where the compact camera columns are the residual block's own
//        cameras, back to back (zero padding when a residual block of the
//        group touches fewer camera parameters than the widest one);
//   cold (read once per solve): per observation row [ Jl row (d) | r ];
//   R^ (d x d, double) per landmark, for back substitution.
//
// Damp(d) recomputes Q1 and R^ for a new diagonal from the stored Jl by a
// thin Householder QR of [Jl; sqrt(lambda) D_l] (O(m d^2) per landmark), so a
// rejected step costs neither a new evaluation nor anything proportional to
// the dense block.
//
// The files: the layout (offsets, uniform groups) in projected_block_layout.h;
// storage, Jacobian writer, scaling and column norms here; the per-group
// kernels of the product, the row passes and the preconditioner in
// projected_product_kernels.h, projected_row_kernels.h and
// projected_gram_kernels.h (SSE2 versions: projected_kernels_sse2.h);
// Damp in projected_damping.cc, BackSubstitute in
// projected_back_substitution.cc.
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_LANDMARK_BLOCKS_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_LANDMARK_BLOCKS_H_

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/evaluation/jacobian_writer.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"
#include "ceres_sqrtba/internal/projected/batched_thin_qr.h"
#include "ceres_sqrtba/internal/projected/landmark_batches.h"
#include "ceres_sqrtba/internal/projected/projected_block_layout.h"
#include "ceres_sqrtba/internal/projected/projected_gram_kernels.h"

namespace ceres_sqrtba {
namespace internal {

// How Damp factors the landmarks' damped columns.
enum class LandmarkQr {
  // In batches, one landmark per SIMD lane, in the blocks' Scalar: what the
  // iterative solver uses (Q1 is stored in Scalar anyway).
  kBatchedInScalar,
  // In batches of double lanes: the direct solver, whose reduced camera
  // matrix S = Jc^T Jc - W^T W (W = Q1^T Jc) loses digits to cancellation
  // and wants Q1 to double's accuracy whatever the storage.
  kBatchedInDouble,
  // One landmark at a time, in double (thin_qr.h): for the tests and the
  // micro-benchmark that compare the batches with it.
  kOneAtATime,
};

template <typename Scalar>
class ProjectedLandmarkBlocks : public JacobianWriter {
 public:
  ProjectedLandmarkBlocks(const ProblemStructure& s, const ProjectedBlockLayout& layout,
                          const WorkPartition& partition, ParallelContext* context,
                          LandmarkQr qr = LandmarkQr::kBatchedInScalar);

  // JacobianWriter: residual block `residual` into its group's rows.
  void Write(int group, int position, int row, int residual, const double* residuals,
             const double* const* jacobians) override;
  bool KeepsFloatJacobians() const override { return std::is_same<Scalar, float>::value; }
  // Starts a new Jacobian (the writer is about to be filled).
  void BeginJacobian() { out_of_range_.store(false, std::memory_order_relaxed); }
  // As ExplicitLandmarkBlocks: a value a float cannot carry safely was written.
  bool out_of_range() const { return out_of_range_.load(std::memory_order_relaxed); }

  // Squared column norms of the whole Jacobian (tangent layout), in one pass
  // over the blocks: the landmark columns per group, the camera columns
  // summed per chunk and then in chunk order. Levenberg-Marquardt asks for
  // the column norms of every new Jacobian (its damping diagonal); the
  // camera Gram matrices would cost five times more and only their
  // diagonals would be used.
  void SquaredColumnNorms(double* norms);
  // Column scale of every Jacobian written from now on (tangent layout), and
  // scales the current one.
  void ScaleColumns(const double* scale);

  // For the diagonal d (tangent layout of the whole problem): recomputes Q1
  // and R^ of every landmark from [Jl; d_l], and writes the reduced
  // right-hand side sum_b B_b^T r^_b (accumulated in double) to rhs
  // (reduced camera vector). Landmarks of equal size run side by side, one
  // per SIMD lane, in Scalar (landmark_batches.h, batched_thin_qr.h); the
  // others one at a time, in double (thin_qr.h). In double both give the
  // same Q1 and R^, bit for bit.
  // visitor (optional): called for every group right after its Q1 is
  // written, from the chunk loop of the work partition (BeginChunk(chunk),
  // then Visit(chunk, g, q1) for the chunk's groups in the batches' order,
  // which depends on the structure only), so that work on the new Q1 (the
  // preconditioner, the direct solver's Q1^T Jp) runs while the rows are in
  // cache. q1: the group's Q1 as the thin QR computed it, in double (rows x
  // d, row-major; the hot rows hold it in Scalar), or nullptr for a group
  // without a landmark and for a visitor whose UsesQ1() is false; valid
  // during the call only. A visitor that reads the hot rows only (the
  // SCHUR_JACOBI blocks) says so, and the batched QR then skips widening
  // its lanes' Q1 into that copy (rows x d scalar conversions per landmark).
  class Visitor {
   public:
    virtual ~Visitor() = default;
    virtual bool UsesQ1() const { return true; }
    virtual void BeginChunk(int chunk) = 0;
    virtual void Visit(int chunk, int group, const double* q1) = 0;
  };
  void Damp(const double* d, double* rhs, Visitor* visitor = nullptr);

  // acc (reduced camera vector) += sum over groups [group_begin, group_end)
  // of B_b^T B_b x, without the pose damping. scratch: max_rows +
  // max_landmark_size scalars.
  void MultiplyNormal(int group_begin, int group_end, const Scalar* x, Scalar* acc,
                      Scalar* scratch) const;

  // Adds the lower triangle of Jc^T Jc of camera entry e of group g (Jc: the
  // camera's columns of the raw Jacobian) to acc (n x n, row-major).
  void AddCameraGramLower(int g, int e, int n, double* acc) const;
  // Adds the lower triangle of camera entry e's diagonal block of B^T B,
  //   Bc^T Bc = Jc^T (I - Q1 Q1^T) Jc = Jc^T Jc - W^T W,  W = Q1^T Jc,
  // to acc (n x n, row-major, in Scalar: a positive semidefinite term): the
  // landmark's share of the preconditioner's Schur-complement block
  // (block_jacobi_preconditioner.h). When the group is uniform with listed
  // sizes (projected_gram_kernels.h) and the camera has one residual block in it,
  // as in BAL, the R x R projector M = I - q q^T of its rows is formed first
  // and Jc^T M Jc is added in SIMD packets, which also writes some entries
  // above the diagonal (never read). Inline: it runs once per (landmark,
  // camera) pair, inside the preconditioner's loop over a group's cameras.
  void AddReducedGramLower(int g, int e, int n, Scalar* acc) const {
    AddReducedGramLowerGroup(layout_, g, e, n, hot(g), acc);
  }

  // Back substitution y_l = R^-1 Q1^T (r - Jp y_p) (paper eq. (backsub_nm)),
  // y in the tangent layout with y_p set; writes y_l and returns
  // |J y|^2 summed directly over the observation rows, in double. In float,
  // for uniform groups of listed sizes, Jp y_p, Q1^T (r - Jp y_p) and the
  // rows of J y are computed in float from a float copy of y_p (the rows are
  // float already: float adds an error of the order of their own rounding);
  // R^'s triangular solve and the sum of squares stay in double.
  double BackSubstitute(double* y);

  const ProjectedBlockLayout& layout() const { return layout_; }
  const LandmarkBatches& batches() const { return batches_; }
  // Bytes the batches and their per-chunk lane scratch take beyond the
  // layout's RequiredBytes (for the memory plan).
  static int64_t BatchBytes(const ProjectedBlockLayout& layout, const WorkPartition& partition);
  // Group g's hot rows (layout().rows[g] rows of layout().hot_stride(g)
  // scalars: compact camera Jacobian, then Q1), for the kernels that read
  // them outside this class (the direct solver's reduced camera matrix).
  const Scalar* hot_rows(int g) const { return hot(g); }

 private:
  const Scalar* hot(int g) const { return hot_.get() + layout_.hot_offset[g]; }
  Scalar* hot(int g) { return hot_.get() + layout_.hot_offset[g]; }
  const Scalar* cold(int g) const { return cold_.get() + layout_.cold_offset[g]; }
  Scalar* cold(int g) { return cold_.get() + layout_.cold_offset[g]; }
  void CheckRange(int g);
  // One chunk's scratch doubles, sized for the largest group: the thin QR's
  // work space, Q1 in double (max_rows x max_landmark_size, row-major), and
  // max_rows + 2 max_landmark_size more for Damp (the damping values, Q1^T r)
  // and BackSubstitute (Jp y_p, Q1^T (r - Jp y_p), y_l).
  struct Scratch {
    double* qr;
    double* q1;
    double* tail;
  };
  Scratch scratch(int chunk);
  template <typename C>
  using LaneBuffer = std::vector<LaneVector<C>, Eigen::aligned_allocator<LaneVector<C>>>;
  // Damp's work on one group (thin_qr.h, in double) and on one batch of
  // groups (batched_thin_qr.h, in C: Scalar or double); acc: the chunk's rhs
  // sums.
  void DampGroup(int chunk, int g, const double* dvec, double* acc, Visitor* visitor);
  template <typename C>
  void DampBatch(int chunk, const LandmarkBatches::Batch& batch, const double* dvec, double* acc, Visitor* visitor, LaneVector<C>* scratch);
  // BackSubstitute's work on group g, uniform with listed sizes S, in float:
  // Jp y_p (yp: y_p in float) and t = Q1^T (r - Jp y_p) in float at
  // compile-time sizes, R^ y_l = t in double, |J y|^2 rows in float added
  // to *sum in double. u, yl: the chunk's scratch.
  template <typename S>
  void BackSubstituteFixedInScalar(int g, const Scalar* yp, double* y, double* u, double* yl, double* sum) const;
  // acc += Jp^T w over group g's observation rows, w(i): row i's weight.
  // Float weights on float rows of a listed shape (the batched QR in float)
  // are summed per observation in float and added in double
  // (AddObservationTransposeTimesInDouble); every other case in double.
  template <typename W>
  void AddRowsTransposeTimesWeights(int g, const W& w, double* acc) const;

  const ProblemStructure& s_;
  const ProjectedBlockLayout& layout_;
  const WorkPartition& partition_;
  ParallelContext* context_;
  std::unique_ptr<Scalar[], FreeDeleter> hot_;
  std::unique_ptr<Scalar[], FreeDeleter> cold_;
  // R^ per landmark (d x d, row-major, zeros below the diagonal), written
  // whole by every Damp before BackSubstitute reads it: left uninitialized,
  // so its pages are taken by the first solve's threads, not before
  // iteration 0.
  std::unique_ptr<double[], FreeDeleter> r_;
  std::vector<double> scale_;    // empty: not scaled
  PerChunk<double> chunk_rhs_;   // per chunk: num_camera_parameters
  PerChunk<double> qr_scratch_;  // per chunk: see scratch()
  std::vector<double> chunk_sums_;
  // BackSubstitute's copy of y_p in Scalar (float only; empty in double).
  std::vector<Scalar> camera_step_;
  const bool qr_in_double_;
  LandmarkBatches batches_;
  // Per chunk, DampBatch's lane vectors, of Scalar or of double (one of the
  // two is empty).
  std::vector<LaneBuffer<Scalar>> lane_scratch_;
  std::vector<LaneBuffer<double>> lane_scratch_double_;
  std::atomic<bool> out_of_range_{false};
};

extern template class ProjectedLandmarkBlocks<float>;
extern template class ProjectedLandmarkBlocks<double>;

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_LANDMARK_BLOCKS_H_
