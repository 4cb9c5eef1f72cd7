// The reduction kernels, written once with GCC/Clang vector extensions and compiled three times:
// 16-byte vectors for the baseline (SSE2), 32 bytes under target("avx2,..."), 64 bytes under
// target("avx512..."). Every lane computes the same IEEE/integer expression on every path, and the
// ragged tail runs through the same vector code on a zero-padded copy, so all paths agree bit for
// bit. The only ISA-specific code is the F16C binary16 conversion and the AVX512_BF16 bfloat16
// rounding, which the tests check against the integer codecs used by the baseline. Partially overlapping buffers are not supported: each
// vector is read and then written at the same positions, which is what makes out == a safe.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "collectives/reduce_kernels.h"

// 32/64-byte vectors only ever live inside always-inline helpers expanded in target functions.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace rcc::collectives::detail {
namespace {

#define RCC_INLINE [[gnu::always_inline]] inline

template <class Lane, int kBytes>
struct VecOf {
  typedef Lane type __attribute__((vector_size(kBytes)));
};
template <class Lane, int kBytes>
using Vec = typename VecOf<Lane, kBytes>::type;

template <class V>
RCC_INLINE void load(V& v, const void* p) {
  __builtin_memcpy(&v, p, sizeof(V));
}
template <class V>
RCC_INLINE void store(void* p, const V& v) {
  __builtin_memcpy(p, &v, sizeof(V));
}
// Bitwise select: mask lanes are all ones or all zeros. 64-bit lanes of 16-byte vectors are
// selected through a 32-bit view, because GCC turns that form into a per-lane cmov loop on SSE2
// (wider vectors keep the 64-bit form, which becomes a blend).
template <class M>
RCC_INLINE M select(const M& mask, const M& if_set, const M& if_clear) {
  if constexpr (sizeof(mask[0]) == 8 && sizeof(M) == 16) {
    using W = Vec<int32_t, sizeof(M)>;
    return (M)(((W)if_set & (W)mask) | ((W)if_clear & ~(W)mask));
  } else {
    return (if_set & mask) | (if_clear & ~mask);
  }
}

// ---- Operations on vectors of integers: Sum/Prod use unsigned lanes (wrap-around). ----
struct IntSum {
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) { r = a + b; }
};
struct IntProd {
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) { r = a * b; }
};
struct IntMin {
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    auto lt = a < b;
    using M = decltype(lt);
    r = (V)select(lt, (M)a, (M)b);
  }
};
struct IntMax {
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    auto gt = a > b;
    using M = decltype(gt);
    r = (V)select(gt, (M)a, (M)b);
  }
};

// ---- Operations on vectors of float/double with the NaN and signed-zero rules. ----
template <class Float>
struct FloatBits;
template <>
struct FloatBits<float> {
  using Int = int32_t;
  static constexpr Int kQuietNan = 0x7fc00000;
};
template <>
struct FloatBits<double> {
  using Int = int64_t;
  static constexpr Int kQuietNan = 0x7ff8000000000000;
};

template <class V>
RCC_INLINE void canonicalize_nan(V& r) {
  auto nan = r != r;
  using M = decltype(nan);
  using Lane = decltype(r[0] + 0);
  M quiet = M{} + FloatBits<Lane>::kQuietNan;
  r = (V)select(nan, quiet, (M)r);
}

// raw(): the IEEE result, whose NaNs the caller canonicalises later (bfloat16 does it once per
// packed vector); apply(): canonical right away.
struct FloatSum {
  template <class V>
  RCC_INLINE static void raw(V& r, const V& a, const V& b) { r = a + b; }
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    raw(r, a, b);
    canonicalize_nan(r);
  }
};
struct FloatProd {
  template <class V>
  RCC_INLINE static void raw(V& r, const V& a, const V& b) { r = a * b; }
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    raw(r, a, b);
    canonicalize_nan(r);
  }
};
// min: the smaller; equal values (only +0/-0 differ in bits) combine with OR, so -0 wins.
// max: the larger; equal values combine with AND, so +0 wins. A NaN operand gives the NaN.
template <bool kMax>
struct FloatMinMax {
  template <class V>
  RCC_INLINE static void raw(V& r, const V& a, const V& b) { apply(r, a, b); }
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    auto a_first = kMax ? (a > b) : (a < b);
    auto b_first = kMax ? (b > a) : (b < a);
    using M = decltype(a_first);
    using Lane = decltype(a[0] + 0);
    M ai = (M)a, bi = (M)b;
    M tie = kMax ? (ai & bi) : (ai | bi);
    M result = select(a_first, ai, select(b_first, bi, tie));
    M quiet = M{} + FloatBits<Lane>::kQuietNan;
    result = select(a != a, quiet, result);
    r = (V)select(b != b, quiet, result);
  }
};
using FloatMin = FloatMinMax<false>;
using FloatMax = FloatMinMax<true>;

