#include "tests/kernels/kernel_reference.h"

#include <cfenv>
#include <cmath>
#include <cstring>

namespace rcc::kernel_test {
namespace {

const TypeInfo kTypes[] = {
    {RCC_INT8, "int8", 1, Kind::kSignedInt},   {RCC_UINT8, "uint8", 1, Kind::kUnsignedInt},
    {RCC_INT32, "int32", 4, Kind::kSignedInt}, {RCC_UINT32, "uint32", 4, Kind::kUnsignedInt},
    {RCC_INT64, "int64", 8, Kind::kSignedInt}, {RCC_UINT64, "uint64", 8, Kind::kUnsignedInt},
    {RCC_FLOAT16, "float16", 2, Kind::kFloat}, {RCC_BFLOAT16, "bfloat16", 2, Kind::kFloat},
    {RCC_FLOAT32, "float32", 4, Kind::kFloat}, {RCC_FLOAT64, "float64", 8, Kind::kFloat},
    {RCC_INT16, "int16", 2, Kind::kSignedInt}, {RCC_UINT16, "uint16", 2, Kind::kUnsignedInt},
};

// A binary floating format: total bits, significand bits p (with the implicit one), max exponent.
struct Format {
  int total_bits;
  int precision;
  int max_exponent;
  int exponent_bits() const { return total_bits - precision; }
  int min_exponent() const { return 1 - max_exponent; }
};

Format format_of(rcc_datatype_t type) {
  switch (type) {
    case RCC_FLOAT16: return {16, 11, 15};
    case RCC_BFLOAT16: return {16, 8, 127};
    case RCC_FLOAT32: return {32, 24, 127};
    default: return {64, 53, 1023};
  }
}

uint64_t mask_of(size_t size) { return size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1; }

int64_t sign_extend(uint64_t bits, size_t size) {
  int shift = 64 - 8 * static_cast<int>(size);
  return static_cast<int64_t>(bits << shift) >> shift;
}

uint64_t canonical_nan(rcc_datatype_t type) {
  Format f = format_of(type);
  // Exponent all ones and the top fraction bit set, sign clear.
  uint64_t exponent_ones = ((uint64_t{1} << f.exponent_bits()) - 1) << (f.precision - 1);
  return exponent_ones | (uint64_t{1} << (f.precision - 2));
}

// IEEE min/max on values with the kernels' rules: -0 below +0; NaN handled by the caller.
double min_max(double a, double b, bool is_max) {
  if (a < b) return is_max ? b : a;
  if (b < a) return is_max ? a : b;
  bool a_negative = std::signbit(a);
  if (is_max) return a_negative ? b : a;
  return a_negative ? a : b;
}

}  // namespace

const TypeInfo& type_info(rcc_datatype_t type) {
  static_assert(sizeof kTypes / sizeof kTypes[0] == RCC_NUM_DATATYPES);
  return kTypes[type];
}

uint64_t load_element(const void* base, size_t index, size_t size) {
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const char*>(base) + index * size, size);
  return bits;
}

void store_element(void* base, size_t index, size_t size, uint64_t bits) {
  std::memcpy(static_cast<char*>(base) + index * size, &bits, size);
}

bool is_nan_bits(rcc_datatype_t type, uint64_t bits) { return std::isnan(decode_float(type, bits)); }

double decode_float(rcc_datatype_t type, uint64_t bits) {
  if (type == RCC_FLOAT64) {
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  Format f = format_of(type);
  int fraction_bits = f.precision - 1;
  uint64_t fraction = bits & ((uint64_t{1} << fraction_bits) - 1);
  int exponent_field = static_cast<int>((bits >> fraction_bits) & ((uint64_t{1} << f.exponent_bits()) - 1));
  bool negative = (bits >> (f.total_bits - 1)) & 1;
  double magnitude;
  if (exponent_field == (1 << f.exponent_bits()) - 1) {
    magnitude = fraction != 0 ? std::nan("") : INFINITY;
  } else if (exponent_field == 0) {
    magnitude = std::ldexp(static_cast<double>(fraction), f.min_exponent() - fraction_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(fraction | (uint64_t{1} << fraction_bits)),
                           exponent_field - f.max_exponent - fraction_bits);
  }
  return negative ? -magnitude : magnitude;
}

uint64_t encode_float(rcc_datatype_t type, double value) {
  if (std::isnan(value)) return canonical_nan(type);
  if (type == RCC_FLOAT64) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  }
  Format f = format_of(type);
  int fraction_bits = f.precision - 1;
  uint64_t sign = std::signbit(value) ? uint64_t{1} << (f.total_bits - 1) : 0;
  uint64_t infinity = ((uint64_t{1} << f.exponent_bits()) - 1) << fraction_bits;
  double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | infinity;
  if (magnitude == 0) return sign;
  // Round to a multiple of the quantum of magnitude's binade (subnormal binades share one).
  int exponent = std::max(std::ilogb(magnitude), f.min_exponent());
  double quantum = std::ldexp(1.0, exponent - fraction_bits);
  double units = std::nearbyint(magnitude / quantum);  // FE_TONEAREST: ties to even
  double rounded = units * quantum;
  double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -fraction_bits), f.max_exponent);
  if (rounded > max_finite) return sign | infinity;
  if (rounded == 0) return sign;
  int rounded_exponent = std::ilogb(rounded);
  if (rounded_exponent < f.min_exponent()) {  // subnormal: exponent field 0
    return sign | static_cast<uint64_t>(rounded / std::ldexp(1.0, f.min_exponent() - fraction_bits));
  }
  uint64_t significand = static_cast<uint64_t>(rounded / std::ldexp(1.0, rounded_exponent - fraction_bits));
  uint64_t exponent_field = static_cast<uint64_t>(rounded_exponent + f.max_exponent);
  return sign | (exponent_field << fraction_bits) | (significand - (uint64_t{1} << fraction_bits));
}

uint64_t reference_op(rcc_datatype_t type, rcc_op_t op, uint64_t a, uint64_t b) {
  const TypeInfo& info = type_info(type);
  uint64_t mask = mask_of(info.size);
  a &= mask;
  b &= mask;
  if (info.kind != Kind::kFloat) {
    switch (op) {
      case RCC_SUM: return (a + b) & mask;
      case RCC_PROD: return (a * b) & mask;
      case RCC_BAND: return a & b;
      case RCC_BOR: return a | b;
      case RCC_BXOR: return a ^ b;
      default: break;
    }
    bool a_less = info.kind == Kind::kSignedInt ? sign_extend(a, info.size) < sign_extend(b, info.size) : a < b;
    if (op == RCC_MIN) return a_less ? a : b;
    return a_less ? b : a;
  }
  double x = decode_float(type, a), y = decode_float(type, b);
  double result;
  switch (op) {
    case RCC_SUM: result = x + y; break;
    case RCC_PROD: result = x * y; break;
    default:
      if (std::isnan(x) || std::isnan(y)) return canonical_nan(type);
      result = min_max(x, y, op == RCC_MAX);
      break;
  }
  return encode_float(type, result);
}

uint64_t reference_divide(rcc_datatype_t type, uint64_t a, int divisor) {
  return encode_float(type, decode_float(type, a & mask_of(type_info(type).size)) / divisor);
}

}  // namespace rcc::kernel_test
