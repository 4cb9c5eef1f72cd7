// Element-wise reduction kernels used by every collective algorithm.
//
// Semantics (identical on every ISA path, bit for bit, so ranks on different CPUs agree):
//  - Integers wrap (two's complement); signed and unsigned differ only in MIN/MAX. BAND, BOR and
//    BXOR are bitwise, for integer types only.
//  - Floating SUM/PROD are one IEEE operation in the current rounding mode (round to nearest even
//    unless the application changed MXCSR). FLOAT16/BFLOAT16 are widened to fp32, computed, and
//    rounded to nearest even once per step (which equals the correctly rounded result).
//  - NaN propagates: a NaN result, or a NaN operand of MIN/MAX, becomes the canonical quiet NaN
//    (positive, top mantissa bit only), so payloads never differ between paths.
//  - MIN/MAX order -0 below +0: min(+0, -0) = -0, max(+0, -0) = +0.
//  - out may be exactly a or b (in place); partially overlapping buffers are not supported.
// Invalid type/op combinations must be rejected by the caller (op_defined_for); the kernels then
// leave the buffers untouched and log an internal error.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"
#include "rcc/rcc.h"

namespace rcc::kernels {

// inout[i] = inout[i] OP in[i] for i < count. op is any but RCC_AVG (RCC_SUM, then scale_divide).
void reduce_into(void* inout, const void* in, size_t count, rcc_datatype_t type, rcc_op_t op);
// out[i] = a[i] OP b[i]; out may alias a or b.
void reduce(void* out, const void* a, const void* b, size_t count, rcc_datatype_t type, rcc_op_t op);
// For RCC_AVG: buf[i] /= divisor (floating types only; FLOAT16/BFLOAT16 through fp32, rounded once).
// The divisor is converted to the element's compute type (exact for |divisor| <= 2^24).
void scale_divide(void* buf, size_t count, rcc_datatype_t type, int divisor);
// Whether op is defined for type: RCC_AVG for floating types only, the bitwise ops for integer
// types only, the others for all types.
bool op_defined_for(rcc_op_t op, rcc_datatype_t type);
// The implementation in use: "avx512", "avx2" or "sse2" (the baseline x86-64 path).
const char* reduce_isa();

namespace detail {

// ---- Implementation selection (RCC_REDUCE_ISA; tests and benchmarks force each path). ----
enum class ReduceIsa { kSse2 = 0, kAvx2 = 1, kAvx512 = 2 };
constexpr int kNumReduceIsas = 3;

const char* isa_name(ReduceIsa isa);
// Whether this CPU can run isa (kSse2 always).
bool isa_supported(ReduceIsa isa);
// The best supported ISA not above the RCC_REDUCE_ISA-style request ("auto", "avx512", "avx2",
// "sse2" or its alias "scalar"). An unknown request is RCC_ERR_INVALID_ARGUMENT naming it.
Status parse_isa_request(const char* request, ReduceIsa* isa);
// Forces isa for all later calls; RCC_ERR_UNSUPPORTED if this CPU lacks it.
Status set_reduce_isa(ReduceIsa isa);
ReduceIsa current_reduce_isa();

// ---- Per-ISA kernel tables (reduce_kernels_simd.cc). ----
using BinaryKernel = void (*)(void* out, const void* a, const void* b, size_t count);
using ScaleKernel = void (*)(void* buf, size_t count, int divisor);
// Indexed by rcc_op_t; RCC_AVG's entries stay null (it reduces as RCC_SUM, then scale_divide).
constexpr int kNumReduceOps = RCC_NUM_OPS;

struct KernelTable {
  BinaryKernel binary[RCC_NUM_DATATYPES][kNumReduceOps];
  ScaleKernel scale[RCC_NUM_DATATYPES];  // null for integer types
};
const KernelTable& sse2_kernels();
const KernelTable& avx2_kernels();  // needs avx2, fma, f16c
// Needs avx512f, avx512bw, avx512vl, avx512dq. With avx512_bf16 as well, bfloat16 SUM/PROD round
// through vcvtne2ps2bf16 (same results); avx512_kernels_without_bf16() lets tests check the rest.
const KernelTable& avx512_kernels();
const KernelTable& avx512_kernels_without_bf16();
// Whether this CPU has AVX512_BF16 (the AVX-512 path uses it only if it runs at all).
bool avx512_bf16_supported();

// ---- Scalar half-precision conversions (the reference semantics of the vector codecs). ----
inline float fp32_from_bits(uint32_t bits) {
  float value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
}
inline uint32_t bits_from_fp32(float value) {
  uint32_t bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  return bits;
}
inline float fp32_from_bf16(uint16_t h) { return fp32_from_bits(static_cast<uint32_t>(h) << 16); }
// Round to nearest even; a NaN keeps its sign and top payload bits and is made quiet.
inline uint16_t bf16_from_fp32(float value) {
  uint32_t x = bits_from_fp32(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace detail
}  // namespace rcc::kernels
