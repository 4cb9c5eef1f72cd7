// What travels between engines: the slot header at the start of every eager slot, the sequence
// word after its body, the anchor byte at the slot's end, and the 32-bit immediate that tells the
// receiver what landed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rcc::p2p {

enum class SlotType : uint16_t {
  kEager = 1,  // payload follows the header
  kRts = 2,    // ready to send: a large message waits at the sender
  kCts = 3,    // clear to send: where to write it (key bytes follow the header)
};

struct SlotHeader {
  SlotType type;
  uint16_t key_length;  // kCts: bytes of remote key after the header
  int32_t tag;
  uint32_t context;         // separates user point-to-point from collectives
  uint32_t sender_request;  // kRts, kCts: the sender's request index
  uint64_t length;          // kEager: payload bytes; kRts: message bytes; kCts: bytes to write (0: refused)
  uint64_t target_addr;     // kCts
  // The writer's cumulative consumption of the reader's messages (piggybacked credits: with
  // traffic both ways no separate credit write is needed). Never decreases.
  uint64_t credit_slots;
  uint64_t credit_fins;
  uint32_t receiver_request;   // kCts: the receiver's request index (its FIN names it)
  uint32_t sender_generation;  // kRts, kCts: the sender's request generation (request.h)
  uint32_t reserved;
  // The message's number in this sender's stream to this receiver, from 1 (low 32 bits). Last, and
  // written again after the body (tail_offset): writes land in address order, so a receiver
  // polling the slot has the whole message once both words hold the number it expects next.
  uint32_t sequence;
};
static_assert(sizeof(SlotHeader) == 64);
static_assert(offsetof(SlotHeader, sequence) == sizeof(SlotHeader) - sizeof(uint32_t));

// Bytes that follow the header: the payload (kEager), the remote key (kCts), nothing (kRts).
inline uint64_t body_bytes(const SlotHeader& header) {
  switch (header.type) {
    case SlotType::kEager: return header.length;
    case SlotType::kCts: return header.key_length;
    default: return 0;
  }
}
// Where the sequence word after a body of `body` bytes sits (8-aligned).
inline uint64_t tail_offset(uint64_t body) { return sizeof(SlotHeader) + (body + 7) / 8 * 8; }
constexpr uint64_t kTailBytes = sizeof(uint32_t);
// Whether an eager body of `body` bytes fits fewer packets of `packet` bytes alone than with the
// header and tail word around it (e.g. 4096 bytes: 4 packets of 1024 alone, 5 with them).
inline bool header_costs_a_packet(uint64_t body, uint64_t packet) {
  return body > 0 && (tail_offset(body) + kTailBytes + packet - 1) / packet > (body + packet - 1) / packet;
}
// The sequence word of the index-th slot message (from 0) of a stream: never 0, because a polling
// receiver zeroes each body it consumed (then no stale byte can pass for a tail word that has not
// landed yet) and a zero must never look like a message.
inline uint32_t slot_sequence(uint64_t index) { return static_cast<uint32_t>(index % 0xffffffffu) + 1; }

// The anchor byte: the last byte of every slot. The last kAnchorReserve bytes of a slot lie beyond
// the longest headed or bare message, and a free slot holds kAnchorIdle in its last byte. An
// anchored eager message is its payload alone, written to end at the slot's end, without header
// or notice; the receiver takes it once the last byte has changed, since a write's last byte
// lands last (what perftest's latency test polls too; a byte cannot be torn between packets),
// with the tag, context and length of the sender's previous eager message, which it repeats. A
// payload whose last byte is kAnchorIdle (the change would not be seen) goes with a header or
// bare instead.
constexpr uint64_t kAnchorReserve = 8;  // keeps the slot size 8-aligned
constexpr uint8_t kAnchorIdle =
    0xa5;  // arbitrary; less common at the end of data than 0x00, 0xff or a float's sign and exponent
// Whether a payload of `bytes` ending at the slot's end would change its anchor byte.
inline bool changes_anchor(const void* payload, uint64_t bytes) {
  return bytes > 0 && static_cast<const uint8_t*>(payload)[bytes - 1] != kAnchorIdle;
}
// Marks a free slot: kAnchorIdle in its last byte.
inline void arm_anchor(uint8_t* slot, size_t slot_bytes) { slot[slot_bytes - 1] = kAnchorIdle; }

