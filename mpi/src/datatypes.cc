// Datatypes: the predefined ones (each one basic element of rcc's, or a value-index pair), the
// derived constructors (a flattened typemap of byte runs), and packing between a typed buffer and
// contiguous bytes, which every call uses for a type whose elements do not adjoin.
#include <algorithm>
#include <climits>
#include <cstring>

#include "internal.h"

using rcc_mpi::Block;
using rcc_mpi::Category;

extern "C" {
#define RCC_MPI_DEFINE_TYPE(name, suffix) struct rcc_mpi_datatype rcc_mpi_type_##suffix;
RCC_MPI_TYPES(RCC_MPI_DEFINE_TYPE)
#undef RCC_MPI_DEFINE_TYPE
}

namespace rcc_mpi {
namespace {

void basic(rcc_mpi_datatype* type, const char* name, Category category, int rcc_type, size_t size) {
  type->name = name;
  type->predefined = true;
  type->committed = true;
  type->category = category;
  type->basic = rcc_type;
  type->basic_size = size;
  type->blocks = {Block{0, size}};
  type->size = size;
  type->extent = type->true_extent = static_cast<ptrdiff_t>(size);
  type->align = size;
  type->contiguous = true;
}

// A value followed by an int, laid out as the C struct {value; int;} is.
template <class Value>
void pair(rcc_mpi_datatype* type, const char* name, const rcc_mpi_datatype* value) {
  struct Layout {
    Value value;
    int index;
  };
  type->name = name;
  type->predefined = true;
  type->committed = true;
  type->category = Category::kPair;
  type->pair_value = value;
  type->size = sizeof(Value) + sizeof(int);
  type->blocks = {Block{0, sizeof(Value)}, Block{static_cast<ptrdiff_t>(offsetof(Layout, index)), sizeof(int)}};
  if (offsetof(Layout, index) == sizeof(Value)) type->blocks = {Block{0, type->size}};
  type->extent = sizeof(Layout);
  type->true_extent = static_cast<ptrdiff_t>(offsetof(Layout, index) + sizeof(int));
  type->align = alignof(Layout);
  type->contiguous = type->blocks.size() == 1 && type->extent == static_cast<ptrdiff_t>(type->size);
}

// Fills the predefined types when the library is loaded (before any program code can use them).
struct Predefined {
  Predefined() {
    const Category i = Category::kInteger;
    basic(&rcc_mpi_type_char, "MPI_CHAR", i, RCC_INT8, 1);
    basic(&rcc_mpi_type_short, "MPI_SHORT", i, RCC_INT16, 2);
    basic(&rcc_mpi_type_int, "MPI_INT", i, RCC_INT32, 4);
    basic(&rcc_mpi_type_long, "MPI_LONG", i, sizeof(long) == 8 ? RCC_INT64 : RCC_INT32, sizeof(long));
    basic(&rcc_mpi_type_long_long, "MPI_LONG_LONG_INT", i, RCC_INT64, 8);
    basic(&rcc_mpi_type_signed_char, "MPI_SIGNED_CHAR", i, RCC_INT8, 1);
    basic(&rcc_mpi_type_unsigned_char, "MPI_UNSIGNED_CHAR", i, RCC_UINT8, 1);
    basic(&rcc_mpi_type_unsigned_short, "MPI_UNSIGNED_SHORT", i, RCC_UINT16, 2);
    basic(&rcc_mpi_type_unsigned, "MPI_UNSIGNED", i, RCC_UINT32, 4);
    basic(&rcc_mpi_type_unsigned_long, "MPI_UNSIGNED_LONG", i, sizeof(long) == 8 ? RCC_UINT64 : RCC_UINT32,
          sizeof(long));
    basic(&rcc_mpi_type_unsigned_long_long, "MPI_UNSIGNED_LONG_LONG", i, RCC_UINT64, 8);
    basic(&rcc_mpi_type_float, "MPI_FLOAT", Category::kFloat, RCC_FLOAT32, 4);
    basic(&rcc_mpi_type_double, "MPI_DOUBLE", Category::kFloat, RCC_FLOAT64, 8);
    basic(&rcc_mpi_type_byte, "MPI_BYTE", Category::kByte, RCC_UINT8, 1);
    static_assert(sizeof(wchar_t) == 4, "MPI_WCHAR is mapped to a 32-bit integer");
    basic(&rcc_mpi_type_wchar, "MPI_WCHAR", i, RCC_INT32, sizeof(wchar_t));
    static_assert(sizeof(bool) == 1, "MPI_C_BOOL is mapped to one byte");
    basic(&rcc_mpi_type_c_bool, "MPI_C_BOOL", Category::kBool, RCC_UINT8, 1);
    basic(&rcc_mpi_type_int8_t, "MPI_INT8_T", i, RCC_INT8, 1);
    basic(&rcc_mpi_type_int16_t, "MPI_INT16_T", i, RCC_INT16, 2);
    basic(&rcc_mpi_type_int32_t, "MPI_INT32_T", i, RCC_INT32, 4);
    basic(&rcc_mpi_type_int64_t, "MPI_INT64_T", i, RCC_INT64, 8);
    basic(&rcc_mpi_type_uint8_t, "MPI_UINT8_T", i, RCC_UINT8, 1);
    basic(&rcc_mpi_type_uint16_t, "MPI_UINT16_T", i, RCC_UINT16, 2);
    basic(&rcc_mpi_type_uint32_t, "MPI_UINT32_T", i, RCC_UINT32, 4);
    basic(&rcc_mpi_type_uint64_t, "MPI_UINT64_T", i, RCC_UINT64, 8);
    basic(&rcc_mpi_type_aint, "MPI_AINT", i, RCC_INT64, sizeof(MPI_Aint));
    basic(&rcc_mpi_type_offset, "MPI_OFFSET", i, RCC_INT64, sizeof(MPI_Offset));
    basic(&rcc_mpi_type_count, "MPI_COUNT", i, RCC_INT64, sizeof(MPI_Count));
    pair<int>(&rcc_mpi_type_2int, "MPI_2INT", &rcc_mpi_type_int);
    pair<float>(&rcc_mpi_type_float_int, "MPI_FLOAT_INT", &rcc_mpi_type_float);
    pair<double>(&rcc_mpi_type_double_int, "MPI_DOUBLE_INT", &rcc_mpi_type_double);
    pair<long>(&rcc_mpi_type_long_int, "MPI_LONG_INT", &rcc_mpi_type_long);
    rcc_mpi_type_null.name = "MPI_DATATYPE_NULL";
    rcc_mpi_type_null.predefined = true;
    rcc_mpi_type_null.is_null = true;
  }
} predefined;

// Builds a derived type's typemap from copies of existing types at byte displacements.
class Builder {
 public:
  void add(const rcc_mpi_datatype* old, ptrdiff_t displacement) {
    for (const Block& block : old->blocks) {
      const ptrdiff_t offset = block.offset + displacement;
      if (!type_->blocks.empty() &&
          type_->blocks.back().offset + static_cast<ptrdiff_t>(type_->blocks.back().bytes) == offset) {
        type_->blocks.back().bytes += block.bytes;
      } else if (block.bytes > 0) {
        type_->blocks.push_back(Block{offset, block.bytes});
      }
    }
    type_->size += old->size;
    const ptrdiff_t lb = displacement + old->lb, ub = lb + old->extent;
    const ptrdiff_t true_lb = displacement + old->true_lb, true_ub = true_lb + old->true_extent;
    if (first_) {
      lb_ = lb, ub_ = ub, true_lb_ = true_lb, true_ub_ = true_ub;
      type_->category = old->category;
      type_->basic = old->basic;
      type_->basic_size = old->basic_size;
      type_->pair_value = old->pair_value;
      first_ = false;
    } else {
      lb_ = std::min(lb_, lb), ub_ = std::max(ub_, ub);
      true_lb_ = std::min(true_lb_, true_lb), true_ub_ = std::max(true_ub_, true_ub);
      if (type_->category != old->category || type_->basic != old->basic || type_->pair_value != old->pair_value) {
        type_->category = Category::kNone;  // mixed: only user operations may reduce it
        type_->basic = -1;
        type_->pair_value = nullptr;
      }
    }
    type_->align = std::max(type_->align, old->align);
  }

