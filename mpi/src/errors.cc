// Error classes, messages and handlers. Every error code is its class; the message of the last
// error a thread raised (naming the call and rcc's reason) is kept for MPI_Error_string and for
// MPI_ERRORS_ARE_FATAL, which prints it and ends the job.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "internal.h"

extern "C" {
struct rcc_mpi_errhandler rcc_mpi_errors_are_fatal {
  rcc_mpi_errhandler::Kind::kFatal
};
struct rcc_mpi_errhandler rcc_mpi_errors_return {
  rcc_mpi_errhandler::Kind::kReturn
};
struct rcc_mpi_errhandler rcc_mpi_errhandler_null {
  rcc_mpi_errhandler::Kind::kNull
};
}

namespace rcc_mpi {
namespace {

thread_local std::string t_last_message;
thread_local int t_last_class = MPI_SUCCESS;

const char* class_string(int error_class) {
  switch (error_class) {
    case MPI_SUCCESS: return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG: return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM: return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK: return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP: return "MPI_ERR_OP: invalid reduction operation";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY: invalid topology";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE: message truncated";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER: known error not in this list";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS: error code is in status";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported";
  }
  return nullptr;
}

MPI_Errhandler handler_of(MPI_Comm comm) {
  if (comm != nullptr && comm->live) return comm->errhandler;
  if (rcc_mpi_comm_world.live) return rcc_mpi_comm_world.errhandler;
  return MPI_ERRORS_ARE_FATAL;
}

int raise(MPI_Comm comm, int error_class, std::string message) {
  t_last_message = std::move(message);
  t_last_class = error_class;
  if (handler_of(comm)->kind == rcc_mpi_errhandler::Kind::kReturn) return error_class;
  int rank = rcc_mpi_comm_world.live ? rcc_mpi_comm_world.rank : -1;
  std::fprintf(stderr, "rcc-mpi: rank %d: %s (%s); aborting the job (MPI_ERRORS_ARE_FATAL)\n", rank,
               t_last_message.c_str(), class_string(error_class));
  abort_job(error_class);
}

}  // namespace

int fail(MPI_Comm comm, int error_class, const char* function, const char* format, ...) {
  char detail[768];
  va_list args;
  va_start(args, format);
  std::vsnprintf(detail, sizeof detail, format, args);
  va_end(args);
  return raise(comm, error_class, std::string(function) + ": " + detail);
}

int error_class_of(rcc_status_t status) {
  switch (status) {
    case RCC_SUCCESS: return MPI_SUCCESS;
    case RCC_ERR_INVALID_ARGUMENT: return MPI_ERR_ARG;
    case RCC_ERR_INVALID_USAGE: return MPI_ERR_REQUEST;
    case RCC_ERR_TRUNCATED: return MPI_ERR_TRUNCATE;
    case RCC_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case RCC_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case RCC_ERR_INTERNAL: return MPI_ERR_INTERN;
    default: return MPI_ERR_OTHER;  // a dead or unreachable peer, a timeout, an abort: the message says which
  }
}

int fail_rcc(MPI_Comm comm, rcc_status_t status, const char* function) {
  return raise(comm, error_class_of(status),
               std::string(function) + ": " + rcc_last_error() + " [" + rcc_status_string(status) + "]");
}

void abort_job(int code) {
  // Others blocked on this rank see it die (rcc's liveness), fail, and end too; the launcher
  // reports the first non-zero exit.
  std::fflush(stdout);
  std::fflush(stderr);
  if (rcc_mpi_comm_world.live) rcc_comm_abort(rcc_mpi_comm_world.comm);
  _exit(code == 0 ? 1 : (code & 0xff) == 0 ? 1 : code & 0xff);
}

}  // namespace rcc_mpi

using namespace rcc_mpi;

extern "C" int MPI_Error_class(int errorcode, int* errorclass) {
  if (errorclass == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Error_class", "errorclass is NULL");
  if (class_string(errorcode) == nullptr) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Error_class", "%d is not an error code", errorcode);
  }
  *errorclass = errorcode;
  return MPI_SUCCESS;
}

extern "C" int MPI_Error_string(int errorcode, char* string, int* resultlen) {
  if (string == nullptr || resultlen == nullptr) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Error_string", "string or resultlen is NULL");
  }
  const char* text = class_string(errorcode);
  if (text == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Error_string", "%d is not an error code", errorcode);
  // The class's text, and the reason of this thread's last error of that class (it names the call).
  std::string full = text;
  if (errorcode != MPI_SUCCESS && errorcode == t_last_class && !t_last_message.empty())
    full += " (" + t_last_message + ")";
  const size_t length = std::min<size_t>(full.size(), MPI_MAX_ERROR_STRING - 1);
  full.copy(string, length);
  string[length] = '\0';
  *resultlen = static_cast<int>(length);
  return MPI_SUCCESS;
}

extern "C" int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  if (int error = check_comm(comm, "MPI_Comm_set_errhandler")) return error;
  if (errhandler == nullptr || errhandler->kind == rcc_mpi_errhandler::Kind::kNull) {
    return fail(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler", "errhandler is MPI_ERRHANDLER_NULL");
  }
  comm->errhandler = errhandler;
  return MPI_SUCCESS;
}

extern "C" int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  if (int error = check_comm(comm, "MPI_Comm_get_errhandler")) return error;
  if (errhandler == nullptr) return fail(comm, MPI_ERR_ARG, "MPI_Comm_get_errhandler", "errhandler is NULL");
  *errhandler = comm->errhandler;
  return MPI_SUCCESS;
}

extern "C" int MPI_Errhandler_free(MPI_Errhandler* errhandler) {
  if (errhandler == nullptr || *errhandler == nullptr || (*errhandler)->kind == rcc_mpi_errhandler::Kind::kNull) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Errhandler_free", "errhandler is NULL or MPI_ERRHANDLER_NULL");
  }
  *errhandler = MPI_ERRHANDLER_NULL;  // the predefined handlers live on; only the handle is cleared
  return MPI_SUCCESS;
}
