#include "transport/verbs/connect_request.h"

#include "bootstrap/wire_fields.h"

namespace rcc::transport::verbs {
namespace {

using bootstrap::load_le32;
using bootstrap::store_le32;

constexpr uint32_t kConnectMagic = 0x43434352;  // "RCCC"

}  // namespace

void encode_connect_request(int rank, int size, const std::string& secret, uint8_t out[kConnectRequestBytes]) {
  store_le32(kConnectMagic, out);
  store_le32(static_cast<uint32_t>(rank), out + 4);
  store_le32(static_cast<uint32_t>(size), out + 8);
  bootstrap::store_secret_field(secret, out + 12);
}

int parse_connect_request(const void* data, size_t length, const std::string& secret, int me, int size,
                          std::string* why) {
  // rdma_cm may hand over more bytes than were sent (the transport pads private data): only the
  // first kConnectRequestBytes count.
  if (data == nullptr || length < kConnectRequestBytes) {
    *why = "private data of " + std::to_string(data == nullptr ? 0 : length) + " bytes, not an rcc request";
    return -1;
  }
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (load_le32(bytes) != kConnectMagic) {
    *why = "not an rcc connection request (bad magic)";
    return -1;
  }
  if (!bootstrap::secret_field_matches(bytes + 12, secret)) {  // the whole field, no early exit
    *why = "wrong job secret";
    return -1;
  }
  const uint32_t rank = load_le32(bytes + 4), their_size = load_le32(bytes + 8);
  if (their_size != static_cast<uint32_t>(size)) {
    *why = "a job of " + std::to_string(their_size) + " ranks, not " + std::to_string(size);
    return -1;
  }
  // Compared as unsigned: a "rank" of 2^31 or more is no negative index.
  if (me <= 0 || rank >= static_cast<uint32_t>(me)) {
    *why = "rank " + std::to_string(rank) + " is not one that connects to rank " + std::to_string(me) +
           (me > 0 ? " (0.." + std::to_string(me - 1) + ")" : " (none do)");
    return -1;
  }
  return static_cast<int>(rank);
}

}  // namespace rcc::transport::verbs
