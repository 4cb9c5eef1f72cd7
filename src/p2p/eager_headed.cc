// Headed eager messages: header, payload, tail word. The header piggybacks this rank's credits for
// the peer, so traffic both ways needs no credit writes. Polled delivery notifies only a receiver
// that announced it sleeps (once per announcement); notified delivery notifies every one.
#include <cstring>

#include "p2p/eager.h"

namespace rcc::p2p {
namespace {

class Headed final : public EagerEncoding {
 public:
  const char* name() const override { return "headed"; }
  EncodingBit bit() const override { return kHeaded; }
  bool applies(const SlotLink&, const SlotHeader&, const void*, size_t) const override { return true; }

  Status send(SlotLink& link, const SlotHeader& header, const void* payload, size_t bytes) const override {
    PeerState& state = link.state;
    std::memcpy(link.staging, &header, sizeof header);
    auto* sent = reinterpret_cast<SlotHeader*>(link.staging);
    sent->credit_slots = state.reported_slots = state.carried_slots = state.slots_consumed;
    sent->credit_fins = state.reported_fins = state.fins_consumed;
    const uint32_t sequence = slot_sequence(state.slots_sent);
    sent->sequence = sequence;
    if (bytes > 0) std::memcpy(link.staging + sizeof header, payload, bytes);
    const uint64_t tail = tail_offset(bytes);  // bytes: the body (eager payload, or a clear-to-send's key)
    std::memcpy(link.staging + tail, &sequence, kTailBytes);
    bool notify = true;
    if (link.polled) {
      notify = link.peer_sleep_epoch != state.notified_epoch;
      state.notified_epoch = link.peer_sleep_epoch;
    }
    const uint32_t imm = make_imm(ImmKind::kSlot, link.slot());
    RCC_RETURN_IF_ERROR(link.write(0, tail + kTailBytes, notify, imm));
    if (header.type == SlotType::kEager) {  // the receiver's "previous eager message" from now on
      state.sent_eager = true;
      state.sent_tag = header.tag;
      state.sent_context = header.context;
      state.sent_length = bytes;
      ++link.counters.headed_sent;
    }
    return RCC_SUCCESS;
  }
};

}  // namespace

const EagerEncoding& headed_encoding() {
  static const Headed encoding;
  return encoding;
}

}  // namespace rcc::p2p