// ---- Kernels over plain element types: Lane is the element type as the op sees it. ----
template <class Lane, class Op>
struct PlainKernel {
  template <int kBytes>
  RCC_INLINE static void run(void* out, const void* a, const void* b, size_t count) {
    using V = Vec<Lane, kBytes>;
    constexpr size_t kLanes = kBytes / sizeof(Lane);
    char* o = static_cast<char*>(out);
    const char* pa = static_cast<const char*>(a);
    const char* pb = static_cast<const char*>(b);
    size_t i = 0;
    // Each vector is loaded and stored at the same positions, so out == a or out == b is safe.
    // Separate variables (not arrays) keep the unrolled vectors in registers.
    for (; i + 4 * kLanes <= count; i += 4 * kLanes) {
      V x0, x1, x2, x3, y0, y1, y2, y3, r0, r1, r2, r3;
      load(x0, pa + i * sizeof(Lane));
      load(x1, pa + (i + kLanes) * sizeof(Lane));
      load(x2, pa + (i + 2 * kLanes) * sizeof(Lane));
      load(x3, pa + (i + 3 * kLanes) * sizeof(Lane));
      load(y0, pb + i * sizeof(Lane));
      load(y1, pb + (i + kLanes) * sizeof(Lane));
      load(y2, pb + (i + 2 * kLanes) * sizeof(Lane));
      load(y3, pb + (i + 3 * kLanes) * sizeof(Lane));
      Op::apply(r0, x0, y0);
      Op::apply(r1, x1, y1);
      Op::apply(r2, x2, y2);
      Op::apply(r3, x3, y3);
      store(o + i * sizeof(Lane), r0);
      store(o + (i + kLanes) * sizeof(Lane), r1);
      store(o + (i + 2 * kLanes) * sizeof(Lane), r2);
      store(o + (i + 3 * kLanes) * sizeof(Lane), r3);
    }
    for (; i + kLanes <= count; i += kLanes) {
      V x, y, r;
      load(x, pa + i * sizeof(Lane));
      load(y, pb + i * sizeof(Lane));
      Op::apply(r, x, y);
      store(o + i * sizeof(Lane), r);
    }
    if (i < count) {  // the tail through the same vector code, on zero-padded copies
      size_t bytes = (count - i) * sizeof(Lane);
      V x{}, y{}, r;
      std::memcpy(&x, pa + i * sizeof(Lane), bytes);
      std::memcpy(&y, pb + i * sizeof(Lane), bytes);
      Op::apply(r, x, y);
      std::memcpy(o + i * sizeof(Lane), &r, bytes);
    }
  }
};

template <class Float>
struct PlainScale {
  template <int kBytes>
  RCC_INLINE static void run(void* buf, size_t count, int divisor) {
    using V = Vec<Float, kBytes>;
    constexpr size_t kLanes = kBytes / sizeof(Float);
    char* p = static_cast<char*>(buf);
    const V d = V{} + static_cast<Float>(divisor);
    size_t i = 0;
    for (; i + kLanes <= count; i += kLanes) {
      V x;
      load(x, p + i * sizeof(Float));
      x = x / d;
      canonicalize_nan(x);
      store(p + i * sizeof(Float), x);
    }
    if (i < count) {
      size_t bytes = (count - i) * sizeof(Float);
      V x{};
      std::memcpy(&x, p + i * sizeof(Float), bytes);
      x = x / d;
      canonicalize_nan(x);
      std::memcpy(p + i * sizeof(Float), &x, bytes);
    }
  }
};

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
  RCC_INLINE static U round(const U& x) { return x + 0x7fffu + ((x >> 16) & 1u); }
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

// ---- binary16 through F16C (AVX2 and AVX-512 paths): same ops, hardware conversions. ----
#define RCC_TARGET_AVX2 [[gnu::target("avx2,f16c")]]
#define RCC_TARGET_AVX512 [[gnu::target("avx512f,avx512bw,avx512vl,avx512dq,avx2,f16c")]]

