// The verbs blob codecs (pure functions; no device needed).
#include <gtest/gtest.h>

#include <cstring>

#include "transport/verbs/connect_request.h"
#include "transport/verbs/wire.h"

namespace rcc::transport::verbs {
namespace {

RankAddress sample(LinkKind kind, uint32_t size) {
  RankAddress a;
  a.kind = kind;
  a.rank = 1;
  a.size = size;
  a.port = 1;
  a.active_mtu = 3;
  a.lid = 0x1234;
  for (int i = 0; i < 16; ++i) a.gid[i] = static_cast<uint8_t>(i * 17);
  a.ipv4 = 0x0f02000a;
  a.cm_port = 4791;
  if (kind != LinkKind::kIwarp) {
    for (uint32_t r = 0; r < size; ++r) a.qps.push_back({100 + r, 0xabcdef - r});
  }
  return a;
}

TEST(VerbsWire, AddressRoundTrips) {
  for (LinkKind kind : {LinkKind::kInfiniband, LinkKind::kRoce, LinkKind::kIwarp}) {
    RankAddress a = sample(kind, 4);
    std::vector<uint8_t> blob = encode_address(a);
    RankAddress b;
    ASSERT_EQ(decode_address(blob.data(), blob.size(), &b), RCC_SUCCESS) << last_error();
    EXPECT_EQ(b.kind, a.kind);
    EXPECT_EQ(b.rank, a.rank);
    EXPECT_EQ(b.size, a.size);
    EXPECT_EQ(b.lid, a.lid);
    EXPECT_EQ(std::memcmp(b.gid, a.gid, 16), 0);
    EXPECT_EQ(b.ipv4, a.ipv4);
    EXPECT_EQ(b.cm_port, a.cm_port);
    ASSERT_EQ(b.qps.size(), a.qps.size());
    for (size_t i = 0; i < a.qps.size(); ++i) {
      EXPECT_EQ(b.qps[i].qpn, a.qps[i].qpn);
      EXPECT_EQ(b.qps[i].psn, a.qps[i].psn);
    }
  }
}

TEST(VerbsWire, BadAddressesAreRefused) {
  std::vector<uint8_t> blob = encode_address(sample(LinkKind::kRoce, 3));
  RankAddress out;
  out.rank = 77;
  for (size_t cut = 0; cut < blob.size(); ++cut) {
    EXPECT_EQ(decode_address(blob.data(), cut, &out), RCC_ERR_INVALID_ARGUMENT) << "cut at " << cut;
  }
  EXPECT_EQ(out.rank, 77u) << "output set on failure";
  std::vector<uint8_t> longer = blob;
  longer.push_back(0);
  EXPECT_EQ(decode_address(longer.data(), longer.size(), &out), RCC_ERR_INVALID_ARGUMENT);
  std::vector<uint8_t> bad_magic = blob;
  bad_magic[0] ^= 1;
  EXPECT_EQ(decode_address(bad_magic.data(), bad_magic.size(), &out), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("magic"), std::string::npos);
  std::vector<uint8_t> bad_version = blob;
  bad_version[4] = 9;
  EXPECT_EQ(decode_address(bad_version.data(), bad_version.size(), &out), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("version"), std::string::npos);
  std::vector<uint8_t> bad_kind = blob;
  bad_kind[5] = 7;
  EXPECT_EQ(decode_address(bad_kind.data(), bad_kind.size(), &out), RCC_ERR_INVALID_ARGUMENT);
  RankAddress wrong_rank = sample(LinkKind::kRoce, 3);
  wrong_rank.rank = 3;
  std::vector<uint8_t> rank_blob = encode_address(wrong_rank);
  EXPECT_EQ(decode_address(rank_blob.data(), rank_blob.size(), &out), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(decode_address(nullptr, 0, &out), RCC_ERR_INVALID_ARGUMENT);
}

TEST(VerbsWire, KeysRoundTripAndBadOnesAreRefused) {
  KeyInfo key{0xdeadbeef, 0x7f0000001000, 12345};
  std::vector<uint8_t> blob = encode_key(key);
  ASSERT_EQ(blob.size(), kKeyBlobSize);
  KeyInfo out;
  ASSERT_EQ(decode_key(blob.data(), blob.size(), &out), RCC_SUCCESS);
  EXPECT_EQ(out.rkey, key.rkey);
  EXPECT_EQ(out.addr, key.addr);
  EXPECT_EQ(out.length, key.length);
  EXPECT_EQ(decode_key(blob.data(), blob.size() - 1, &out), RCC_ERR_INVALID_ARGUMENT);
  std::vector<uint8_t> bad = blob;
  bad[1] ^= 0xff;
  EXPECT_EQ(decode_key(bad.data(), bad.size(), &out), RCC_ERR_INVALID_ARGUMENT);
  std::vector<uint8_t> wrapping = encode_key({1, ~uint64_t{0} - 10, 100});
  EXPECT_EQ(decode_key(wrapping.data(), wrapping.size(), &out), RCC_ERR_INVALID_ARGUMENT);
}

TEST(VerbsWire, ConnectRequestsProveTheSecretAndNameALowerRank) {
  const std::string secret = "a secret";
  uint8_t request[kConnectRequestBytes];
  encode_connect_request(1, 4, secret, request);
  std::string why;
  EXPECT_EQ(parse_connect_request(request, sizeof request, secret, 3, 4, &why), 1) << why;
  EXPECT_EQ(parse_connect_request(request, sizeof request, secret, 2, 4, &why), 1) << why;
  EXPECT_EQ(parse_connect_request(request, sizeof request, secret, 1, 4, &why), -1);  // only lower ranks connect
  EXPECT_NE(why.find("rank 1"), std::string::npos) << why;
  EXPECT_EQ(parse_connect_request(request, sizeof request, secret, 3, 5, &why), -1);  // another job size
  EXPECT_EQ(parse_connect_request(request, sizeof request, "another secret", 3, 4, &why), -1);
  EXPECT_EQ(why, "wrong job secret");
  EXPECT_EQ(parse_connect_request(request, sizeof request - 1, secret, 3, 4, &why), -1);
  EXPECT_EQ(parse_connect_request(nullptr, 0, secret, 3, 4, &why), -1);
  // Ranks of 2^31 and more are out of range, not negative indexes.
  for (uint32_t rank : {0x80000000u, 0xffffffffu}) {
    encode_connect_request(static_cast<int>(rank), 4, secret, request);
    EXPECT_EQ(parse_connect_request(request, sizeof request, secret, 3, 4, &why), -1) << rank;
  }
  // rdma_cm may pad private data: extra bytes after the request do not matter.
  uint8_t padded[kConnectRequestBytes + 20] = {};
  encode_connect_request(0, 4, secret, padded);
  EXPECT_EQ(parse_connect_request(padded, sizeof padded, secret, 3, 4, &why), 0) << why;
}

}  // namespace
}  // namespace rcc::transport::verbs
