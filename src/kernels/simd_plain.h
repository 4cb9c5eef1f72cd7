// Vector building blocks of the reduction kernels (included by reduce_kernels_simd.cc only): the
// vector types, integer and float operations with the NaN and signed-zero rules, and the kernels
// over plain element types. Compiled at each ISA width by the entry points there.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/reduce_kernels.h"

// 32/64-byte vectors only ever live inside always-inline helpers expanded in target functions.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace rcc::kernels::detail {
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
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    r = a + b;
  }
};
struct IntProd {
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    r = a * b;
  }
};
struct IntAnd {
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    r = a & b;
  }
};
struct IntOr {
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    r = a | b;
  }
};
struct IntXor {
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    r = a ^ b;
  }
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
  RCC_INLINE static void raw(V& r, const V& a, const V& b) {
    r = a + b;
  }
  template <class V>
  RCC_INLINE static void apply(V& r, const V& a, const V& b) {
    raw(r, a, b);
    canonicalize_nan(r);
  }
};
struct FloatProd {
  template <class V>
  RCC_INLINE static void raw(V& r, const V& a, const V& b) {
    r = a * b;
  }
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
  RCC_INLINE static void raw(V& r, const V& a, const V& b) {
    apply(r, a, b);
  }
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

}  // namespace
}  // namespace rcc::kernels::detail
