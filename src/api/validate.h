// Argument checks shared by the public functions. Each returns RCC_SUCCESS or fails with
// RCC_ERR_INVALID_ARGUMENT and a message naming the function and the argument.
#pragma once

#include <cstddef>

#include "core/comm.h"
#include "core/status.h"

namespace rcc::api {

Status check_datatype(rcc_datatype_t datatype, const char* function);
Status check_op(rcc_op_t op, rcc_datatype_t datatype, const char* function);
// count elements of datatype: no overflow of size_t, and a non-null buffer when count > 0.
Status check_buffer(const void* buffer, size_t count, rcc_datatype_t datatype, const char* function, const char* name,
                    size_t* bytes);
Status check_rank(rcc_comm* comm, int rank, const char* function, const char* name);
Status check_tag(int tag, const char* function);

}  // namespace rcc::api