// Immediate: 4 bits of kind, 28 bits of argument (a slot, or the receiver's request index).
enum class ImmKind : uint32_t {
  kSlot = 1,
  kFin = 2,
  // A bare eager message: only its payload, at the body's place in the slot. Its header would have
  // cost a packet of its own, so the notice carries what the receiver needs: the length comes with
  // it, tag and context are those of the previous eager message from the same sender, and the
  // argument holds the slot and the low bits of the piggybacked slot credits (bare_imm_arg).
  kBareSlot = 3,
  // Notified delivery: the receiver's consumption of my messages, in the notice itself (a write of
  // no bytes), so the sender never reads a credit word that a later write may be placing. The
  // argument holds the low kCreditBits of the cumulative slot and FIN counts (credit_imm_arg).
  kCredit = 4,
  // The answer to a clear-to-send whose send had already been ended by a failure: nothing was
  // written, and the receive named by the argument may be handed back. Counts as a FIN (credits).
  kFinRefused = 5,
};
constexpr uint32_t kImmArgBits = 28;
constexpr uint32_t kImmArgMask = (1u << kImmArgBits) - 1;

// A bare notice's argument: the slot in the low 12 bits (RCC_EAGER_SLOTS <= 4096), above them the
// low 16 bits of the sender's cumulative consumption of the receiver's slot messages. The sender
// goes bare only while that count is less than 2^16 past the value its previous slot message
// carried, so the receiver recovers it exactly from its own copy of that value.
constexpr uint32_t kBareSlotBits = 12, kBareCreditBits = 16;
static_assert(kBareSlotBits + kBareCreditBits == 28);
inline uint32_t bare_imm_arg(uint32_t slot, uint64_t credit_slots) {
  return slot | static_cast<uint32_t>(credit_slots & ((1u << kBareCreditBits) - 1)) << kBareSlotBits;
}
inline uint32_t bare_slot(uint32_t arg) { return arg & ((1u << kBareSlotBits) - 1); }
// The full count, from its low bits and the previous value carried in the same stream.
inline uint64_t bare_credit(uint32_t arg, uint64_t previous) {
  const uint64_t low = arg >> kBareSlotBits;
  return previous + ((low - previous) & ((1u << kBareCreditBits) - 1));
}

inline uint32_t make_imm(ImmKind kind, uint32_t arg) { return (static_cast<uint32_t>(kind) << kImmArgBits) | arg; }
inline ImmKind imm_kind(uint32_t imm) { return static_cast<ImmKind>(imm >> kImmArgBits); }
inline uint32_t imm_arg(uint32_t imm) { return imm & kImmArgMask; }

// A credit notice's argument: the low 14 bits of the slots consumed, above them those of the FINs.
// Between two credit notices (or slot headers) of one stream at most RCC_EAGER_SLOTS slots and as
// many FINs are consumed (the sender never has more outstanding), which is less than 2^14, so the
// sender recovers both counts exactly from the values it knew before.
constexpr uint32_t kCreditBits = 14;
static_assert(2 * kCreditBits == kImmArgBits);
inline uint32_t credit_imm_arg(uint64_t slots_consumed, uint64_t fins_consumed) {
  constexpr uint64_t mask = (1u << kCreditBits) - 1;
  return static_cast<uint32_t>(slots_consumed & mask) | static_cast<uint32_t>(fins_consumed & mask) << kCreditBits;
}
inline uint64_t credit_from_low(uint32_t low, uint64_t previous) {
  return previous + ((low - previous) & ((1u << kCreditBits) - 1));
}
inline uint64_t credit_slots(uint32_t arg, uint64_t previous) {
  return credit_from_low(arg & ((1u << kCreditBits) - 1), previous);
}
inline uint64_t credit_fins(uint32_t arg, uint64_t previous) { return credit_from_low(arg >> kCreditBits, previous); }

// What a receiver tells a sender about the messages it has consumed (cumulative counts), written
// into the sender's credit area without a notice when no slot message carried them back soon enough
// (polled delivery only: notified delivery sends the counts in a kCredit notice).
struct CreditWord {
  uint64_t slots_consumed;
  uint64_t fins_consumed;
  // Raised by a receiver that polls its slots before it goes to sleep: a sender whose last
  // notified slot message predates this value notifies its next one, which wakes the receiver.
  uint64_t sleep_epoch;
};

}  // namespace rcc::p2p
