#include "data.h"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace rccbench {
namespace {

// ---- 16-bit float conversions (only small integers and their ratios need to be exact) ----
float bits_to_float(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
uint32_t float_to_bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mantissa), -24);
  if (exponent == 31) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_to_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_half(float f) {  // round to nearest even; the bench only stores normal values
  const uint32_t bits = float_to_bits(f), sign = (bits >> 16) & 0x8000u;
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent <= 0) return static_cast<uint16_t>(sign);  // underflow: not produced by the bench
  if (exponent >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  uint32_t half = sign | (static_cast<uint32_t>(exponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(half);
}

float bf16_to_float(uint16_t b) { return bits_to_float(static_cast<uint32_t>(b) << 16); }
uint16_t float_to_bf16(float f) {
  const uint32_t bits = float_to_bits(f);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// One codec per datatype: how a double is stored and read back.
template <typename T>
struct Plain {
  using Storage = T;
  static Storage encode(double v) {
    // Integers wrap like the library's integer sums do (through int64: never an out-of-range cast).
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<int64_t>(v));
    else
      return static_cast<T>(v);
  }
  static double decode(Storage s) { return static_cast<double>(s); }
  static constexpr double kEpsilon = std::is_floating_point_v<T> ? (sizeof(T) == 4 ? 1.2e-7 : 2.3e-16) : 0;
};
struct Half {
  using Storage = uint16_t;
  static Storage encode(double v) { return float_to_half(static_cast<float>(v)); }
  static double decode(Storage s) { return half_to_float(s); }
  static constexpr double kEpsilon = 9.8e-4;
};
struct BFloat16 {
  using Storage = uint16_t;
  static Storage encode(double v) { return float_to_bf16(static_cast<float>(v)); }
  static double decode(Storage s) { return bf16_to_float(s); }
  static constexpr double kEpsilon = 7.9e-3;
};

// Calls f(Codec{}) for the codec of datatype.
template <typename F>
auto with_codec(rcc_datatype_t datatype, F&& f) {
  switch (datatype) {
    case RCC_INT8: return f(Plain<int8_t>{});
    case RCC_UINT8: return f(Plain<uint8_t>{});
    case RCC_INT16: return f(Plain<int16_t>{});
    case RCC_UINT16: return f(Plain<uint16_t>{});
    case RCC_INT32: return f(Plain<int32_t>{});
    case RCC_UINT32: return f(Plain<uint32_t>{});
    case RCC_INT64: return f(Plain<int64_t>{});
    case RCC_UINT64: return f(Plain<uint64_t>{});
    case RCC_FLOAT16: return f(Half{});
    case RCC_BFLOAT16: return f(BFloat16{});
    case RCC_FLOAT64: return f(Plain<double>{});
    default: return f(Plain<float>{});
  }
}

template <typename Codec, typename ValueOf>
void fill(void* buffer, size_t count, ValueOf value_of) {
  auto* out = static_cast<typename Codec::Storage*>(buffer);
  for (size_t j = 0; j < count; ++j) out[j] = Codec::encode(value_of(j));
}

template <typename Codec, typename ValueOf>
size_t count_wrong(const void* buffer, size_t count, double tolerance, ValueOf expected_of) {
  const auto* in = static_cast<const typename Codec::Storage*>(buffer);
  size_t wrong = 0;
  for (size_t j = 0; j < count; ++j) {
    const double expected = expected_of(j), got = Codec::decode(in[j]);
    // Compare against the stored form of the expectation, so integer wrap-around is also exact.
    const double representable = Codec::decode(Codec::encode(expected));
    if (!(std::fabs(got - representable) <= tolerance * std::fabs(representable))) ++wrong;
  }
  return wrong;
}

}  // namespace

double reduce_input(int rank, int ranks, size_t index, rcc_op_t op) {
  const size_t r = static_cast<size_t>(rank);
  switch (op) {
    case RCC_PROD:  // ranks 0..5 give a factor 2 on every third element: products stay <= 4
      return (rank < 6 && (r + index) % 3 == 0) ? 2.0 : 1.0;
    case RCC_AVG: {
      // base + d(rank) with the d summing to 0: pairs of +1/-1, an odd last rank adds 0.
      const double base = static_cast<double>(index % 4) + 2;
      if (ranks % 2 == 1 && rank == ranks - 1) return base;
      return base + (rank % 2 == 0 ? 1 : -1);
    }
    // Bitwise: below 2^15, so every integer type holds them (narrower ones keep the low bits, and
    // the bitwise ops commute with that truncation: the expectation stays exact).
    case RCC_BAND:  // each rank clears two bits
      return static_cast<double>(0x7fffu & ~(1u << ((r + index) % 15)) & ~(1u << ((3 * r + 2 * index + 7) % 15)));
    case RCC_BOR:  // each rank sets two bits
      return static_cast<double>((1u << ((r + index) % 15)) | (1u << ((5 * r + 4 * index + 3) % 15)));
    case RCC_BXOR: return static_cast<double>(((r + 1) * 0x2f1bu ^ (index % 60) * 0x0a37u ^ 0x1234u) & 0x7fffu);
    default: return static_cast<double>((r + 2 * index) % 5) + 1;
  }
}

double prefix_expected(int ranks, int upto, size_t index, rcc_op_t op) {
  double result = reduce_input(0, ranks, index, op);
  for (int r = 1; r < upto; ++r) {
    const double v = reduce_input(r, ranks, index, op);
    const auto bits = [](double x) { return static_cast<uint64_t>(x); };  // bitwise inputs are integers >= 0
    switch (op) {
      case RCC_SUM:
      case RCC_AVG: result += v; break;
      case RCC_PROD: result *= v; break;
      case RCC_MIN: result = std::fmin(result, v); break;
      case RCC_MAX: result = std::fmax(result, v); break;
      case RCC_BAND: result = static_cast<double>(bits(result) & bits(v)); break;
      case RCC_BOR: result = static_cast<double>(bits(result) | bits(v)); break;
      case RCC_BXOR: result = static_cast<double>(bits(result) ^ bits(v)); break;
      default: break;
    }
  }
  return op == RCC_AVG ? result / upto : result;
}

double reduce_expected(int ranks, size_t index, rcc_op_t op) {
  if (op == RCC_AVG) return static_cast<double>(index % 4) + 2;
  return prefix_expected(ranks, ranks, index, op);
}

double payload(int source, size_t index) {
  return static_cast<double>((static_cast<size_t>(source) * 5 + index) % 61) + 1;
}

void fill_reduce_input(void* buffer, size_t count, rcc_datatype_t datatype, int rank, int ranks, size_t first,
                       rcc_op_t op) {
  with_codec(datatype, [&](auto codec) {
    fill<decltype(codec)>(buffer, count, [&](size_t j) { return reduce_input(rank, ranks, first + j, op); });
  });
}

void fill_payload(void* buffer, size_t count, rcc_datatype_t datatype, int source, size_t first) {
  with_codec(datatype, [&](auto codec) {
    fill<decltype(codec)>(buffer, count, [&](size_t j) { return payload(source, first + j); });
  });
}

namespace {

// The elements of buffer that differ from expected_of(index) for index first.., where the
// expectation repeats every kPeriod indices: computed once per period, then looked up.
template <typename ExpectedOf>
size_t count_wrong_periodic(const void* buffer, size_t count, rcc_datatype_t datatype, size_t first, rcc_op_t op,
                            ExpectedOf expected_of) {
  return with_codec(datatype, [&](auto codec) {
    using Codec = decltype(codec);
    const double tolerance = op == RCC_AVG ? 4 * Codec::kEpsilon : 0.0;
    constexpr size_t kPeriod = 60;  // multiple of 3 (prod), 4 (avg), 5 (sum/min/max), 15 and 60 (bitwise)
    double table[kPeriod];
    for (size_t k = 0; k < kPeriod; ++k) table[k] = expected_of(k);
    return count_wrong<Codec>(buffer, count, tolerance, [&](size_t j) { return table[(first + j) % kPeriod]; });
  });
}

}  // namespace

size_t count_wrong_reduce(const void* buffer, size_t count, rcc_datatype_t datatype, int ranks, size_t first,
                          rcc_op_t op) {
  return count_wrong_periodic(buffer, count, datatype, first, op,
                              [&](size_t k) { return reduce_expected(ranks, k, op); });
}

size_t count_wrong_prefix(const void* buffer, size_t count, rcc_datatype_t datatype, int ranks, int upto, size_t first,
                          rcc_op_t op) {
  return count_wrong_periodic(buffer, count, datatype, first, op,
                              [&](size_t k) { return prefix_expected(ranks, upto, k, op); });
}

size_t count_wrong_payload(const void* buffer, size_t count, rcc_datatype_t datatype, int source, size_t first) {
  return with_codec(datatype, [&](auto codec) {
    return count_wrong<decltype(codec)>(buffer, count, 0.0, [&](size_t j) { return payload(source, first + j); });
  });
}

}  // namespace rccbench
