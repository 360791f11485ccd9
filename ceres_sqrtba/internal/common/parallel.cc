#include "ceres_sqrtba/internal/common/parallel.h"

#include <algorithm>
#include <thread>

namespace ceres_sqrtba {
namespace internal {

WorkPartition::WorkPartition(int n, const std::vector<int64_t>& work,
                             int max_chunks, int64_t min_work) {
  begin_.assign(1, 0);
  if (n <= 0) return;
  int64_t total = 0;
  for (int i = 0; i < n; ++i) total += work.empty() ? 1 : work[i];
  int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(max_chunks, total / std::max<int64_t>(1, min_work)));
  chunks = std::min<int64_t>(chunks, n);
  const double target = static_cast<double>(total) / static_cast<double>(chunks);
  int64_t acc = 0;
  int next = 1;
  for (int i = 0; i < n; ++i) {
    acc += work.empty() ? 1 : work[i];
    if (next < chunks && acc >= target * next && i + 1 < n) {
      begin_.push_back(i + 1);
      ++next;
    }
  }
  begin_.push_back(n);
}

// More threads than the machine has only cost memory and start-up time (and
// a huge count would make TBB fail): capped, as Ceres caps them.
ParallelContext::ParallelContext(int num_threads)
    : num_threads_(std::max(1, std::thread::hardware_concurrency() > 0
                                   ? std::min<int>(num_threads, std::thread::hardware_concurrency())
                                   : num_threads)),
      arena_(std::make_unique<tbb::task_arena>(num_threads_)) {
  if (num_threads_ == 1) return;
  ready_.store(false, std::memory_order_relaxed);
  try {
    start_up_ = std::thread([this] {
      arena_->initialize();
      ready_.store(true, std::memory_order_release);
    });
  } catch (const std::system_error&) {
    // No thread to spare: the first parallel loop starts the workers.
    ready_.store(true, std::memory_order_relaxed);
  }
}

ParallelContext::~ParallelContext() {
  if (aside_ != nullptr) {
    try {
      WaitAside();
    } catch (...) {
      // Already on a failure path (the task's owner left without waiting).
    }
  }
  AwaitStartUp();
}

void ParallelContext::RunAside(std::function<void()> fn) {
  if (aside_ != nullptr) WaitAside();
  if (num_threads_ == 1) {
    fn();
    return;
  }
  AwaitStartUp();
  aside_ = std::make_unique<tbb::task_group>();
  arena_->execute([&] { aside_->run(std::move(fn)); });
}

void ParallelContext::WaitAside() {
  if (aside_ == nullptr) return;
  std::unique_ptr<tbb::task_group> group = std::move(aside_);
  arena_->execute([&] { group->wait(); });
}

}  // namespace internal
}  // namespace ceres_sqrtba
