// Matching: posted receives against arrived messages, by source, tag and context, as MPI does.
// A receive may name any source and any tag (never any context: a communicator's and rcc's own
// traffic stay apart). Order is kept both ways: a message takes the earliest-posted receive it
// matches, and a receive takes the earliest-arrived message it matches (so two messages of one
// sender that both match are received in the order sent, and a wildcard receive serves senders in
// the order their messages came: none starves).
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "p2p/request.h"
#include "p2p/wire.h"

namespace rcc::p2p {

// A message that arrived before a receive matched it: an eager payload (copied out of its slot),
// a large message's ready-to-send, or a large send to oneself (copied from the sender when matched).
struct Arrival {
  int source = -1;
  SlotHeader header{};  // type (kEager or kRts), tag, context, length, sender_request
  uint64_t order = 0;   // when it arrived, among all sources
  std::vector<uint8_t> payload;
  Request* self_send = nullptr;
};

inline bool tag_matches(int wanted, int tag) { return wanted == kAnyTag || wanted == tag; }

class Matcher {
 public:
  explicit Matcher(int ranks) : posted_(static_cast<size_t>(ranks)), arrived_(static_cast<size_t>(ranks)) {}

  // Posts a receive (source may be kAnySource); numbers it in posting order.
  void post(Request* receive);
  // The earliest-posted receive a message from `source` with this tag and context matches, taken
  // off the list; null when none does.
  Request* take_receive(int source, int tag, uint32_t context);
  // Parks a message no receive matched; numbers it in arrival order.
  void park(Arrival arrival);
  // The earliest-arrived message a receive of (source, tag, context) matches (source and tag may
  // be wildcards), taken off the list into *out; false when none.
  bool take_arrival(int source, int tag, uint32_t context, Arrival* out);
  // The same message, left where it is (a probe); null when none.
  const Arrival* peek_arrival(int source, int tag, uint32_t context);
  // Takes a posted receive off its list (it ended without a message: failed, timed out); nothing
  // if it is not posted.
  void unpost(Request* receive);
  // Drops what `source` sent that nobody received yet (it failed).
  void forget_arrivals_from(int source) { arrived_[static_cast<size_t>(source)].clear(); }

 private:
  struct Found {
    std::deque<Arrival>* list = nullptr;
    std::deque<Arrival>::iterator at;
  };
  Found locate(int source, int tag, uint32_t context);
  std::deque<Request*>* list_for(int source) {
    return source == kAnySource ? &any_source_ : &posted_[static_cast<size_t>(source)];
  }

  std::vector<std::deque<Request*>> posted_;  // by source
  std::deque<Request*> any_source_;           // receives from any source
  std::vector<std::deque<Arrival>> arrived_;  // by source, in arrival order
  uint64_t next_posted_ = 0;
  uint64_t next_arrival_ = 0;
};

}  // namespace rcc::p2p
