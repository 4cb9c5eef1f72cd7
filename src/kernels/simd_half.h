// The 16-bit floating types of the reduction kernels (included by reduce_kernels_simd.cc only):
// integer codecs between 16-bit values and fp32, and the kernels that compute through fp32.
#pragma once

#include "kernels/simd_plain.h"

namespace rcc::kernels::detail {
namespace {

// ---- 16-bit floating types: integer codecs between 16-bit values and fp32. ----
// Vectors hold pairs: each 32-bit lane carries element 2k in its low and 2k+1 in its high half,
// so decoding and packing need no cross-lane shuffles. Op results are NaN-canonical, which the
// encoders rely on.
struct Bf16Codec {
  // NaNs are canonicalised after packing, on 16-bit lanes: one compare for two fp32 vectors.
  // Safe because a NaN that fp32 arithmetic makes from bfloat16 inputs (a propagated input or the
  // default 0xffc00000) has zero low 16 bits, so rounding cannot carry out of it.
  static constexpr bool kCanonicalizesPacked = true;
  template <class U>
  RCC_INLINE static void canonicalize_packed(U& pair) {
    using H = Vec<int16_t, sizeof(U)>;
    H h = (H)pair;
    h = select((h & 0x7fff) > 0x7f80, H{} + 0x7fc0, h);
    pair = (U)h;
  }
  template <class U, class F>
  RCC_INLINE static void decode_pair(F& low, F& high, const U& pair) {
    low = (F)(pair << 16);
    high = (F)(pair & 0xffff0000u);
  }
  // Round to nearest even on the 16 dropped bits; the canonical NaN 0x7fc00000 stays 0x7fc0.
  template <class U>
  RCC_INLINE static U round(const U& x) {
    return x + 0x7fffu + ((x >> 16) & 1u);
  }
  template <class U, class F>
  RCC_INLINE static void encode_pair(U& pair, const F& low, const F& high) {
    pair = (round((U)low) >> 16) | (round((U)high) & 0xffff0000u);
  }
};

// IEEE binary16, bit-exact with F16C's vcvtph2ps / vcvtps2ph (round to nearest even).
struct Fp16Codec {
  static constexpr bool kCanonicalizesPacked = false;
  template <class U>
  RCC_INLINE static void canonicalize_packed(U&) {}
  // h: one binary16 value in the low 16 bits of each lane.
  template <class U, class F>
  RCC_INLINE static void decode(F& f, const U& h) {
    using M = decltype(f < f);
    U sign = (h & 0x8000u) << 16;
    U magnitude = h & 0x7fffu;
    // Normal: rebias the exponent by 127 - 15; infinity/NaN move on to exponent 255.
    U normal = (magnitude << 13) + 0x38000000u;
    normal = (U)select((M)magnitude >= 0x7c00, (M)(normal + 0x38000000u), (M)normal);
    // Subnormal (and zero): m * 2^-24 exactly, as (0.5 + m * 2^-24) - 0.5 in fp32.
    F tiny = (F)(magnitude | 0x3f000000u) - 0.5f;
    f = (F)((U)select((M)magnitude < 0x0400, (M)tiny, (M)normal) | sign);
  }
  template <class U, class F>
  RCC_INLINE static void encode(U& h, const F& f) {
    using M = decltype(f < f);
    U x = (U)f;
    U sign = (x >> 16) & 0x8000u;
    U magnitude = x & 0x7fffffffu;
    M m = (M)magnitude;  // < 2^31, so signed compares are exact
    // Normal results: rebias and round to nearest even on the 13 dropped bits (a carry may reach
    // the exponent, which is the correct next binade or infinity).
    U rebiased = magnitude - 0x38000000u;
    U normal = (rebiased + 0x0fffu + ((rebiased >> 13) & 1u)) >> 13;
    // Subnormal results (|f| < 2^-14): fp32 addition of 0.5 rounds to a multiple of 2^-24.
    U subnormal = (U)((F)magnitude + 0.5f) - 0x3f000000u;
    U nan = 0x7e00u | ((magnitude >> 13) & 0x3ffu);
    M result = select(m >= 0x38800000, (M)normal, (M)subnormal);
    result = select(m >= 0x477ff000, M{} + 0x7c00, result);  // rounds beyond 65504: infinity
    result = select(m > 0x7f800000, (M)nan, result);
    h = (U)result | sign;
  }
  template <class U, class F>
  RCC_INLINE static void decode_pair(F& low, F& high, const U& pair) {
    decode(low, (U)(pair & 0xffffu));
    decode(high, (U)(pair >> 16));
  }
  template <class U, class F>
  RCC_INLINE static void encode_pair(U& pair, const F& low, const F& high) {
    U l, h;
    encode(l, low);
    encode(h, high);
    pair = l | (h << 16);
  }
};

template <class Codec, class Op>
struct HalfKernel {
  template <class U, int kBytes>
  RCC_INLINE static void compute(U& r, const U& a, const U& b) {
    using F = Vec<float, kBytes>;
    F a_low, a_high, b_low, b_high, r_low, r_high;
    Codec::decode_pair(a_low, a_high, a);
    Codec::decode_pair(b_low, b_high, b);
    if constexpr (Codec::kCanonicalizesPacked) {
      Op::raw(r_low, a_low, b_low);
      Op::raw(r_high, a_high, b_high);
    } else {
      Op::apply(r_low, a_low, b_low);
      Op::apply(r_high, a_high, b_high);
    }
    Codec::encode_pair(r, r_low, r_high);
    Codec::canonicalize_packed(r);
  }
  template <int kBytes>
  RCC_INLINE static void run(void* out, const void* a, const void* b, size_t count) {
    using U = Vec<uint32_t, kBytes>;
    constexpr size_t kElements = kBytes / 2;  // 16-bit elements per vector
    char* o = static_cast<char*>(out);
    const char* pa = static_cast<const char*>(a);
    const char* pb = static_cast<const char*>(b);
    size_t i = 0;
    for (; i + 2 * kElements <= count; i += 2 * kElements) {
      U x0, x1, y0, y1, r0, r1;
      load(x0, pa + 2 * i);
      load(x1, pa + 2 * i + kBytes);
      load(y0, pb + 2 * i);
      load(y1, pb + 2 * i + kBytes);
      compute<U, kBytes>(r0, x0, y0);
      compute<U, kBytes>(r1, x1, y1);
      store(o + 2 * i, r0);
      store(o + 2 * i + kBytes, r1);
    }
    for (; i < count; i += kElements) {  // at most one full and one zero-padded partial vector
      size_t bytes = (count - i < kElements ? count - i : kElements) * 2;
      U x{}, y{}, r;
      std::memcpy(&x, pa + 2 * i, bytes);
      std::memcpy(&y, pb + 2 * i, bytes);
      compute<U, kBytes>(r, x, y);
      std::memcpy(o + 2 * i, &r, bytes);
    }
  }
};

template <class Codec>
struct HalfScale {
  template <int kBytes>
  RCC_INLINE static void run(void* buf, size_t count, int divisor) {
    using F = Vec<float, kBytes>;
    using U = Vec<uint32_t, kBytes>;
    constexpr size_t kElements = kBytes / 2;
    char* p = static_cast<char*>(buf);
    const F d = F{} + static_cast<float>(divisor);
    for (size_t i = 0; i < count; i += kElements) {
      size_t bytes = (count - i < kElements ? count - i : kElements) * 2;
      U pair{};
      std::memcpy(&pair, p + 2 * i, bytes);
      F low, high;
      Codec::decode_pair(low, high, pair);
      low = low / d;
      high = high / d;
      canonicalize_nan(low);
      canonicalize_nan(high);
      Codec::encode_pair(pair, low, high);
      std::memcpy(p + 2 * i, &pair, bytes);
    }
  }
};

}  // namespace
}  // namespace rcc::kernels::detail
