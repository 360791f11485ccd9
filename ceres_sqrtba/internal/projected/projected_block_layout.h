// Where everything of the projected landmark blocks (projected_landmark_blocks.h)
// lives, shared by both precisions: per group (one landmark and its residual
// blocks) the observation rows, the compact camera columns, the offsets of its
// hot rows, cold rows and R^, and which (residual block, camera) pairs it
// holds.
//
// Why a separate layout. It depends on the problem's structure only: it is
// built once per solve, before any block is allocated, and gives the memory
// estimate (RequiredBytes), the work partition's weights (work) and the
// offsets that the float and the double blocks both use.
//
// Uniform groups. A group is uniform with sizes (row, e, f) when every one of
// its residual blocks has `row` rows and exactly one variable camera, of
// tangent size f, and its landmark has tangent size e. Then its hot rows are
// one (row x (f + e)) slab per observation, back to back, and the kernels of
// projected_*_kernels.h can run at sizes fixed at compile time
// (fixed_size_dispatch.h); BAL's groups are all uniform with (2, 3, 9). A
// group whose residual blocks all have two variable cameras, the first of
// one size f and the second of any size up to f2, is uniform with
// (row, e, f, f2): its slabs are row x (f + f2 + e), a residual block whose
// second camera is smaller than f2 zero-padded (the writer pads every row to
// camera_width), and its items two per observation. That is COLMAP's pose
// and intrinsics, (2, 3, 6, 2) for SIMPLE_RADIAL, and (2, 3, 6, 6) for a
// landmark seen by an OPENCV camera and by SIMPLE_RADIAL ones. Only the
// product has fixed-size kernels for those (DispatchProductSizes); the
// other kernels take their dynamic versions.
//
// Storage order. The offsets place the groups in `order`: the group index
// order when the layout is built, and after PlaceInShapeOrder(partition)
// each chunk's groups sorted by their batch shape (landmark_batches.h), so
// that landmarks of one shape are neighbours in storage and a batch of them
// is read as one stream. A chunk's groups stay in that chunk's positions
// [begin, end) of `order`, and its storage stays one contiguous range, so a
// pass over a chunk (the evaluator's writes in group order, the kernels'
// reads in storage order) touches the same memory either way. The groups'
// segments and items (which camera each observation row has) are stored in
// the same order: a kernel's pass reads them as a stream as well, and they
// are as large as a third of the float rows (BAL: 40 bytes per observation
// against 96 + 32). Everything is still addressed by group index.
#ifndef CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_BLOCK_LAYOUT_H_
#define CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_BLOCK_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "ceres_sqrtba/internal/common/fixed_size_dispatch.h"
#include "ceres_sqrtba/internal/common/memory.h"
#include "ceres_sqrtba/internal/common/parallel.h"
#include "ceres_sqrtba/internal/problem/problem_structure.h"

namespace ceres_sqrtba {
namespace internal {

struct ProjectedBlockLayout {
  explicit ProjectedBlockLayout(const ProblemStructure& s);

  // Sorts each chunk's groups by batch shape (LandmarkBatches::ShapeKey;
  // stable: by group index within a shape) and places their storage in that
  // order (header comment). Depends on the structure and the partition only,
  // not on the number of threads. Linear in the number of groups.
  void PlaceInShapeOrder(const WorkPartition& partition);
  // run_length, position_observations and item_offset from order,
  // uniform_sizes, segments and items; the constructor and
  // PlaceInShapeOrder call it.
  void FindRuns();

  // The rows of one residual block inside its group.
  struct Segment {
    int row = 0;         // first observation row in the group
    int rows = 0;        // residual size
    int item_begin = 0;  // its camera blocks: items[item_begin, item_end)
    int item_end = 0;
  };
  // One (residual block, variable camera block) pair.
  struct Item {
    int offset = 0;  // of the camera in the reduced camera vector
    int size = 0;    // camera tangent size
    int column = 0;  // first compact column of the camera in the hot rows
    int entry = 0;   // index into ProblemStructure::group_cameras
    int row = 0;     // its residual block's rows in the group
    int rows = 0;
  };

