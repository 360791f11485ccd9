// WorkPartition, PerChunk and ParallelContext: the pieces that make every
// reduction of the solver independent of the number of threads.
#include "ceres_sqrtba/internal/common/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <numeric>
#include <new>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace ceres_sqrtba {
namespace internal {
namespace {

std::vector<std::pair<int, int>> Chunks(const WorkPartition& p) {
  std::vector<std::pair<int, int>> chunks;
  for (int c = 0; c < p.num_chunks(); ++c) chunks.emplace_back(p.begin(c), p.end(c));
  return chunks;
}

TEST(WorkPartition, HandWorkedUnitWork) {
  // 10 items into 3 chunks: target 10/3, a chunk closes once the running
  // count reaches 3.33 and 6.67 (after items 3 and 6).
  EXPECT_EQ(Chunks(WorkPartition(10, {}, 3, 1)),
            (std::vector<std::pair<int, int>>{{0, 4}, {4, 7}, {7, 10}}));
  // min_work 4 allows only 10 / 4 = 2 chunks.
  EXPECT_EQ(Chunks(WorkPartition(10, {}, 3, 4)),
            (std::vector<std::pair<int, int>>{{0, 5}, {5, 10}}));
  // Weighted: total 16, 4 chunks, closing at running work 4, 8, 12.
  EXPECT_EQ(Chunks(WorkPartition(8, {5, 1, 1, 1, 1, 1, 5, 1}, 4, 1)),
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 4}, {4, 7}, {7, 8}}));
  EXPECT_EQ(WorkPartition(0, {}, 8, 1).num_chunks(), 0);
  EXPECT_EQ(Chunks(WorkPartition(5, {}, 8, 100)), (std::vector<std::pair<int, int>>{{0, 5}}));
}

TEST(WorkPartition, RandomPartitionsCoverTheRangeWithinTheLimits) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 500; ++trial) {
    const int n = std::uniform_int_distribution<int>(1, 2000)(rng);
    const int max_chunks = std::uniform_int_distribution<int>(1, 64)(rng);
    const int64_t min_work = std::uniform_int_distribution<int>(1, 300)(rng);
    const bool unit = trial % 2 == 0;
    std::vector<int64_t> work;
    if (!unit) {
      std::uniform_int_distribution<int> w(0, 50);
      for (int i = 0; i < n; ++i) work.push_back(w(rng));
    }
    const int64_t total = unit ? n : std::accumulate(work.begin(), work.end(), int64_t{0});
    const WorkPartition p(n, work, max_chunks, min_work);
    SCOPED_TRACE(::testing::Message() << "n " << n << " max_chunks " << max_chunks
                                      << " min_work " << min_work << " unit " << unit);
    ASSERT_GE(p.num_chunks(), 1);
    EXPECT_LE(p.num_chunks(), max_chunks);
    // min_work bounds the number of chunks: at least min_work per chunk on
    // average (one chunk when the whole is less).
    EXPECT_LE(p.num_chunks(), std::max<int64_t>(1, total / min_work));
    EXPECT_EQ(p.begin(0), 0);
    EXPECT_EQ(p.end(p.num_chunks() - 1), n);
    for (int c = 0; c < p.num_chunks(); ++c) {
      EXPECT_LT(p.begin(c), p.end(c)) << "empty chunk " << c;
      if (c > 0) {
        EXPECT_EQ(p.begin(c), p.end(c - 1)) << "gap or overlap at " << c;
      }
      // With unit work every chunk (not only the average) has min_work items.
      if (unit && total >= min_work) {
        EXPECT_GE(p.end(c) - p.begin(c), min_work) << c;
      }
    }
    // A function of its inputs only: the same chunks again.
    EXPECT_EQ(Chunks(WorkPartition(n, work, max_chunks, min_work)), Chunks(p));
  }
}

TEST(PerChunk, SumIntoAddsInChunkOrder) {
  // Float addition is not associative at 1e8 (ulp 8). Entry 0 holds
  // {1, 1e8, 5, -1e8}: in chunk order ((1 + 1e8) + 5) - 1e8 = 8, as 1e8 + 1
  // rounds to 1e8 and 1e8 + 5 to 1e8 + 8; the exact sum is 6, the reverse
  // order gives 9. The other entries hold the other permutations (scaled),
  // each expected as its plain left-to-right float sum.
  const std::vector<float> values = {1.0f, 1e8f, -1e8f, 5.0f};
  const int kChunks = 4;
  const int64_t kSize = 20000;  // above SumInto's grain (4096): parallel loop
  PerChunk<float> slots(kChunks, kSize);
  std::vector<int> order = {0, 1, 2, 3};
  std::vector<float> expected(kSize);
  for (int64_t i = 0; i < kSize; ++i) {
    std::next_permutation(order.begin(), order.end());
    float sum = 0.0f;
    for (int c = 0; c < kChunks; ++c) {
      slots[c][i] = values[order[c]] * static_cast<float>(1 + i % 7);
      sum += slots[c][i];
    }
    expected[i] = sum;
  }
  EXPECT_EQ(expected[0], 8.0f);  // the hand-worked entry
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    std::vector<float> out(kSize + 1, -7.0f);
    slots.SumInto(&context, kSize, out.data());
    for (int64_t i = 0; i < kSize; ++i) {
      ASSERT_EQ(out[i], expected[i]) << "entry " << i << ", " << threads << " threads";
    }
    EXPECT_EQ(out[kSize], -7.0f) << "wrote past n";
  }
}

