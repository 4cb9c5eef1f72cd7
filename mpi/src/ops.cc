// Reduction operations: the predefined ones run on rcc's kernels (no per-element callback); the
// logical ones as bitwise ones on inputs normalised to 0 or 1; MINLOC/MAXLOC and the program's own
// operations (MPI_Op_create) as functions over contiguous chunks, in rank order.
#include <cstring>
#include <vector>

#include "internal.h"

extern "C" {
struct rcc_mpi_op rcc_mpi_op_sum {
  rcc_mpi_op::Kind::kSum, "MPI_SUM", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_prod {
  rcc_mpi_op::Kind::kProd, "MPI_PROD", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_min {
  rcc_mpi_op::Kind::kMin, "MPI_MIN", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_max {
  rcc_mpi_op::Kind::kMax, "MPI_MAX", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_land {
  rcc_mpi_op::Kind::kLand, "MPI_LAND", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_lor {
  rcc_mpi_op::Kind::kLor, "MPI_LOR", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_lxor {
  rcc_mpi_op::Kind::kLxor, "MPI_LXOR", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_band {
  rcc_mpi_op::Kind::kBand, "MPI_BAND", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_bor {
  rcc_mpi_op::Kind::kBor, "MPI_BOR", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_bxor {
  rcc_mpi_op::Kind::kBxor, "MPI_BXOR", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_minloc {
  rcc_mpi_op::Kind::kMinloc, "MPI_MINLOC", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_maxloc {
  rcc_mpi_op::Kind::kMaxloc, "MPI_MAXLOC", nullptr, true, true
};
struct rcc_mpi_op rcc_mpi_op_null {
  rcc_mpi_op::Kind::kNull, "MPI_OP_NULL", nullptr, true, true
};
}

namespace rcc_mpi {
namespace {

// MINLOC / MAXLOC over packed (value, int index) pairs: the better value, the lower index on ties.
template <class Value>
void locate(const char* in, char* inout, size_t count, bool minimum) {
  const size_t stride = sizeof(Value) + sizeof(int);
  for (size_t i = 0; i < count; ++i, in += stride, inout += stride) {
    Value a, b;
    int ia, ib;
    std::memcpy(&a, in, sizeof a);
    std::memcpy(&b, inout, sizeof b);
    std::memcpy(&ia, in + sizeof(Value), sizeof ia);
    std::memcpy(&ib, inout + sizeof(Value), sizeof ib);
    const bool take = minimum ? a < b : a > b;
    if (take || (a == b && ia < ib)) std::memcpy(inout, in, stride);
  }
}

void apply_location(bool minimum, const void* in, void* inout, size_t count, MPI_Datatype type) {
  // Packed, the pairs lose the struct's padding and sit back to back.
  std::vector<char> a(count * type->size), b(count * type->size);
  pack(in, count, type, a.data());
  pack(inout, count, type, b.data());
  const size_t pairs = count * type->size / (type->pair_value->size + sizeof(int));
  switch (type->pair_value->basic) {
    case RCC_INT32: locate<int32_t>(a.data(), b.data(), pairs, minimum); break;
    case RCC_INT64: locate<int64_t>(a.data(), b.data(), pairs, minimum); break;
    case RCC_FLOAT32: locate<float>(a.data(), b.data(), pairs, minimum); break;
    case RCC_FLOAT64: locate<double>(a.data(), b.data(), pairs, minimum); break;
    default: return;
  }
  unpack(b.data(), b.size(), type, inout);
}

// LAND / LOR / LXOR element by element, where a single contribution must stay as it was (a
// scan's first rank, an exscan's second): the result of combining is 0 or 1.
template <class Integer>
void logical(rcc_mpi_op::Kind kind, const char* in, char* inout, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    Integer a, b;
    std::memcpy(&a, in + i * sizeof a, sizeof a);
    std::memcpy(&b, inout + i * sizeof b, sizeof b);
    const bool x = a != 0, y = b != 0;
    const bool r = kind == rcc_mpi_op::Kind::kLand ? (x && y) : kind == rcc_mpi_op::Kind::kLor ? (x || y) : (x != y);
    const Integer result = r ? 1 : 0;
    std::memcpy(inout + i * sizeof result, &result, sizeof result);
  }
}

void apply_logical(rcc_mpi_op::Kind kind, const void* in, void* inout, size_t count, MPI_Datatype type) {
  std::vector<char> a(count * type->size), b(count * type->size);
  pack(in, count, type, a.data());
  pack(inout, count, type, b.data());
  const size_t elements = count * type->size / type->basic_size;
  switch (type->basic_size) {
    case 1: logical<uint8_t>(kind, a.data(), b.data(), elements); break;
    case 2: logical<uint16_t>(kind, a.data(), b.data(), elements); break;
    case 4: logical<uint32_t>(kind, a.data(), b.data(), elements); break;
    default: logical<uint64_t>(kind, a.data(), b.data(), elements); break;
  }
  unpack(b.data(), b.size(), type, inout);
}

}  // namespace

bool native_op(const rcc_mpi_op* op, const rcc_mpi_datatype* type, rcc_op_t* rcc_op, bool* normalise) {
  if (type->basic < 0 || type->category == Category::kPair) return false;
  *normalise = false;
  switch (op->kind) {
    case rcc_mpi_op::Kind::kSum: *rcc_op = RCC_SUM; return true;
    case rcc_mpi_op::Kind::kProd: *rcc_op = RCC_PROD; return true;
    case rcc_mpi_op::Kind::kMin: *rcc_op = RCC_MIN; return true;
    case rcc_mpi_op::Kind::kMax: *rcc_op = RCC_MAX; return true;
    case rcc_mpi_op::Kind::kBand: *rcc_op = RCC_BAND; return true;
    case rcc_mpi_op::Kind::kBor: *rcc_op = RCC_BOR; return true;
    case rcc_mpi_op::Kind::kBxor: *rcc_op = RCC_BXOR; return true;
    case rcc_mpi_op::Kind::kLand: *rcc_op = RCC_BAND, *normalise = true; return true;
    case rcc_mpi_op::Kind::kLor: *rcc_op = RCC_BOR, *normalise = true; return true;
    case rcc_mpi_op::Kind::kLxor: *rcc_op = RCC_BXOR, *normalise = true; return true;
    default: return false;
  }
}

void normalise_logical(void* data, size_t count, size_t size) {
  auto* bytes = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < count; ++i, bytes += size) {
    bool set = false;
    for (size_t b = 0; b < size; ++b) set |= bytes[b] != 0;
    std::memset(bytes, 0, size);
    bytes[0] = set ? 1 : 0;  // little-endian: the integer 1
  }
}

void apply_op(const rcc_mpi_op* op, const void* in, void* inout, int count, MPI_Datatype type) {
  switch (op->kind) {
    case rcc_mpi_op::Kind::kUser: {
      int length = count;
      MPI_Datatype passed = type;
      op->function(const_cast<void*>(in), inout, &length, &passed);
      return;
    }
    case rcc_mpi_op::Kind::kMinloc: apply_location(true, in, inout, static_cast<size_t>(count), type); return;
    case rcc_mpi_op::Kind::kMaxloc: apply_location(false, in, inout, static_cast<size_t>(count), type); return;
    case rcc_mpi_op::Kind::kLand:
    case rcc_mpi_op::Kind::kLor:
    case rcc_mpi_op::Kind::kLxor: apply_logical(op->kind, in, inout, static_cast<size_t>(count), type); return;
    default: return;  // the other predefined operations run on rcc's kernels (native_op)
  }
}

}  // namespace rcc_mpi

using namespace rcc_mpi;

extern "C" int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  if (int error = check_initialized("MPI_Op_create")) return error;
  if (user_fn == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Op_create", "user_fn is NULL");
  if (op == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Op_create", "op is NULL");
  *op = new rcc_mpi_op{rcc_mpi_op::Kind::kUser, "user operation", user_fn, commute != 0, false};
  return MPI_SUCCESS;
}

extern "C" int MPI_Op_free(MPI_Op* op) {
  if (int error = check_initialized("MPI_Op_free")) return error;
  if (op == nullptr || *op == nullptr || (*op)->kind == rcc_mpi_op::Kind::kNull) {
    return fail(nullptr, MPI_ERR_OP, "MPI_Op_free", "op is NULL or MPI_OP_NULL");
  }
  if ((*op)->predefined) return fail(nullptr, MPI_ERR_OP, "MPI_Op_free", "%s is predefined", (*op)->name);
  delete *op;
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}
