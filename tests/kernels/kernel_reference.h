// An independent scalar model of the reduction kernels' semantics, for the tests: elements are
// handled as bit patterns, floating values through double arithmetic and a rounding routine
// written from the format definitions (no bit tricks shared with the kernels).
#pragma once

#include <cstddef>
#include <cstdint>

#include "rcc/rcc.h"

namespace rcc::kernel_test {

enum class Kind { kSignedInt, kUnsignedInt, kFloat };

struct TypeInfo {
  rcc_datatype_t type;
  const char* name;
  size_t size;
  Kind kind;
};
const TypeInfo& type_info(rcc_datatype_t type);

// a OP b on raw element bits (the low size*8 bits are used).
uint64_t reference_op(rcc_datatype_t type, rcc_op_t op, uint64_t a, uint64_t b);
// a / divisor for floating types.
uint64_t reference_divide(rcc_datatype_t type, uint64_t a, int divisor);

// Format helpers (exposed for the explicit rounding tests).
double decode_float(rcc_datatype_t type, uint64_t bits);
uint64_t encode_float(rcc_datatype_t type, double value);  // round to nearest even, canonical NaN
bool is_nan_bits(rcc_datatype_t type, uint64_t bits);

uint64_t load_element(const void* base, size_t index, size_t size);
void store_element(void* base, size_t index, size_t size, uint64_t bits);

}  // namespace rcc::kernel_test
