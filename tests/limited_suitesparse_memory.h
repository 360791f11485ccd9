// SuiteSparse (CHOLMOD) allocates through the function pointers of
// SuiteSparse_config: while a LimitedSuiteSparseMemory lives, the first
// `allowed` of its allocations succeed and every later one fails, as when
// the machine runs out of memory. Not thread-safe (one test at a time).
#ifndef CERES_SQRTBA_TESTS_LIMITED_SUITESPARSE_MEMORY_H_
#define CERES_SQRTBA_TESTS_LIMITED_SUITESPARSE_MEMORY_H_

#include <SuiteSparse_config.h>

#include <atomic>
#include <cstdlib>

namespace ceres_sqrtba {
namespace testing {

class LimitedSuiteSparseMemory {
 public:
  explicit LimitedSuiteSparseMemory(int allowed)
      : malloc_(SuiteSparse_config.malloc_func),
        calloc_(SuiteSparse_config.calloc_func),
        realloc_(SuiteSparse_config.realloc_func) {
    Allowed() = allowed;
    SuiteSparse_config.malloc_func = &Malloc;
    SuiteSparse_config.calloc_func = &Calloc;
    SuiteSparse_config.realloc_func = &Realloc;
  }
  ~LimitedSuiteSparseMemory() {
    SuiteSparse_config.malloc_func = malloc_;
    SuiteSparse_config.calloc_func = calloc_;
    SuiteSparse_config.realloc_func = realloc_;
  }
  LimitedSuiteSparseMemory(const LimitedSuiteSparseMemory&) = delete;
  LimitedSuiteSparseMemory& operator=(const LimitedSuiteSparseMemory&) = delete;

 private:
  static std::atomic<int>& Allowed() {
    static std::atomic<int> allowed{0};
    return allowed;
  }
  static void* Malloc(size_t size) { return Allowed()-- > 0 ? std::malloc(size) : nullptr; }
  static void* Calloc(size_t count, size_t size) { return Allowed()-- > 0 ? std::calloc(count, size) : nullptr; }
  static void* Realloc(void* p, size_t size) { return Allowed()-- > 0 ? std::realloc(p, size) : nullptr; }

  void* (*malloc_)(size_t);
  void* (*calloc_)(size_t, size_t);
  void* (*realloc_)(void*, size_t);
};

}  // namespace testing
}  // namespace ceres_sqrtba

#endif  // CERES_SQRTBA_TESTS_LIMITED_SUITESPARSE_MEMORY_H_
