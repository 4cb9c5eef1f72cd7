#include "p2p/registration_cache.h"

#ifdef RCC_WITH_UCX
#include <ucm/api/ucm.h>  // the memory hooks come with UCX
#endif
#include <unistd.h>

#include <array>
#include <atomic>
#include <mutex>
#include <vector>

#include "base/log.h"

namespace rcc::p2p {

// Ranges reported by the hook. A fixed ring, because the hook runs inside munmap and friends and
// must not allocate; when it overflows every entry is dropped instead.
// Outside the anonymous namespace: RegistrationCache::Hook derives from it.
struct UnmapQueue {
  std::mutex mutex;
  std::array<std::pair<uintptr_t, uintptr_t>, 1024> ranges;
  size_t count = 0;
  bool overflowed = false;
  std::atomic<uint64_t> generation{0};  // bumped on every report
};

namespace {

#ifdef RCC_WITH_UCX
void on_unmapped(ucm_event_type_t /*type*/, ucm_event_t* event, void* arg) {
  UnmapQueue& queue = *static_cast<UnmapQueue*>(arg);
  const auto start = reinterpret_cast<uintptr_t>(event->vm_unmapped.address);
  std::lock_guard<std::mutex> guard(queue.mutex);
  if (queue.count < queue.ranges.size()) {
    queue.ranges[queue.count++] = {start, start + event->vm_unmapped.size};
  } else {
    queue.overflowed = true;
  }
  queue.generation.fetch_add(1, std::memory_order_release);
}
#endif

// The sanitizers' allocators map and unmap memory with raw system calls, which UCX's hooks (they
// patch libc's functions) never see: a freed buffer's registration would outlive its pages and a
// new buffer at the same address would be served the old, still pinned ones.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kAllocatorBypassesHooks = true;
#else
constexpr bool kAllocatorBypassesHooks = false;
#endif

}  // namespace

struct RegistrationCache::Hook : UnmapQueue {};

RegistrationCache::RegistrationCache(transport::Transport& transport)
    : transport_(transport), hook_(std::make_unique<Hook>()) {
  if (kAllocatorBypassesHooks) {
    RCC_INFO(
        "registration cache off in a sanitizer build (its allocator unmaps unseen); buffers are registered per "
        "message");
    return;
  }
#ifdef RCC_WITH_UCX
  ucs_status_t status = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, &on_unmapped, hook_.get());
  if (status != UCS_OK) {
    RCC_WARN("registration cache off: UCX memory hooks unavailable (%s); buffers are registered per message",
             ucs_status_string(status));
    return;
  }
  hooks_active_ = true;
#else
  RCC_INFO(
      "registration cache off: built without UCX, whose memory hooks it needs; buffers are registered per message");
#endif
}

void RegistrationCache::unhook() {
#ifdef RCC_WITH_UCX
  if (hooks_active_) ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, &on_unmapped, hook_.get());
#endif
  hooks_active_ = false;
}

RegistrationCache::~RegistrationCache() {
  unhook();
  entries_.clear();
}

void RegistrationCache::disable() {
  unhook();
  entries_.clear();
}

void RegistrationCache::drop_unmapped_ranges() {
  UnmapQueue& queue = *hook_;
  if (queue.generation.load(std::memory_order_acquire) == seen_generation_) return;
  // Copy the ranges out first: dropping a registration may itself unmap memory, which re-enters
  // the hook and its lock.
  std::array<std::pair<uintptr_t, uintptr_t>, 1024> ranges;
  size_t count = 0;
  bool overflowed = false;
  {
    std::lock_guard<std::mutex> guard(queue.mutex);
    count = queue.count;
    std::copy(queue.ranges.begin(), queue.ranges.begin() + count, ranges.begin());
    overflowed = queue.overflowed;
    queue.count = 0;
    queue.overflowed = false;
    seen_generation_ = queue.generation.load(std::memory_order_acquire);
  }
  std::vector<std::shared_ptr<transport::Memory>> dropped;  // released after the loop
  if (overflowed) {
    for (auto& [start, memory] : entries_) dropped.push_back(std::move(memory));
    entries_.clear();
  }
  for (size_t i = 0; i < count; ++i) {
    const auto [start, end] = ranges[i];
    // Entries are keyed by start; any entry beginning before end may overlap.
    for (auto it = entries_.begin(); it != entries_.end() && it->first < end;) {
      if (it->first + it->second->length > start) {
        dropped.push_back(std::move(it->second));  // in-flight users keep theirs until they finish
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
  }
}

Status RegistrationCache::acquire(void* addr, size_t length, std::shared_ptr<transport::Memory>* out) {
  if (!hooks_active_) {
    std::unique_ptr<transport::Memory> memory;
    RCC_RETURN_IF_ERROR(transport_.register_memory(addr, length, &memory));
    *out = std::move(memory);
    return RCC_SUCCESS;
  }
  drop_unmapped_ranges();
  const auto start = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t end = start + length;
  // The entry starting at or before addr with the highest start is the only candidate that could
  // cover it (entries never overlap: overlapping ones are replaced below).
  auto it = entries_.upper_bound(start);
  if (it != entries_.begin()) {
    auto candidate = std::prev(it);
    if (candidate->first + candidate->second->length >= end) {
      *out = candidate->second;
      return RCC_SUCCESS;
    }
  }
  // Register whole pages, merging with entries this range touches so the map stays disjoint.
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t lo = start & ~(page - 1);
  uintptr_t hi = (end + page - 1) & ~(page - 1);
  for (auto at = entries_.lower_bound(0); at != entries_.end();) {
    const uintptr_t entry_end = at->first + at->second->length;
    if (at->first < hi && entry_end > lo) {
      lo = std::min(lo, at->first);
      hi = std::max(hi, entry_end);
      at = entries_.erase(at);
    } else {
      ++at;
    }
  }
  std::unique_ptr<transport::Memory> memory;
  Status status = transport_.register_memory(reinterpret_cast<void*>(lo), hi - lo, &memory);
  if (status != RCC_SUCCESS) {
    // Pages around the buffer may not be mapped (or not registrable): register just the buffer.
    RCC_RETURN_IF_ERROR(transport_.register_memory(addr, length, &memory));
    lo = start;
  }
  std::shared_ptr<transport::Memory> shared(std::move(memory));
  entries_[lo] = shared;
  *out = std::move(shared);
  return RCC_SUCCESS;
}

}  // namespace rcc::p2p
