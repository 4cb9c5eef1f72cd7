// Public entry points of the reduction kernels and the run-time choice of implementation: the
// best ISA the CPU supports (or the lower one RCC_REDUCE_ISA asks for), decided once.
#include "kernels/reduce_kernels.h"

#include <atomic>
#include <cstring>
#include <string>

#include "base/log.h"
#include "base/settings.h"

namespace rcc::kernels {
namespace detail {
namespace {

const KernelTable& table_for(ReduceIsa isa) {
  switch (isa) {
    case ReduceIsa::kAvx512: return avx512_kernels();
    case ReduceIsa::kAvx2: return avx2_kernels();
    case ReduceIsa::kSse2: break;
  }
  return sse2_kernels();
}

ReduceIsa best_supported_at_or_below(ReduceIsa ceiling) {
  for (int level = static_cast<int>(ceiling); level > 0; --level) {
    if (isa_supported(static_cast<ReduceIsa>(level))) return static_cast<ReduceIsa>(level);
  }
  return ReduceIsa::kSse2;
}

ReduceIsa isa_from_environment() {
  // The kernels are chosen at first use, which cannot fail: a value RCC_REDUCE_ISA does not
  // accept is reported (settings::choice logs it) and the best ISA is used.
  std::string request;
  ReduceIsa isa = ReduceIsa::kSse2;
  if (settings::choice("RCC_REDUCE_ISA", &request) != RCC_SUCCESS ||
      parse_isa_request(request.c_str(), &isa) != RCC_SUCCESS) {
    isa = best_supported_at_or_below(ReduceIsa::kAvx512);
    RCC_WARN("RCC_REDUCE_ISA: using %s", isa_name(isa));
  }
  RCC_INFO("reduction kernels: %s", isa_name(isa));
  return isa;
}

// -1 until first use; then the ISA in use (set_reduce_isa may change it).
std::atomic<int> g_active_isa{-1};

ReduceIsa active_isa() {
  int isa = g_active_isa.load(std::memory_order_acquire);
  if (isa >= 0) return static_cast<ReduceIsa>(isa);
  int chosen = static_cast<int>(isa_from_environment());
  int expected = -1;
  // Another thread may have decided first (or forced an ISA): keep its choice.
  if (!g_active_isa.compare_exchange_strong(expected, chosen, std::memory_order_acq_rel)) {
    return static_cast<ReduceIsa>(expected);
  }
  return static_cast<ReduceIsa>(chosen);
}

}  // namespace

const char* isa_name(ReduceIsa isa) {
  switch (isa) {
    case ReduceIsa::kAvx512: return "avx512";
    case ReduceIsa::kAvx2: return "avx2";
    case ReduceIsa::kSse2: break;
  }
  return "sse2";
}

bool isa_supported(ReduceIsa isa) {
  __builtin_cpu_init();  // idempotent; needed if the first call comes from a static constructor
  switch (isa) {
    case ReduceIsa::kAvx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    case ReduceIsa::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    case ReduceIsa::kSse2: break;
  }
  return true;
}

bool avx512_bf16_supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16");
}

Status parse_isa_request(const char* request, ReduceIsa* isa) {
  if (request == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "reduction ISA request is null");
  ReduceIsa ceiling;
  if (std::strcmp(request, "auto") == 0 || request[0] == '\0' || std::strcmp(request, "avx512") == 0) {
    ceiling = ReduceIsa::kAvx512;
  } else if (std::strcmp(request, "avx2") == 0) {
    ceiling = ReduceIsa::kAvx2;
  } else if (std::strcmp(request, "sse2") == 0 || std::strcmp(request, "scalar") == 0) {
    ceiling = ReduceIsa::kSse2;
  } else {
    return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_REDUCE_ISA='%s' is not one of auto, avx512, avx2, sse2, scalar",
                request);
  }
  *isa = best_supported_at_or_below(ceiling);
  return RCC_SUCCESS;
}

Status set_reduce_isa(ReduceIsa isa) {
  int level = static_cast<int>(isa);
  if (level < 0 || level >= kNumReduceIsas) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "reduction ISA %d does not exist", level);
  }
  if (!isa_supported(isa)) {
    return fail(RCC_ERR_UNSUPPORTED, "this CPU cannot run the %s reduction kernels", isa_name(isa));
  }
  g_active_isa.store(level, std::memory_order_release);
  return RCC_SUCCESS;
}

ReduceIsa current_reduce_isa() { return active_isa(); }

}  // namespace detail

namespace {

bool valid_type(rcc_datatype_t type) { return static_cast<unsigned>(type) < RCC_NUM_DATATYPES; }
bool is_floating(rcc_datatype_t type) {
  return type == RCC_FLOAT16 || type == RCC_BFLOAT16 || type == RCC_FLOAT32 || type == RCC_FLOAT64;
}

}  // namespace

bool op_defined_for(rcc_op_t op, rcc_datatype_t type) {
  if (!valid_type(type)) return false;
  switch (op) {
    case RCC_SUM:
    case RCC_PROD:
    case RCC_MIN:
    case RCC_MAX: return true;
    case RCC_AVG: return is_floating(type);
    case RCC_BAND:
    case RCC_BOR:
    case RCC_BXOR: return !is_floating(type);
    case RCC_NUM_OPS: break;
  }
  return false;
}

void reduce(void* out, const void* a, const void* b, size_t count, rcc_datatype_t type, rcc_op_t op) {
  if (count == 0) return;
  if (!valid_type(type) || static_cast<unsigned>(op) >= static_cast<unsigned>(detail::kNumReduceOps) ||
      detail::table_for(detail::active_isa()).binary[type][op] == nullptr) {
    // The API layer validates with op_defined_for; reaching here is a bug in a collective.
    RCC_WARN("internal error: no reduction kernel for datatype %d op %d", static_cast<int>(type), static_cast<int>(op));
    return;
  }
  detail::table_for(detail::active_isa()).binary[type][op](out, a, b, count);
}

void reduce_into(void* inout, const void* in, size_t count, rcc_datatype_t type, rcc_op_t op) {
  reduce(inout, inout, in, count, type, op);
}

void scale_divide(void* buf, size_t count, rcc_datatype_t type, int divisor) {
  if (count == 0) return;
  detail::ScaleKernel kernel = valid_type(type) ? detail::table_for(detail::active_isa()).scale[type] : nullptr;
  if (kernel == nullptr) {
    RCC_WARN("internal error: scale_divide on non-floating datatype %d", static_cast<int>(type));
    return;
  }
  kernel(buf, count, divisor);
}

const char* reduce_isa() { return detail::isa_name(detail::active_isa()); }

}  // namespace rcc::kernels
