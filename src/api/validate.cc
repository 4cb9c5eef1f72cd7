#include "api/validate.h"

#include <limits>

#include "collectives/reduce_kernels.h"

namespace rcc::api {

Status check_datatype(rcc_datatype_t datatype, const char* function) {
  if (static_cast<int>(datatype) < 0 || datatype >= RCC_NUM_DATATYPES) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: datatype %d is not an rcc_datatype_t", function, static_cast<int>(datatype));
  }
  return RCC_SUCCESS;
}

Status check_op(rcc_op_t op, rcc_datatype_t datatype, const char* function) {
  if (static_cast<int>(op) < 0 || op >= RCC_NUM_OPS) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: op %d is not an rcc_op_t", function, static_cast<int>(op));
  }
  if (!collectives::op_defined_for(op, datatype)) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: op RCC_AVG is not defined for integer datatype %d", function,
                static_cast<int>(datatype));
  }
  return RCC_SUCCESS;
}

Status check_buffer(const void* buffer, size_t count, rcc_datatype_t datatype, const char* function, const char* name,
                    size_t* bytes) {
  RCC_RETURN_IF_ERROR(check_datatype(datatype, function));
  const size_t element = rcc_datatype_size(datatype);
  size_t total = 0;
  // Multiplication with an overflow check instead of two divisions (this runs on every call).
  if (__builtin_mul_overflow(count, element, &total) || total > std::numeric_limits<size_t>::max() / 2) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: count %zu of %zu-byte elements overflows (%s)", function, count,
                element, name);
  }
  if (buffer == nullptr && count > 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: %s is NULL with count %zu", function, name, count);
  }
  *bytes = total;
  return RCC_SUCCESS;
}

Status check_rank(rcc_comm* comm, int rank, const char* function, const char* name) {
  if (rank < 0 || rank >= comm->size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: %s %d is out of range [0, %d)", function, name, rank, comm->size);
  }
  return RCC_SUCCESS;
}

Status check_tag(int tag, const char* function) {
  if (tag < 0) return fail(RCC_ERR_INVALID_ARGUMENT, "%s: tag %d is negative", function, tag);
  return RCC_SUCCESS;
}

}  // namespace rcc::api

extern "C" size_t rcc_datatype_size(rcc_datatype_t datatype) {
  switch (datatype) {
    case RCC_INT8:
    case RCC_UINT8: return 1;
    case RCC_FLOAT16:
    case RCC_BFLOAT16: return 2;
    case RCC_INT32:
    case RCC_UINT32:
    case RCC_FLOAT32: return 4;
    case RCC_INT64:
    case RCC_UINT64:
    case RCC_FLOAT64: return 8;
    default: return 0;
  }
}
