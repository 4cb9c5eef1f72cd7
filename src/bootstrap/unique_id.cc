// The unique id of rcc_get_unique_id: the rendezvous address and the job secret in 128 bytes,
// with a magic, a version and a checksum so that garbage is refused with a clear message.
#include <cstring>

#include "bootstrap/job.h"
#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {
namespace {

uint32_t fnv1a32(const uint8_t* data, size_t size) {
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 16777619u;
  return hash;
}

constexpr char kUniqueIdMagic[4] = {'R', 'C', 'C', 'U'};
constexpr uint8_t kUniqueIdVersion = 1;
constexpr size_t kUniqueIdBytes = 128;
constexpr size_t kUniqueIdHeader = 8;    // magic, version, address length, secret length, 0
constexpr size_t kUniqueIdChecksum = 4;  // FNV-1a of everything before it

}  // namespace

Status encode_unique_id(const std::string& address, const std::string& secret, char out[128]) {
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "encode_unique_id: out is null");
  const size_t room = kUniqueIdBytes - kUniqueIdHeader - kUniqueIdChecksum;
  if (address.empty() || secret.empty() || address.size() + secret.size() > room) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id: address (%zu bytes) and secret (%zu bytes) must fit in %zu bytes",
                address.size(), secret.size(), room);
  }
  uint8_t bytes[kUniqueIdBytes] = {};
  std::memcpy(bytes, kUniqueIdMagic, 4);
  bytes[4] = kUniqueIdVersion;
  bytes[5] = static_cast<uint8_t>(address.size());
  bytes[6] = static_cast<uint8_t>(secret.size());
  std::memcpy(bytes + kUniqueIdHeader, address.data(), address.size());
  std::memcpy(bytes + kUniqueIdHeader + address.size(), secret.data(), secret.size());
  uint32_t sum = fnv1a32(bytes, kUniqueIdBytes - kUniqueIdChecksum);
  for (int i = 0; i < 4; ++i) bytes[kUniqueIdBytes - 4 + i] = static_cast<uint8_t>(sum >> (8 * i));
  std::memcpy(out, bytes, kUniqueIdBytes);
  return RCC_SUCCESS;
}

Status decode_unique_id(const char in[128], std::string* address, std::string* secret) {
  if (in == nullptr || address == nullptr || secret == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "decode_unique_id: in, address and secret must not be null");
  }
  uint8_t bytes[kUniqueIdBytes];
  std::memcpy(bytes, in, kUniqueIdBytes);
  if (std::memcmp(bytes, kUniqueIdMagic, 4) != 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT,
                "unique id is not an rcc unique id (bad magic); pass the bytes rcc_get_unique_id produced");
  }
  if (bytes[4] != kUniqueIdVersion) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id has version %d, this rcc understands %d", bytes[4],
                kUniqueIdVersion);
  }
  uint32_t sum = 0;
  for (int i = 3; i >= 0; --i) sum = (sum << 8) | bytes[kUniqueIdBytes - 4 + i];
  if (sum != fnv1a32(bytes, kUniqueIdBytes - kUniqueIdChecksum)) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id is corrupted (checksum mismatch)");
  }
  size_t address_size = bytes[5];
  size_t secret_size = bytes[6];
  if (address_size == 0 || secret_size == 0 || bytes[7] != 0 ||
      kUniqueIdHeader + address_size + secret_size > kUniqueIdBytes - kUniqueIdChecksum) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "unique id has invalid lengths (address %zu, secret %zu)", address_size,
                secret_size);
  }
  std::string decoded_address(reinterpret_cast<const char*>(bytes + kUniqueIdHeader), address_size);
  std::string decoded_secret(reinterpret_cast<const char*>(bytes + kUniqueIdHeader + address_size), secret_size);
  std::string host;
  int port = 0;
  if (split_address(decoded_address, "unique id address", &host, &port) != RCC_SUCCESS) return RCC_ERR_INVALID_ARGUMENT;
  *address = decoded_address;
  *secret = decoded_secret;
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