struct F16cAvx2 {
  static constexpr size_t kLanes = 8;
  using F = Vec<float, 32>;
  RCC_TARGET_AVX2 RCC_INLINE static void decode(F& f, const char* p) {
    f = (F)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  RCC_TARGET_AVX2 RCC_INLINE static void encode(char* p, const F& f) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph((__m256)f, _MM_FROUND_TO_NEAREST_INT));
  }
};
struct F16cAvx512 {
  static constexpr size_t kLanes = 16;
  using F = Vec<float, 64>;
  RCC_TARGET_AVX512 RCC_INLINE static void decode(F& f, const char* p) {
    // The maskz forms: GCC 12 warns about the undefined source register of the plain ones.
    f = (F)_mm512_maskz_cvtph_ps(0xffff, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  RCC_TARGET_AVX512 RCC_INLINE static void encode(char* p, const F& f) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_maskz_cvtps_ph(0xffff, (__m512)f, _MM_FROUND_TO_NEAREST_INT));
  }
};

// The loops over F16C conversions. A macro because a function template cannot take its target
// attribute from a parameter, and GCC refuses to inline F16C code into an untargeted template.
#define RCC_DEFINE_F16C_KERNELS(TARGET, Hw, suffix)                                            \
  template <class Op>                                                                          \
  TARGET void fp16_binary_##suffix(void* out, const void* a, const void* b, size_t count) {   \
    constexpr size_t kLanes = Hw::kLanes;                                                      \
    char* o = static_cast<char*>(out);                                                         \
    const char* pa = static_cast<const char*>(a);                                              \
    const char* pb = static_cast<const char*>(b);                                              \
    size_t i = 0;                                                                              \
    for (; i + kLanes <= count; i += kLanes) {                                                 \
      Hw::F x, y, r;                                                                           \
      Hw::decode(x, pa + 2 * i);                                                               \
      Hw::decode(y, pb + 2 * i);                                                               \
      Op::apply(r, x, y);                                                                      \
      Hw::encode(o + 2 * i, r);                                                                \
    }                                                                                          \
    if (i < count) { /* zero-padded tail through the same code */                              \
      size_t bytes = (count - i) * 2;                                                          \
      char xp[2 * kLanes] = {}, yp[2 * kLanes] = {}, rp[2 * kLanes];                           \
      std::memcpy(xp, pa + 2 * i, bytes);                                                      \
      std::memcpy(yp, pb + 2 * i, bytes);                                                      \
      Hw::F x, y, r;                                                                           \
      Hw::decode(x, xp);                                                                       \
      Hw::decode(y, yp);                                                                       \
      Op::apply(r, x, y);                                                                      \
      Hw::encode(rp, r);                                                                       \
      std::memcpy(o + 2 * i, rp, bytes);                                                       \
    }                                                                                          \
  }                                                                                            \
  TARGET void fp16_scale_##suffix(void* buf, size_t count, int divisor) {                      \
    constexpr size_t kLanes = Hw::kLanes;                                                      \
    char* p = static_cast<char*>(buf);                                                         \
    const Hw::F d = Hw::F{} + static_cast<float>(divisor);                                     \
    for (size_t i = 0; i < count; i += kLanes) {                                               \
      size_t bytes = (count - i < kLanes ? count - i : kLanes) * 2;                            \
      char xp[2 * kLanes] = {};                                                                \
      std::memcpy(xp, p + 2 * i, bytes);                                                       \
      Hw::F x;                                                                                 \
      Hw::decode(x, xp);                                                                       \
      x = x / d;                                                                               \
      canonicalize_nan(x);                                                                     \
      Hw::encode(xp, x);                                                                       \
      std::memcpy(p + 2 * i, xp, bytes);                                                       \
    }                                                                                          \
  }

RCC_DEFINE_F16C_KERNELS(RCC_TARGET_AVX2, F16cAvx2, avx2)
RCC_DEFINE_F16C_KERNELS(RCC_TARGET_AVX512, F16cAvx512, avx512)

// ---- bfloat16 SUM/PROD through AVX512_BF16 (AVX-512 path, on CPUs that have it). ----
// The integer rounding is most of the bfloat16 kernel's work; vcvtne2ps2bf16 does it in one
// instruction with the same round-to-nearest-even. It differs from Bf16Codec only on fp32
// subnormals (flushed to zero) and NaNs (payload kept), so a vector with such a lane, rare in
// practice (both operands tiny, or a NaN), is encoded by Bf16Codec instead.
#define RCC_TARGET_AVX512_BF16 [[gnu::target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,avx2,f16c")]]

