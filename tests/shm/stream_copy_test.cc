// copy_streaming against memcpy: every length around the 16-byte head and the 64-byte blocks, every
// destination and source misalignment, nothing written outside the destination.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "shm/stream_copy.h"

namespace {

constexpr uint8_t kGuard = 0x5c;

// Source bytes that differ from their neighbours and from the guard.
std::vector<uint8_t> pattern(size_t bytes) {
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<uint8_t>((i * 131 + 7) % 251);
  return data;
}

// Copies `bytes` to dst_offset in a guarded buffer from src_offset in another; checks every byte.
void check_copy(size_t bytes, size_t dst_offset, size_t src_offset) {
  const std::vector<uint8_t> data = pattern(bytes + src_offset);
  alignas(64) static uint8_t destination[(1 << 20) + 256];
  ASSERT_LE(bytes + dst_offset + 64, sizeof destination);
  std::fill(destination, destination + bytes + dst_offset + 64, kGuard);
  rcc::shm::copy_streaming(destination + dst_offset, data.data() + src_offset, bytes);
  for (size_t i = 0; i < dst_offset; ++i) ASSERT_EQ(destination[i], kGuard) << "wrote before, byte " << i;
  for (size_t i = 0; i < bytes; ++i) {
    ASSERT_EQ(destination[dst_offset + i], data[src_offset + i])
        << "byte " << i << " of " << bytes << " (destination +" << dst_offset << ", source +" << src_offset << ")";
  }
  for (size_t i = 0; i < 64; ++i)
    ASSERT_EQ(destination[dst_offset + bytes + i], kGuard) << "wrote past the end, byte " << i;
}

TEST(CopyStreaming, EveryShortLengthAndAlignment) {
  for (size_t bytes = 0; bytes <= 200; ++bytes) {
    for (size_t dst_offset = 0; dst_offset < 16; ++dst_offset) {
      for (size_t src_offset : {0, 1, 8, 15}) {
        check_copy(bytes, dst_offset, src_offset);
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(CopyStreaming, LargeCopies) {
  for (size_t bytes : {size_t{4096}, size_t{65536}, size_t{65536 + 13}, size_t{1} << 20}) {
    for (size_t dst_offset : {0, 3, 16, 64}) {
      check_copy(bytes, dst_offset, 5);
      if (HasFatalFailure()) return;
    }
  }
}

}  // namespace
