#include "bootstrap/liveness_hello.h"

#include <cstring>

#include "bootstrap/wire_fields.h"

namespace rcc::bootstrap {
namespace {

constexpr uint32_t kHelloMagic = 0x72636c76;  // "rclv"

}  // namespace

void encode_liveness_hello(int rank, const std::string& secret, uint8_t out[kLivenessHelloBytes]) {
  std::memset(out, 0, kLivenessHelloBytes);
  store_le32(kHelloMagic, out);
  store_le32(static_cast<uint32_t>(rank), out + 4);
  store_secret_field(secret, out + 8);
}

int parse_liveness_hello(const uint8_t* data, size_t size, const std::string& secret, int max_rank, std::string* why) {
  if (size != kLivenessHelloBytes) {
    *why = "hello of " + std::to_string(size) + " bytes, not " + std::to_string(kLivenessHelloBytes);
    return -1;
  }
  if (load_le32(data) != kHelloMagic) {
    *why = "not an rcc liveness hello (bad magic)";
    return -1;
  }
  const int32_t rank = static_cast<int32_t>(load_le32(data + 4));
  // The whole field is compared (what is expected is NUL-padded), without an early exit.
  if (!secret_field_matches(data + 8, secret)) {
    *why = "wrong job secret";
    return -1;
  }
  if (rank < 0 || rank >= max_rank) {
    *why =
        "rank " + std::to_string(rank) + " is not one that dials this rank (0.." + std::to_string(max_rank - 1) + ")";
    return -1;
  }
  return rank;
}

}  // namespace rcc::bootstrap
