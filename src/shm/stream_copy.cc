#include "shm/stream_copy.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace rcc::shm {

void copy_streaming(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;  // nothing stored; and src may be null
#if defined(__SSE2__)
  auto* out = static_cast<uint8_t*>(dst);
  const auto* in = static_cast<const uint8_t*>(src);
  // Streaming stores need a 16-byte aligned destination: an unaligned head goes the usual way.
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(out) % 16) % 16);
  std::memcpy(out, in, head);
  out += head;
  in += head;
  bytes -= head;
  const size_t blocks = bytes / 64;
  for (size_t i = 0; i < blocks; ++i, out += 64, in += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(out), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + 48), d);
  }
  std::memcpy(out, in, bytes % 64);
  // Streaming stores are weakly ordered: without the fence a reader told of the copy could still
  // find old bytes.
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
  std::atomic_thread_fence(std::memory_order_release);
#endif
}

size_t default_stream_output_bytes() {
  constexpr size_t kLeast = size_t{4} << 20;
  const long cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return cache > 0 ? std::max(kLeast, static_cast<size_t>(cache) / 4) : kLeast;
}

}  // namespace rcc::shm
