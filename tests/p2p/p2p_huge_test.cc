// One message larger than 2^31 bytes (past every 32-bit length field) between two ranks, checked
// end to end. Needs about 5.5 GiB of memory on the host; skipped in the small soft-RDMA VM
// (RCC_TEST_QUICK=1), where the verbs backend's splitting of huge writes is covered by the
// transport contract test instead.
#include <cstdlib>
#include <vector>

#include "rank_test.h"

namespace {

using ranktest::comm;
using ranktest::rank;
using ranktest::size;

TEST(PointToPointHuge, MessageLargerThanTwoGiB) {
  if (std::getenv("RCC_TEST_QUICK") != nullptr) GTEST_SKIP() << "RCC_TEST_QUICK: no room for 5 GiB here";
  ASSERT_GE(size(), 2);
  if (rank() > 1) return;
  constexpr size_t kBytes = (size_t{5} << 29) + 7;  // 2.5 GiB + 7
  std::vector<uint64_t> buffer((kBytes + 7) / 8);
  auto* bytes = reinterpret_cast<uint8_t*>(buffer.data());
  if (rank() == 0) {
    for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = i * 0x9E3779B97F4A7C15ull;
    RCC_ASSERT_OK(rcc_send(comm(), bytes, kBytes, RCC_UINT8, 1, 1));
  } else {
    RCC_ASSERT_OK(rcc_recv(comm(), bytes, kBytes, RCC_UINT8, 0, 1));
    for (size_t i = 0; i + 1 < buffer.size(); ++i) {
      ASSERT_EQ(buffer[i], i * 0x9E3779B97F4A7C15ull) << "word " << i;
    }
    // The last, partial word: only its first 7 bytes were sent.
    const uint64_t last = (buffer.size() - 1) * 0x9E3779B97F4A7C15ull;
    for (size_t b = 0; b < 7; ++b)
      ASSERT_EQ(bytes[(buffer.size() - 1) * 8 + b], reinterpret_cast<const uint8_t*>(&last)[b]);
  }
}

}  // namespace
