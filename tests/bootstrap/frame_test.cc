// The store's frame parser on its own: round trips, partial input, and every kind of bad frame.
#include <gtest/gtest.h>

#include "bootstrap/frame.h"
#include "bootstrap/liveness_hello.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {
namespace {

std::vector<uint8_t> encode(FrameType type, uint64_t id, const std::string& key, const std::string& value) {
  std::vector<uint8_t> wire;
  append_frame(type, id, key, reinterpret_cast<const uint8_t*>(value.data()), value.size(), &wire);
  return wire;
}

TEST(FrameTest, RoundTripAndPrefixes) {
  auto wire = encode(FrameType::kSet, 77, "a/key", "some value");
  for (size_t cut = 0; cut < wire.size(); ++cut) {
    Frame frame;
    size_t consumed = 0;
    std::string error;
    EXPECT_EQ(parse_frame(wire.data(), cut, 1024, &frame, &consumed, &error), ParseResult::kNeedMore) << cut;
  }
  Frame frame;
  size_t consumed = 0;
  std::string error;
  ASSERT_EQ(parse_frame(wire.data(), wire.size(), 1024, &frame, &consumed, &error), ParseResult::kFrame);
  EXPECT_EQ(consumed, wire.size());
  EXPECT_EQ(frame.type, FrameType::kSet);
  EXPECT_EQ(frame.id, 77u);
  EXPECT_EQ(frame.key, "a/key");
  EXPECT_EQ(std::string(frame.value.begin(), frame.value.end()), "some value");
}

TEST(FrameTest, TwoFramesBackToBack) {
  auto wire = encode(FrameType::kGet, 1, "k1", "");
  auto second = encode(FrameType::kTryGet, 2, "k2", "");
  wire.insert(wire.end(), second.begin(), second.end());
  Frame frame;
  size_t consumed = 0;
  std::string error;
  ASSERT_EQ(parse_frame(wire.data(), wire.size(), 16, &frame, &consumed, &error), ParseResult::kFrame);
  EXPECT_EQ(frame.key, "k1");
  ASSERT_EQ(parse_frame(wire.data() + consumed, wire.size() - consumed, 16, &frame, &consumed, &error),
            ParseResult::kFrame);
  EXPECT_EQ(frame.key, "k2");
  EXPECT_EQ(frame.type, FrameType::kTryGet);
}

TEST(FrameTest, RejectsBadFrames) {
  Frame frame;
  size_t consumed = 0;
  std::string error;
  // Unknown type.
  auto wire = encode(FrameType::kSet, 1, "k", "v");
  wire[4] = 99;
  EXPECT_EQ(parse_frame(wire.data(), 5, 1024, &frame, &consumed, &error), ParseResult::kMalformed);
  // Value over the limit: refused from the header alone, before the body arrives.
  wire = encode(FrameType::kSet, 1, "k", std::string(2000, 'x'));
  EXPECT_EQ(parse_frame(wire.data(), 4, 1024, &frame, &consumed, &error), ParseResult::kMalformed);
  EXPECT_NE(error.find("out of range"), std::string::npos) << error;
  // Key longer than kMaxKeyBytes.
  wire = encode(FrameType::kGet, 1, std::string(kMaxKeyBytes + 1, 'k'), "");
  EXPECT_EQ(parse_frame(wire.data(), kFrameHeaderBytes, 1 << 20, &frame, &consumed, &error), ParseResult::kMalformed);
  // Key length larger than the frame.
  wire = encode(FrameType::kGet, 1, "abc", "");
  wire[13] = 200;
  EXPECT_EQ(parse_frame(wire.data(), wire.size(), 1024, &frame, &consumed, &error), ParseResult::kMalformed);
  // Length shorter than the header.
  uint8_t tiny[8] = {3, 0, 0, 0, 2, 0, 0, 0};
  EXPECT_EQ(parse_frame(tiny, sizeof tiny, 1024, &frame, &consumed, &error), ParseResult::kMalformed);
  // All-0xff garbage.
  std::vector<uint8_t> garbage(64, 0xff);
  EXPECT_EQ(parse_frame(garbage.data(), garbage.size(), kMaxValueBytes, &frame, &consumed, &error),
            ParseResult::kMalformed);
}

}  // namespace
}  // namespace rcc::bootstrap

// The liveness hello (src/bootstrap/liveness_hello.h).
TEST(LivenessHelloTest, RoundTripAndRefusals) {
  using rcc::bootstrap::encode_liveness_hello;
  using rcc::bootstrap::kLivenessHelloBytes;
  using rcc::bootstrap::parse_liveness_hello;
  const std::string secret = "0123456789abcdef0123456789abcdef";
  uint8_t hello[kLivenessHelloBytes];
  std::string why;
  encode_liveness_hello(2, secret, hello);
  EXPECT_EQ(parse_liveness_hello(hello, sizeof hello, secret, 3, &why), 2) << why;
  EXPECT_EQ(parse_liveness_hello(hello, sizeof hello, secret, 2, &why), -1);  // rank 2 does not dial rank 2
  EXPECT_NE(why.find("rank 2"), std::string::npos) << why;
  EXPECT_EQ(parse_liveness_hello(hello, sizeof hello - 1, secret, 3, &why), -1);
  EXPECT_EQ(parse_liveness_hello(hello, sizeof hello, "0123456789abcdef0123456789abcdeX", 3, &why), -1);
  EXPECT_EQ(why, "wrong job secret");
  EXPECT_EQ(why.find(secret), std::string::npos);
  EXPECT_EQ(parse_liveness_hello(hello, sizeof hello, secret.substr(0, 31), 3, &why), -1);  // a prefix is not it
  hello[0] ^= 1;
  EXPECT_EQ(parse_liveness_hello(hello, sizeof hello, secret, 3, &why), -1);
  EXPECT_NE(why.find("magic"), std::string::npos) << why;
  // A secret longer than the field (RCC_JOB_SECRET is the user's) is accepted on both sides.
  const std::string long_secret(100, 's');
  encode_liveness_hello(0, long_secret, hello);
  EXPECT_EQ(parse_liveness_hello(hello, sizeof hello, long_secret, 1, &why), 0) << why;
}
