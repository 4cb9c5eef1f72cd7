// The reduction kernels on every ISA this CPU runs, against the independent reference in
// kernel_reference.cc, bit for bit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/reduce_kernels.h"
#include "tests/kernels/kernel_reference.h"

namespace rcc::kernel_test {
namespace {

using kernels::detail::ReduceIsa;

// Every binary op (RCC_AVG is RCC_SUM, then scale_divide); the bitwise ones for integers only.
constexpr rcc_op_t kOps[] = {RCC_SUM, RCC_PROD, RCC_MIN, RCC_MAX, RCC_BAND, RCC_BOR, RCC_BXOR};
constexpr rcc_op_t kFloatOps[] = {RCC_SUM, RCC_PROD, RCC_MIN, RCC_MAX};
constexpr rcc_op_t kBitwiseOps[] = {RCC_BAND, RCC_BOR, RCC_BXOR};
constexpr const char* kOpNames[] = {"sum", "prod", "min", "max", "avg", "band", "bor", "bxor"};
static_assert(sizeof kOpNames / sizeof kOpNames[0] == RCC_NUM_OPS);
constexpr rcc_datatype_t kIntegerTypes[] = {RCC_INT8,  RCC_UINT8,  RCC_INT16, RCC_UINT16,
                                            RCC_INT32, RCC_UINT32, RCC_INT64, RCC_UINT64};
constexpr size_t kCounts[] = {0, 1, 3, 7, 15, 16, 17, 31, 33, 1000, 65537};
constexpr ReduceIsa kAllIsas[] = {ReduceIsa::kSse2, ReduceIsa::kAvx2, ReduceIsa::kAvx512};

std::vector<rcc_datatype_t> all_types() {
  std::vector<rcc_datatype_t> types;
  for (int t = 0; t < RCC_NUM_DATATYPES; ++t) types.push_back(static_cast<rcc_datatype_t>(t));
  return types;
}

// Interesting bit patterns per type: zeros, extremes, infinities, NaNs (quiet, signalling, with
// payload and sign), subnormals, one and its neighbours.
std::vector<uint64_t> special_values(rcc_datatype_t type) {
  switch (type) {
    case RCC_FLOAT16:
      return {0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x0003, 0x03ff, 0x83ff, 0x0200,
              0x0400, 0x8400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe01,
              0x7fff, 0x3c00, 0xbc00, 0x3c01, 0x3bff, 0x3800, 0x4000, 0x1400, 0x6000};
    case RCC_BFLOAT16:
      return {0x0000, 0x8000, 0x0001, 0x8001, 0x0002, 0x0003, 0x007f, 0x807f, 0x0040,
              0x0080, 0x8080, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc1,
              0x7fff, 0x3f80, 0xbf80, 0x3f81, 0x3f7f, 0x3f00, 0x4000, 0x0c00, 0x7000};
    case RCC_FLOAT32:
      return {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff,
              0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc12345, 0x3f800000,
              0xbf800000, 0x3f800001, 0x3f7fffff, 0x33800000, 0x4b800000};
    case RCC_FLOAT64:
      return {0x0000000000000000, 0x8000000000000000, 0x0000000000000001, 0x000fffffffffffff,
              0x0010000000000000, 0x7fefffffffffffff, 0xffefffffffffffff, 0x7ff0000000000000,
              0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001, 0xfff8000000001234,
              0x3ff0000000000000, 0xbff0000000000000, 0x3ff0000000000001, 0x3fefffffffffffff};
    default: {
      size_t bits = type_info(type).size * 8;
      uint64_t ones = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      uint64_t top = uint64_t{1} << (bits - 1);
      return {0, 1, 2, ones, top, top - 1, top + 1, ones - 1, 0x5a5a5a5a5a5a5a5a & ones};
    }
  }
}

// Random elements: specials, raw bits, and (for floats) values near one so sums and products
// exercise rounding rather than overflow.
uint64_t random_element(rcc_datatype_t type, std::mt19937_64& rng) {
  const TypeInfo& info = type_info(type);
  uint64_t raw = rng();
  switch (raw % 4) {
    case 0: {
      std::vector<uint64_t> specials = special_values(type);
      return specials[(raw >> 8) % specials.size()];
    }
    case 1: return rng();
    default: break;
  }
  if (info.kind != Kind::kFloat) return rng() % 7 == 0 ? rng() : rng() % 512;
  double magnitude =
      std::ldexp(1.0 + static_cast<double>(rng() % (1u << 20)) / (1u << 20), static_cast<int>(rng() % 13) - 6);
  return encode_float(type, (rng() & 1) ? -magnitude : magnitude);
}

std::vector<uint64_t> random_elements(rcc_datatype_t type, size_t count, std::mt19937_64& rng) {
  std::vector<uint64_t> v(count);
  for (auto& e : v) e = random_element(type, rng);
  return v;
}

// A buffer of count elements starting offset elements into an exactly sized allocation, so that
// misaligned access is exercised and any overrun is an AddressSanitizer error.
struct Buffer {
  Buffer(rcc_datatype_t type, const std::vector<uint64_t>& values, size_t offset)
      : size(type_info(type).size), offset(offset), bytes((offset + values.size()) * size, 0xcd) {
    for (size_t i = 0; i < values.size(); ++i) store_element(data(), i, size, values[i]);
  }
  void* data() { return bytes.data() + offset * size; }
  uint64_t at(size_t i) const { return load_element(bytes.data() + offset * size, i, size); }
  bool prefix_untouched() const {
    for (size_t i = 0; i < offset * size; ++i) {
      if (bytes[i] != 0xcd) return false;
    }
    return true;
  }
  size_t size, offset;
  std::vector<unsigned char> bytes;
};

std::string describe(rcc_datatype_t type, rcc_op_t op, size_t count, size_t i, uint64_t a, uint64_t b, uint64_t got,
                     uint64_t want) {
  char text[256];
  std::snprintf(text, sizeof text, "%s %s count=%zu i=%zu: a=0x%llx b=0x%llx got 0x%llx want 0x%llx",
                type_info(type).name, kOpNames[op], count, i, static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b), static_cast<unsigned long long>(got),
                static_cast<unsigned long long>(want));
  return text;
}

class ReduceKernelsTest : public ::testing::TestWithParam<ReduceIsa> {
 protected:
  void SetUp() override {
    if (!kernels::detail::isa_supported(GetParam())) {
      GTEST_SKIP() << kernels::detail::isa_name(GetParam()) << " is not supported by this CPU";
    }
    ASSERT_EQ(kernels::detail::set_reduce_isa(GetParam()), RCC_SUCCESS);
    ASSERT_STREQ(kernels::reduce_isa(), kernels::detail::isa_name(GetParam()));
  }
};

enum class Aliasing { kSeparate, kOutIsA, kOutIsB };

// Runs one reduction and compares every element with the reference; returns false (after one
// failure message) on the first mismatch.
bool check_reduce(rcc_datatype_t type, rcc_op_t op, const std::vector<uint64_t>& a, const std::vector<uint64_t>& b,
                  size_t offset, Aliasing aliasing) {
  size_t count = a.size();
  Buffer ba(type, a, offset), bb(type, b, offset), out(type, std::vector<uint64_t>(count, 0), offset);
  switch (aliasing) {
    case Aliasing::kSeparate: kernels::reduce(out.data(), ba.data(), bb.data(), count, type, op); break;
    case Aliasing::kOutIsA: kernels::reduce_into(ba.data(), bb.data(), count, type, op); break;
    case Aliasing::kOutIsB: kernels::reduce(bb.data(), ba.data(), bb.data(), count, type, op); break;
  }
  const Buffer& result = aliasing == Aliasing::kSeparate ? out : aliasing == Aliasing::kOutIsA ? ba : bb;
  for (size_t i = 0; i < count; ++i) {
    uint64_t want = reference_op(type, op, a[i], b[i]);
    if (result.at(i) != want) {
      ADD_FAILURE() << describe(type, op, count, i, a[i], b[i], result.at(i), want) << " offset=" << offset
                    << " aliasing=" << static_cast<int>(aliasing);
      return false;
    }
  }
  if (!result.prefix_untouched()) {
    ADD_FAILURE() << type_info(type).name << " " << kOpNames[op] << " wrote before the buffer";
    return false;
  }
  return true;
}

TEST_P(ReduceKernelsTest, EveryTypeOpCountOffsetAndAliasingMatchesReference) {
  std::mt19937_64 rng(42);
  for (rcc_datatype_t type : all_types()) {
    for (rcc_op_t op : kOps) {
      if (!kernels::op_defined_for(op, type)) continue;
      for (size_t count : kCounts) {
        std::vector<uint64_t> a = random_elements(type, count, rng), b = random_elements(type, count, rng);
        for (size_t offset : {0, 1}) {
          for (Aliasing aliasing : {Aliasing::kSeparate, Aliasing::kOutIsA, Aliasing::kOutIsB}) {
            if (!check_reduce(type, op, a, b, offset, aliasing)) return;
          }
        }
      }
    }
  }
}

// Every 16-bit pattern against every special value, both operand orders, all ops.
TEST_P(ReduceKernelsTest, HalfPrecisionAllPatternsAgainstSpecials) {
  for (rcc_datatype_t type : {RCC_FLOAT16, RCC_BFLOAT16}) {
    std::vector<uint64_t> all(65536);
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    for (uint64_t special : special_values(type)) {
      std::vector<uint64_t> same(all.size(), special);
      for (rcc_op_t op : kFloatOps) {
        if (!check_reduce(type, op, all, same, 0, Aliasing::kSeparate)) return;
        if (!check_reduce(type, op, same, all, 1, Aliasing::kOutIsA)) return;
      }
    }
  }
}

// Random pairs over the whole 16-bit space, concentrated on sums and products that round.
TEST_P(ReduceKernelsTest, HalfPrecisionRandomPairsMatchReference) {
  std::mt19937_64 rng(7);
  for (rcc_datatype_t type : {RCC_FLOAT16, RCC_BFLOAT16}) {
    for (int round = 0; round < 8; ++round) {
      std::vector<uint64_t> a(65536), b(65536);
      for (size_t i = 0; i < a.size(); ++i) {
        a[i] = rng() & 0xffff;
        // Half of b near a's exponent (so the sum rounds), half anywhere.
        b[i] = (i & 1) ? (rng() & 0xffff) : ((a[i] & 0xff00) ^ (rng() & 0x80ff));
      }
      for (rcc_op_t op : kFloatOps) {
        if (!check_reduce(type, op, a, b, 0, Aliasing::kSeparate)) return;
      }
    }
  }
}

// A vector whose results are all normal rounds in one instruction on AVX512_BF16; one NaN or
// subnormal result sends the whole vector through the integer codec. Every lane position gets the
// special result once, among neighbours whose sums and products round (ties included).
TEST_P(ReduceKernelsTest, HalfPrecisionOneSpecialLaneAmongRoundingLanes) {
  constexpr size_t kCount = 4 * 64 + 5;
  const uint64_t specials[][2] = {{0x0001, 0x0002}, {0x8040, 0x0001}, {0x7fc1, 0x3f80}, {0x7f80, 0xff80},
                                  {0x0080, 0x8081}, {0x0100, 0x3e80}};  // subnormal, NaN, 2^-126 -> sub
  for (rcc_op_t op : {RCC_SUM, RCC_PROD}) {
    for (const auto& special : specials) {
      for (size_t lane = 0; lane < kCount; lane += 7) {
        std::vector<uint64_t> a(kCount), b(kCount);
        for (size_t i = 0; i < kCount; ++i) {
          a[i] = 0x3f81 + (i % 5);  // 1 + k * 2^-7: with 2^-8 a tie, to even
          b[i] = (i % 2) ? 0x3b80 : 0x3f83;
        }
        a[lane] = special[0];
        b[lane] = special[1];
        if (!check_reduce(RCC_BFLOAT16, op, a, b, lane % 2, Aliasing::kSeparate)) return;
      }
    }
  }
}

TEST_P(ReduceKernelsTest, ScaleDivideMatchesReference) {
  std::mt19937_64 rng(3);
  for (rcc_datatype_t type : {RCC_FLOAT16, RCC_BFLOAT16, RCC_FLOAT32, RCC_FLOAT64}) {
    for (int divisor : {1, 2, 3, 7, 10, 1000, -3}) {
      for (size_t count : kCounts) {
        std::vector<uint64_t> values = random_elements(type, count, rng);
        if ((type == RCC_FLOAT16 || type == RCC_BFLOAT16) && count == 65537) {
          for (size_t i = 0; i < 65536; ++i) values[i] = i;  // every pattern
        }
        Buffer buf(type, values, count % 2);
        kernels::scale_divide(buf.data(), count, type, divisor);
        for (size_t i = 0; i < count; ++i) {
          uint64_t want = reference_divide(type, values[i], divisor);
          ASSERT_EQ(buf.at(i), want) << type_info(type).name << " / " << divisor << " i=" << i << " value=0x"
                                     << std::hex << values[i];
        }
        ASSERT_TRUE(buf.prefix_untouched());
      }
    }
  }
}

// Reduces a with b (bit patterns given as uint64) and returns the single result element.
uint64_t reduce_one(rcc_datatype_t type, rcc_op_t op, uint64_t a, uint64_t b) {
  Buffer ba(type, {a}, 0), bb(type, {b}, 0);
  kernels::reduce_into(ba.data(), bb.data(), 1, type, op);
  return ba.at(0);
}

TEST_P(ReduceKernelsTest, IntegersWrapAround) {
  EXPECT_EQ(reduce_one(RCC_INT8, RCC_SUM, 0x7f, 0x01), 0x80u);  // 127 + 1 = -128
  EXPECT_EQ(reduce_one(RCC_UINT8, RCC_SUM, 0xff, 0x02), 0x01u);
  EXPECT_EQ(reduce_one(RCC_INT8, RCC_PROD, 0x80, 0xff), 0x80u);  // -128 * -1 = -128
  EXPECT_EQ(reduce_one(RCC_UINT8, RCC_PROD, 16, 16), 0u);
  EXPECT_EQ(reduce_one(RCC_INT32, RCC_SUM, 0x7fffffff, 1), 0x80000000u);
  EXPECT_EQ(reduce_one(RCC_INT32, RCC_PROD, 0x80000000, 0xffffffff), 0x80000000u);
  EXPECT_EQ(reduce_one(RCC_UINT32, RCC_PROD, 0x10000, 0x10000), 0u);
  EXPECT_EQ(reduce_one(RCC_INT64, RCC_SUM, 0x7fffffffffffffff, 1), 0x8000000000000000u);
  EXPECT_EQ(reduce_one(RCC_INT64, RCC_PROD, 0x8000000000000000, ~uint64_t{0}), 0x8000000000000000u);
  EXPECT_EQ(reduce_one(RCC_UINT64, RCC_PROD, 0x100000001, 0x100000001), 0x200000001u);
  // Signed and unsigned order differ.
  EXPECT_EQ(reduce_one(RCC_INT8, RCC_MIN, 0x80, 0x7f), 0x80u);
  EXPECT_EQ(reduce_one(RCC_UINT8, RCC_MIN, 0x80, 0x7f), 0x7fu);
  EXPECT_EQ(reduce_one(RCC_INT64, RCC_MAX, 0x8000000000000000, 1), 1u);
  EXPECT_EQ(reduce_one(RCC_UINT64, RCC_MAX, 0x8000000000000000, 1), 0x8000000000000000u);
  // 16-bit: 32767 + 1 = -32768; 65535 + 2 = 1; -32768 * -1 = -32768; 300 * 300 = 90000 mod 2^16;
  // 256 * 256 = 0; -3 * 7 = -21.
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_SUM, 0x7fff, 0x0001), 0x8000u);
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_SUM, 0x8000, 0xffff), 0x7fffu);  // -32768 - 1
  EXPECT_EQ(reduce_one(RCC_UINT16, RCC_SUM, 0xffff, 0x0002), 0x0001u);
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_PROD, 0x8000, 0xffff), 0x8000u);
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_PROD, 300, 300), 90000u & 0xffff);
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_PROD, 0xfffd, 7), 0xffebu);
  EXPECT_EQ(reduce_one(RCC_UINT16, RCC_PROD, 0x0100, 0x0100), 0u);
  EXPECT_EQ(reduce_one(RCC_UINT16, RCC_PROD, 0xffff, 0xffff), 1u);
  // 16-bit signed and unsigned order differ.
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_MIN, 0x8000, 0x7fff), 0x8000u);
  EXPECT_EQ(reduce_one(RCC_UINT16, RCC_MIN, 0x8000, 0x7fff), 0x7fffu);
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_MAX, 0xffff, 0x0001), 0x0001u);  // -1 < 1
  EXPECT_EQ(reduce_one(RCC_UINT16, RCC_MAX, 0xffff, 0x0001), 0xffffu);
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_MIN, 0xffff, 0x8001), 0x8001u);  // -32767 < -1
  EXPECT_EQ(reduce_one(RCC_UINT16, RCC_MIN, 0xffff, 0x8001), 0x8001u);
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_MAX, 0x0080, 0x00ff), 0x00ffu);  // no byte-wise compare
  EXPECT_EQ(reduce_one(RCC_INT16, RCC_MIN, 0x0100, 0x00ff), 0x00ffu);
}

