// Argument checks: each names the argument and raises the class the standard gives it.
#include <climits>

#include "internal.h"

namespace rcc_mpi {

int check_initialized(const char* function) {
  if (initialized()) return MPI_SUCCESS;
  // No communicator exists yet: the message goes out and the process ends, as the default
  // handler would.
  return fail(nullptr, MPI_ERR_OTHER, function, "called %s MPI_Init",
              state().finalized ? "after MPI_Finalize" : "before");
}

int check_comm(MPI_Comm comm, const char* function) {
  if (int error = check_initialized(function)) return error;
  if (comm == nullptr || comm->is_null || !comm->live) {
    return fail(nullptr, MPI_ERR_COMM, function, "comm is %s",
                comm == nullptr || comm->is_null ? "MPI_COMM_NULL" : "freed");
  }
  return MPI_SUCCESS;
}

int check_count(MPI_Comm comm, int count, const char* function, const char* name) {
  if (count >= 0) return MPI_SUCCESS;
  return fail(comm, MPI_ERR_COUNT, function, "%s %d is negative", name, count);
}

int check_type(MPI_Comm comm, MPI_Datatype type, const char* function, const char* name) {
  if (type == nullptr || type->is_null) return fail(comm, MPI_ERR_TYPE, function, "%s is MPI_DATATYPE_NULL", name);
  if (!type->committed) return fail(comm, MPI_ERR_TYPE, function, "%s (%s) is not committed", name, type->name.c_str());
  return MPI_SUCCESS;
}

int check_buffer(MPI_Comm comm, const void* buffer, int count, MPI_Datatype type, const char* function,
                 const char* name) {
  // The names are built only for a message: this runs on every call.
  if (count < 0) return fail(comm, MPI_ERR_COUNT, function, "%s's count %d is negative", name, count);
  if (type == nullptr || type->is_null || !type->committed) {
    const std::string type_name = std::string(name) + "'s datatype";
    return check_type(comm, type, function, type_name.c_str());
  }
  if (buffer == nullptr && count > 0 && type->size > 0) {
    return fail(comm, MPI_ERR_BUFFER, function, "%s is NULL with count %d", name, count);
  }
  return MPI_SUCCESS;
}

int check_dest(MPI_Comm comm, int rank, const char* function) {
  if (rank == MPI_PROC_NULL || (rank >= 0 && rank < comm->size)) return MPI_SUCCESS;
  return fail(comm, MPI_ERR_RANK, function, "rank %d is not a rank of the communicator (0..%d) or MPI_PROC_NULL", rank,
              comm->size - 1);
}

int check_source(MPI_Comm comm, int rank, const char* function) {
  if (rank == MPI_ANY_SOURCE) return MPI_SUCCESS;
  return check_dest(comm, rank, function);
}

int check_send_tag(MPI_Comm comm, int tag, const char* function) {
  if (tag >= 0) return MPI_SUCCESS;
  return fail(comm, MPI_ERR_TAG, function, "tag %d is negative (tags are 0..MPI_TAG_UB = %d)", tag, INT_MAX);
}

int check_recv_tag(MPI_Comm comm, int tag, const char* function) {
  if (tag == MPI_ANY_TAG) return MPI_SUCCESS;
  return check_send_tag(comm, tag, function);
}

int check_root(MPI_Comm comm, int root, const char* function) {
  if (root >= 0 && root < comm->size) return MPI_SUCCESS;
  return fail(comm, MPI_ERR_ROOT, function, "root %d is not a rank of the communicator (0..%d)", root, comm->size - 1);
}

int check_op(MPI_Comm comm, MPI_Op op, MPI_Datatype type, const char* function) {
  if (op == nullptr || op->kind == rcc_mpi_op::Kind::kNull)
    return fail(comm, MPI_ERR_OP, function, "op is MPI_OP_NULL");
  if (op->kind == rcc_mpi_op::Kind::kUser) return MPI_SUCCESS;
  using Category = rcc_mpi::Category;
  const Category category = type->category;
  bool allowed = false;
  switch (op->kind) {
    case rcc_mpi_op::Kind::kSum:
    case rcc_mpi_op::Kind::kProd:
    case rcc_mpi_op::Kind::kMin:
    case rcc_mpi_op::Kind::kMax: allowed = category == Category::kInteger || category == Category::kFloat; break;
    case rcc_mpi_op::Kind::kLand:
    case rcc_mpi_op::Kind::kLor:
    case rcc_mpi_op::Kind::kLxor: allowed = category == Category::kInteger || category == Category::kBool; break;
    case rcc_mpi_op::Kind::kBand:
    case rcc_mpi_op::Kind::kBor:
    case rcc_mpi_op::Kind::kBxor: allowed = category == Category::kInteger || category == Category::kByte; break;
    case rcc_mpi_op::Kind::kMinloc:
    case rcc_mpi_op::Kind::kMaxloc: allowed = category == Category::kPair; break;
    default: break;
  }
  if (allowed) return MPI_SUCCESS;
  return fail(comm, MPI_ERR_OP, function, "%s is not defined on datatype %s", op->name, type->name.c_str());
}

int check_counts(MPI_Comm comm, const int* counts, const char* function, const char* name) {
  if (counts == nullptr) return fail(comm, MPI_ERR_ARG, function, "%s is NULL", name);
  for (int i = 0; i < comm->size; ++i) {
    if (counts[i] < 0) return fail(comm, MPI_ERR_COUNT, function, "%s[%d] = %d is negative", name, i, counts[i]);
  }
  return MPI_SUCCESS;
}

int check_request_out(MPI_Comm comm, MPI_Request* request, const char* function) {
  if (request != nullptr) return MPI_SUCCESS;
  return fail(comm, MPI_ERR_REQUEST, function, "request is NULL");
}

}  // namespace rcc_mpi
