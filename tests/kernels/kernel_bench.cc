// Reduction kernel throughput next to memcpy, per type/op/ISA, for a cache-resident (1 MiB) and a
// memory-sized (64 MiB) buffer. reduce_into(inout, in) moves 3 bytes per buffer byte (two reads, one
// write) and memcpy 2, so both are reported as traffic GB/s; "vs memcpy" is their ratio.
//   kernel_bench [--quick]   (--quick: fewer repetitions, for a smoke run)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/reduce_kernels.h"

namespace {

using rcc::kernels::detail::ReduceIsa;
using Clock = std::chrono::steady_clock;

// Best-of-trials seconds for one call of fn, repeating it enough to cover ~target seconds per trial.
template <class Fn>
double best_seconds(Fn&& fn, double target) {
  fn();  // warm up (page faults, caches)
  int reps = 1;
  for (;;) {
    auto start = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed >= target / 4 || reps >= (1 << 20)) break;
    reps *= 2;
  }
  double best = 1e30;
  for (int trial = 0; trial < 5; ++trial) {
    auto start = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count() / reps);
  }
  return best;
}

const char* type_name(rcc_datatype_t type) {
  static const char* names[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                "uint64", "float16", "bfloat16", "float32", "float64"};
  return names[type];
}
size_t type_size(rcc_datatype_t type) {
  static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  return sizes[type];
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  double target = quick ? 0.01 : 0.1;
  const size_t sizes[] = {size_t{1} << 20, size_t{64} << 20};
  const rcc_datatype_t types[] = {RCC_FLOAT32, RCC_BFLOAT16, RCC_FLOAT16, RCC_FLOAT64, RCC_INT32, RCC_INT8};
  const rcc_op_t ops[] = {RCC_SUM, RCC_MAX};
  const char* op_names[] = {"sum", "prod", "min", "max"};

  std::printf("%-9s %-6s %-7s %-9s %10s %10s %9s\n", "size", "isa", "op", "type", "GB/s", "memcpy", "vs memcpy");
  for (size_t bytes : sizes) {
    std::vector<unsigned char> dst(bytes), src(bytes);
    // Values that stay finite under repeated sums (0x3c/0x00 bytes: small positive numbers).
    for (size_t i = 0; i < bytes; ++i) src[i] = (i % 2) ? 0x3c : 0x00;
    for (ReduceIsa isa : {ReduceIsa::kAvx512, ReduceIsa::kAvx2, ReduceIsa::kSse2}) {
      if (rcc::kernels::detail::set_reduce_isa(isa) != RCC_SUCCESS) continue;
      for (rcc_op_t op : ops) {
        for (rcc_datatype_t type : types) {
          size_t count = bytes / type_size(type);
          // memcpy measured next to each kernel, so both see the same machine load.
          double memcpy_s = best_seconds([&] { std::memcpy(dst.data(), src.data(), bytes); }, target);
          double memcpy_gbs = 2.0 * bytes / memcpy_s / 1e9;
          dst = src;
          double s = best_seconds([&] { rcc::kernels::reduce_into(dst.data(), src.data(), count, type, op); }, target);
          double gbs = 3.0 * bytes / s / 1e9;
          std::printf("%-9s %-6s %-7s %-9s %10.1f %10.1f %9.2f\n", (std::to_string(bytes >> 20) + "MiB").c_str(),
                      rcc::kernels::reduce_isa(), op_names[op], type_name(type), gbs, memcpy_gbs, gbs / memcpy_gbs);
        }
      }
    }
  }
  return 0;
}