  // The struct rule: the extent is padded to the alignment of the widest member.
  void pad_to_alignment() {
    const ptrdiff_t align = static_cast<ptrdiff_t>(type_->align);
    const ptrdiff_t extent = ub_ - lb_;
    if (extent % align != 0) ub_ += align - extent % align;
  }

  MPI_Datatype finish() {
    type_->lb = lb_;
    type_->extent = ub_ - lb_;
    type_->true_lb = true_lb_;
    type_->true_extent = true_ub_ - true_lb_;
    type_->contiguous = type_->blocks.size() == 1 && type_->extent == static_cast<ptrdiff_t>(type_->size) &&
                        type_->blocks.front().offset == lb_;
    if (type_->size == 0) type_->contiguous = true;  // nothing to move
    return type_.release();
  }

 private:
  std::unique_ptr<rcc_mpi_datatype> type_ = std::make_unique<rcc_mpi_datatype>();
  bool first_ = true;
  ptrdiff_t lb_ = 0, ub_ = 0, true_lb_ = 0, true_ub_ = 0;
};

int check_old(MPI_Datatype old, const char* function, const char* name) {
  if (int error = check_initialized(function)) return error;
  if (old == nullptr || old->is_null) return fail(nullptr, MPI_ERR_TYPE, function, "%s is MPI_DATATYPE_NULL", name);
  return MPI_SUCCESS;
}

int check_new(int count, MPI_Datatype* newtype, const char* function) {
  if (count < 0) return fail(nullptr, MPI_ERR_COUNT, function, "count %d is negative", count);
  if (newtype == nullptr) return fail(nullptr, MPI_ERR_ARG, function, "newtype is NULL");
  return MPI_SUCCESS;
}

}  // namespace

void pack(const void* buffer, size_t count, const rcc_mpi_datatype* type, void* out) {
  auto* to = static_cast<char*>(out);
  if (type->contiguous) {
    if (count * type->size > 0) std::memcpy(to, data_start(buffer, type), count * type->size);
    return;
  }
  const auto* base = static_cast<const char*>(buffer);
  for (size_t element = 0; element < count; ++element, base += type->extent) {
    for (const Block& block : type->blocks) {
      std::memcpy(to, base + block.offset, block.bytes);
      to += block.bytes;
    }
  }
}

void unpack(const void* in, size_t bytes, const rcc_mpi_datatype* type, void* buffer) {
  const auto* from = static_cast<const char*>(in);
  if (type->contiguous) {
    if (bytes > 0) std::memcpy(data_start(buffer, type), from, bytes);
    return;
  }
  auto* base = static_cast<char*>(buffer);
  while (bytes > 0) {
    for (const Block& block : type->blocks) {
      const size_t n = std::min(block.bytes, bytes);
      std::memcpy(base + block.offset, from, n);
      from += n;
      bytes -= n;
      if (bytes == 0) return;
    }
    base += type->extent;
  }
}

TypeRef hold(MPI_Datatype type) {
  if (type->predefined) return TypeRef(type, [](const rcc_mpi_datatype*) {});
  type->references.fetch_add(1);
  return TypeRef(type, [](const rcc_mpi_datatype* held) { release(const_cast<MPI_Datatype>(held)); });
}

void release(MPI_Datatype type) {
  if (!type->predefined && type->references.fetch_sub(1) == 1) delete type;
}

}  // namespace rcc_mpi