template <class Op>
struct Bf16Avx512Hw {
  using U = Vec<uint32_t, 64>;
  using F = Vec<float, 64>;
  static constexpr int kNanOrSubnormal = 0x01 | 0x20 | 0x80;  // vfpclassps: QNaN, denormal, SNaN
  RCC_TARGET_AVX512_BF16 RCC_INLINE static U compute(const U& a, const U& b) {
    F a_low, a_high, b_low, b_high, r_low, r_high;
    Bf16Codec::decode_pair(a_low, a_high, a);
    Bf16Codec::decode_pair(b_low, b_high, b);
    Op::raw(r_low, a_low, b_low);
    Op::raw(r_high, a_high, b_high);
    __mmask16 special_low = _mm512_fpclass_ps_mask((__m512)r_low, kNanOrSubnormal);
    __mmask16 special_high = _mm512_fpclass_ps_mask((__m512)r_high, kNanOrSubnormal);
    if (!_kortestz_mask16_u8(special_low, special_high)) [[unlikely]] {
      U r;
      Bf16Codec::encode_pair(r, r_low, r_high);
      Bf16Codec::canonicalize_packed(r);
      return r;
    }
    // Words 0-15 of the conversion are the even elements (r_low), 16-31 the odd: interleave.
    const U interleave = U{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15} * 0x10001u + 0x100000u;
    __m512i packed = (__m512i)_mm512_cvtne2ps_pbh((__m512)r_high, (__m512)r_low);
    return (U)_mm512_permutexvar_epi16((__m512i)interleave, packed);
  }
};

template <class Op>
RCC_TARGET_AVX512_BF16 void bf16_binary_avx512bf16(void* out, const void* a, const void* b, size_t count) {
  using U = Vec<uint32_t, 64>;
  constexpr size_t kElements = 32;
  char* o = static_cast<char*>(out);
  const char* pa = static_cast<const char*>(a);
  const char* pb = static_cast<const char*>(b);
  size_t i = 0;
  for (; i + 2 * kElements <= count; i += 2 * kElements) {
    U x0, x1, y0, y1;
    load(x0, pa + 2 * i);
    load(x1, pa + 2 * i + 64);
    load(y0, pb + 2 * i);
    load(y1, pb + 2 * i + 64);
    U r0 = Bf16Avx512Hw<Op>::compute(x0, y0);
    U r1 = Bf16Avx512Hw<Op>::compute(x1, y1);
    store(o + 2 * i, r0);
    store(o + 2 * i + 64, r1);
  }
  for (; i < count; i += kElements) {  // at most one full and one zero-padded partial vector
    size_t bytes = (count - i < kElements ? count - i : kElements) * 2;
    U x{}, y{};
    std::memcpy(&x, pa + 2 * i, bytes);
    std::memcpy(&y, pb + 2 * i, bytes);
    U r = Bf16Avx512Hw<Op>::compute(x, y);
    std::memcpy(o + 2 * i, &r, bytes);
  }
}

// ---- Entry points: one ISA's vector width and target attribute around a kernel K. ----
template <class K>
struct Sse2Entry {
  static void binary(void* o, const void* a, const void* b, size_t n) { K::template run<16>(o, a, b, n); }
  static void scale(void* p, size_t n, int d) { K::template run<16>(p, n, d); }
};
template <class K>
struct Avx2Entry {
  RCC_TARGET_AVX2 static void binary(void* o, const void* a, const void* b, size_t n) {
    K::template run<32>(o, a, b, n);
  }
  RCC_TARGET_AVX2 static void scale(void* p, size_t n, int d) { K::template run<32>(p, n, d); }
};
template <class K>
struct Avx512Entry {
  RCC_TARGET_AVX512 static void binary(void* o, const void* a, const void* b, size_t n) {
    K::template run<64>(o, a, b, n);
  }
  RCC_TARGET_AVX512 static void scale(void* p, size_t n, int d) { K::template run<64>(p, n, d); }
};

template <class Op>
using Fp16Kernel = HalfKernel<Fp16Codec, Op>;
template <class Op>
using Bf16Kernel = HalfKernel<Bf16Codec, Op>;
template <class Op>
using Fp32Kernel = PlainKernel<float, Op>;
template <class Op>
using Fp64Kernel = PlainKernel<double, Op>;

