#include "transport/verbs/wire.h"

#include <arpa/inet.h>

#include <cstring>

namespace rcc::transport::verbs {
namespace {

// Header: magic u32, version u8, kind u8, port u8, mtu u8, rank u32, size u32, lid u16, cm_port u16,
// ipv4 u32, gid[16], qp count u32, then count * (qpn u32, psn u32).
constexpr size_t kHeaderSize = 4 + 4 + 4 + 4 + 2 + 2 + 4 + 16 + 4;

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>* out) : out_(out) {}
  void u8(uint8_t v) { out_->push_back(v); }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void bytes(const uint8_t* p, size_t n) { out_->insert(out_->end(), p, p + n); }

 private:
  void put(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_->push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t>* out_;
};

// Callers check the total length first, so reads never run past the end.
class Reader {
 public:
  explicit Reader(const uint8_t* p) : p_(p) {}
  uint8_t u8() { return *p_++; }
  uint16_t u16() { return static_cast<uint16_t>(get(2)); }
  uint32_t u32() { return static_cast<uint32_t>(get(4)); }
  uint64_t u64() { return get(8); }
  void bytes(uint8_t* out, size_t n) {
    std::memcpy(out, p_, n);
    p_ += n;
  }

 private:
  uint64_t get(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += n;
    return v;
  }
  const uint8_t* p_;
};

}  // namespace

const char* link_kind_name(LinkKind kind) {
  switch (kind) {
    case LinkKind::kInfiniband: return "InfiniBand";
    case LinkKind::kRoce: return "RoCE";
    case LinkKind::kIwarp: return "iWARP";
  }
  return "unknown";
}

std::vector<uint8_t> encode_address(const RankAddress& a) {
  std::vector<uint8_t> out;
  out.reserve(kHeaderSize + 8 * a.qps.size());
  Writer w(&out);
  w.u32(kAddressMagic);
  w.u8(kAddressVersion);
  w.u8(static_cast<uint8_t>(a.kind));
  w.u8(a.port);
  w.u8(a.active_mtu);
  w.u32(a.rank);
  w.u32(a.size);
  w.u16(a.lid);
  w.u16(a.cm_port);
  w.u32(a.ipv4);
  w.bytes(a.gid, sizeof a.gid);
  w.u32(static_cast<uint32_t>(a.qps.size()));
  for (const QpEndpoint& qp : a.qps) {
    w.u32(qp.qpn);
    w.u32(qp.psn);
  }
  return out;
}

Status decode_address(const uint8_t* data, size_t length, RankAddress* out) {
  if (data == nullptr && length != 0) return fail(RCC_ERR_INVALID_ARGUMENT, "verbs address: data is null");
  if (length < kHeaderSize) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs address: %zu bytes, shorter than the %zu-byte header", length,
                kHeaderSize);
  }
  Reader r(data);
  uint32_t magic = r.u32();
  if (magic != kAddressMagic) {
    return fail(RCC_ERR_INVALID_ARGUMENT,
                "verbs address: bad magic 0x%08x (not a verbs address: do all ranks use RCC_TRANSPORT=verbs?)", magic);
  }
  uint8_t version = r.u8();
  if (version != kAddressVersion) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs address: version %u, this rcc speaks version %u (mixed rcc builds?)",
                version, kAddressVersion);
  }
  RankAddress a;
  uint8_t kind = r.u8();
  if (kind < static_cast<uint8_t>(LinkKind::kInfiniband) || kind > static_cast<uint8_t>(LinkKind::kIwarp)) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs address: unknown link kind %u", kind);
  }
  a.kind = static_cast<LinkKind>(kind);
  a.port = r.u8();
  a.active_mtu = r.u8();
  a.rank = r.u32();
  a.size = r.u32();
  a.lid = r.u16();
  a.cm_port = r.u16();
  a.ipv4 = r.u32();
  r.bytes(a.gid, sizeof a.gid);
  uint32_t count = r.u32();
  if (a.size == 0 || a.rank >= a.size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs address: rank %u is not below size %u", a.rank, a.size);
  }
  uint32_t expected = a.kind == LinkKind::kIwarp ? 0 : a.size;
  if (count != expected) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs address of rank %u: %u queue pairs, expected %u", a.rank, count,
                expected);
  }
  if ((length - kHeaderSize) / 8 != count || (length - kHeaderSize) % 8 != 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs address of rank %u: %zu bytes, expected %zu", a.rank, length,
                kHeaderSize + 8 * static_cast<size_t>(count));
  }
  a.qps.resize(count);
  for (QpEndpoint& qp : a.qps) {
    qp.qpn = r.u32();
    qp.psn = r.u32();
  }
  *out = std::move(a);
  return RCC_SUCCESS;
}

std::vector<uint8_t> encode_key(const KeyInfo& key) {
  std::vector<uint8_t> out;
  out.reserve(kKeyBlobSize);
  Writer w(&out);
  w.u32(kKeyMagic);
  w.u32(key.rkey);
  w.u64(key.addr);
  w.u64(key.length);
  return out;
}

Status decode_key(const uint8_t* data, size_t length, KeyInfo* out) {
  if (length != kKeyBlobSize || data == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs key: %zu bytes, expected %zu (not a key packed by the verbs backend)",
                length, kKeyBlobSize);
  }
  Reader r(data);
  uint32_t magic = r.u32();
  if (magic != kKeyMagic) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs key: bad magic 0x%08x (not a key packed by the verbs backend)", magic);
  }
  KeyInfo key;
  key.rkey = r.u32();
  key.addr = r.u64();
  key.length = r.u64();
  if (key.addr + key.length < key.addr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "verbs key: range 0x%llx+%llu wraps around",
                static_cast<unsigned long long>(key.addr), static_cast<unsigned long long>(key.length));
  }
  *out = key;
  return RCC_SUCCESS;
}

std::string gid_to_string(const uint8_t gid[16]) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (inet_ntop(AF_INET6, gid, text, sizeof text) == nullptr) return "?";
  return text;
}

}  // namespace rcc::transport::verbs