// The same wrap-around and ordering cases through full vectors and the unrolled loop (reduce_one
// reaches only the tail), for every lane position: count 131 is 4 x 32 + 3 16-bit lanes.
TEST_P(ReduceKernelsTest, SixteenBitWrapAroundAndOrderInFullVectors) {
  struct Case {
    rcc_datatype_t type;
    rcc_op_t op;
    uint64_t a, b, want;
  };
  const Case cases[] = {
      {RCC_INT16, RCC_SUM, 0x7fff, 0x0001, 0x8000},   {RCC_UINT16, RCC_SUM, 0xffff, 0x0002, 0x0001},
      {RCC_INT16, RCC_PROD, 0x8000, 0xffff, 0x8000},  {RCC_INT16, RCC_PROD, 300, 300, 90000 & 0xffff},
      {RCC_UINT16, RCC_PROD, 0xffff, 0xffff, 1},      {RCC_INT16, RCC_MIN, 0x8000, 0x7fff, 0x8000},
      {RCC_UINT16, RCC_MIN, 0x8000, 0x7fff, 0x7fff},  {RCC_INT16, RCC_MAX, 0xffff, 0x0001, 0x0001},
      {RCC_UINT16, RCC_MAX, 0xffff, 0x0001, 0xffff},  {RCC_INT16, RCC_BXOR, 0xffff, 0x8001, 0x7ffe},
      {RCC_UINT16, RCC_BAND, 0xf0f0, 0x3c3c, 0x3030}, {RCC_INT16, RCC_BOR, 0x8000, 0x0001, 0x8001},
  };
  constexpr size_t kCount = 131;
  for (const Case& c : cases) {
    for (size_t lane = 0; lane < kCount; lane += 5) {
      // The case in one lane, among neighbours whose results differ by type or op.
      std::vector<uint64_t> a(kCount), b(kCount);
      for (size_t i = 0; i < kCount; ++i) {
        a[i] = (i * 0x9e37 + 0x1234) & 0xffff;
        b[i] = (i * 0x7f4a + 0x8765) & 0xffff;
      }
      a[lane] = c.a;
      b[lane] = c.b;
      ASSERT_EQ(reference_op(c.type, c.op, c.a, c.b), c.want) << "the reference disagrees";
      for (Aliasing aliasing : {Aliasing::kSeparate, Aliasing::kOutIsA, Aliasing::kOutIsB}) {
        ASSERT_TRUE(check_reduce(c.type, c.op, a, b, lane % 2, aliasing)) << "lane " << lane;
      }
    }
  }
}

