// Writes the seed corpus in tests/fuzz/corpus/ from rcc's own encoders (run by hand when a wire
// format changes):  scripts/fuzz.sh --make-corpus
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "bootstrap/frame.h"
#include "bootstrap/job.h"
#include "bootstrap/liveness_hello.h"
#include "transport/verbs/connect_request.h"
#include "transport/verbs/wire.h"

namespace {

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<long>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "tests/fuzz/corpus";
  using rcc::bootstrap::FrameType;
  // frame_fuzz: first byte = value limit selector (20: 1 MiB), then frames.
  auto frames = [&](const std::string& name, std::vector<std::pair<FrameType, std::string>> list) {
    std::vector<uint8_t> out = {20};
    uint64_t id = 1;
    for (auto& [type, key] : list) {
      std::string value = type == FrameType::kHello ? "0123456789abcdef0123456789abcdef" : "value-" + key;
      rcc::bootstrap::append_frame(type, id++, type == FrameType::kHello ? "" : key,
                                   reinterpret_cast<const uint8_t*>(value.data()), value.size(), &out);
    }
    write(dir + "/frame/" + name, out);
  };
  frames("hello", {{FrameType::kHello, ""}});
  frames("hello_set_get", {{FrameType::kHello, ""}, {FrameType::kSet, "a/b"}, {FrameType::kGet, "a/b"}});
  frames("replies",
         {{FrameType::kOk, ""}, {FrameType::kValue, "k"}, {FrameType::kNotFound, "k"}, {FrameType::kTryGet, "x"}});

  namespace verbs = rcc::transport::verbs;
  verbs::RankAddress roce;
  roce.kind = verbs::LinkKind::kRoce;
  roce.rank = 1;
  roce.size = 3;
  roce.port = 1;
  roce.active_mtu = 3;
  roce.gid[10] = roce.gid[11] = 0xff;
  roce.gid[12] = 10;
  roce.qps = {{100, 7}, {0, 0}, {102, 9}};
  write(dir + "/verbs_wire/roce_address", verbs::encode_address(roce));
  verbs::RankAddress ib = roce;
  ib.kind = verbs::LinkKind::kInfiniband;
  ib.lid = 5;
  write(dir + "/verbs_wire/ib_address", verbs::encode_address(ib));
  verbs::RankAddress iwarp;
  iwarp.kind = verbs::LinkKind::kIwarp;
  iwarp.rank = 0;
  iwarp.size = 2;
  iwarp.ipv4 = 0x0100007f;
  iwarp.cm_port = 18515;
  write(dir + "/verbs_wire/iwarp_address", verbs::encode_address(iwarp));
  write(dir + "/verbs_wire/key", verbs::encode_key({0x1234, 0x7f0000001000, 65536}));

  char id[128];
  if (rcc::bootstrap::encode_unique_id("127.0.0.1:29500", "0123456789abcdef0123456789abcdef", id) == RCC_SUCCESS) {
    write(dir + "/unique_id/localhost", std::vector<uint8_t>(id, id + 128));
  }
  if (rcc::bootstrap::encode_unique_id("[fe80::1]:1", "s", id) == RCC_SUCCESS) {
    write(dir + "/unique_id/ipv6", std::vector<uint8_t>(id, id + 128));
  }
  // liveness_hello_fuzz: first byte = max_rank selector (3), then a hello from rank 2 (and a stranger's).
  for (auto [name, secret] : {std::pair<const char*, const char*>{"rank2", "0123456789abcdef0123456789abcdef"},
                              {"wrong_secret", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}) {
    std::vector<uint8_t> out = {3};
    uint8_t hello[rcc::bootstrap::kLivenessHelloBytes];
    rcc::bootstrap::encode_liveness_hello(2, secret, hello);
    out.insert(out.end(), hello, hello + sizeof hello);
    write(dir + "/liveness_hello/" + name, out);
  }
  // iwarp_connect_fuzz: bytes 0-1 = the receiving rank (2) and job size (3), then a request from
  // rank 1 (and a stranger's).
  for (auto [name, secret] : {std::pair<const char*, const char*>{"rank1", "0123456789abcdef0123456789abcdef"},
                              {"wrong_secret", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}) {
    std::vector<uint8_t> out = {2, 2};
    uint8_t request[verbs::kConnectRequestBytes];
    verbs::encode_connect_request(1, 3, secret, request);
    out.insert(out.end(), request, request + sizeof request);
    write(dir + "/iwarp_connect/" + name, out);
  }
  std::puts("corpus written");
  return 0;
}
