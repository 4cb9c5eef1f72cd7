// Fields shared by rcc's small fixed-size hellos (the liveness hello, the iWARP connection
// request): little-endian 32-bit words, written byte by byte so that neither alignment nor host
// order matters, and the job secret as a 64-byte NUL-padded field (its first 63 bytes), compared
// in full without an early exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace rcc::bootstrap {

inline uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

inline void store_le32(uint32_t v, uint8_t* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

constexpr size_t kSecretFieldBytes = 64;

inline void store_secret_field(const std::string& secret, uint8_t* out) {
  std::memset(out, 0, kSecretFieldBytes);
  std::memcpy(out, secret.data(), secret.size() < kSecretFieldBytes - 1 ? secret.size() : kSecretFieldBytes - 1);
}

inline bool secret_field_matches(const uint8_t* field, const std::string& secret) {
  uint8_t expected[kSecretFieldBytes];
  store_secret_field(secret, expected);
  unsigned char diff = 0;
  for (size_t i = 0; i < kSecretFieldBytes; ++i) diff |= static_cast<unsigned char>(expected[i] ^ field[i]);
  return diff == 0;
}

}  // namespace rcc::bootstrap
