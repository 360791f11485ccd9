// CameraBlockSum on structures read from synthetic ceres::Problems whose
// camera blocks are small (every chunk its own slot), large (consecutive chunks
// share one of a few slots) and larger than the 32 MiB budget on their own
// (the two-slot floor). The contributions are synthetic: the unit only routes
// and adds them.
#include "ceres_sqrtba/internal/cameras/camera_block_sum.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test_problems.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

struct BlockProblem {
  testing::RandomProblem problem;
  ProblemStructure s;
  WorkPartition partition;
};

void Build(int num_cameras, int camera_size, BlockProblem* out) {
  testing::RandomProblemConfig config;
  config.num_cameras = num_cameras;
  config.camera_size = camera_size;
  config.intrinsics_size = 3;  // cameras of two sizes
  config.num_landmarks = 150;  // > 64 groups: 64 chunks
  config.min_observations = 1;
  config.max_observations = 3;
  out->problem = testing::MakeRandomProblem(config);
  std::string error;
  ASSERT_EQ(BuildProblemStructure(*out->problem.problem, nullptr, &out->s, &error), StructureStatus::kOk) << error;
  out->partition = WorkPartition(static_cast<int>(out->s.groups.size()), {}, 64, 1);
  ASSERT_EQ(out->partition.num_chunks(), 64);
}

// A contribution with an arbitrary mantissa and a magnitude between 2^-32 and
// 2^31, so that adding in another order almost surely changes the bits.
double Value(int g, int e, int k) {
  uint64_t h = static_cast<uint64_t>(g) * 0x9E3779B97F4A7C15ull ^
               static_cast<uint64_t>(e) * 0xC2B2AE3D27D4EB4Full ^
               static_cast<uint64_t>(k + 1) * 0x165667B19E3779F9ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (1.0 + static_cast<double>(h % 1000003) / 1000003.0) *
         std::ldexp(1.0, static_cast<int>(h >> 58) - 32);
}

// Touches three entries of the camera's n x n accumulator (touching all of a
// 1200 x 1200 block per observation would only make the test slow).
template <typename Acc>
void AddRandomIn(int g, int e, int, int n, Acc* acc) {
  acc[0] += static_cast<Acc>(Value(g, e, 0));
  acc[n * n - 1] += static_cast<Acc>(Value(g, e, 1));
  acc[((g + e) % n) * n + g % n] += static_cast<Acc>(Value(g, e, 2));
}
void AddRandom(int g, int e, int column, int n, double* acc) { AddRandomIn(g, e, column, n, acc); }
void AddRandomFloat(int g, int e, int column, int n, float* acc) { AddRandomIn(g, e, column, n, acc); }

// Integer-valued: every sum is exact whatever the order, so the result can be
// compared with the camera-major view of ProblemStructure (camera_groups).
void AddIndices(int g, int e, int column, int n, double* acc) {
  acc[0] += g + 1;
  acc[1] += 1;
  acc[2] += e;
  acc[3] += n;
  acc[n * n - 1] += column + 1;
}

class CameraBlockSumTest : public ::testing::TestWithParam<int> {};

// Camera block size: 6 (small, chunked), 300 (4 cameras of 90000 doubles: 11
// slots for 64 chunks), 1200 (3 x 1.44M doubles, beyond the budget: 2 slots).
INSTANTIATE_TEST_SUITE_P(Sizes, CameraBlockSumTest, ::testing::Values(6, 300, 1200));

int NumCameras(int camera_size) { return camera_size == 1200 ? 3 : 4; }

TEST_P(CameraBlockSumTest, EveryContributionReachesItsCamera) {
  BlockProblem bp;
  Build(NumCameras(GetParam()), GetParam(), &bp);
  const ProblemStructure& s = bp.s;
  CameraBlockSum<double> sum(s, bp.partition);
  // Layout: the cameras' n x n blocks back to back, in camera order.
  int64_t offset = 0;
  for (size_t c = 0; c < s.cameras.size(); ++c) {
    ASSERT_EQ(sum.offset(static_cast<int>(c)), offset);
    const int n = s.parameter_blocks[s.cameras[c]].tangent_size;
    offset += n * n;
  }
  ASSERT_EQ(sum.size(), offset);
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    std::vector<double> out(sum.size(), -1.0);
    sum.Run(&context, out.data(), AddIndices);
    for (size_t c = 0; c < s.cameras.size(); ++c) {
      const int n = s.parameter_blocks[s.cameras[c]].tangent_size;
      double groups = 0, count = 0, entries = 0, columns = 0;
      for (int k = s.camera_group_begin[c]; k < s.camera_group_begin[c + 1]; ++k) {
        groups += s.camera_groups[k] + 1;
        count += 1;
        entries += s.camera_group_entry[k];
        // The camera's column in its group: the tangent sizes of the
        // group's cameras before it.
        const Group& group = s.groups[s.camera_groups[k]];
        int column = 0;
        for (int e = group.camera_begin; e < s.camera_group_entry[k]; ++e) {
          column += s.parameter_blocks[s.group_cameras[e]].tangent_size;
        }
        columns += column + 1;
      }
      const double* acc = out.data() + sum.offset(static_cast<int>(c));
      SCOPED_TRACE(::testing::Message() << "camera " << c << ", " << threads << " threads");
      EXPECT_GT(count, 0);
      EXPECT_EQ(acc[0], groups);
      EXPECT_EQ(acc[1], count);
      EXPECT_EQ(acc[2], entries);
      EXPECT_EQ(acc[3], count * n);
      EXPECT_EQ(acc[n * n - 1], columns);
      EXPECT_EQ(acc[4], 0.0) << "untouched entries are cleared";
    }
  }
}

