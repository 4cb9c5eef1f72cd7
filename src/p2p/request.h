// A pending send or receive of the p2p engine, owned by the engine until finish() or wait().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "transport/transport.h"

namespace rcc::p2p {

// Wildcards of a receive or probe (the values of RCC_ANY_SOURCE and RCC_ANY_TAG).
constexpr int kAnySource = -1;
constexpr int kAnyTag = -1;

// What a matched message was: sender, tag and length (a receive may be longer than its message).
struct MessageInfo {
  int source = -1;
  int tag = -1;
  size_t bytes = 0;
};

struct Request {
  enum class Kind { kSend, kRecv } kind = Kind::kSend;
  uint32_t index = 0;
  int peer = -1;  // a receive may have kAnySource
  int tag = 0;    // a receive may have kAnyTag
  uint32_t context = 0;
  void* buffer = nullptr;
  size_t bytes = 0;     // posted length
  uint64_t posted = 0;  // receives: the order of posting (matching takes the earliest)
  MessageInfo matched;  // receives: what arrived
  bool done = false;
  bool in_use = false;
  // A rendezvous under way with a live peer: a receive whose clear-to-send is out (the peer may
  // write into buffer until its FIN comes), a send whose write is queued or in flight (the
  // transport reads buffer until it completes). Such a request is not handed back before then,
  // even when a failure ends it, so no write lands in memory the application has freed.
  bool transfer_in_flight = false;
  // Ended by a failure while its transfer was in flight: status and error hold the outcome, given
  // when the transfer is over (or its peer fails, or RCC_TIMEOUT passes).
  bool ending = false;
  // A receive whose sender answered its clear-to-send with a refusal (the sender's communicator
  // failed first): it waits for this rank to see that failure too, which names the rank that died.
  bool refused = false;
  // An eager send waiting in its peer's queue as the caller's buffer (PeerState::PendingMessage),
  // not yet written: ending it before then breaks its communicator (engine.cc end_request).
  bool queued_eager = false;
  // Counts the reuses of this slot of the request table: a late answer about an earlier request
  // with the same index (a clear-to-send, a write completion) is recognised and ignored.
  uint32_t generation = 0;
  Status status = RCC_SUCCESS;
  std::string error;
  std::shared_ptr<transport::Memory> memory;  // registration of a large buffer (from the cache)
  std::unique_ptr<transport::RemoteKey> remote_key;
};

}  // namespace rcc::p2p
