// The eager encodings: how a message of at most RCC_EAGER_LIMIT bytes travels into a slot of the
// receiver (docs/transport.md, "Eager messages"). Each is a row of eager_encodings.cc and a file:
//   headed    the slot header, the payload, a tail word; found by its notice (notified delivery) or
//             by its header's and tail's sequence words (polled delivery). Always available.
//   bare      only the payload, with a notice whose immediate carries the slot and credits and whose
//             completion carries the length; tag and context repeat the previous eager message's.
//             Where a notice rides inside the write (write-with-immediate) and the header would
//             have cost a packet of its own.
//   anchored  only the payload, ending on the slot's last byte, without notice: found when that byte
//             leaves its idle value. Polled delivery only (it relies on a write landing in order).
// The sender tries them in the order of the table and takes the first that applies; the receiver
// says at set-up which it takes, and RCC_EAGER_ENCODINGS switches each off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/status.h"
#include "p2p/peer_state.h"
#include "p2p/wire.h"
#include "transport/transport.h"

namespace rcc::p2p {

// Eager messages by how they travelled: for tests and diagnostics (never read on the data path).
struct EngineCounters {
  uint64_t headed_sent = 0, bare_sent = 0, anchored_sent = 0;
  uint64_t headed_received = 0, bare_received = 0, anchored_received = 0;
};

enum EncodingBit : uint32_t { kHeaded = 1u << 0, kBare = 1u << 1, kAnchored = 1u << 2 };

// One peer's slot stream as an encoding sees it while sending one message.
struct SlotLink {
  transport::Transport& transport;
  transport::Memory& staging_memory;
  PeerState& state;
  EngineCounters& counters;
  int peer;
  uint8_t* staging;  // this rank's staging copy of the slot written next
  uint64_t remote;   // that slot in the peer's receive area
  size_t slot_bytes;
  uint32_t slots;             // per peer
  bool polled;                // slot messages are found by polling
  uint64_t peer_sleep_epoch;  // polled: the peer's latest announcement that it sleeps

  uint32_t slot() const { return static_cast<uint32_t>(state.slots_sent % slots); }
  // Whether this many consumptions not yet reported make a credit word due (a quarter of the slots).
  bool credits_due(uint64_t unreported) const { return unreported >= slots / 4; }
  // Whether the message repeats the previous eager message's tag and context (a headerless one may).
  bool same_stream(const SlotHeader& header) const {
    return state.sent_eager && header.tag == state.sent_tag && header.context == state.sent_context;
  }
  // Writes the staged bytes [offset, offset + bytes) to the same place of the peer's slot and
  // counts the slot sent.
  Status write(uint64_t offset, size_t bytes, bool notify, uint32_t imm);
};

class EagerEncoding {
 public:
  virtual ~EagerEncoding() = default;
  virtual const char* name() const = 0;
  virtual EncodingBit bit() const = 0;
  // Whether this eager message may travel this way now (both sides take the encoding).
  virtual bool applies(const SlotLink& link, const SlotHeader& header, const void* payload, size_t bytes) const = 0;
  virtual Status send(SlotLink& link, const SlotHeader& header, const void* payload, size_t bytes) const = 0;
};

const EagerEncoding& headed_encoding();
const EagerEncoding& bare_encoding();
const EagerEncoding& anchored_encoding();

// In the order a sender tries them; headed, last, always applies.
std::span<const EagerEncoding* const> eager_encodings();
// The encodings this rank takes and sends: RCC_EAGER_ENCODINGS (auto: every one the delivery mode
// allows) within what it allows: anchored only when polled, bare only where notices ride in writes
// (notice_packet_bytes > 0 toward some peer; checked per peer when sending). Headed always.
Status enabled_encodings(bool polled, uint32_t* mask);

}  // namespace rcc::p2p
