// The liveness channel's hello, kept apart from the sockets so it can be fuzzed: what a rank sends
// first on the connection it dials to a higher rank. 72 bytes:
//   u32 magic "rclv" (little endian) | i32 rank (little endian) | 64 bytes secret, NUL-padded
// A secret longer than 63 bytes is compared on its first 63 (both sides cut it the same way).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rcc::bootstrap {

constexpr size_t kLivenessHelloBytes = 4 + 4 + 64;

void encode_liveness_hello(int rank, const std::string& secret, uint8_t out[kLivenessHelloBytes]);

// Checks a complete hello (size must be kLivenessHelloBytes) from a rank in [0, max_rank) that knows
// secret. Returns that rank, or -1 with *why saying what is wrong (never quoting the secret). Pure.
int parse_liveness_hello(const uint8_t* data, size_t size, const std::string& secret, int max_rank, std::string* why);

}  // namespace rcc::bootstrap
