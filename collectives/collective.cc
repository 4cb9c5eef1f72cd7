#include "collectives/collective.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "base/log.h"

namespace rcc::collectives {

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kAllreduce: return "allreduce";
    case Kind::kBroadcast: return "broadcast";
    case Kind::kReduce: return "reduce";
    case Kind::kAllgather: return "allgather";
    case Kind::kReduceScatter: return "reduce_scatter";
    case Kind::kAlltoall: return "alltoall";
    case Kind::kGather: return "gather";
    case Kind::kScatter: return "scatter";
    case Kind::kBarrier: return "barrier";
    case Kind::kAllgatherv: return "allgatherv";
    case Kind::kAlltoallv: return "alltoallv";
    case Kind::kGatherv: return "gatherv";
    case Kind::kScatterv: return "scatterv";
    case Kind::kReduceScatterv: return "reduce_scatterv";
    case Kind::kScan: return "scan";
    case Kind::kExscan: return "exscan";
  }
  return "unknown";
}

Status Context::isend(const void* buffer, size_t bytes, int peer, int tag, p2p::Request** out) {
  return engine_->isend(buffer, bytes, group_->member(peer), tag, context_, out);
}

Status Context::irecv(void* buffer, size_t bytes, int peer, int tag, p2p::Request** out) {
  return engine_->irecv(buffer, bytes, group_->member(peer), tag, context_, out);
}

Status Context::send(const void* buffer, size_t bytes, int peer, int tag) {
  p2p::Request* request = nullptr;
  RCC_RETURN_IF_ERROR(isend(buffer, bytes, peer, tag, &request));
  return engine_->wait(request);
}

Status Context::recv(void* buffer, size_t bytes, int peer, int tag) {
  p2p::Request* request = nullptr;
  RCC_RETURN_IF_ERROR(irecv(buffer, bytes, peer, tag, &request));
  return engine_->wait(request);
}

Status Context::sendrecv(const void* send_buffer, size_t send_bytes, int to, void* recv_buffer, size_t recv_bytes,
                         int from, int tag) {
  RequestSet requests(*engine_);
  p2p::Request* request = nullptr;
  RCC_RETURN_IF_ERROR(irecv(recv_buffer, recv_bytes, from, tag, &request));
  requests.add(request);
  RCC_RETURN_IF_ERROR(isend(send_buffer, send_bytes, to, tag, &request));
  requests.add(request);
  return requests.wait_all();
}

Status Context::post_send(RequestSet& sends, const void* buffer, size_t bytes, int peer, int tag) {
  p2p::Request* request = nullptr;
  RCC_RETURN_IF_ERROR(isend(buffer, bytes, peer, tag, &request));
  return sends.add_in_window(request);
}

Status Context::post_recv(RequestSet& receives, void* buffer, size_t bytes, int peer, int tag, size_t* index) {
  p2p::Request* request = nullptr;
  RCC_RETURN_IF_ERROR(irecv(buffer, bytes, peer, tag, &request));
  const size_t added = receives.add(request);
  if (index != nullptr) *index = added;
  return RCC_SUCCESS;
}

RequestSet::~RequestSet() {
  // Requests are left only after an error: drain them so none outlives the buffers it uses.
  wait_all();
}

size_t RequestSet::add(p2p::Request* request) {
  pending_.push_back(request);
  return pending_.size() - 1;
}

Status RequestSet::add_in_window(p2p::Request* request) {
  if (request == nullptr) return RCC_SUCCESS;  // a send that completed when posted
  add(request);
  if (window_ == 0) return RCC_SUCCESS;
  ++in_flight_;
  return wait_oldest_beyond_window();
}

Status RequestSet::wait_oldest_beyond_window() {
  while (in_flight_ > window_) {
    while (pending_[oldest_] == nullptr) ++oldest_;
    p2p::Request* request = pending_[oldest_];
    pending_[oldest_] = nullptr;
    --in_flight_;
    Status status = engine_.wait(request);
    if (status != RCC_SUCCESS) return status;
  }
  return RCC_SUCCESS;
}

Status RequestSet::wait(size_t index) {
  p2p::Request* request = pending_[index];
  pending_[index] = nullptr;
  if (window_ > 0) --in_flight_;
  return engine_.wait(request);
}

Status RequestSet::wait_all() {
  size_t kept = 0;
  for (p2p::Request* request : pending_) {
    if (request != nullptr) pending_[kept++] = request;
  }
  Status status = kept == 0 ? RCC_SUCCESS : engine_.wait_all(pending_.data(), kept);
  pending_.clear();
  oldest_ = 0;
  in_flight_ = 0;
  return status;
}

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

struct ScratchSlot {
  std::unique_ptr<void, FreeDeleter> memory;
  size_t bytes = 0;
};

}  // namespace

Status scratch(int slot, size_t bytes, void** out) {
  thread_local ScratchSlot slots[kNumScratchSlots];
  ScratchSlot& s = slots[slot];
  if (bytes == 0) bytes = 1;
  if (s.bytes < bytes) {
    // Grow geometrically so a sequence of slightly larger calls does not reallocate each time.
    size_t grown = bytes < s.bytes * 2 ? s.bytes * 2 : bytes;
    s.memory.reset();
    s.bytes = 0;
    void* memory = std::aligned_alloc(64, (grown + 63) / 64 * 64);
    if (memory == nullptr) return fail(RCC_ERR_NO_MEMORY, "collective scratch buffer of %zu bytes", grown);
    s.memory.reset(memory);
    s.bytes = grown;
  }
  *out = s.memory.get();
  return RCC_SUCCESS;
}

size_t segment_count(size_t bytes) {
  size_t segments = (bytes + kSegmentBytes - 1) / kSegmentBytes;
  return segments == 0 ? 1 : segments;
}

size_t BlockLayout::offset(int b) const {
  if (given_counts != nullptr) return given_offsets[b];
  if (even) return each * static_cast<size_t>(b);
  const size_t base = total / blocks, extra = total % blocks;
  const size_t ub = static_cast<size_t>(b);
  return base * ub + (ub < extra ? ub : extra);
}

size_t BlockLayout::count(int b) const {
  if (given_counts != nullptr) return given_counts[b];
  if (even) return each;
  const size_t base = total / blocks, extra = total % blocks;
  return base + (static_cast<size_t>(b) < extra ? 1 : 0);
}

size_t BlockLayout::max_count() const {
  if (given_counts != nullptr) return given_max;
  return even ? each : total / blocks + (total % blocks ? 1 : 0);
}

BlockLayout BlockLayout::split(size_t total, int blocks) {
  BlockLayout layout;
  layout.total = total;
  layout.blocks = blocks;
  return layout;
}

BlockLayout BlockLayout::given(const size_t* counts, const size_t* offsets, int blocks) {
  BlockLayout layout;
  layout.blocks = blocks;
  layout.given_counts = counts;
  layout.given_offsets = offsets;
  for (int b = 0; b < blocks; ++b) {
    layout.total += counts[b];
    layout.given_max = std::max(layout.given_max, counts[b]);
  }
  return layout;
}

BlockLayout BlockLayout::equal(size_t each, int blocks) {
  BlockLayout layout;
  layout.total = each * static_cast<size_t>(blocks);
  layout.blocks = blocks;
  layout.even = true;
  layout.each = each;
  return layout;
}

}  // namespace rcc::collectives
