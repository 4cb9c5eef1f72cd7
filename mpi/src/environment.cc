// Initialisation and finalisation, the job's facts (version, processor name, clock, MPI_TAG_UB)
// and memory. MPI_Init makes MPI_COMM_WORLD from rcc's environment (rccrun, Slurm, mpirun, PMIx,
// torchrun: whatever rcc_comm_init finds) and MPI_COMM_SELF from it.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "internal.h"

namespace rcc_mpi {

State& state() {
  static State* instance = new State;  // never destroyed: atexit handlers may still ask
  return *instance;
}

bool initialized() {
  State& s = state();
  return s.initialized && !s.finalized;
}

namespace {

int init(int required, int* provided) {
  State& s = state();
  if (s.initialized)
    return fail(nullptr, MPI_ERR_OTHER, "MPI_Init", "MPI is already initialised%s",
                s.finalized ? " (and finalised)" : "");
  rcc_comm_t world = nullptr;
  rcc_status_t status = rcc_comm_init(&world);
  if (status != RCC_SUCCESS) return fail_rcc(nullptr, status, "MPI_Init");
  if (int error = fill_comm(MPI_COMM_WORLD, nullptr, world, "MPI_Init")) return error;
  rcc_mpi_comm_world.name = "MPI_COMM_WORLD";
  rcc_comm_t self = nullptr;
  status = rcc_comm_split(world, rcc_mpi_comm_world.rank, 0, &self);
  if (status != RCC_SUCCESS) return fail_rcc(MPI_COMM_WORLD, status, "MPI_Init");
  if (int error = fill_comm(MPI_COMM_SELF, MPI_COMM_WORLD, self, "MPI_Init")) return error;
  rcc_mpi_comm_self.name = "MPI_COMM_SELF";
  // rcc's engine is thread-safe and the layer's shared state is locked: any level is provided.
  s.thread_level = std::clamp(required, static_cast<int>(MPI_THREAD_SINGLE), static_cast<int>(MPI_THREAD_MULTIPLE));
  if (provided != nullptr) *provided = s.thread_level;
  s.initialized = true;
  return MPI_SUCCESS;
}

const auto g_clock_zero = std::chrono::steady_clock::now();

}  // namespace

}  // namespace rcc_mpi

using namespace rcc_mpi;

extern "C" int MPI_Init(int*, char***) { return init(MPI_THREAD_SINGLE, nullptr); }

