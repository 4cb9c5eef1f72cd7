#include "types.h"

#include <c10/util/Exception.h>

#include <string>

namespace rcc_torch {

rcc_datatype_t datatype_of(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return RCC_FLOAT32;
    case at::kDouble: return RCC_FLOAT64;
    case at::kHalf: return RCC_FLOAT16;
    case at::kBFloat16: return RCC_BFLOAT16;
    case at::kChar: return RCC_INT8;
    case at::kByte: return RCC_UINT8;
    case at::kBool: return RCC_UINT8;
    case at::kShort: return RCC_INT16;
    case at::kInt: return RCC_INT32;
    case at::kLong: return RCC_INT64;
    default:
      TORCH_CHECK(false, "the rcc backend does not support dtype ", tensor.scalar_type(),
                  ": rcc reduces and moves float32, float64, float16, bfloat16, int8, uint8, int16, int32, int64 ",
                  "and bool");
  }
}

rcc_op_t reduction(const c10d::ReduceOp& op, const at::Tensor& tensor) {
  const bool is_bool = tensor.scalar_type() == at::kBool;
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return is_bool ? RCC_BOR : RCC_SUM;
    case c10d::ReduceOp::PRODUCT: return is_bool ? RCC_BAND : RCC_PROD;
    case c10d::ReduceOp::MIN: return is_bool ? RCC_BAND : RCC_MIN;
    case c10d::ReduceOp::MAX: return is_bool ? RCC_BOR : RCC_MAX;
    case c10d::ReduceOp::BAND:
    case c10d::ReduceOp::BOR:
    case c10d::ReduceOp::BXOR:
      TORCH_CHECK(!at::isFloatingType(tensor.scalar_type()), "the rcc backend: bitwise ops need an integer or bool ",
                  "tensor, not ", tensor.scalar_type());
      return op.op_ == c10d::ReduceOp::BAND ? RCC_BAND : op.op_ == c10d::ReduceOp::BOR ? RCC_BOR : RCC_BXOR;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(at::isFloatingType(tensor.scalar_type()), "the rcc backend: ReduceOp.AVG needs a floating-point ",
                  "tensor, not ", tensor.scalar_type(), " (an integer average would be rounded)");
      return RCC_AVG;
    default:
      TORCH_CHECK(false, "the rcc backend does not support ReduceOp ",
                  op.op_ == c10d::ReduceOp::PREMUL_SUM
                      ? std::string("PREMUL_SUM: rcc's reductions have no factor to scale each input by ") +
                            "(multiply the tensor first, then use SUM)"
                      : std::to_string(static_cast<int>(op.op_)) +
                            ": it is none of SUM, PRODUCT, MIN, MAX, AVG, BAND, BOR, BXOR");
  }
}

void check(rcc_status_t status, const char* what) {
  TORCH_CHECK(status == RCC_SUCCESS, "rcc ", what, " failed: ", rcc_last_error());
}

}  // namespace rcc_torch
