// libFuzzer target: the iWARP connection request check (src/transport/verbs/connect_request.cc) on
// arbitrary private data, what any stranger can send to a rank's connection manager port. An
// accepted request names a lower rank and begins exactly as that rank would encode it; a refused
// one says why without quoting the secret.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "transport/verbs/connect_request.h"

namespace verbs = rcc::transport::verbs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int me = data[0] % 9, job_size = 1 + data[1] % 9;  // me may lie outside the job: refused
  data += 2;
  size -= 2;
  static const std::string secret = "0123456789abcdef0123456789abcdef";
  std::string why;
  const int rank = verbs::parse_connect_request(size == 0 ? nullptr : data, size, secret, me, job_size, &why);
  if (rank < 0) {
    if (why.empty() || why.find(secret) != std::string::npos) std::abort();
    return 0;
  }
  if (rank >= me || size < verbs::kConnectRequestBytes) std::abort();
  uint8_t again[verbs::kConnectRequestBytes];
  verbs::encode_connect_request(rank, job_size, secret, again);
  if (std::memcmp(again, data, sizeof again) != 0) std::abort();
  return 0;
}