using namespace rcc_mpi;

extern "C" int MPI_Type_size(MPI_Datatype datatype, int* size) {
  if (int error = check_old(datatype, "MPI_Type_size", "datatype")) return error;
  if (size == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Type_size", "size is NULL");
  *size = datatype->size > static_cast<size_t>(INT_MAX) ? MPI_UNDEFINED : static_cast<int>(datatype->size);
  return MPI_SUCCESS;
}

extern "C" int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  if (int error = check_old(datatype, "MPI_Type_get_extent", "datatype")) return error;
  if (lb == nullptr || extent == nullptr)
    return fail(nullptr, MPI_ERR_ARG, "MPI_Type_get_extent", "lb or extent is NULL");
  *lb = datatype->lb;
  *extent = datatype->extent;
  return MPI_SUCCESS;
}

extern "C" int MPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  if (int error = check_initialized("MPI_Type_get_name")) return error;
  if (datatype == nullptr) return fail(nullptr, MPI_ERR_TYPE, "MPI_Type_get_name", "datatype is NULL");
  if (type_name == nullptr || resultlen == nullptr) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Type_get_name", "type_name or resultlen is NULL");
  }
  const size_t length = std::min<size_t>(datatype->name.size(), MPI_MAX_OBJECT_NAME - 1);
  datatype->name.copy(type_name, length);
  type_name[length] = '\0';
  *resultlen = static_cast<int>(length);
  return MPI_SUCCESS;
}