// BAND, BOR and BXOR on every integer type, element by element, with patterns that cover every
// bit: the result does not depend on signedness, and x ^ x = 0, x & ~0 = x, x | 0 = x.
TEST_P(ReduceKernelsTest, BitwiseOpsOnEveryIntegerType) {
  constexpr size_t kCount = 1000;
  for (rcc_datatype_t type : kIntegerTypes) {
    const size_t size = type_info(type).size;
    const uint64_t ones = size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * size)) - 1;
    std::vector<uint64_t> a(kCount), b(kCount);
    for (size_t i = 0; i < kCount; ++i) {
      a[i] = (0xf0f0f0f0f0f0f0f0ull ^ (i * 0x9E3779B97F4A7C15ull)) & ones;
      b[i] = (i % 3 == 0 ? a[i] : i % 3 == 1 ? ~a[i] : 0x0ff00ff00ff00ff0ull * (i + 1)) & ones;
    }
    for (rcc_op_t op : kBitwiseOps) {
      ASSERT_TRUE(kernels::op_defined_for(op, type)) << type_info(type).name << " " << kOpNames[op];
      for (size_t offset : {0, 1}) {
        for (Aliasing aliasing : {Aliasing::kSeparate, Aliasing::kOutIsA, Aliasing::kOutIsB}) {
          if (!check_reduce(type, op, a, b, offset, aliasing)) return;
        }
      }
    }
    EXPECT_EQ(reduce_one(type, RCC_BXOR, ones, ones), 0u) << type_info(type).name;
    EXPECT_EQ(reduce_one(type, RCC_BXOR, ones, 0), ones) << type_info(type).name;
    EXPECT_EQ(reduce_one(type, RCC_BAND, 0x5a5a5a5a5a5a5a5aull & ones, ones), 0x5a5a5a5a5a5a5a5aull & ones);
    EXPECT_EQ(reduce_one(type, RCC_BAND, 0x5a5a5a5a5a5a5a5aull & ones, 0xa5a5a5a5a5a5a5a5ull & ones), 0u);
    EXPECT_EQ(reduce_one(type, RCC_BOR, 0x5a5a5a5a5a5a5a5aull & ones, 0xa5a5a5a5a5a5a5a5ull & ones), ones);
    EXPECT_EQ(reduce_one(type, RCC_BOR, 0x8000000000000001ull & ones, 0), 0x8000000000000001ull & ones);
  }
  // Signed and unsigned types of one width give the same bits.
  const std::pair<rcc_datatype_t, rcc_datatype_t> pairs[] = {
      {RCC_INT8, RCC_UINT8}, {RCC_INT16, RCC_UINT16}, {RCC_INT32, RCC_UINT32}, {RCC_INT64, RCC_UINT64}};
  for (const auto& [s, u] : pairs) {
    for (rcc_op_t op : kBitwiseOps) {
      EXPECT_EQ(reduce_one(s, op, 0x8181818181818181ull, 0xff00ff00ff00ff00ull),
                reduce_one(u, op, 0x8181818181818181ull, 0xff00ff00ff00ff00ull))
          << type_info(s).name << " " << kOpNames[op];
    }
  }
}