// Callers add into their slots without clearing them first: every value
// starts at zero, also in memory the allocator hands out again (a freed
// PerChunk of the same size, written all over).
TEST(PerChunk, StartsAtZero) {
  for (int64_t size : {int64_t{3}, int64_t{1000}, int64_t{1} << 20}) {
    for (int round = 0; round < 2; ++round) {
      PerChunk<double> slots(4, size);
      for (int c = 0; c < 4; ++c) {
        for (int64_t i = 0; i < size; ++i) ASSERT_EQ(slots[c][i], 0.0) << "size " << size << " chunk " << c;
        std::fill(slots[c], slots[c] + size, 7.5);
      }
    }
  }
  PerChunk<float> empty(0, 5);  // no chunk: still a valid object
  EXPECT_EQ(empty.num_chunks(), 0);
}

// The workers start on a helper thread: a context may be destroyed before
// that thread is done, or used at once, and is ready once a loop has run.
TEST(ParallelContext, StartsItsWorkersAsideAndIsReadyAfterALoop) {
  for (int round = 0; round < 20; ++round) ParallelContext discarded(2);
  ParallelContext one(1);
  EXPECT_TRUE(one.ready());
  ParallelContext two(2);
  std::vector<int> hits(1000, 0);
  two.For(1000, 10, [&](int b, int e) {
    for (int i = b; i < e; ++i) ++hits[i];
  });
  EXPECT_TRUE(two.ready());
  EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 1000);
}

// A task aside runs once, alongside the caller's own loops, and is done when
// WaitAside returns; with one thread it runs inside RunAside.
TEST(ParallelContext, RunsATaskAsideOnceAndWaitsForIt) {
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    std::atomic<int> runs{0};
    std::vector<double> aside(100000, 0.0);
    context.RunAside([&] {
      for (size_t i = 0; i < aside.size(); ++i) aside[i] = 0.5 * static_cast<double>(i);
      ++runs;
    });
    if (threads == 1) EXPECT_EQ(runs.load(), 1);
    std::vector<int> hits(5000, 0);
    context.For(5000, 10, [&](int b, int e) {
      for (int i = b; i < e; ++i) ++hits[i];
    });
    context.WaitAside();
    EXPECT_EQ(runs.load(), 1) << threads << " threads";
    EXPECT_EQ(aside.back(), 0.5 * 99999.0);
    EXPECT_EQ(std::count(hits.begin(), hits.end(), 1), 5000);
    context.WaitAside();  // nothing pending: returns at once
    EXPECT_EQ(runs.load(), 1);
  }
}

// What the task throws reaches the caller of WaitAside (an allocation that
// failed aside is the solve's out-of-memory failure); a task never waited
// for is waited for by the context's destructor.
TEST(ParallelContext, TaskAsideRethrowsAndIsWaitedForAtDestruction) {
  ParallelContext context(2);
  context.RunAside([] { throw std::bad_alloc(); });
  EXPECT_THROW(context.WaitAside(), std::bad_alloc);
  std::atomic<bool> done{false};
  {
    ParallelContext leaving(2);
    leaving.RunAside([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      done = true;
    });
  }
  EXPECT_TRUE(done.load());
}

TEST(ParallelContext, ForCoversEveryIndexOnce) {
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    EXPECT_EQ(context.num_threads(), threads);
    for (int grain : {1, 7, 1000}) {
      const int n = 50000;
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> bad_ranges{0};
      context.For(n, grain, [&](int b, int e) {
        if (b < 0 || e > n || b >= e) ++bad_ranges;
        for (int i = b; i < e; ++i) ++hits[i];
      });
      EXPECT_EQ(bad_ranges, 0);
      int wrong = 0;
      for (int i = 0; i < n; ++i) wrong += hits[i] != 1;
      EXPECT_EQ(wrong, 0) << threads << " threads, grain " << grain;
    }
    int calls = 0;
    context.For(0, 1, [&](int, int) { ++calls; });
    EXPECT_EQ(calls, 0) << "n = 0 calls nothing";
    context.For(5, 10, [&](int b, int e) {
      ++calls;
      EXPECT_EQ(b, 0);
      EXPECT_EQ(e, 5);
    });
    EXPECT_EQ(calls, 1) << "n <= grain: one call on the whole range";
  }
}

TEST(ParallelContext, ForChunksVisitsEveryChunkWithItsRange) {
  const WorkPartition p(1000, {}, 37, 1);
  for (int threads : {1, 2}) {
    ParallelContext context(threads);
    std::vector<std::pair<int, int>> seen(p.num_chunks(), {-1, -1});
    std::mutex mutex;
    context.ForChunks(p, [&](int c, int b, int e) {
      std::lock_guard<std::mutex> lock(mutex);
      EXPECT_EQ(seen[c].first, -1) << "chunk " << c << " twice";
      seen[c] = {b, e};
    });
    EXPECT_EQ(seen, Chunks(p));
  }
}

}  // namespace
}  // namespace internal
}  // namespace ceres_sqrtba
