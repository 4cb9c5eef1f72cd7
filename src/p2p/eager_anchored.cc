// Anchored eager messages (ib_write_lat's protocol): the payload alone, ending on the slot's last
// byte, as a plain write without notice; the receiver takes it when that byte leaves kAnchorIdle
// (a write's last byte lands last on devices that place writes in order; a byte cannot be torn
// between packets). Tag, context and length repeat the previous eager message's.
#include <cstring>

#include "p2p/eager.h"

namespace rcc::p2p {
namespace {

class Anchored final : public EagerEncoding {
 public:
  const char* name() const override { return "anchored"; }
  EncodingBit bit() const override { return kAnchored; }

  bool applies(const SlotLink& link, const SlotHeader& header, const void* payload, size_t bytes) const override {
    const PeerState& state = link.state;
    if ((state.encodings & kAnchored) == 0 || !link.polled || header.type != SlotType::kEager ||
        !link.same_stream(header) || bytes != state.sent_length || !changes_anchor(payload, bytes)) {
      return false;
    }
    // It carries no notice: a receiver that announced it sleeps needs a bare or headed one.
    if (link.peer_sleep_epoch != state.notified_epoch) return false;
    // Nor credits: when this rank's next consumption would make it write a credit word, a headed or
    // bare message carries them instead (in a ping-pong no credit word is written at all).
    const uint64_t unreported = state.slots_consumed - state.reported_slots;
    return unreported == 0 || !link.credits_due(unreported + 1);
  }

  Status send(SlotLink& link, const SlotHeader&, const void* payload, size_t bytes) const override {
    const uint64_t offset = link.slot_bytes - bytes;  // ends on the anchor byte
    std::memcpy(link.staging + offset, payload, bytes);
    RCC_RETURN_IF_ERROR(link.write(offset, bytes, false, 0));
    ++link.counters.anchored_sent;
    return RCC_SUCCESS;
  }
};

}  // namespace

const EagerEncoding& anchored_encoding() {
  static const Anchored encoding;
  return encoding;
}

}  // namespace rcc::p2p
