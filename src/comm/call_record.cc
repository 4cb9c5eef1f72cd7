#include "comm/call_record.h"

#include <time.h>

#include <algorithm>
#include <utility>

#include "base/log.h"
#include "base/settings.h"
#include "collectives/collective.h"

namespace rcc {

const char* call_name(int op) {
  if (op >= 0 && op < collectives::kNumKinds) return collectives::kind_name(static_cast<collectives::Kind>(op));
  if (op == kCallSend) return "send";
  if (op == kCallRecv) return "recv";
  return "unknown";
}

CallRecorder& CallRecorder::instance() {
  static CallRecorder* recorder = [] {
    int64_t entries = 0;
    // A malformed value was refused by settings::check_all at init; fall back to the default here.
    if (settings::integer("RCC_CALL_RECORD", &entries) != RCC_SUCCESS) entries = 4096;
    return new CallRecorder(static_cast<size_t>(entries));  // never freed: calls may end during exit
  }();
  return *recorder;
}

CallRecorder::CallRecorder(size_t capacity)
    : capacity_(capacity), entries_(capacity > 0 ? new Entry[capacity] : nullptr) {}

int64_t CallRecorder::coarse_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::vector<CallSnapshot> CallRecorder::snapshot() const {
  std::vector<CallSnapshot> calls;
  if (capacity_ == 0) return calls;
  // Every entry that holds a call; in ticket order.
  std::vector<std::pair<uint64_t, size_t>> order;
  for (size_t i = 0; i < capacity_; ++i) {
    const uint64_t ticket = entries_[i].ticket.load(std::memory_order_acquire);
    if (ticket != 0) order.emplace_back(ticket, i);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [ticket, index] : order) {
    const Entry& e = entries_[index];
    CallSnapshot c;
    c.ticket = ticket;
    c.comm = e.comm.load(std::memory_order_relaxed);
    c.sequence = e.sequence.load(std::memory_order_relaxed);
    c.op = e.op.load(std::memory_order_relaxed);
    c.datatype = static_cast<rcc_datatype_t>(e.datatype.load(std::memory_order_relaxed));
    c.count = e.count.load(std::memory_order_relaxed);
    c.peer = e.peer.load(std::memory_order_relaxed);
    c.tag = e.tag.load(std::memory_order_relaxed);
    c.start_ns = e.start_ns.load(std::memory_order_relaxed);
    c.state = static_cast<CallState>(e.state.load(std::memory_order_acquire));
    c.status = static_cast<Status>(e.status.load(std::memory_order_relaxed));
    if (e.ticket.load(std::memory_order_acquire) != ticket) continue;  // rewritten meanwhile
    calls.push_back(c);
  }
  return calls;
}

}  // namespace rcc
