// Test data for rcc-bench: rank-dependent small integers, chosen so every reduction result is
// exactly representable (also in half and bfloat16 for the usual rank counts), and the checks
// that count wrong elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rcc/rcc.h"

namespace rccbench {

// What one rank contributes to a reduction at global element index: small positive integers; for
// prod at most two factors of 2 per element, for avg they sum to a multiple of the rank count; for
// the bitwise ops 15-bit patterns (band: all bits but two, bor: two bits, bxor: a hash), so the
// result of any rank count is neither all zeros nor all ones. Every input repeats with a period
// dividing 60 in the index.
double reduce_input(int rank, int ranks, size_t index, rcc_op_t op);
// The exact result of op over every rank's reduce_input at index.
double reduce_expected(int ranks, size_t index, rcc_op_t op);
// The exact result of op over ranks 0..upto-1 (upto >= 1): what rank upto-1 gets from a scan and
// rank upto from an exscan. avg: the sum divided by upto.
double prefix_expected(int ranks, int upto, size_t index, rcc_op_t op);
// Payload of moving collectives (broadcast, gather, ...): what rank `source` holds at index.
double payload(int source, size_t index);

// Writes count elements of datatype to buffer: element j = value_of(first + j).
void fill_reduce_input(void* buffer, size_t count, rcc_datatype_t datatype, int rank, int ranks, size_t first,
                       rcc_op_t op);
void fill_payload(void* buffer, size_t count, rcc_datatype_t datatype, int source, size_t first);

// Elements of buffer that differ from the expected value (exact; avg allows a few ulps, since
// the library may multiply by 1/ranks).
size_t count_wrong_reduce(const void* buffer, size_t count, rcc_datatype_t datatype, int ranks, size_t first,
                          rcc_op_t op);
// The same against prefix_expected(ranks, upto, ...).
size_t count_wrong_prefix(const void* buffer, size_t count, rcc_datatype_t datatype, int ranks, int upto, size_t first,
                          rcc_op_t op);
size_t count_wrong_payload(const void* buffer, size_t count, rcc_datatype_t datatype, int source, size_t first);

}  // namespace rccbench
