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

#include "base/fast_tls.h"
#include "comm/comm.h"

namespace rcc {
namespace {

constexpr size_t kFirstChunk = 256;
constexpr int kMaxChunks = 40;       // 256 << 39 handles: more than any address space holds
constexpr size_t kThreadBatch = 64;  // handles moved between a thread's cache and the shared list
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

  // Moves up to `batch` free handles into cache, making a new chunk when none are free.
  void refill(std::vector<rcc_request*>& cache, size_t batch) {
    std::lock_guard<std::mutex> guard(mutex);
    if (free.empty()) {
      const int index = chunks.load(std::memory_order_relaxed);
      if (index == kMaxChunks) std::abort();             // 2^47 live handles: not reachable in practice
      auto* chunk = new rcc_request[chunk_size(index)];  // never freed (see above)
      chunk_starts[index].store(reinterpret_cast<uintptr_t>(chunk), std::memory_order_relaxed);
      chunks.store(index + 1, std::memory_order_release);
      for (size_t i = chunk_size(index); i > 0; --i) free.push_back(&chunk[i - 1]);
    }
    const size_t moved = std::min(batch, free.size());
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

// A thread's free handles. The pointer and flag are trivially destructible, so they stay valid
// after the thread's thread_local destructors ran (for the main thread: before static destructors
// and atexit handlers, which may still call the library); the cache is then retired and calls use
// the shared list.
struct ThreadCacheState {
  std::vector<rcc_request*>* handles = nullptr;
  bool retired = false;
};
RCC_FAST_TLS thread_local ThreadCacheState t_cache;

// Returns the cache's handles to the shared list when the thread ends.
struct ThreadCacheRetirer {
  bool armed = false;
  ~ThreadCacheRetirer() {
    if (t_cache.handles != nullptr) {
      pool().give_back(*t_cache.handles, t_cache.handles->size());
      delete t_cache.handles;
      t_cache.handles = nullptr;
    }
    t_cache.retired = true;
  }
};
thread_local ThreadCacheRetirer t_retirer;

// This thread's cache; null once the thread is ending.
std::vector<rcc_request*>* thread_cache() {
  if (t_cache.handles == nullptr && !t_cache.retired) {
    t_retirer.armed = true;  // constructs it: its destructor then runs when the thread ends
    t_cache.handles = new std::vector<rcc_request*>;
  }
  return t_cache.handles;
}

// The common paths read the thread's cache directly; creating it, refilling it, trimming it and a
// retired thread's calls go through the shared list here.
rcc_request* acquire_request_slow() {
  std::vector<rcc_request*>* cache = thread_cache();
  std::vector<rcc_request*> one;
  if (cache == nullptr) cache = &one;  // a retired thread takes one handle from the shared list
  if (cache->empty()) pool().refill(*cache, cache == &one ? 1 : kThreadBatch);
  rcc_request* request = cache->back();
  cache->pop_back();
  request->live.store(true, std::memory_order_release);
  return request;
}

void recycle_request_slow(rcc_request* request) {
  std::vector<rcc_request*>* cache = thread_cache();
  if (cache == nullptr) {  // a retired thread gives the handle straight back
    std::vector<rcc_request*> one{request};
    pool().give_back(one, 1);
    return;
  }
  cache->push_back(request);
  if (cache->size() > kThreadCacheMax) pool().give_back(*cache, kThreadBatch);
}

}  // namespace

rcc_request* acquire_request() {
  std::vector<rcc_request*>* cache = t_cache.handles;
  if (cache == nullptr || cache->empty()) return acquire_request_slow();
  rcc_request* request = cache->back();
  cache->pop_back();
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
  request->record = 0;
  if (request->collective != nullptr) request->collective.reset();
  std::vector<rcc_request*>* cache = t_cache.handles;
  if (cache != nullptr && cache->size() < kThreadCacheMax) {
    cache->push_back(request);
    return;
  }
  recycle_request_slow(request);
}

bool is_live_request(rcc_request* request) {
  return pool().owns(request) && request->live.load(std::memory_order_acquire);
}

}  // namespace rcc