extern "C" int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int error = check_old(oldtype, "MPI_Type_contiguous", "oldtype")) return error;
  if (int error = check_new(count, newtype, "MPI_Type_contiguous")) return error;
  Builder builder;
  for (int i = 0; i < count; ++i) builder.add(oldtype, i * oldtype->extent);
  *newtype = builder.finish();
  return MPI_SUCCESS;
}

extern "C" int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int error = check_old(oldtype, "MPI_Type_vector", "oldtype")) return error;
  if (int error = check_new(count, newtype, "MPI_Type_vector")) return error;
  if (blocklength < 0) return fail(nullptr, MPI_ERR_ARG, "MPI_Type_vector", "blocklength %d is negative", blocklength);
  Builder builder;
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < blocklength; ++j)
      builder.add(oldtype, (static_cast<ptrdiff_t>(i) * stride + j) * oldtype->extent);
  }
  *newtype = builder.finish();
  return MPI_SUCCESS;
}

extern "C" int MPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                                MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int error = check_old(oldtype, "MPI_Type_indexed", "oldtype")) return error;
  if (int error = check_new(count, newtype, "MPI_Type_indexed")) return error;
  if (count > 0 && (array_of_blocklengths == nullptr || array_of_displacements == nullptr)) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Type_indexed", "array_of_blocklengths or array_of_displacements is NULL");
  }
  Builder builder;
  for (int i = 0; i < count; ++i) {
    if (array_of_blocklengths[i] < 0) {
      return fail(nullptr, MPI_ERR_ARG, "MPI_Type_indexed", "array_of_blocklengths[%d] = %d is negative", i,
                  array_of_blocklengths[i]);
    }
    for (int j = 0; j < array_of_blocklengths[i]; ++j) {
      builder.add(oldtype, (static_cast<ptrdiff_t>(array_of_displacements[i]) + j) * oldtype->extent);
    }
  }
  *newtype = builder.finish();
  return MPI_SUCCESS;
}

extern "C" int MPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                      const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                                      MPI_Datatype* newtype) {
  const char* function = "MPI_Type_create_struct";
  if (int error = check_initialized(function)) return error;
  if (int error = check_new(count, newtype, function)) return error;
  if (count > 0 &&
      (array_of_blocklengths == nullptr || array_of_displacements == nullptr || array_of_types == nullptr)) {
    return fail(nullptr, MPI_ERR_ARG, function, "an array argument is NULL");
  }
  Builder builder;
  for (int i = 0; i < count; ++i) {
    const MPI_Datatype type = array_of_types[i];
    if (type == nullptr || type->is_null) {
      return fail(nullptr, MPI_ERR_TYPE, function, "array_of_types[%d] is MPI_DATATYPE_NULL", i);
    }
    if (array_of_blocklengths[i] < 0) {
      return fail(nullptr, MPI_ERR_ARG, function, "array_of_blocklengths[%d] = %d is negative", i,
                  array_of_blocklengths[i]);
    }
    for (int j = 0; j < array_of_blocklengths[i]; ++j) builder.add(type, array_of_displacements[i] + j * type->extent);
  }
  builder.pad_to_alignment();
  *newtype = builder.finish();
  return MPI_SUCCESS;
}

extern "C" int MPI_Type_commit(MPI_Datatype* datatype) {
  if (int error = check_initialized("MPI_Type_commit")) return error;
  if (datatype == nullptr || *datatype == nullptr || (*datatype)->is_null) {
    return fail(nullptr, MPI_ERR_TYPE, "MPI_Type_commit", "datatype is NULL or MPI_DATATYPE_NULL");
  }
  (*datatype)->committed = true;
  return MPI_SUCCESS;
}

extern "C" int MPI_Type_free(MPI_Datatype* datatype) {
  if (int error = check_initialized("MPI_Type_free")) return error;
  if (datatype == nullptr || *datatype == nullptr || (*datatype)->is_null) {
    return fail(nullptr, MPI_ERR_TYPE, "MPI_Type_free", "datatype is NULL or MPI_DATATYPE_NULL");
  }
  if ((*datatype)->predefined) {
    return fail(nullptr, MPI_ERR_TYPE, "MPI_Type_free", "%s is predefined", (*datatype)->name.c_str());
  }
  release(*datatype);  // requests still using it keep it until they complete
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}
