// libFuzzer target: the liveness listener's hello check (src/bootstrap/liveness_hello.cc) on
// arbitrary bytes, what any stranger can send to a rank's liveness port. An accepted hello must be
// exactly the one its rank would encode; a refused one must say why without quoting the secret.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bootstrap/liveness_hello.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int max_rank = data[0] % 9;  // 0: rank 0 accepts from no one
  ++data;
  --size;
  static const std::string secret = "0123456789abcdef0123456789abcdef";
  std::string why;
  const int rank = rcc::bootstrap::parse_liveness_hello(data, size, secret, max_rank, &why);
  if (rank < 0) {
    if (why.empty() || why.find(secret) != std::string::npos) std::abort();
    return 0;
  }
  if (rank >= max_rank || size != rcc::bootstrap::kLivenessHelloBytes) std::abort();
  uint8_t again[rcc::bootstrap::kLivenessHelloBytes];
  rcc::bootstrap::encode_liveness_hello(rank, secret, again);
  if (std::memcmp(again, data, sizeof again) != 0) std::abort();
  return 0;
}
