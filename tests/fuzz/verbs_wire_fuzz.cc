// libFuzzer target: the verbs backend's rank address and key blob decoders
// (src/transport/verbs/wire.cc). A decoded blob must re-encode and decode to the same fields.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "transport/verbs/wire.h"

namespace verbs = rcc::transport::verbs;

namespace {

bool same(const verbs::RankAddress& a, const verbs::RankAddress& b) {
  if (a.kind != b.kind || a.rank != b.rank || a.size != b.size || a.port != b.port || a.active_mtu != b.active_mtu ||
      a.lid != b.lid || std::memcmp(a.gid, b.gid, sizeof a.gid) != 0 || a.ipv4 != b.ipv4 || a.cm_port != b.cm_port ||
      a.qps.size() != b.qps.size()) {
    return false;
  }
  for (size_t i = 0; i < a.qps.size(); ++i) {
    if (a.qps[i].qpn != b.qps[i].qpn || a.qps[i].psn != b.qps[i].psn) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  verbs::RankAddress address;
  if (verbs::decode_address(data, size, &address) == RCC_SUCCESS) {
    verbs::RankAddress again;
    auto encoded = verbs::encode_address(address);
    if (verbs::decode_address(encoded.data(), encoded.size(), &again) != RCC_SUCCESS || !same(address, again)) {
      std::abort();
    }
    (void)verbs::gid_to_string(address.gid);
    (void)verbs::link_kind_name(address.kind);
  }
  verbs::KeyInfo key;
  if (verbs::decode_key(data, size, &key) == RCC_SUCCESS) {
    verbs::KeyInfo again;
    auto encoded = verbs::encode_key(key);
    if (verbs::decode_key(encoded.data(), encoded.size(), &again) != RCC_SUCCESS || again.rkey != key.rkey ||
        again.addr != key.addr || again.length != key.length) {
      std::abort();
    }
  }
  return 0;
}