TEST_P(ReduceKernelsTest, RoundsToNearestEvenOnce) {
  // binary16: 1 + 2^-11 is a tie -> 1; (1 + 2^-10) + 2^-11 -> 1 + 2^-9; 65504 + 16 -> infinity.
  EXPECT_EQ(reduce_one(RCC_FLOAT16, RCC_SUM, 0x3c00, 0x1000), 0x3c00u);
  EXPECT_EQ(reduce_one(RCC_FLOAT16, RCC_SUM, 0x3c01, 0x1000), 0x3c02u);
  EXPECT_EQ(reduce_one(RCC_FLOAT16, RCC_SUM, 0x7bff, 0x4c00), 0x7c00u);
  EXPECT_EQ(reduce_one(RCC_FLOAT16, RCC_SUM, 0x7bff, 0x4bfe), 0x7bffu);  // 65504 + 15.97: below the tie
  // Subnormal ties: 2^-24 * 0.5 -> 0; 3 * 2^-24 * 0.5 -> 2 * 2^-24.
  EXPECT_EQ(reduce_one(RCC_FLOAT16, RCC_PROD, 0x0001, 0x3800), 0x0000u);
  EXPECT_EQ(reduce_one(RCC_FLOAT16, RCC_PROD, 0x0003, 0x3800), 0x0002u);
  EXPECT_EQ(reduce_one(RCC_FLOAT16, RCC_PROD, 0x8003, 0x3800), 0x8002u);
  // Largest subnormal + smallest subnormal = smallest normal.
  EXPECT_EQ(reduce_one(RCC_FLOAT16, RCC_SUM, 0x03ff, 0x0001), 0x0400u);
  // bfloat16: 1 + 2^-8 is a tie -> 1; (1 + 2^-7) + 2^-8 -> 1 + 2^-6; max + half ulp -> infinity.
  EXPECT_EQ(reduce_one(RCC_BFLOAT16, RCC_SUM, 0x3f80, 0x3b80), 0x3f80u);
  EXPECT_EQ(reduce_one(RCC_BFLOAT16, RCC_SUM, 0x3f81, 0x3b80), 0x3f82u);
  EXPECT_EQ(reduce_one(RCC_BFLOAT16, RCC_SUM, 0x7f7f, 0x7b00), 0x7f80u);
  EXPECT_EQ(reduce_one(RCC_BFLOAT16, RCC_SUM, 0x7f7f, 0x7aff), 0x7f7fu);
  EXPECT_EQ(reduce_one(RCC_BFLOAT16, RCC_PROD, 0x0003, 0x3f00), 0x0002u);
  // float32 through the same single-rounding rule.
  EXPECT_EQ(reduce_one(RCC_FLOAT32, RCC_SUM, 0x3f800000, 0x33800000), 0x3f800000u);
  EXPECT_EQ(reduce_one(RCC_FLOAT32, RCC_SUM, 0x3f800001, 0x33800000), 0x3f800002u);
  // The independent reference agrees on the same cases.
  EXPECT_EQ(reference_op(RCC_FLOAT16, RCC_SUM, 0x3c01, 0x1000), 0x3c02u);
  EXPECT_EQ(encode_float(RCC_FLOAT16, 65520.0), 0x7c00u);
  EXPECT_EQ(encode_float(RCC_BFLOAT16, 1.0 + 1.0 / 256), 0x3f80u);
}