extern "C" int MPI_Init_thread(int*, char***, int required, int* provided) {
  if (provided == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Init_thread", "provided is NULL");
  return init(required, provided);
}

extern "C" int MPI_Query_thread(int* provided) {
  if (int error = check_initialized("MPI_Query_thread")) return error;
  if (provided == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Query_thread", "provided is NULL");
  *provided = state().thread_level;
  return MPI_SUCCESS;
}

extern "C" int MPI_Initialized(int* flag) {
  if (flag == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Initialized", "flag is NULL");
  *flag = state().initialized ? 1 : 0;
  return MPI_SUCCESS;
}

extern "C" int MPI_Finalized(int* flag) {
  if (flag == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Finalized", "flag is NULL");
  *flag = state().finalized ? 1 : 0;
  return MPI_SUCCESS;
}

extern "C" int MPI_Finalize(void) {
  if (int error = check_initialized("MPI_Finalize")) return error;
  State& s = state();
  reap_detached(nullptr);
  // Every communicator the program left, newest first (the same order on every rank: they were
  // made by collective calls), then MPI_COMM_SELF and MPI_COMM_WORLD.
  std::vector<MPI_Comm> left;
  {
    std::lock_guard<std::mutex> guard(s.mutex);
    left = s.comms;
  }
  for (auto it = left.rbegin(); it != left.rend(); ++it) destroy_comm(*it);
  s.finalized = true;
  return MPI_SUCCESS;
}

extern "C" int MPI_Abort(MPI_Comm comm, int errorcode) {
  const int rank = rcc_mpi_comm_world.live ? rcc_mpi_comm_world.rank : -1;
  const char* name = comm != nullptr && comm->live ? comm->name.c_str() : "a communicator";
  std::fprintf(stderr, "rcc-mpi: rank %d called MPI_Abort on %s with error code %d\n", rank,
               name[0] != '\0' ? name : "a communicator", errorcode);
  abort_job(errorcode);
}

extern "C" int MPI_Get_processor_name(char* name, int* resultlen) {
  if (name == nullptr || resultlen == nullptr) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Get_processor_name", "name or resultlen is NULL");
  }
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  std::strcpy(name, host);
  *resultlen = static_cast<int>(std::strlen(name));
  return MPI_SUCCESS;
}

extern "C" int MPI_Get_version(int* version, int* subversion) {
  if (version == nullptr || subversion == nullptr) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Get_version", "version or subversion is NULL");
  }
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

extern "C" int MPI_Get_library_version(char* version, int* resultlen) {
  if (version == nullptr || resultlen == nullptr) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Get_library_version", "version or resultlen is NULL");
  }
  const int length = std::snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                                   "rcc-mpi %d.%d.%d: an MPI-%d.%d subset over rcc (docs/mpi.md)", RCC_VERSION_MAJOR,
                                   RCC_VERSION_MINOR, RCC_VERSION_PATCH, MPI_VERSION, MPI_SUBVERSION);
  *resultlen = std::min(length, MPI_MAX_LIBRARY_VERSION_STRING - 1);
  return MPI_SUCCESS;
}

extern "C" double MPI_Wtime(void) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_clock_zero).count();
}

extern "C" double MPI_Wtick(void) { return 1e-9; }

extern "C" int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  if (int error = check_comm(comm, "MPI_Comm_get_attr")) return error;
  if (attribute_val == nullptr || flag == nullptr) {
    return fail(comm, MPI_ERR_ARG, "MPI_Comm_get_attr", "attribute_val or flag is NULL");
  }
  static int tag_ub = INT_MAX;  // rcc's tags are 0..INT_MAX
  if (comm_keyval != MPI_TAG_UB) {
    return fail(comm, MPI_ERR_ARG, "MPI_Comm_get_attr", "keyval %d is not MPI_TAG_UB (the only attribute here)",
                comm_keyval);
  }
  *static_cast<int**>(attribute_val) = &tag_ub;
  *flag = 1;
  return MPI_SUCCESS;
}

// Memory from rcc_mem_alloc, which the ranks of a host reach in each other's address space: an
// MPI_Allreduce over it on every rank moves the data once (what MPI_Alloc_mem is for).
extern "C" int MPI_Alloc_mem(MPI_Aint size, MPI_Info, void* baseptr) {
  if (int error = check_initialized("MPI_Alloc_mem")) return error;
  if (size < 0) return fail(nullptr, MPI_ERR_ARG, "MPI_Alloc_mem", "size %ld is negative", static_cast<long>(size));
  if (baseptr == nullptr) return fail(nullptr, MPI_ERR_ARG, "MPI_Alloc_mem", "baseptr is NULL");
  void* memory = nullptr;
  // Size 0 still gets a distinct pointer, as malloc(0) may give.
  if (rcc_mem_alloc(size > 0 ? static_cast<size_t>(size) : 1, &memory) != RCC_SUCCESS) {
    return fail(nullptr, MPI_ERR_NO_MEM, "MPI_Alloc_mem", "could not allocate %ld bytes: %s", static_cast<long>(size),
                rcc_last_error());
  }
  *static_cast<void**>(baseptr) = memory;
  return MPI_SUCCESS;
}

extern "C" int MPI_Free_mem(void* base) {
  if (rcc_mem_free(base) != RCC_SUCCESS) {
    return fail(nullptr, MPI_ERR_ARG, "MPI_Free_mem", "base %p did not come from MPI_Alloc_mem (or was freed)", base);
  }
  return MPI_SUCCESS;
}
