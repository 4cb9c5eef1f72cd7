#include "api/validate.h"

#include <algorithm>
#include <limits>

#include "kernels/reduce_kernels.h"

namespace rcc::api {

Status check_datatype(rcc_datatype_t datatype, const char* function) {
  if (static_cast<int>(datatype) < 0 || datatype >= RCC_NUM_DATATYPES) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: datatype %d is not an rcc_datatype_t", function,
                static_cast<int>(datatype));
  }
  return RCC_SUCCESS;
}

Status check_op(rcc_op_t op, rcc_datatype_t datatype, const char* function) {
  if (static_cast<int>(op) < 0 || op >= RCC_NUM_OPS) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: op %d is not an rcc_op_t", function, static_cast<int>(op));
  }
  if (!kernels::op_defined_for(op, datatype)) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: op %s is not defined for datatype %s (%s)", function, op_name(op),
                datatype_name(datatype), op == RCC_AVG ? "floating types only" : "integer types only");
  }
  return RCC_SUCCESS;
}

Status begin(rcc_comm_t comm, rcc_request_t* request, bool nonblocking, const char* function) {
  RCC_RETURN_IF_ERROR(check_comm(comm, function));
  if (nonblocking && request == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "%s: request is NULL", function);
  return RCC_SUCCESS;
}

Status check_blocks(const size_t* counts, const size_t* displs, int ranks, rcc_datatype_t datatype,
                    const char* function, const char* counts_name, const char* displs_name, size_t* extent) {
  if (counts == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", function, counts_name);
  if (displs == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "%s: %s is NULL", function, displs_name);
  RCC_RETURN_IF_ERROR(check_datatype(datatype, function));
  const size_t element = rcc_datatype_size(datatype);
  size_t furthest = 0;
  for (int r = 0; r < ranks; ++r) {
    size_t end = 0, bytes = 0;
    if (__builtin_add_overflow(displs[r], counts[r], &end) || __builtin_mul_overflow(end, element, &bytes) ||
        bytes > std::numeric_limits<size_t>::max() / 2) {
      return fail(RCC_ERR_INVALID_ARGUMENT,
                  "%s: %s[%d] = %zu with %s[%d] = %zu overruns what a buffer of %zu-byte elements can hold", function,
                  displs_name, r, displs[r], counts_name, r, counts[r], element);
    }
    if (counts[r] > 0) furthest = std::max(furthest, end);
  }
  *extent = furthest;
  return RCC_SUCCESS;
}

namespace detail {

Status buffer_error(const void* buffer, size_t count, rcc_datatype_t datatype, const char* function, const char* name) {
  RCC_RETURN_IF_ERROR(check_datatype(datatype, function));
  const size_t element = rcc_datatype_size(datatype);
  size_t total = 0;
  if (__builtin_mul_overflow(count, element, &total) || total > std::numeric_limits<size_t>::max() / 2) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: count %zu of %zu-byte elements overflows (%s)", function, count, element,
                name);
  }
  if (buffer == nullptr && count > 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s: %s is NULL with count %zu", function, name, count);
  }
  return fail(RCC_ERR_INTERNAL, "%s: %s passed its checks on the slow path", function, name);
}

Status rank_error(rcc_comm* comm, int rank, const char* function, const char* name) {
  return fail(RCC_ERR_INVALID_ARGUMENT, "%s: %s %d is out of range [0, %d)", function, name, rank, comm->size);
}

Status tag_error(int tag, const char* function) {
  return fail(RCC_ERR_INVALID_ARGUMENT, "%s: tag %d is negative", function, tag);
}

}  // namespace detail

}  // namespace rcc::api

extern "C" size_t rcc_datatype_size(rcc_datatype_t datatype) {
  const auto type = static_cast<unsigned>(datatype);
  return type < RCC_NUM_DATATYPES ? rcc::api::detail::kDatatypeBytes[type] : 0;
}
