// Deterministic parallel loops on a private oneTBB arena.
//
// Every parallel pass of the solver runs through a ParallelContext, which owns a
// tbb::task_arena limited to Solver::Options::num_threads, so that two solves in
// two user threads neither share nor oversubscribe workers.
//
// Reductions (costs, gradients, matrix-vector products that scatter into camera
// vectors) are made deterministic by a fixed partition of the work into chunks
// that depends on the problem only, never on the number of threads: each chunk
// accumulates into its own slot, and the slots are summed in chunk order. The
// same problem and options therefore give bit-identical results run to run and
// for any num_threads.
#ifndef CERES_SQRTBA_INTERNAL_COMMON_PARALLEL_H_
#define CERES_SQRTBA_INTERNAL_COMMON_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <type_traits>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "ceres_sqrtba/internal/common/process_group.h"

namespace ceres_sqrtba {
namespace internal {

// A partition of [0, n) into contiguous chunks of roughly equal work.
class WorkPartition {
 public:
  WorkPartition() = default;
  // Splits n items with the given per-item work (may be empty: unit work) into
  // at most max_chunks chunks, with at least min_work per chunk.
  WorkPartition(int n, const std::vector<int64_t>& work, int max_chunks,
                int64_t min_work);

  int num_chunks() const { return static_cast<int>(begin_.size()) - 1; }
  int begin(int chunk) const { return begin_[chunk]; }
  int end(int chunk) const { return begin_[chunk + 1]; }

 private:
  std::vector<int> begin_{0};
};

class ParallelContext {
 public:
  // With more than one thread, oneTBB starts its workers (and loads its
  // allocator) on a helper thread, about 0.5-1 ms the first time in a
  // process: the solve's own thread reads the problem meanwhile (ready()).
  explicit ParallelContext(int num_threads);
  ~ParallelContext();
  ParallelContext(const ParallelContext&) = delete;
  ParallelContext& operator=(const ParallelContext&) = delete;
  int num_threads() const { return num_threads_; }

  // The other processes of a solve spread over several (process_group.h);
  // null for a solve in one process. Not owned.
  const ProcessGroup* processes() const { return processes_; }
  void set_processes(const ProcessGroup* processes) { processes_ = processes; }
  // True once a parallel loop would start without waiting for the workers.
  bool ready() const { return ready_.load(std::memory_order_acquire); }

  // Calls fn(begin, end) on disjoint subranges covering [0, n).
  template <typename Fn>
  void For(int n, int grain, const Fn& fn) {
    if (n <= 0) return;
    if (num_threads_ == 1 || n <= grain) {
      fn(0, n);
      return;
    }
    AwaitStartUp();
    arena_->execute([&] {
      tbb::parallel_for(tbb::blocked_range<int>(0, n, grain),
                        [&](const tbb::blocked_range<int>& r) {
                          fn(r.begin(), r.end());
                        });
    });
  }

  // Starts fn() on one of the context's workers and returns at once, so that
  // the calling thread can go on with work that touches nothing fn touches;
  // WaitAside() returns once fn has run (running it on the calling thread if
  // no worker has taken it yet) and rethrows what fn threw. One task at a
  // time; with one thread, fn runs inside RunAside. A pending task is waited
  // for by the destructor.
  void RunAside(std::function<void()> fn);
  void WaitAside();

  // Calls fn(chunk, begin, end) once for every chunk of the partition.
  template <typename Fn>
  void ForChunks(const WorkPartition& partition, const Fn& fn) {
    For(partition.num_chunks(), 1, [&](int cb, int ce) {
      for (int c = cb; c < ce; ++c) fn(c, partition.begin(c), partition.end(c));
    });
  }

 private:
  void AwaitStartUp() {
    if (start_up_.joinable()) start_up_.join();
  }

  int num_threads_;
  const ProcessGroup* processes_ = nullptr;
  std::unique_ptr<tbb::task_arena> arena_;
  std::atomic<bool> ready_{true};
  std::thread start_up_;
  std::unique_ptr<tbb::task_group> aside_;  // non-null while a task runs aside
};

// One slot of `size` values per chunk of a work partition, back to back in one
// allocation: the per-chunk accumulators and scratch of the parallel passes,
// so that no two chunks share memory and sums can be taken in chunk order.
// The values start at zero. They come from calloc: a large allocation is
// fresh zero pages, which cost nothing until a chunk first writes its slot
// (in its own thread), where zero-filling them here would touch every page
// from the solve's thread before the first iteration (0.7 ms of problem-49's
// 17 ms iteration 0 for the preconditioner's per-chunk sums alone).
template <typename T>
class PerChunk {
  static_assert(std::is_arithmetic<T>::value, "PerChunk holds numbers (zero bytes are zero values)");

 public:
  PerChunk() = default;
  PerChunk(int num_chunks, int64_t size) : num_chunks_(num_chunks), size_(size) {
    const size_t n = std::max<size_t>(1, static_cast<size_t>(num_chunks) * static_cast<size_t>(size));
    data_.reset(static_cast<T*>(std::calloc(n, sizeof(T))));
    if (data_ == nullptr) throw std::bad_alloc();
  }

  int num_chunks() const { return num_chunks_; }
  int64_t size() const { return size_; }
  T* operator[](int chunk) { return data_.get() + static_cast<size_t>(chunk) * size_; }
  const T* operator[](int chunk) const {
    return data_.get() + static_cast<size_t>(chunk) * size_;
  }

  // out[i] = sum over chunks c, in chunk order, of slot c's value i, for
  // i < n (n <= size()): the deterministic reduction of the chunk slots,
  // added in Out (double slots into double, float slots into double too).
  // The chunks hold landmark blocks; in a solve spread over processes
  // (context->processes()) the sum is then added over the processes, whose
  // landmark blocks are the others (process_group.h).
  template <typename Out>
  void SumInto(ParallelContext* context, int64_t n, Out* out) const {
    context->For(static_cast<int>(n), 4096, [&](int b, int e) {
      for (int i = b; i < e; ++i) {
        Out v = 0;
        for (int c = 0; c < num_chunks_; ++c) v += (*this)[c][i];
        out[i] = v;
      }
    });
    if (context->processes() != nullptr) context->processes()->Sum(out, n);
  }

 private:
  int num_chunks_ = 0;
  int64_t size_ = 0;
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data_;
};

}  // namespace internal
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_INTERNAL_COMMON_PARALLEL_H_