// The documented schedule, written out: slot k adds the groups of chunks
// [k * chunks / slots, (k + 1) * chunks / slots) in order, starting from 0,
// and the slots are added in slot order, starting from 0.
// Acc: the slots' scalar; the slots are added in double.
template <typename Acc>
std::vector<double> Reference(const ProblemStructure& s, const WorkPartition& p,
                              const CameraBlockSum<Acc>& sum, int slots) {
  std::vector<double> out(sum.size(), 0.0);
  std::vector<Acc> slot_sums(sum.size());
  for (int k = 0; k < slots; ++k) {
    std::fill(slot_sums.begin(), slot_sums.end(), Acc(0));
    const int cb = k * p.num_chunks() / slots, ce = (k + 1) * p.num_chunks() / slots;
    for (int g = p.begin(cb); g < (ce > cb ? p.end(ce - 1) : p.begin(cb)); ++g) {
      int column = 0;
      for (int e = s.groups[g].camera_begin; e < s.groups[g].camera_end; ++e) {
        const ParameterBlockInfo& pb = s.parameter_blocks[s.group_cameras[e]];
        AddRandomIn(g, e, column, pb.tangent_size, slot_sums.data() + sum.offset(pb.camera_index));
        column += pb.tangent_size;
      }
    }
    for (size_t i = 0; i < out.size(); ++i) out[i] += slot_sums[i];
  }
  return out;
}

bool BitIdentical(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST_P(CameraBlockSumTest, ResultIsBitIdenticalForOneAndTwoThreads) {
  BlockProblem bp;
  Build(NumCameras(GetParam()), GetParam(), &bp);
  CameraBlockSum<double> sum(bp.s, bp.partition);
  // As many slots as copies of all camera blocks fit in 2^22 doubles (32 MiB),
  // at least two, at most one per chunk.
  const int64_t fit = (int64_t{1} << 22) / sum.size();
  const int slots = static_cast<int>(std::min<int64_t>(64, std::max<int64_t>(2, fit)));
  EXPECT_EQ(sum.chunked(), slots == 64);
  EXPECT_EQ(sum.chunked(), GetParam() == 6) << "the three sizes cover both regimes";
  const std::vector<double> reference = Reference(bp.s, bp.partition, sum, slots);
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    for (int repeat = 0; repeat < 2; ++repeat) {  // slots are cleared between runs
      std::vector<double> out(sum.size(), -1.0);
      sum.Run(&context, out.data(), AddRandom);
      EXPECT_TRUE(BitIdentical(out, reference)) << threads << " threads, run " << repeat;
    }
  }
}

// Float slots (the projected storage's SCHUR_JACOBI blocks in single
// precision): the same schedule, the contributions added in float within a
// slot and the slots added in double; twice as many slots fit the budget.
TEST_P(CameraBlockSumTest, FloatSlotsAreAddedInDouble) {
  BlockProblem bp;
  Build(NumCameras(GetParam()), GetParam(), &bp);
  CameraBlockSum<float> sum(bp.s, bp.partition);
  CameraBlockSum<double> double_sum(bp.s, bp.partition);
  const int64_t fit = (int64_t{1} << 23) / sum.size();
  const int slots = static_cast<int>(std::min<int64_t>(64, std::max<int64_t>(2, fit)));
  EXPECT_EQ(CameraBlockSum<float>::RequiredBytes(bp.s, bp.partition), slots * sum.size() * 4);
  const std::vector<double> reference = Reference(bp.s, bp.partition, sum, slots);
  std::vector<double> in_double(sum.size());
  {
    ParallelContext serial(1);
    double_sum.Run(&serial, in_double.data(), AddRandom);
  }
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    std::vector<double> out(sum.size(), -1.0);
    sum.Run(&context, out.data(), AddRandomFloat);
    EXPECT_TRUE(BitIdentical(out, reference)) << threads << " threads";
    // Positive terms, so the error is relative: at most one float rounding
    // (2^-24) per addition and conversion, and no entry gets 1024 additions
    // (150 landmarks x at most 3 observations x at most 2 touches).
    for (size_t i = 0; i < out.size(); ++i) {
      ASSERT_NEAR(out[i], in_double[i], 1024 * std::ldexp(1.0, -24) * in_double[i]) << "entry " << i;
    }
  }
}

TEST(CameraBlockSum, ChunkByChunkEqualsRun) {
  BlockProblem bp;
  Build(4, 6, &bp);
  CameraBlockSum<double> sum(bp.s, bp.partition);
  ASSERT_TRUE(sum.chunked());
  ParallelContext serial(1);
  std::vector<double> run(sum.size());
  sum.Run(&serial, run.data(), AddRandom);
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    // Chunks visited in the caller's own parallel loop, in any order.
    context.ForChunks(bp.partition, [&](int c, int b, int e) {
      double* sums = sum.BeginChunk(c);
      EXPECT_EQ(sums, sum.ChunkSums(c));
      for (int g = b; g < e; ++g) sum.AddGroup(g, sums, AddRandom);
    });
    std::vector<double> pieces(sum.size(), -1.0);
    sum.Reduce(&context, pieces.data());
    EXPECT_TRUE(BitIdentical(pieces, run)) << threads << " threads";
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