  std::vector<int> rows;                // per group: observation rows m
  std::vector<int> camera_width;        // per group: compact camera columns
  std::vector<int> landmark_size;       // per group: d (0 without a landmark)
  // Storage order: order[p] is the group stored at position p (header
  // comment); a permutation of the groups within each chunk.
  std::vector<int> order;
  // Where each group's storage starts (per group, in storage order, not
  // group order: a group's extent is its rows times its stride); the last
  // entry holds the total.
  std::vector<int64_t> hot_offset;      // per group + 1, scalars
  std::vector<int64_t> cold_offset;     // per group + 1, scalars
  std::vector<int64_t> r_offset;        // per group + 1, doubles (d * d)
  // Group g's residual blocks: segments[segment_begin[g], segment_end[g]).
  // The segments and their items are stored in storage order too (header
  // comment), so that a pass in storage order reads them as a stream.
  std::vector<int> segment_begin;       // per group
  std::vector<int> segment_end;         // per group
  std::vector<Segment> segments;
  std::vector<Item> items;
  // Per entry of ProblemStructure::group_cameras, the items of that camera in
  // its group: entry_items[entry_item_begin[e], entry_item_begin[e + 1]).
  std::vector<int> entry_item_begin;
  std::vector<int> entry_items;
  // Per group: its sizes (row, e, f, f2) if it is uniform (header comment),
  // BlockSizes() otherwise. The kernels dispatch on them.
  std::vector<BlockSizes> uniform_sizes;
  // Runs, for the product (MultiplyNormalRun, projected_product_kernels.h): per
  // storage position p, how many positions from p on up to the end of its
  // run, a run being neighbours in storage whose groups are uniform with the
  // same sizes of the product's list (DispatchProductSizes,
  // fixed_size_dispatch.h); 0 for the other groups. A run crosses chunk
  // boundaries; a pass over a range of positions cuts it.
  std::vector<int> run_length;
  // Per storage position: the number of observations (residual blocks) of
  // the group stored there.
  std::vector<int> position_observations;
  // Per item: items[i].offset, the camera offsets alone (4 bytes per
  // observation, where the items take 24), in the items' (storage) order.
  std::vector<int> item_offset;
  // Per item: items[i].size, likewise (the product's two-item kernels read
  // the second item's size per observation).
  std::vector<int> item_size;
  // Per entry of ProblemStructure::residual_parameters: compact camera column,
  // kLandmark or kConstant.
  std::vector<int> column;
  std::vector<int64_t> work;  // per group, for the work partition
  int max_rows = 0;
  int max_landmark_size = 0;
  int max_camera_width = 0;
  int64_t hot_scalars = 0;
  int64_t cold_scalars = 0;
  int64_t r_scalars = 0;
  static constexpr int kLandmark = -2;
  static constexpr int kConstant = -1;

  int64_t AllocatedBytes() const {
    return VectorBytes(order) + VectorBytes(rows) + VectorBytes(camera_width) + VectorBytes(landmark_size) + VectorBytes(hot_offset) +
           VectorBytes(cold_offset) + VectorBytes(r_offset) + VectorBytes(segment_begin) + VectorBytes(segment_end) + VectorBytes(segments) +
           VectorBytes(items) + VectorBytes(entry_item_begin) + VectorBytes(entry_items) +
           VectorBytes(uniform_sizes) + VectorBytes(run_length) + VectorBytes(position_observations) +
           VectorBytes(item_offset) + VectorBytes(item_size) + VectorBytes(column) + VectorBytes(work);
  }
  // Camera entry e's item in the residual block whose rows start at `row`
  // of its group (Item::row), or -1 when that residual block does not have
  // the camera: a residual block takes a parameter block once, and an
  // entry's items are in row order (entry_items), so it bisects.
  int EntryItemAtRow(int e, int row) const;
  // Scalars per hot row of group g: compact camera columns, then Q1's row.
  int hot_stride(int g) const { return camera_width[g] + landmark_size[g]; }
  // Scalars per cold row of group g: the landmark columns, then the residual.
  int cold_stride(int g) const { return landmark_size[g] + 1; }
  // Bytes of one precision's blocks (hot and cold rows in Scalar, R^ double).
  int64_t RequiredBytes(int scalar_bytes) const {
    // (The same for any storage order.)
    return (hot_scalars + cold_scalars) * scalar_bytes +
           r_scalars * static_cast<int64_t>(sizeof(double));
  }
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_PROJECTED_PROJECTED_BLOCK_LAYOUT_H_
