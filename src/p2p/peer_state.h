// What the engine keeps per peer: where its slots and credit word are, how many slot messages and
// rendezvous notices went each way, what waits for credits, and the eager stream state the
// encodings need (eager.h). Internal to the engine's files.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "p2p/request.h"
#include "p2p/wire.h"
#include "transport/transport.h"

namespace rcc::p2p {

struct PeerState {
  struct PendingMessage {
    SlotHeader header;
    std::vector<uint8_t> payload;  // a copy, or empty when `send` holds the caller's buffer
    // An eager send queued behind a full window of copies: written from its buffer, and completed,
    // when its turn comes; skipped if something ended it meanwhile (generation: the same request).
    Request* send = nullptr;
    uint32_t send_generation = 0;
  };
  struct PendingWrite {
    Request* send;
    uint64_t target;
    uint64_t bytes;
    uint64_t receiver_request;
  };

  // The slots this rank and the peer offer each other (both sides the same size, slot_layout.h):
  // the peer's in my receive area and my staging copies of mine in its area; where mine lie there.
  size_t eager_limit = 0, slot_bytes = 0;
  uint8_t* recv_slots = nullptr;
  uint8_t* send_slots = nullptr;
  uint64_t remote_slots = 0;   // my slots inside the peer's receive area
  uint64_t remote_credit = 0;  // my credit word inside the peer's credit area
  std::unique_ptr<transport::RemoteKey> slots_key, credit_key;

  // Sending.
  uint64_t slots_sent = 0, fins_sent = 0;
  uint64_t notified_epoch = 0;  // polled: the peer's sleep epoch when my last notified slot message went out
  // The peer's consumption of my messages as last carried by one of its slot headers.
  uint64_t granted_slots = 0, granted_fins = 0;
  std::deque<PendingMessage> pending_messages;  // waiting for a slot credit
  std::deque<PendingWrite> pending_writes;      // waiting for a FIN credit
  // The slot consumption my last slot message carried (header or bare notice): what a bare
  // notice's credit bits are relative to.
  uint64_t carried_slots = 0;

  // Receiving.
  uint64_t slots_consumed = 0, fins_consumed = 0, reported_slots = 0, reported_fins = 0;
  // Slot messages handled so far. Polled delivery releases the last one (zeroes what it wrote,
  // counts it consumed) at the next pass or when the next message is found, so in a ping-pong the
  // clean-up runs after the caller's reply went out rather than before the receive completes: at
  // most one slot (slots_consumed % slots) waits, and these are the bytes its message wrote.
  uint64_t slots_delivered = 0;
  uint64_t unreleased_offset = 0, unreleased_bytes = 0;

  // Eager encodings. Sending: those both sides take (eager.h's bits), the packet size on the path
  // (bare needs it), my last eager message's tag, context and length; receiving: the peer's last
  // ones, and per slot the notice of a bare message that arrived: its argument << 32 | length + 1
  // (0: none).
  uint32_t encodings = 0;
  size_t packet_bytes = 0;
  bool sent_eager = false, received_eager = false;
  int32_t sent_tag = 0, received_tag = 0;
  uint32_t sent_context = 0, received_context = 0;
  uint64_t sent_length = 0, received_length = 0;
  std::vector<uint64_t> bare_notices;

  bool failed = false;
  bool connected = false;  // set up from the peer's card (Engine::connect_peer)
};

}  // namespace rcc::p2p
