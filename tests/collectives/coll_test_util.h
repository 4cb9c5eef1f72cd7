// Shared helpers of the collective tests: rank-dependent inputs with exactly known reductions for
// every datatype and op, typed element access, cross-rank bitwise agreement and algorithm forcing.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "rank_test.h"

namespace coll_test {

inline bool quick() {
  const char* value = std::getenv("RCC_TEST_QUICK");
  return value != nullptr && value[0] == '1';
}

// The suite runs as configured (one host: collectives through shared memory), with RCC_SHM=0
// (every collective through the transport) and across test hosts with private /dev/shm
// (tests/hosts); "shm" can be forced only where every rank is on one host and RCC_SHM allows it.
// Whether the environment sets `name` to 0.
inline bool turned_off(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::string(value) == "0";
}
inline int hosts_of_comm() {
  int host = 0, hosts = 0;
  return rcc_comm_host(ranktest::comm(), &host, &hosts) == RCC_SUCCESS ? hosts : 0;
}
inline bool shm_enabled() { return !turned_off("RCC_SHM") && hosts_of_comm() == 1; }
// The message-based algorithms given, plus "shm" when it is available.
inline std::vector<const char*> and_shm(std::initializer_list<const char*> algorithms) {
  std::vector<const char*> all(algorithms);
  if (shm_enabled()) all.push_back("shm");
  return all;
}

// Whether the communicator has levels (docs/hierarchy.md): ranks on several hosts, several on
// some, and neither RCC_HIERARCHY=0 nor RCC_SHM=0 (a host then has no segment).
inline bool levels_enabled() {
  const int hosts = hosts_of_comm();
  return !turned_off("RCC_HIERARCHY") && !turned_off("RCC_SHM") && hosts > 1 && ranktest::size() > hosts;
}
// Skips a test that needs levels where the communicator has none, except in a job set up to have
// them (RCC_TEST_REQUIRE_LEVELS=1: between the guests over verbs, between namespace hosts), where
// that fails: the hierarchical path must not go untested unnoticed.
#define RCC_SKIP_UNLESS_LEVELS(why)                                                                       \
  do {                                                                                                    \
    if (!levels_enabled()) {                                                                              \
      const char* required = std::getenv("RCC_TEST_REQUIRE_LEVELS");                                      \
      if (required != nullptr && std::string(required) == "1") {                                          \
        FAIL() << "no levels on this communicator (" << hosts_of_comm() << " hosts, " << ranktest::size() \
               << " ranks), though RCC_TEST_REQUIRE_LEVELS=1";                                            \
      }                                                                                                   \
      GTEST_SKIP() << why;                                                                                \
    }                                                                                                     \
  } while (0)
// For the collectives with a hierarchical algorithm: and_shm's list, plus "hierarchical" where
// the communicator has levels.
inline std::vector<const char*> and_local(std::initializer_list<const char*> algorithms) {
  std::vector<const char*> all = and_shm(algorithms);
  if (levels_enabled()) all.push_back("hierarchical");
  return all;
}

// Forces algorithms through RCC_ALGO for one scope (the library rereads it when it changes).
class ForceAlgo {
 public:
  explicit ForceAlgo(const std::string& spec) { setenv("RCC_ALGO", spec.c_str(), 1); }
  ~ForceAlgo() { unsetenv("RCC_ALGO"); }
};

// For tests that otherwise take the tuner's choice: on a communicator with levels, each of the
// algorithms given and the hierarchical one; else only "" (the tuner's choice, see force_unless_empty).
inline std::vector<const char*> levels_or_tuner(std::initializer_list<const char*> algorithms) {
  return levels_enabled() ? and_local(algorithms) : std::vector<const char*>{""};
}
// Forces collective:algorithm for the scope of the result, unless algorithm is "".
inline std::unique_ptr<ForceAlgo> force_unless_empty(const char* collective, const char* algorithm) {
  if (*algorithm == '\0') return nullptr;
  return std::make_unique<ForceAlgo>(std::string(collective) + ":" + algorithm);
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

inline const char* type_name(rcc_datatype_t t) {
  static const char* names[] = {"int8",    "uint8",    "int32",   "uint32",  "int64", "uint64",
                                "float16", "bfloat16", "float32", "float64", "int16", "uint16"};
  static_assert(sizeof names / sizeof names[0] == RCC_NUM_DATATYPES);
  return names[t];
}
inline const char* op_name(rcc_op_t op) {
  static const char* names[] = {"sum", "prod", "min", "max", "avg", "band", "bor", "bxor"};
  static_assert(sizeof names / sizeof names[0] == RCC_NUM_OPS);
  return names[op];
}
inline bool is_float(rcc_datatype_t t) { return t >= RCC_FLOAT16 && t <= RCC_FLOAT64; }
inline bool is_bitwise(rcc_op_t op) { return op == RCC_BAND || op == RCC_BOR || op == RCC_BXOR; }
// What rcc.h defines: RCC_AVG for floating types only, the bitwise ops for integer types only.
inline bool op_defined(rcc_datatype_t t, rcc_op_t op) { return is_float(t) ? !is_bitwise(op) : op != RCC_AVG; }

// ---- half-precision conversions (round to nearest even) ----
inline float f32_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t bits_f32(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
inline float from_bf16(uint16_t h) { return f32_bits(static_cast<uint32_t>(h) << 16); }
inline uint16_t to_bf16(float f) {
  uint32_t x = bits_f32(f);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float from_fp16(uint16_t h) { return static_cast<float>(std::bit_cast<_Float16>(h)); }
inline uint16_t to_fp16(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }

// Element i of a typed buffer as a double (integers: their value; exact for the inputs used).
inline double load(rcc_datatype_t t, const void* p, size_t i) {
  switch (t) {
    case RCC_INT8: return static_cast<const int8_t*>(p)[i];
    case RCC_UINT8: return static_cast<const uint8_t*>(p)[i];
    case RCC_INT16: return static_cast<const int16_t*>(p)[i];
    case RCC_UINT16: return static_cast<const uint16_t*>(p)[i];
    case RCC_INT32: return static_cast<const int32_t*>(p)[i];
    case RCC_UINT32: return static_cast<const uint32_t*>(p)[i];
    case RCC_INT64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case RCC_UINT64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case RCC_FLOAT16: return from_fp16(static_cast<const uint16_t*>(p)[i]);
    case RCC_BFLOAT16: return from_bf16(static_cast<const uint16_t*>(p)[i]);
    case RCC_FLOAT32: return static_cast<const float*>(p)[i];
    case RCC_FLOAT64: return static_cast<const double*>(p)[i];
    default: return 0;
  }
}

// Raw bits of element i (integers compared exactly through these).
inline uint64_t load_bits(rcc_datatype_t t, const void* p, size_t i) {
  uint64_t v = 0;
  const size_t n = rcc_datatype_size(t);
  std::memcpy(&v, static_cast<const uint8_t*>(p) + i * n, n);
  return v;
}
inline void store_bits(rcc_datatype_t t, void* p, size_t i, uint64_t v) {
  const size_t n = rcc_datatype_size(t);
  std::memcpy(static_cast<uint8_t*>(p) + i * n, &v, n);
}
// v cut to t's width: what load_bits returns after store_bits(t, v).
inline uint64_t masked(rcc_datatype_t t, uint64_t v) {
  const size_t bits = rcc_datatype_size(t) * 8;
  return bits == 64 ? v : v & ((uint64_t{1} << bits) - 1);
}
// Fills receive-buffer bytes no result may touch, so a stray write shows.
constexpr uint8_t kSentinel = 0xa5;

inline void store(rcc_datatype_t t, void* p, size_t i, double v) {
  switch (t) {
    case RCC_FLOAT16: static_cast<uint16_t*>(p)[i] = to_fp16(static_cast<float>(v)); break;
    case RCC_BFLOAT16: static_cast<uint16_t*>(p)[i] = to_bf16(static_cast<float>(v)); break;
    case RCC_FLOAT32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
    case RCC_FLOAT64: static_cast<double*>(p)[i] = v; break;
    default: store_bits(t, p, i, static_cast<uint64_t>(static_cast<int64_t>(v))); break;
  }
}

// The input of rank r at element i (plus a salt so different calls differ). Floats: small
// integers (SUM/MIN/MAX/AVG) or powers of two (PROD), so every reduction order gives exact sums
// and products; integers: values in [-5, 5], wrapping for unsigned types and for products.
inline double input(rcc_datatype_t t, rcc_op_t op, int r, size_t i, int salt = 0) {
  const uint64_t h = (i * 31 + static_cast<uint64_t>(r) * 17 + static_cast<uint64_t>(salt) * 7 + 3);
  if (is_float(t) && op == RCC_PROD) {
    static const double factors[] = {1.0, 2.0, -1.0, 0.5};
    return factors[(i + static_cast<size_t>(r) * 3 + static_cast<size_t>(salt)) % 4];
  }
  return static_cast<double>(static_cast<int>(h % 11) - 5);
}
// input() repeats every 44 elements (h % 11 and the PROD factors' % 4), and so does the reference:
// fill and check compute one period and reuse it, which keeps the 1 MiB cases at 8 ranks cheap.
inline constexpr size_t kInputPeriod = 44;

inline void fill(rcc_datatype_t t, rcc_op_t op, int r, void* p, size_t count, int salt = 0) {
  const size_t element = rcc_datatype_size(t), period = std::min(count, kInputPeriod);
  for (size_t i = 0; i < period; ++i) store(t, p, i, input(t, op, r, i, salt));
  auto* bytes = static_cast<uint8_t*>(p);
  for (size_t i = period; i < count; i += period) {
    std::memcpy(bytes + i * element, bytes, std::min(period, count - i) * element);
  }
}

// Integer reference: wraps in the type's width, signed MIN/MAX by sign-extended value.
inline uint64_t sign_extend(rcc_datatype_t t, uint64_t v) {
  const size_t bits = rcc_datatype_size(t) * 8;
  if (bits == 64) return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  v &= mask;
  const bool is_signed = t == RCC_INT8 || t == RCC_INT16 || t == RCC_INT32 || t == RCC_INT64;
  if (is_signed && (v >> (bits - 1))) v |= ~mask;
  return v;
}
inline bool is_signed_int(rcc_datatype_t t) {
  return t == RCC_INT8 || t == RCC_INT16 || t == RCC_INT32 || t == RCC_INT64;
}

inline uint64_t int_combine(rcc_datatype_t t, rcc_op_t op, uint64_t a, uint64_t b) {
  const size_t bits = rcc_datatype_size(t) * 8;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  a &= mask;
  b &= mask;
  bool less;
  if (is_signed_int(t)) {
    less = static_cast<int64_t>(sign_extend(t, a)) < static_cast<int64_t>(sign_extend(t, b));
  } else {
    less = a < b;
  }
  switch (op) {
    case RCC_SUM: return (a + b) & mask;
    case RCC_PROD: return (a * b) & mask;
    case RCC_MIN: return less ? a : b;
    case RCC_MAX: return less ? b : a;
    case RCC_BAND: return a & b;
    case RCC_BOR: return a | b;
    case RCC_BXOR: return a ^ b;
    default: return 0;
  }
}

// Reference reduction of element i over `ranks` ranks' inputs, written as one element to out.
inline void reference(rcc_datatype_t t, rcc_op_t op, int ranks, size_t i, void* out, int salt = 0) {
  if (!is_float(t)) {
    uint64_t acc = static_cast<uint64_t>(static_cast<int64_t>(input(t, op, 0, i, salt)));
    for (int r = 1; r < ranks; ++r) {
      acc = int_combine(t, op, acc, static_cast<uint64_t>(static_cast<int64_t>(input(t, op, r, i, salt))));
    }
    store_bits(t, out, 0, acc);
    return;
  }
  double acc = input(t, op, 0, i, salt);
  for (int r = 1; r < ranks; ++r) {
    const double v = input(t, op, r, i, salt);
    switch (op) {
      case RCC_SUM:
      case RCC_AVG: acc += v; break;
      case RCC_PROD: acc *= v; break;
      case RCC_MIN: acc = std::fmin(acc, v); break;
      case RCC_MAX: acc = std::fmax(acc, v); break;
      default: break;
    }
  }
  if (op == RCC_AVG) acc /= ranks;
  store(t, out, 0, acc);
}

// Relative error allowed for AVG (one rounding of the quotient); all else is exact.
inline double avg_tolerance(rcc_datatype_t t) {
  switch (t) {
    case RCC_FLOAT16: return 1.0 / 1024;
    case RCC_BFLOAT16: return 1.0 / 128;
    case RCC_FLOAT32: return 1.2e-7;
    default: return 2.3e-16;
  }
}

// Compares `count` elements of got (elements offset.. of the reduction) with the reference;
// returns the number of wrong elements and describes the first one in *first.
inline size_t check_reduced(rcc_datatype_t t, rcc_op_t op, int ranks, const void* got, size_t count, size_t offset,
                            std::string* first, int salt = 0) {
  const size_t element = rcc_datatype_size(t);
  uint8_t expected[kInputPeriod][8];
  for (size_t j = 0; j < std::min(count, kInputPeriod); ++j) reference(t, op, ranks, offset + j, expected[j], salt);
  const bool tolerant = is_float(t) && op == RCC_AVG;
  size_t bad = 0;
  for (size_t i = 0, j = 0; i < count; ++i, j = j + 1 == kInputPeriod ? 0 : j + 1) {
    const void* want = expected[j];
    const void* have = static_cast<const uint8_t*>(got) + i * element;
    bool ok;
    if (tolerant) {
      const double w = load(t, want, 0), g = load(t, have, 0);
      ok = std::fabs(w - g) <= avg_tolerance(t) * std::fabs(w) + 1e-300;
    } else {
      ok = std::memcmp(want, have, element) == 0;
    }
    if (!ok) {
      if (bad == 0 && first != nullptr) {
        *first = "element " + std::to_string(offset + i) + ": got " + std::to_string(load(t, have, 0)) + " expected " +
                 std::to_string(load(t, want, 0));
      }
      ++bad;
    }
  }
  return bad;
}

// FNV-1a over 8-byte words (then the tail bytes) of a buffer.
inline uint64_t hash_bytes(const void* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = static_cast<const uint8_t*>(p);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t word;
    std::memcpy(&word, b + i, 8);
    h = (h ^ word) * 1099511628211ull;
  }
  for (; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

// Whether every rank holds the same bytes (hashes compared through rcc_allgather).
inline bool same_on_all_ranks(const void* p, size_t n) {
  uint64_t mine = hash_bytes(p, n);
  std::vector<uint64_t> all(static_cast<size_t>(ranktest::size()));
  if (rcc_allgather(ranktest::comm(), &mine, all.data(), 1, RCC_UINT64) != RCC_SUCCESS) return false;
  for (uint64_t h : all) {
    if (h != mine) return false;
  }
  return true;
}

// Element counts every test covers: 0, 1, 3, 1023 and 1 MiB / element size + 5.
inline std::vector<size_t> counts_for(rcc_datatype_t t, bool with_large = true) {
  std::vector<size_t> counts = {0, 1, 3, 1023};
  if (with_large) counts.push_back((size_t{1} << 20) / rcc_datatype_size(t) + 5);
  return counts;
}

}  // namespace coll_test
