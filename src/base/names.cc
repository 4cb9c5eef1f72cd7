#include "base/names.h"

namespace rcc {

const char* datatype_name(rcc_datatype_t datatype) {
  static const char* const kNames[RCC_NUM_DATATYPES] = {"RCC_INT8",    "RCC_UINT8",   "RCC_INT32",   "RCC_UINT32",
                                                        "RCC_INT64",   "RCC_UINT64",  "RCC_FLOAT16", "RCC_BFLOAT16",
                                                        "RCC_FLOAT32", "RCC_FLOAT64", "RCC_INT16",   "RCC_UINT16"};
  const auto type = static_cast<unsigned>(datatype);
  return type < RCC_NUM_DATATYPES ? kNames[type] : "(not an rcc_datatype_t)";
}

const char* op_name(rcc_op_t op) {
  static const char* const kNames[RCC_NUM_OPS] = {"RCC_SUM", "RCC_PROD", "RCC_MIN", "RCC_MAX",
                                                  "RCC_AVG", "RCC_BAND", "RCC_BOR", "RCC_BXOR"};
  const auto index = static_cast<unsigned>(op);
  return index < RCC_NUM_OPS ? kNames[index] : "(not an rcc_op_t)";
}

}  // namespace rcc
