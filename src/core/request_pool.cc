// The pool behind rcc_request handles. A global set of live handles cost a node allocation, a
// hash insert and erase and two frees per nonblocking operation; the pool costs a free-list pop
// and push. Memory is never returned, so a stale handle still points at a (non-live) request, and
// a pointer that is not ours is recognised by the chunk ranges without being dereferenced.
#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "core/comm.h"

namespace rcc {
namespace {

constexpr size_t kChunk = 256;

struct RequestPool {
  std::mutex mutex;
  std::vector<std::unique_ptr<rcc_request[]>> chunks;
  std::set<uintptr_t> chunk_starts;  // the chunks' addresses, for owns()
  std::vector<rcc_request*> free;

  // Whether request is one of the pool's objects (the caller holds the mutex).
  bool owns(const rcc_request* request) const {
    const auto address = reinterpret_cast<uintptr_t>(request);
    auto next = chunk_starts.upper_bound(address);
    if (next == chunk_starts.begin()) return false;
    const uintptr_t start = *std::prev(next);
    const uintptr_t offset = address - start;
    return offset < kChunk * sizeof(rcc_request) && offset % sizeof(rcc_request) == 0;
  }
};

RequestPool& pool() {
  static auto* requests = new RequestPool;  // never destroyed: handles may outlive static teardown
  return *requests;
}

}  // namespace

rcc_request* acquire_request() {
  RequestPool& requests = pool();
  std::lock_guard<std::mutex> guard(requests.mutex);
  if (requests.free.empty()) {
    requests.chunks.push_back(std::make_unique<rcc_request[]>(kChunk));
    rcc_request* chunk = requests.chunks.back().get();
    requests.chunk_starts.insert(reinterpret_cast<uintptr_t>(chunk));
    for (size_t i = kChunk; i > 0; --i) requests.free.push_back(&chunk[i - 1]);
  }
  rcc_request* request = requests.free.back();
  requests.free.pop_back();
  request->live = true;
  return request;
}

bool claim_request(rcc_request* request) {
  RequestPool& requests = pool();
  std::lock_guard<std::mutex> guard(requests.mutex);
  if (!requests.owns(request) || !request->live) return false;
  request->live = false;
  return true;
}

void recycle_request(rcc_request* request) {
  request->comm = nullptr;
  request->p2p = nullptr;
  request->collective.reset();
  RequestPool& requests = pool();
  std::lock_guard<std::mutex> guard(requests.mutex);
  requests.free.push_back(request);
}

bool is_live_request(rcc_request* request) {
  RequestPool& requests = pool();
  std::lock_guard<std::mutex> guard(requests.mutex);
  return requests.owns(request) && request->live;
}

}  // namespace rcc
