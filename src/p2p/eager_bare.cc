// Bare eager messages: the payload at the body's place in the slot and a notice. Used where the
// header would cost a packet of its own (e.g. 4096 bytes on a 1024-byte MTU: 4 packets alone, 5
// with header and tail) and the notice rides in the write, bringing the length with it.
#include "p2p/eager.h"

#include <cstring>

namespace rcc::p2p {
namespace {

class Bare final : public EagerEncoding {
 public:
  const char* name() const override { return "bare"; }
  EncodingBit bit() const override { return kBare; }

  bool applies(const SlotLink& link, const SlotHeader& header, const void*, size_t bytes) const override {
    const PeerState& state = link.state;
    return (state.encodings & kBare) != 0 && header.type == SlotType::kEager && link.same_stream(header) &&
           state.packet_bytes > 0 && header_costs_a_packet(bytes, state.packet_bytes) &&
           // The notice carries the low bits of the credits: the receiver recovers them only
           // within 2^16 of those the previous slot message carried.
           state.slots_consumed - state.carried_slots < (uint64_t{1} << kBareCreditBits);
  }

  Status send(SlotLink& link, const SlotHeader&, const void* payload, size_t bytes) const override {
    PeerState& state = link.state;
    // Notified, so it also wakes a receiver that announced it sleeps.
    state.notified_epoch = link.peer_sleep_epoch;
    const uint32_t imm = make_imm(ImmKind::kBareSlot, bare_imm_arg(link.slot(), state.slots_consumed));
    std::memcpy(link.staging + sizeof(SlotHeader), payload, bytes);
    RCC_RETURN_IF_ERROR(link.write(sizeof(SlotHeader), bytes, true, imm));
    state.reported_slots = state.carried_slots = state.slots_consumed;
    state.sent_length = bytes;
    ++link.counters.bare_sent;
    return RCC_SUCCESS;
  }
};

}  // namespace

const EagerEncoding& bare_encoding() {
  static const Bare encoding;
  return encoding;
}

}  // namespace rcc::p2p
