// The verbs backend's blobs: the per-rank address exchanged by the bootstrap and the key blob of a
// registered range. Pure functions (no verbs calls) so a fuzzer can drive the decoders directly.
// Everything is little-endian; every blob starts with a magic and a version so a blob from another
// backend, another rcc version or another RDMA transport type is refused with a clear message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace rcc::transport::verbs {

// How ranks reach each other; ranks of one job must all use the same kind.
enum class LinkKind : uint8_t { kInfiniband = 1, kRoce = 2, kIwarp = 3 };
const char* link_kind_name(LinkKind kind);

// The queue pair a rank created for one peer (IB/RoCE: connected by hand from these).
struct QpEndpoint {
  uint32_t qpn = 0;
  uint32_t psn = 0;  // 24 bits
};

struct RankAddress {
  LinkKind kind = LinkKind::kRoce;
  uint32_t rank = 0;
  uint32_t size = 0;
  uint8_t port = 0;
  uint8_t active_mtu = 0;       // enum ibv_mtu
  uint16_t lid = 0;             // IB
  uint8_t gid[16] = {};         // RoCE (and IB with a GRH)
  uint32_t ipv4 = 0;            // iWARP: network byte order, rdma_cm listener
  uint16_t cm_port = 0;         // iWARP: host byte order
  std::vector<QpEndpoint> qps;  // IB/RoCE: index = peer rank (own entry unused); iWARP: empty
};

inline constexpr uint32_t kAddressMagic = 0x41434352;  // "RCCA"
inline constexpr uint8_t kAddressVersion = 1;
inline constexpr uint32_t kKeyMagic = 0x4b434352;  // "RCCK"
inline constexpr size_t kKeyBlobSize = 24;

std::vector<uint8_t> encode_address(const RankAddress& address);
// RCC_ERR_INVALID_ARGUMENT naming what is wrong (length, magic, version, kind, qp count).
Status decode_address(const uint8_t* data, size_t length, RankAddress* out);

struct KeyInfo {
  uint32_t rkey = 0;
  uint64_t addr = 0;
  uint64_t length = 0;
};
std::vector<uint8_t> encode_key(const KeyInfo& key);
Status decode_key(const uint8_t* data, size_t length, KeyInfo* out);

// The notice sent after a write on the write-then-send path (iWARP, RCC_IB_USE_IMM=0, split writes).
struct NotifyMessage {
  uint32_t imm;
  uint32_t magic;
  uint64_t length;
};
static_assert(sizeof(NotifyMessage) == 16);
inline constexpr uint32_t kNotifyMagic = 0x4e434352;  // "RCCN"

// "fe80::1", "::ffff:10.0.2.15" style text of a GID.
std::string gid_to_string(const uint8_t gid[16]);

}  // namespace rcc::transport::verbs
