// Sums of small dense per-camera matrices over the landmark blocks (the camera
// Gram matrices Jc^T Jc, the preconditioner's top-row corrections).
//
// Two schedules give the same sums in a fixed order:
// - block-major: every chunk of the work partition walks its landmark blocks
//   once and adds into its own copy of all camera matrices; the copies are
//   then added in chunk order. Streams the blocks in memory order and keeps
//   all threads busy even with few cameras (16 cameras, 20000 landmarks).
// - camera-major: every camera walks the blocks that see it and owns its
//   output. Used when the per-chunk copies would be large (many cameras).
#ifndef CERES_SQRTBA_INTERNAL_CAMERA_BLOCK_SUM_H_
#define CERES_SQRTBA_INTERNAL_CAMERA_BLOCK_SUM_H_

#include <algorithm>
#include <vector>

#include "ceres_sqrtba/internal/parallel.h"
#include "ceres_sqrtba/internal/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

class CameraBlockSum {
 public:
  CameraBlockSum(const ProblemStructure& s, const WorkPartition& partition)
      : s_(s), partition_(partition), offset_(s.cameras.size() + 1, 0) {
    for (size_t c = 0; c < s.cameras.size(); ++c) {
      const int n = s.parameter_blocks[s.cameras[c]].tangent_size;
      offset_[c + 1] = offset_[c] + n * n;
    }
    const int64_t copies = static_cast<int64_t>(partition.num_chunks()) * offset_.back();
    block_major_ = copies <= (int64_t{1} << 22);  // at most 32 MiB of copies
    if (block_major_) chunk_sums_ = PerChunk<double>(partition.num_chunks(), offset_.back());
  }

  // Size of the output: the n_c x n_c matrices of all cameras, back to back.
  int size() const { return offset_.back(); }
  int offset(int camera) const { return offset_[camera]; }

  // out = sum over (landmark block g, camera entry e of g) of fn(g, e, column
  // of the camera in g, n, accumulator of that camera); fn adds into the
  // accumulator (row-major n x n).
  template <typename Fn>
  void Run(ParallelContext* context, double* out, const Fn& fn) {
    const int num_cameras = static_cast<int>(s_.cameras.size());
    if (!block_major_) {
      context->For(num_cameras, 1, [&](int cb, int ce) {
        for (int c = cb; c < ce; ++c) {
          const int n = s_.parameter_blocks[s_.cameras[c]].tangent_size;
          double* acc = out + offset_[c];
          std::fill(acc, acc + n * n, 0.0);
          for (int k = s_.camera_group_begin[c]; k < s_.camera_group_begin[c + 1]; ++k) {
            fn(s_.camera_groups[k], s_.camera_group_entry[k], s_.camera_group_column[k], n, acc);
          }
        }
      });
      return;
    }
    context->ForChunks(partition_, [&](int chunk, int gb, int ge) {
      double* sums = BeginChunk(chunk);
      for (int g = gb; g < ge; ++g) AddGroup(g, sums, fn);
    });
    Reduce(context, out);
  }

  // The block-major schedule in pieces, for callers that visit the blocks in
  // their own chunk loop (e.g. while a block is still in cache after another
  // kernel): BeginChunk(chunk) once per chunk, AddGroup for each of its groups
  // in order, then Reduce. Only when chunked().
  bool chunked() const { return block_major_; }
  double* BeginChunk(int chunk) {
    double* sums = ChunkSums(chunk);
    std::fill(sums, sums + size(), 0.0);
    return sums;
  }
  double* ChunkSums(int chunk) { return chunk_sums_[chunk]; }
  template <typename Fn>
  void AddGroup(int g, double* sums, const Fn& fn) const {
    const Group& group = s_.groups[g];
    int column = 0;
    for (int e = group.camera_begin; e < group.camera_end; ++e) {
      const ParameterBlockInfo& pb = s_.parameter_blocks[s_.group_cameras[e]];
      fn(g, e, column, pb.tangent_size, sums + offset_[pb.camera_index]);
      column += pb.tangent_size;
    }
  }
  void Reduce(ParallelContext* context, double* out) const {
    chunk_sums_.SumInto(context, size(), out);
  }

 private:
  const ProblemStructure& s_;
  const WorkPartition& partition_;
  std::vector<int> offset_;
  bool block_major_ = false;
  PerChunk<double> chunk_sums_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_CAMERA_BLOCK_SUM_H_