TEST_P(ReduceKernelsTest, NanPropagatesCanonicallyAndMinMaxOrderSignedZeros) {
  struct Case {
    rcc_datatype_t type;
    uint64_t plus_zero, minus_zero, one, quiet_nan, odd_nan, inf, minus_inf;
  };
  const Case cases[] = {
      {RCC_FLOAT16, 0x0000, 0x8000, 0x3c00, 0x7e00, 0xfc01, 0x7c00, 0xfc00},
      {RCC_BFLOAT16, 0x0000, 0x8000, 0x3f80, 0x7fc0, 0xff81, 0x7f80, 0xff80},
      {RCC_FLOAT32, 0x00000000, 0x80000000, 0x3f800000, 0x7fc00000, 0xff800001, 0x7f800000, 0xff800000},
      {RCC_FLOAT64, 0, 0x8000000000000000, 0x3ff0000000000000, 0x7ff8000000000000, 0xfff0000000000001,
       0x7ff0000000000000, 0xfff0000000000000},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(type_info(c.type).name);
    EXPECT_EQ(reduce_one(c.type, RCC_MIN, c.plus_zero, c.minus_zero), c.minus_zero);
    EXPECT_EQ(reduce_one(c.type, RCC_MIN, c.minus_zero, c.plus_zero), c.minus_zero);
    EXPECT_EQ(reduce_one(c.type, RCC_MAX, c.plus_zero, c.minus_zero), c.plus_zero);
    EXPECT_EQ(reduce_one(c.type, RCC_MAX, c.minus_zero, c.plus_zero), c.plus_zero);
    for (rcc_op_t op : kFloatOps) {
      EXPECT_EQ(reduce_one(c.type, op, c.odd_nan, c.one), c.quiet_nan) << kOpNames[op];
      EXPECT_EQ(reduce_one(c.type, op, c.one, c.odd_nan), c.quiet_nan) << kOpNames[op];
    }
    EXPECT_EQ(reduce_one(c.type, RCC_SUM, c.inf, c.minus_inf), c.quiet_nan);   // inf - inf
    EXPECT_EQ(reduce_one(c.type, RCC_PROD, c.inf, c.plus_zero), c.quiet_nan);  // inf * 0
    EXPECT_EQ(reduce_one(c.type, RCC_MIN, c.minus_inf, c.one), c.minus_inf);
    EXPECT_EQ(reduce_one(c.type, RCC_MAX, c.inf, c.one), c.inf);
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, ReduceKernelsTest, ::testing::ValuesIn(kAllIsas),
                         [](const ::testing::TestParamInfo<ReduceIsa>& info) {
                           return std::string(kernels::detail::isa_name(info.param));
                         });

// Ranks on different CPUs must agree: every ISA gives the baseline's bytes on random bit patterns.
TEST(ReduceKernelsAcrossIsas, AllPathsBitwiseIdenticalOnRandomBits) {
  std::mt19937_64 rng(99);
  constexpr size_t kCount = 65537;
  for (rcc_datatype_t type : all_types()) {
    size_t size = type_info(type).size;
    std::vector<unsigned char> a(kCount * size), b(kCount * size);
    for (auto& byte : a) byte = static_cast<unsigned char>(rng());
    for (auto& byte : b) byte = static_cast<unsigned char>(rng());
    for (rcc_op_t op : {RCC_SUM, RCC_PROD, RCC_MIN, RCC_MAX, RCC_AVG, RCC_BAND, RCC_BOR, RCC_BXOR}) {
      if (!kernels::op_defined_for(op, type)) continue;
      std::vector<unsigned char> baseline;
      for (ReduceIsa isa : kAllIsas) {
        if (!kernels::detail::isa_supported(isa)) continue;
        ASSERT_EQ(kernels::detail::set_reduce_isa(isa), RCC_SUCCESS);
        std::vector<unsigned char> out(a);
        if (op == RCC_AVG) {
          kernels::scale_divide(out.data(), kCount, type, 3);
        } else {
          kernels::reduce(out.data(), a.data(), b.data(), kCount, type, op);
        }
        if (baseline.empty()) {
          baseline = out;
        } else {
          ASSERT_EQ(std::memcmp(out.data(), baseline.data(), out.size()), 0)
              << type_info(type).name << " " << kOpNames[op] << ": " << kernels::detail::isa_name(isa)
              << " differs from sse2";
        }
      }
    }
  }
}

// CPUs with AVX-512 but without AVX512_BF16 run the integer bfloat16 codec on the AVX-512 path;
// on a CPU with both, the per-ISA tests above cover only the conversion instruction.
TEST(ReduceKernelsAvx512, Bfloat16WithoutHardwareConversionMatchesReference) {
  if (!kernels::detail::isa_supported(ReduceIsa::kAvx512)) GTEST_SKIP() << "no AVX-512";
  const auto& table = kernels::detail::avx512_kernels_without_bf16();
  std::mt19937_64 rng(11);
  for (rcc_op_t op : kFloatOps) {
    kernels::detail::BinaryKernel kernel = table.binary[RCC_BFLOAT16][op];
    std::vector<uint64_t> all(65536), a(65536), b(65536);
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = rng() & 0xffff;
      b[i] = (i & 1) ? (rng() & 0xffff) : ((a[i] & 0xff00) ^ (rng() & 0x80ff));
    }
    std::vector<std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> cases = {{a, b}};
    for (uint64_t special : special_values(RCC_BFLOAT16)) cases.push_back({all, std::vector<uint64_t>(65536, special)});
    for (const auto& [x, y] : cases) {
      Buffer bx(RCC_BFLOAT16, x, 0), by(RCC_BFLOAT16, y, 1);
      kernel(bx.data(), bx.data(), by.data(), x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        uint64_t want = reference_op(RCC_BFLOAT16, op, x[i], y[i]);
        ASSERT_EQ(bx.at(i), want) << describe(RCC_BFLOAT16, op, x.size(), i, x[i], y[i], bx.at(i), want);
      }
    }
  }
}

