// Torch's tensors and reduce operations in rcc's terms: which datatype a dtype travels as, which op
// a ReduceOp becomes, and the error (a RuntimeError in Python) for those rcc does not do.
#pragma once

#include <ATen/ATen.h>
#include <rcc/rcc.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

namespace rcc_torch {

// RCC_UINT8 for bool (whose 0/1 stay 0/1 under the ops reduction() picks).
rcc_datatype_t datatype_of(const at::Tensor& tensor);
// The op for this dtype: bool's SUM and MAX are OR, PRODUCT and MIN are AND (as gloo computes
// them); AVG only for floating-point dtypes; PREMUL_SUM not at all.
rcc_op_t reduction(const c10d::ReduceOp& op, const at::Tensor& tensor);
// Throws a RuntimeError with rcc's message unless status is RCC_SUCCESS.
void check(rcc_status_t status, const char* what);

}  // namespace rcc_torch
