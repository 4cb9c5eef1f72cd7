// The pool behind rcc_request handles. Every nonblocking operation takes a handle and gives it back,
// so the common path takes no lock: each thread keeps a few free handles of its own and goes to the
// shared list only in batches. Memory is never returned, so a stale handle still points at a
// (non-live) request, and a pointer that is not ours is recognised by the chunk ranges without
// being dereferenced. Chunks double in size, so there are never more than kMaxChunks of them and
// the range check reads a short array without a lock.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <vector>

#include "core/comm.h"
#include "core/fast_tls.h"

namespace rcc {
namespace {

constexpr size_t kFirstChunk = 256;
constexpr int kMaxChunks = 40;          // 256 << 39 handles: more than any address space holds
constexpr size_t kThreadBatch = 64;     // handles moved between a thread's cache and the shared list
constexpr size_t kThreadCacheMax = 4 * kThreadBatch;

size_t chunk_size(int index) { return kFirstChunk << index; }

struct RequestPool {
  std::mutex mutex;  // guards free and chunk creation
  std::vector<rcc_request*> free;
  std::array<std::atomic<uintptr_t>, kMaxChunks> chunk_starts{};
  std::atomic<int> chunks{0};  // published after its start is stored

  bool owns(const rcc_request* request) const {
    const auto address = reinterpret_cast<uintptr_t>(request);
    const int count = chunks.load(std::memory_order_acquire);
    for (int i = 0; i < count; ++i) {
      const uintptr_t offset = address - chunk_starts[i].load(std::memory_order_relaxed);
      if (offset < chunk_size(i) * sizeof(rcc_request)) return offset % sizeof(rcc_request) == 0;
    }
    return false;
  }

  // Moves up to kThreadBatch free handles into cache, making a new chunk when none are free.
  void refill(std::vector<rcc_request*>& cache) {
    std::lock_guard<std::mutex> guard(mutex);
    if (free.empty()) {
      const int index = chunks.load(std::memory_order_relaxed);
      if (index == kMaxChunks) std::abort();  // 2^47 live handles: not reachable in practice
      auto* chunk = new rcc_request[chunk_size(index)];  // never freed (see above)
      chunk_starts[index].store(reinterpret_cast<uintptr_t>(chunk), std::memory_order_relaxed);
      chunks.store(index + 1, std::memory_order_release);
      for (size_t i = chunk_size(index); i > 0; --i) free.push_back(&chunk[i - 1]);
    }
    const size_t moved = std::min(kThreadBatch, free.size());
    cache.insert(cache.end(), free.end() - static_cast<std::ptrdiff_t>(moved), free.end());
    free.resize(free.size() - moved);
  }

  void give_back(std::vector<rcc_request*>& cache, size_t count) {
    std::lock_guard<std::mutex> guard(mutex);
    free.insert(free.end(), cache.end() - static_cast<std::ptrdiff_t>(count), cache.end());
    cache.resize(cache.size() - count);
  }
};

RequestPool& pool() {
  static auto* requests = new RequestPool;  // never destroyed: handles may outlive static teardown
  return *requests;
}

// A thread's free handles; returned to the shared list when the thread ends.
struct ThreadCache {
  std::vector<rcc_request*> handles;
  ~ThreadCache() {
    if (!handles.empty()) pool().give_back(handles, handles.size());
  }
};

RCC_FAST_TLS thread_local ThreadCache t_cache;

std::vector<rcc_request*>& thread_cache() { return t_cache.handles; }

}  // namespace

rcc_request* acquire_request() {
  std::vector<rcc_request*>& cache = thread_cache();
  if (cache.empty()) pool().refill(cache);
  rcc_request* request = cache.back();
  cache.pop_back();
  request->live.store(true, std::memory_order_release);
  return request;
}

bool claim_request(rcc_request* request) {
  // The exchange lets exactly one of several threads waiting on the same handle claim it.
  return pool().owns(request) && request->live.exchange(false, std::memory_order_acq_rel);
}

void recycle_request(rcc_request* request) {
  request->comm = nullptr;
  request->p2p = nullptr;
  request->collective.reset();
  std::vector<rcc_request*>& cache = thread_cache();
  cache.push_back(request);
  if (cache.size() > kThreadCacheMax) pool().give_back(cache, kThreadBatch);
}

bool is_live_request(rcc_request* request) {
  return pool().owns(request) && request->live.load(std::memory_order_acquire);
}

}  // namespace rcc
