// Sums of small dense per-camera matrices over the landmark blocks (the camera
// Gram matrices Jc^T Jc, the preconditioner's elimination corrections).
//
// Block-major: the landmark blocks are walked in memory order, and each slot
// of a fixed set of slots adds into its own copy of all camera matrices; the
// copies are then added in slot order. Every chunk of the work partition has
// its own slot when the copies fit in 32 MiB (then a caller can also fill the
// slots chunk by chunk, in its own pass: chunked()); otherwise consecutive
// chunks share a slot, with as many slots as fit (at least two, for two
// threads). The slots depend on the problem only, so the sums do not depend on
// the number of threads.
//
// Acc, the slots' scalar: double for sums that are later subtracted from
// other sums (the explicit storage's top-row Gram matrices, the direct
// solver's S = Jc^T Jc - W^T W) or that must be exact; float for sums of
// positive semidefinite terms that only steer PCG (the projected storage's
// SCHUR_JACOBI blocks in single precision), which halves the slots and lets
// the kernels add four floats per SSE instruction. Reduce adds the slots in
// double either way.
//
// (A camera-major walk, each camera visiting the blocks that see it, needs no
// copies but reads every block at random: on a 1M-observation problem with
// 1000 cameras it made the two Gram passes 40 % of the run.)
#ifndef CERES_SQRTBA_INTERNAL_CAMERAS_CAMERA_BLOCK_SUM_H_
#define CERES_SQRTBA_INTERNAL_CAMERAS_CAMERA_BLOCK_SUM_H_

#include <algorithm>
#include <vector>

#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

template <typename Acc>
class CameraBlockSum {
 public:
  CameraBlockSum(const ProblemStructure& s, const WorkPartition& partition)
      : s_(s), partition_(partition), offset_(s.cameras.size() + 1, 0) {
    for (size_t c = 0; c < s.cameras.size(); ++c) {
      const int n = s.parameter_blocks[s.cameras[c]].tangent_size;
      offset_[c + 1] = offset_[c] + n * n;
    }
    const int64_t size = std::max<int64_t>(1, offset_.back());
    num_slots_ = NumSlots(size, partition.num_chunks());
    slot_sums_ = PerChunk<Acc>(num_slots_, size);
  }

  // Bytes of the per-slot copies for a problem, before they are allocated.
  static int64_t RequiredBytes(const ProblemStructure& s, const WorkPartition& partition) {
    int64_t size = 0;
    for (int c : s.cameras) size += static_cast<int64_t>(s.parameter_blocks[c].tangent_size) * s.parameter_blocks[c].tangent_size;
    size = std::max<int64_t>(1, size);
    return NumSlots(size, partition.num_chunks()) * size * static_cast<int64_t>(sizeof(Acc));
  }

  // Size of the output: the n_c x n_c matrices of all cameras, back to back.
  int size() const { return offset_.back(); }
  int offset(int camera) const { return offset_[camera]; }

  // out = sum over (landmark block g, camera entry e of g) of fn(g, e, column
  // of the camera in g, n, accumulator of that camera); fn adds into the
  // accumulator (row-major n x n).
  template <typename Fn>
  void Run(ParallelContext* context, double* out, const Fn& fn) {
    const int chunks = partition_.num_chunks();
    context->For(num_slots_, 1, [&](int sb, int se) {
      for (int slot = sb; slot < se; ++slot) {
        Acc* sums = ClearSlot(slot);
        // Slot `slot` takes chunks [slot * chunks / slots, (slot + 1) * chunks / slots).
        const int cb = static_cast<int>(static_cast<int64_t>(slot) * chunks / num_slots_);
        const int ce = static_cast<int>(static_cast<int64_t>(slot + 1) * chunks / num_slots_);
        for (int c = cb; c < ce; ++c) {
          for (int g = partition_.begin(c); g < partition_.end(c); ++g) AddGroup(g, sums, fn);
        }
      }
    });
    Reduce(context, out);
  }

  // The block-major schedule in pieces, for callers that visit the blocks in
  // their own chunk loop (e.g. while a block is still in cache after another
  // kernel): BeginChunk(chunk) once per chunk, AddGroup for each of its groups
  // in order, then Reduce. Only when chunked(): one slot per chunk.
  bool chunked() const { return num_slots_ == partition_.num_chunks(); }
  Acc* BeginChunk(int chunk) { return ClearSlot(chunk); }
  Acc* ChunkSums(int chunk) { return slot_sums_[chunk]; }
  template <typename Fn>
  void AddGroup(int g, Acc* sums, const Fn& fn) const {
    const Group& group = s_.groups[g];
    int column = 0;
    for (int e = group.camera_begin; e < group.camera_end; ++e) {
      const ParameterBlockInfo& pb = s_.parameter_blocks[s_.group_cameras[e]];
      fn(g, e, column, pb.tangent_size, sums + offset_[pb.camera_index]);
      column += pb.tangent_size;
    }
  }
  void Reduce(ParallelContext* context, double* out) const {
    slot_sums_.SumInto(context, size(), out);
  }

 private:
  // A slot per chunk while the copies (`size` scalars each) fit in 32 MiB,
  // at least two, at most one per chunk.
  static int NumSlots(int64_t size, int chunks) {
    const int64_t budget = (int64_t{1} << 25) / static_cast<int64_t>(sizeof(Acc));  // 32 MiB of copies
    const int slots = static_cast<int>(std::min<int64_t>(chunks, std::max<int64_t>(2, budget / size)));
    return std::max(1, std::min(slots, chunks));
  }

  Acc* ClearSlot(int slot) {
    Acc* sums = slot_sums_[slot];
    std::fill(sums, sums + size(), Acc(0));
    return sums;
  }

  const ProblemStructure& s_;
  const WorkPartition& partition_;
  std::vector<int> offset_;
  int num_slots_ = 1;
  PerChunk<Acc> slot_sums_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERAS_CAMERA_BLOCK_SUM_H_