TEST(ReduceKernelsApi, OpDefinedForTable) {
  for (rcc_datatype_t type : all_types()) {
    bool floating = type == RCC_FLOAT16 || type == RCC_BFLOAT16 || type == RCC_FLOAT32 || type == RCC_FLOAT64;
    for (rcc_op_t op : kFloatOps) EXPECT_TRUE(kernels::op_defined_for(op, type)) << type_info(type).name;
    EXPECT_EQ(kernels::op_defined_for(RCC_AVG, type), floating) << type_info(type).name;
    for (rcc_op_t op : kBitwiseOps) {
      EXPECT_EQ(kernels::op_defined_for(op, type), !floating) << type_info(type).name << " " << kOpNames[op];
    }
    EXPECT_FALSE(kernels::op_defined_for(RCC_NUM_OPS, type));
    EXPECT_FALSE(kernels::op_defined_for(static_cast<rcc_op_t>(-1), type));
  }
  EXPECT_FALSE(kernels::op_defined_for(RCC_SUM, RCC_NUM_DATATYPES));
  EXPECT_FALSE(kernels::op_defined_for(RCC_SUM, static_cast<rcc_datatype_t>(-1)));
}

// The kernels cannot return an error: an undefined combination (a caller bug) leaves memory alone.
TEST(ReduceKernelsApi, UndefinedCombinationsLeaveBuffersUntouched) {
  std::vector<int32_t> a = {1, 2, 3}, b = {4, 5, 6};
  kernels::reduce_into(a.data(), b.data(), a.size(), RCC_INT32, RCC_AVG);
  kernels::reduce_into(a.data(), b.data(), a.size(), RCC_NUM_DATATYPES, RCC_SUM);
  kernels::reduce_into(a.data(), b.data(), a.size(), RCC_INT32, static_cast<rcc_op_t>(-1));
  kernels::scale_divide(a.data(), a.size(), RCC_INT32, 2);
  kernels::scale_divide(a.data(), a.size(), static_cast<rcc_datatype_t>(42), 2);
  EXPECT_EQ(a, (std::vector<int32_t>{1, 2, 3}));
  // The bitwise ops on floating types (rejected by op_defined_for) and ops past RCC_NUM_OPS.
  for (rcc_datatype_t type : {RCC_FLOAT16, RCC_BFLOAT16, RCC_FLOAT32, RCC_FLOAT64}) {
    for (rcc_op_t op : kBitwiseOps) {
      std::vector<uint64_t> x = {0x3ff0000000000000, 0x4000000000000000, 0xc008000000000000},
                            y = {0x7ff8000000000000, 0x0000000000000001, 0x8000000000000000};
      const std::vector<uint64_t> before = x;
      kernels::reduce_into(x.data(), y.data(), 2, type, op);  // 2 to 8 bytes of elements
      kernels::reduce(y.data(), x.data(), y.data(), 2, type, op);
      EXPECT_EQ(x, before) << type_info(type).name << " " << kOpNames[op];
      EXPECT_EQ(y, (std::vector<uint64_t>{0x7ff8000000000000, 0x0000000000000001, 0x8000000000000000}))
          << type_info(type).name << " " << kOpNames[op];
    }
  }
  kernels::reduce_into(a.data(), b.data(), a.size(), RCC_INT32, RCC_NUM_OPS);
  EXPECT_EQ(a, (std::vector<int32_t>{1, 2, 3}));
  // Zero elements touch nothing, even through null pointers.
  kernels::reduce(nullptr, nullptr, nullptr, 0, RCC_FLOAT32, RCC_SUM);
  kernels::scale_divide(nullptr, 0, RCC_FLOAT32, 2);
}

