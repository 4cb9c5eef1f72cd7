// The reduction kernels, written once with GCC/Clang vector extensions and compiled three times:
// 16-byte vectors for the baseline (SSE2), 32 bytes under target("avx2,..."), 64 bytes under
// target("avx512..."). Every lane computes the same IEEE/integer expression on every path, and the
// ragged tail runs through the same vector code on a zero-padded copy, so all paths agree bit for
// bit. The only ISA-specific code is the F16C binary16 conversion and the AVX512_BF16 bfloat16
// rounding, which the tests check against the integer codecs used by the baseline. Partially overlapping buffers are
// not supported: each vector is read and then written at the same positions, which is what makes out == a safe.
#include "kernels/simd_half.h"

namespace rcc::kernels::detail {
namespace {

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
#define RCC_DEFINE_F16C_KERNELS(TARGET, Hw, suffix)                                         \
  template <class Op>                                                                       \
  TARGET void fp16_binary_##suffix(void* out, const void* a, const void* b, size_t count) { \
    constexpr size_t kLanes = Hw::kLanes;                                                   \
    char* o = static_cast<char*>(out);                                                      \
    const char* pa = static_cast<const char*>(a);                                           \
    const char* pb = static_cast<const char*>(b);                                           \
    size_t i = 0;                                                                           \
    for (; i + kLanes <= count; i += kLanes) {                                              \
      Hw::F x, y, r;                                                                        \
      Hw::decode(x, pa + 2 * i);                                                            \
      Hw::decode(y, pb + 2 * i);                                                            \
      Op::apply(r, x, y);                                                                   \
      Hw::encode(o + 2 * i, r);                                                             \
    }                                                                                       \
    if (i < count) { /* zero-padded tail through the same code */                           \
      size_t bytes = (count - i) * 2;                                                       \
      char xp[2 * kLanes] = {}, yp[2 * kLanes] = {}, rp[2 * kLanes];                        \
      std::memcpy(xp, pa + 2 * i, bytes);                                                   \
      std::memcpy(yp, pb + 2 * i, bytes);                                                   \
      Hw::F x, y, r;                                                                        \
      Hw::decode(x, xp);                                                                    \
      Hw::decode(y, yp);                                                                    \
      Op::apply(r, x, y);                                                                   \
      Hw::encode(rp, r);                                                                    \
      std::memcpy(o + 2 * i, rp, bytes);                                                    \
    }                                                                                       \
  }                                                                                         \
  TARGET void fp16_scale_##suffix(void* buf, size_t count, int divisor) {                   \
    constexpr size_t kLanes = Hw::kLanes;                                                   \
    char* p = static_cast<char*>(buf);                                                      \
    const Hw::F d = Hw::F{} + static_cast<float>(divisor);                                  \
    for (size_t i = 0; i < count; i += kLanes) {                                            \
      size_t bytes = (count - i < kLanes ? count - i : kLanes) * 2;                         \
      char xp[2 * kLanes] = {};                                                             \
      std::memcpy(xp, p + 2 * i, bytes);                                                    \
      Hw::F x;                                                                              \
      Hw::decode(x, xp);                                                                    \
      x = x / d;                                                                            \
      canonicalize_nan(x);                                                                  \
      Hw::encode(xp, x);                                                                    \
      std::memcpy(p + 2 * i, xp, bytes);                                                    \
    }                                                                                       \
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

// Signed lanes for MIN/MAX, unsigned (wrapping) lanes for SUM/PROD and the bitwise ops.
template <template <class> class Entry, class Signed, class Unsigned>
constexpr void set_integer(KernelTable& t, rcc_datatype_t type) {
  t.binary[type][RCC_SUM] = &Entry<PlainKernel<Unsigned, IntSum>>::binary;
  t.binary[type][RCC_PROD] = &Entry<PlainKernel<Unsigned, IntProd>>::binary;
  t.binary[type][RCC_MIN] = &Entry<PlainKernel<Signed, IntMin>>::binary;
  t.binary[type][RCC_MAX] = &Entry<PlainKernel<Signed, IntMax>>::binary;
  t.binary[type][RCC_BAND] = &Entry<PlainKernel<Unsigned, IntAnd>>::binary;
  t.binary[type][RCC_BOR] = &Entry<PlainKernel<Unsigned, IntOr>>::binary;
  t.binary[type][RCC_BXOR] = &Entry<PlainKernel<Unsigned, IntXor>>::binary;
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
  set_integer<Entry, int16_t, uint16_t>(t, RCC_INT16);
  set_integer<Entry, uint16_t, uint16_t>(t, RCC_UINT16);
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

}  // namespace rcc::kernels::detail
