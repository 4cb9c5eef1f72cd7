// The C API's enumerators by name, for messages and dumps.
#pragma once

#include "rcc/rcc.h"

namespace rcc {

const char* datatype_name(rcc_datatype_t datatype);  // "RCC_FLOAT32"
const char* op_name(rcc_op_t op);                    // "RCC_SUM"

}  // namespace rcc
