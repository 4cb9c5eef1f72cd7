// libFuzzer target: decoding an rcc_unique_id_t (src/bootstrap/job.cc decode_unique_id), the one
// blob a user passes in from outside. A decoded id must re-encode to one that decodes the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bootstrap/job.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char id[128] = {};
  std::memcpy(id, data, size < sizeof id ? size : sizeof id);
  std::string address, secret;
  if (rcc::bootstrap::decode_unique_id(id, &address, &secret) != RCC_SUCCESS) return 0;
  char again[128];
  std::string address2, secret2;
  if (rcc::bootstrap::encode_unique_id(address, secret, again) != RCC_SUCCESS ||
      rcc::bootstrap::decode_unique_id(again, &address2, &secret2) != RCC_SUCCESS || address2 != address ||
      secret2 != secret) {
    std::abort();
  }
  return 0;
}