TEST(ReduceKernelsApi, IsaSelection) {
  using kernels::detail::parse_isa_request;
  ReduceIsa isa = ReduceIsa::kAvx512;
  ASSERT_EQ(parse_isa_request("scalar", &isa), RCC_SUCCESS);
  EXPECT_EQ(isa, ReduceIsa::kSse2);
  ASSERT_EQ(parse_isa_request("sse2", &isa), RCC_SUCCESS);
  EXPECT_EQ(isa, ReduceIsa::kSse2);
  ASSERT_EQ(parse_isa_request("avx2", &isa), RCC_SUCCESS);
  EXPECT_EQ(isa, kernels::detail::isa_supported(ReduceIsa::kAvx2) ? ReduceIsa::kAvx2 : ReduceIsa::kSse2);
  ASSERT_EQ(parse_isa_request("auto", &isa), RCC_SUCCESS);
  for (ReduceIsa higher : kAllIsas) {
    if (static_cast<int>(higher) > static_cast<int>(isa)) {
      EXPECT_FALSE(kernels::detail::isa_supported(higher));
    }
  }
  EXPECT_TRUE(kernels::detail::isa_supported(isa));
  ReduceIsa untouched = ReduceIsa::kAvx2;
  EXPECT_EQ(parse_isa_request("avx1024", &untouched), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rcc_last_error()).find("avx1024"), std::string::npos);
  EXPECT_EQ(untouched, ReduceIsa::kAvx2);
  EXPECT_EQ(parse_isa_request(nullptr, &untouched), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(kernels::detail::set_reduce_isa(static_cast<ReduceIsa>(9)), RCC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(kernels::detail::set_reduce_isa(ReduceIsa::kSse2), RCC_SUCCESS);
  EXPECT_STREQ(kernels::reduce_isa(), "sse2");
}

// Run by ctest once per RCC_REDUCE_ISA value, alone in a fresh process (the choice is made once, at
// first use, and the other tests force ISAs).
TEST(ReduceIsaEnvironment, FirstUseFollowsRccReduceIsa) {
  const char* request = std::getenv("RCC_REDUCE_ISA");
  if (request == nullptr) GTEST_SKIP() << "run with RCC_REDUCE_ISA set and --gtest_filter=ReduceIsaEnvironment.*";
  ReduceIsa expected = ReduceIsa::kSse2;
  if (kernels::detail::parse_isa_request(request, &expected) != RCC_SUCCESS) {  // unknown: auto
    ASSERT_EQ(kernels::detail::parse_isa_request("auto", &expected), RCC_SUCCESS);
  }
  EXPECT_STREQ(kernels::reduce_isa(), kernels::detail::isa_name(expected));
  float x = 1.5f, y = 2.25f;
  kernels::reduce_into(&x, &y, 1, RCC_FLOAT32, RCC_SUM);
  EXPECT_EQ(x, 3.75f);
}

}  // namespace
}  // namespace rcc::kernel_test
