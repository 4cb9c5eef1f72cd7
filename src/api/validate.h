// Argument checks shared by the public functions. Each returns RCC_SUCCESS or fails with
// RCC_ERR_INVALID_ARGUMENT and a message naming the function and the argument. The checks every
// point-to-point call makes are inline (a call each was a tenth of a small send's own work); the
// messages are decided out of line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "base/names.h"
#include "base/status.h"
#include "comm/comm.h"

namespace rcc::api {

namespace detail {
// Bytes per element, by rcc_datatype_t (rcc_datatype_size reads it too).
inline constexpr uint8_t kDatatypeBytes[RCC_NUM_DATATYPES] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 2, 2};
Status buffer_error(const void* buffer, size_t count, rcc_datatype_t datatype, const char* function, const char* name);
Status rank_error(rcc_comm* comm, int rank, const char* function, const char* name);
Status tag_error(int tag, const char* function);
}  // namespace detail

Status check_datatype(rcc_datatype_t datatype, const char* function);
Status check_op(rcc_op_t op, rcc_datatype_t datatype, const char* function);
// One count and displacement per rank (vector collectives): neither array NULL, and every block
// displs[r] + counts[r] of elements within what size_t can address in bytes. *extent: the
// elements the buffer must hold (the end of the furthest block).
Status check_blocks(const size_t* counts, const size_t* displs, int ranks, rcc_datatype_t datatype,
                    const char* function, const char* counts_name, const char* displs_name, size_t* extent);

// count elements of datatype: no overflow of size_t, and a non-null buffer when count > 0.
inline Status check_buffer(const void* buffer, size_t count, rcc_datatype_t datatype, const char* function,
                           const char* name, size_t* bytes) {
  const auto type = static_cast<unsigned>(datatype);
  size_t total = 0;
  if (type < RCC_NUM_DATATYPES && !__builtin_mul_overflow(count, size_t{detail::kDatatypeBytes[type]}, &total) &&
      total <= std::numeric_limits<size_t>::max() / 2 && (buffer != nullptr || count == 0)) {
    *bytes = total;
    return RCC_SUCCESS;
  }
  return detail::buffer_error(buffer, count, datatype, function, name);
}

inline Status check_count_buffer(const void* buffer, size_t count, rcc_datatype_t datatype, const char* function,
                                 const char* name) {
  size_t bytes = 0;
  return check_buffer(buffer, count, datatype, function, name, &bytes);
}

// What every collective checks first: a live communicator, and a request pointer for the rcc_i* forms.
Status begin(rcc_comm_t comm, rcc_request_t* request, bool nonblocking, const char* function);

inline Status check_rank(rcc_comm* comm, int rank, const char* function, const char* name) {
  if (rank >= 0 && rank < comm->size) return RCC_SUCCESS;
  return detail::rank_error(comm, rank, function, name);
}

inline Status check_tag(int tag, const char* function) {
  if (tag >= 0) return RCC_SUCCESS;
  return detail::tag_error(tag, function);
}

}  // namespace rcc::api
