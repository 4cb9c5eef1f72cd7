// What travels between engines: the slot header at the start of every eager slot, and the 32-bit
// immediate that tells the receiver what landed.
#pragma once

#include <cstdint>

namespace rcc::p2p {

enum class SlotType : uint32_t {
  kEager = 1,  // payload follows the header
  kRts = 2,    // ready to send: a large message waits at the sender
  kCts = 3,    // clear to send: where to write it (key bytes follow the header)
};

struct SlotHeader {
  SlotType type;
  int32_t tag;
  uint32_t context;       // separates user point-to-point from collectives
  uint32_t key_length;    // kCts: bytes of remote key after the header
  uint64_t length;        // kEager: payload bytes; kRts: message bytes; kCts: bytes to write (0: refused)
  uint64_t sender_request;
  uint64_t receiver_request;
  uint64_t target_addr;   // kCts
  // The writer's cumulative consumption of the reader's messages (piggybacked credits: with
  // traffic both ways no separate credit write is needed). Never decreases.
  uint64_t credit_slots;
  uint64_t credit_fins;
};
static_assert(sizeof(SlotHeader) == 64);

// Immediate: 4 bits of kind, 28 bits of argument.
enum class ImmKind : uint32_t { kSlot = 1, kFin = 2 };
constexpr uint32_t kImmArgBits = 28;
constexpr uint32_t kImmArgMask = (1u << kImmArgBits) - 1;

inline uint32_t make_imm(ImmKind kind, uint32_t arg) { return (static_cast<uint32_t>(kind) << kImmArgBits) | arg; }
inline ImmKind imm_kind(uint32_t imm) { return static_cast<ImmKind>(imm >> kImmArgBits); }
inline uint32_t imm_arg(uint32_t imm) { return imm & kImmArgMask; }

// What a receiver tells a sender about the messages it has consumed (cumulative counts), written
// into the sender's credit area without a notice when no slot message carried them back soon enough.
struct CreditWord {
  uint64_t slots_consumed;
  uint64_t fins_consumed;
};

}  // namespace rcc::p2p
