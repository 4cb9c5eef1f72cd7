// The private data of an iWARP connection request (rdma_cm), kept apart from the sockets so it
// can be fuzzed: who is connecting, and proof that it belongs to the job. 76 bytes:
//   u32 magic "RCCC" | u32 rank | u32 size (little endian) | 64 bytes job secret, NUL-padded
// The secret is compared on its first 63 bytes, as on rcc's other connections.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rcc::transport::verbs {

constexpr size_t kConnectRequestBytes = 4 + 4 + 4 + 64;

void encode_connect_request(int rank, int size, const std::string& secret, uint8_t out[kConnectRequestBytes]);

// Checks the private data of a request that reached rank `me` of a job of `size` ranks. Only a
// lower rank connects to a higher one, so the rank must lie in [0, me). Returns it, or -1 with
// *why saying what is wrong (never quoting the secret). Pure.
int parse_connect_request(const void* data, size_t length, const std::string& secret, int me, int size,
                          std::string* why);

}  // namespace rcc::transport::verbs