// Signed lanes for MIN/MAX, unsigned (wrapping) lanes for SUM/PROD.
template <template <class> class Entry, class Signed, class Unsigned>
constexpr void set_integer(KernelTable& t, rcc_datatype_t type) {
  t.binary[type][RCC_SUM] = &Entry<PlainKernel<Unsigned, IntSum>>::binary;
  t.binary[type][RCC_PROD] = &Entry<PlainKernel<Unsigned, IntProd>>::binary;
  t.binary[type][RCC_MIN] = &Entry<PlainKernel<Signed, IntMin>>::binary;
  t.binary[type][RCC_MAX] = &Entry<PlainKernel<Signed, IntMax>>::binary;
}
template <template <class> class Entry, template <class> class Kernel, class Scale>
constexpr void set_floating(KernelTable& t, rcc_datatype_t type) {
  t.binary[type][RCC_SUM] = &Entry<Kernel<FloatSum>>::binary;
  t.binary[type][RCC_PROD] = &Entry<Kernel<FloatProd>>::binary;
  t.binary[type][RCC_MIN] = &Entry<Kernel<FloatMin>>::binary;
  t.binary[type][RCC_MAX] = &Entry<Kernel<FloatMax>>::binary;
  t.scale[type] = &Entry<Scale>::scale;
}

template <template <class> class Entry>
constexpr KernelTable make_table() {
  KernelTable t{};
  set_integer<Entry, int8_t, uint8_t>(t, RCC_INT8);
  set_integer<Entry, uint8_t, uint8_t>(t, RCC_UINT8);
  set_integer<Entry, int32_t, uint32_t>(t, RCC_INT32);
  set_integer<Entry, uint32_t, uint32_t>(t, RCC_UINT32);
  set_integer<Entry, int64_t, uint64_t>(t, RCC_INT64);
  set_integer<Entry, uint64_t, uint64_t>(t, RCC_UINT64);
  set_floating<Entry, Fp16Kernel, HalfScale<Fp16Codec>>(t, RCC_FLOAT16);
  set_floating<Entry, Bf16Kernel, HalfScale<Bf16Codec>>(t, RCC_BFLOAT16);
  set_floating<Entry, Fp32Kernel, PlainScale<float>>(t, RCC_FLOAT32);
  set_floating<Entry, Fp64Kernel, PlainScale<double>>(t, RCC_FLOAT64);
  return t;
}

constexpr KernelTable make_avx2_table() {
  KernelTable t = make_table<Avx2Entry>();
  t.binary[RCC_FLOAT16][RCC_SUM] = &fp16_binary_avx2<FloatSum>;
  t.binary[RCC_FLOAT16][RCC_PROD] = &fp16_binary_avx2<FloatProd>;
  t.binary[RCC_FLOAT16][RCC_MIN] = &fp16_binary_avx2<FloatMin>;
  t.binary[RCC_FLOAT16][RCC_MAX] = &fp16_binary_avx2<FloatMax>;
  t.scale[RCC_FLOAT16] = &fp16_scale_avx2;
  return t;
}
// Floating MIN/MAX on AVX-512 reuse the AVX2 kernels: GCC 12 scalarises the 512-bit mask
// compares they need (found by inspecting the code), and the 256-bit forms are fast enough.
constexpr KernelTable make_avx512_table() {
  KernelTable t = make_table<Avx512Entry>();
  const KernelTable avx2 = make_avx2_table();
  for (rcc_datatype_t type : {RCC_FLOAT16, RCC_BFLOAT16, RCC_FLOAT32, RCC_FLOAT64}) {
    t.binary[type][RCC_MIN] = avx2.binary[type][RCC_MIN];
    t.binary[type][RCC_MAX] = avx2.binary[type][RCC_MAX];
  }
  t.binary[RCC_FLOAT16][RCC_SUM] = &fp16_binary_avx512<FloatSum>;
  t.binary[RCC_FLOAT16][RCC_PROD] = &fp16_binary_avx512<FloatProd>;
  t.scale[RCC_FLOAT16] = &fp16_scale_avx512;
  return t;
}

constexpr KernelTable make_avx512_bf16_table() {
  KernelTable t = make_avx512_table();
  t.binary[RCC_BFLOAT16][RCC_SUM] = &bf16_binary_avx512bf16<FloatSum>;
  t.binary[RCC_BFLOAT16][RCC_PROD] = &bf16_binary_avx512bf16<FloatProd>;
  return t;
}

constexpr KernelTable kSse2Table = make_table<Sse2Entry>();
constexpr KernelTable kAvx2Table = make_avx2_table();
constexpr KernelTable kAvx512Table = make_avx512_table();
constexpr KernelTable kAvx512Bf16Table = make_avx512_bf16_table();

}  // namespace

const KernelTable& sse2_kernels() { return kSse2Table; }
const KernelTable& avx2_kernels() { return kAvx2Table; }
const KernelTable& avx512_kernels() { return avx512_bf16_supported() ? kAvx512Bf16Table : kAvx512Table; }
const KernelTable& avx512_kernels_without_bf16() { return kAvx512Table; }

}  // namespace rcc::collectives::detail
