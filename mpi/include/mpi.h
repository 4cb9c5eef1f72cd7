/* rcc's MPI: an MPI-3.1 subset over rcc's C API (librcc_mpi; build with rcc-mpicc / rcc-mpicxx).
 *
 * Only the functions listed here exist: a program that calls another MPI function fails to
 * compile, naming it, instead of running with a wrong result. docs/mpi.md lists the subset, the
 * thread level (MPI_THREAD_MULTIPLE) and how errors are reported.
 *
 * Handles are pointers to the library's objects; the predefined ones are the addresses of objects
 * it exports (as Open MPI does), so they may appear in static initialisers.
 */
#ifndef RCC_MPI_H
#define RCC_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RCC_MPI 1
#define MPI_VERSION 3
#define MPI_SUBVERSION 1

typedef struct rcc_mpi_comm* MPI_Comm;
typedef struct rcc_mpi_group* MPI_Group;
typedef struct rcc_mpi_datatype* MPI_Datatype;
typedef struct rcc_mpi_op* MPI_Op;
typedef struct rcc_mpi_request* MPI_Request;
typedef struct rcc_mpi_errhandler* MPI_Errhandler;
typedef struct rcc_mpi_info* MPI_Info; /* only MPI_INFO_NULL exists */
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

/* MPI_SOURCE, MPI_TAG and MPI_ERROR as the standard names them; the rest is the library's. */
typedef struct {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  int rcc_cancelled;
  size_t rcc_bytes;
} MPI_Status;

typedef void MPI_User_function(void* invec, void* inoutvec, int* len, MPI_Datatype* datatype);

/* ---- predefined objects ---- */
extern struct rcc_mpi_comm rcc_mpi_comm_world, rcc_mpi_comm_self, rcc_mpi_comm_null;
extern struct rcc_mpi_group rcc_mpi_group_empty, rcc_mpi_group_null;
extern struct rcc_mpi_request rcc_mpi_request_null;
extern struct rcc_mpi_errhandler rcc_mpi_errors_are_fatal, rcc_mpi_errors_return, rcc_mpi_errhandler_null;
#define MPI_COMM_WORLD (&rcc_mpi_comm_world)
#define MPI_COMM_SELF (&rcc_mpi_comm_self)
#define MPI_COMM_NULL (&rcc_mpi_comm_null)
#define MPI_GROUP_EMPTY (&rcc_mpi_group_empty)
#define MPI_GROUP_NULL (&rcc_mpi_group_null)
#define MPI_REQUEST_NULL (&rcc_mpi_request_null)
#define MPI_ERRORS_ARE_FATAL (&rcc_mpi_errors_are_fatal)
#define MPI_ERRORS_RETURN (&rcc_mpi_errors_return)
#define MPI_ERRHANDLER_NULL (&rcc_mpi_errhandler_null)

#define RCC_MPI_TYPES(X)                        \
  X(MPI_CHAR, char)                             \
  X(MPI_SHORT, short)                           \
  X(MPI_INT, int)                               \
  X(MPI_LONG, long)                             \
  X(MPI_LONG_LONG_INT, long_long)               \
  X(MPI_SIGNED_CHAR, signed_char)               \
  X(MPI_UNSIGNED_CHAR, unsigned_char)           \
  X(MPI_UNSIGNED_SHORT, unsigned_short)         \
  X(MPI_UNSIGNED, unsigned)                     \
  X(MPI_UNSIGNED_LONG, unsigned_long)           \
  X(MPI_UNSIGNED_LONG_LONG, unsigned_long_long) \
  X(MPI_FLOAT, float)                           \
  X(MPI_DOUBLE, double)                         \
  X(MPI_BYTE, byte)                             \
  X(MPI_WCHAR, wchar)                           \
  X(MPI_C_BOOL, c_bool)                         \
  X(MPI_INT8_T, int8_t)                         \
  X(MPI_INT16_T, int16_t)                       \
  X(MPI_INT32_T, int32_t)                       \
  X(MPI_INT64_T, int64_t)                       \
  X(MPI_UINT8_T, uint8_t)                       \
  X(MPI_UINT16_T, uint16_t)                     \
  X(MPI_UINT32_T, uint32_t)                     \
  X(MPI_UINT64_T, uint64_t)                     \
  X(MPI_AINT, aint)                             \
  X(MPI_OFFSET, offset)                         \
  X(MPI_COUNT, count)                           \
  X(MPI_2INT, 2int)                             \
  X(MPI_FLOAT_INT, float_int)                   \
  X(MPI_DOUBLE_INT, double_int)                 \
  X(MPI_LONG_INT, long_int)                     \
  X(MPI_DATATYPE_NULL, null)
#define RCC_MPI_DECLARE_TYPE(name, suffix) extern struct rcc_mpi_datatype rcc_mpi_type_##suffix;
RCC_MPI_TYPES(RCC_MPI_DECLARE_TYPE)
#undef RCC_MPI_DECLARE_TYPE
#define MPI_CHAR (&rcc_mpi_type_char)
#define MPI_SHORT (&rcc_mpi_type_short)
#define MPI_INT (&rcc_mpi_type_int)
#define MPI_LONG (&rcc_mpi_type_long)
#define MPI_LONG_LONG_INT (&rcc_mpi_type_long_long)
#define MPI_LONG_LONG MPI_LONG_LONG_INT
#define MPI_SIGNED_CHAR (&rcc_mpi_type_signed_char)
#define MPI_UNSIGNED_CHAR (&rcc_mpi_type_unsigned_char)
#define MPI_UNSIGNED_SHORT (&rcc_mpi_type_unsigned_short)
#define MPI_UNSIGNED (&rcc_mpi_type_unsigned)
#define MPI_UNSIGNED_LONG (&rcc_mpi_type_unsigned_long)
#define MPI_UNSIGNED_LONG_LONG (&rcc_mpi_type_unsigned_long_long)
#define MPI_FLOAT (&rcc_mpi_type_float)
#define MPI_DOUBLE (&rcc_mpi_type_double)
#define MPI_BYTE (&rcc_mpi_type_byte)
#define MPI_WCHAR (&rcc_mpi_type_wchar)
#define MPI_C_BOOL (&rcc_mpi_type_c_bool)
#define MPI_INT8_T (&rcc_mpi_type_int8_t)
#define MPI_INT16_T (&rcc_mpi_type_int16_t)
#define MPI_INT32_T (&rcc_mpi_type_int32_t)
#define MPI_INT64_T (&rcc_mpi_type_int64_t)
#define MPI_UINT8_T (&rcc_mpi_type_uint8_t)
#define MPI_UINT16_T (&rcc_mpi_type_uint16_t)
#define MPI_UINT32_T (&rcc_mpi_type_uint32_t)
#define MPI_UINT64_T (&rcc_mpi_type_uint64_t)
#define MPI_AINT (&rcc_mpi_type_aint)
#define MPI_OFFSET (&rcc_mpi_type_offset)
#define MPI_COUNT (&rcc_mpi_type_count)
#define MPI_2INT (&rcc_mpi_type_2int)
#define MPI_FLOAT_INT (&rcc_mpi_type_float_int)
#define MPI_DOUBLE_INT (&rcc_mpi_type_double_int)
#define MPI_LONG_INT (&rcc_mpi_type_long_int)
#define MPI_DATATYPE_NULL (&rcc_mpi_type_null)

extern struct rcc_mpi_op rcc_mpi_op_sum, rcc_mpi_op_prod, rcc_mpi_op_min, rcc_mpi_op_max, rcc_mpi_op_land,
    rcc_mpi_op_lor, rcc_mpi_op_lxor, rcc_mpi_op_band, rcc_mpi_op_bor, rcc_mpi_op_bxor, rcc_mpi_op_minloc,
    rcc_mpi_op_maxloc, rcc_mpi_op_null;
#define MPI_SUM (&rcc_mpi_op_sum)
#define MPI_PROD (&rcc_mpi_op_prod)
#define MPI_MIN (&rcc_mpi_op_min)
#define MPI_MAX (&rcc_mpi_op_max)
#define MPI_LAND (&rcc_mpi_op_land)
#define MPI_LOR (&rcc_mpi_op_lor)
#define MPI_LXOR (&rcc_mpi_op_lxor)
#define MPI_BAND (&rcc_mpi_op_band)
#define MPI_BOR (&rcc_mpi_op_bor)
#define MPI_BXOR (&rcc_mpi_op_bxor)
#define MPI_MINLOC (&rcc_mpi_op_minloc)
#define MPI_MAXLOC (&rcc_mpi_op_maxloc)
#define MPI_OP_NULL (&rcc_mpi_op_null)

/* ---- constants ---- */
#define MPI_ANY_SOURCE (-1)
#define MPI_ANY_TAG (-1)
#define MPI_PROC_NULL (-2)
#define MPI_UNDEFINED (-32766)
#define MPI_IN_PLACE ((void*)1)
#define MPI_STATUS_IGNORE ((MPI_Status*)0)
#define MPI_STATUSES_IGNORE ((MPI_Status*)0)
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 64
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_TAG_UB 1 /* attribute key of MPI_Comm_get_attr */
#define MPI_INFO_NULL ((MPI_Info)0)

enum { MPI_THREAD_SINGLE = 0, MPI_THREAD_FUNNELED = 1, MPI_THREAD_SERIALIZED = 2, MPI_THREAD_MULTIPLE = 3 };
enum { MPI_IDENT = 0, MPI_CONGRUENT = 1, MPI_SIMILAR = 2, MPI_UNEQUAL = 3 };
enum { MPI_COMM_TYPE_SHARED = 1 };

/* Error classes; every error code this library returns is one of them. */
enum {
  MPI_SUCCESS = 0,
  MPI_ERR_BUFFER = 1,
  MPI_ERR_COUNT = 2,
  MPI_ERR_TYPE = 3,
  MPI_ERR_TAG = 4,
  MPI_ERR_COMM = 5,
  MPI_ERR_RANK = 6,
  MPI_ERR_REQUEST = 7,
  MPI_ERR_ROOT = 8,
  MPI_ERR_GROUP = 9,
  MPI_ERR_OP = 10,
  MPI_ERR_TOPOLOGY = 11,
  MPI_ERR_DIMS = 12,
  MPI_ERR_ARG = 13,
  MPI_ERR_UNKNOWN = 14,
  MPI_ERR_TRUNCATE = 15,
  MPI_ERR_OTHER = 16,
  MPI_ERR_INTERN = 17,
  MPI_ERR_IN_STATUS = 18,
  MPI_ERR_PENDING = 19,
  MPI_ERR_NO_MEM = 20,
  MPI_ERR_UNSUPPORTED_OPERATION = 21,
  MPI_ERR_LASTCODE = 21
};

/* ---- environment ---- */
int MPI_Init(int* argc, char*** argv);
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided);
int MPI_Query_thread(int* provided);
int MPI_Finalize(void);
int MPI_Initialized(int* flag);
int MPI_Finalized(int* flag);
int MPI_Abort(MPI_Comm comm, int errorcode);
int MPI_Get_processor_name(char* name, int* resultlen);
int MPI_Get_version(int* version, int* subversion);
int MPI_Get_library_version(char* version, int* resultlen);
double MPI_Wtime(void);
double MPI_Wtick(void);
int MPI_Error_string(int errorcode, char* string, int* resultlen);
int MPI_Error_class(int errorcode, int* errorclass);
int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler);
int MPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler);
int MPI_Errhandler_free(MPI_Errhandler* errhandler);
int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr);
int MPI_Free_mem(void* base);
int MPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag);

/* ---- communicators and groups ---- */
int MPI_Comm_rank(MPI_Comm comm, int* rank);
int MPI_Comm_size(MPI_Comm comm, int* size);
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm);
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm);
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm);
int MPI_Comm_free(MPI_Comm* comm);
int MPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result);
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm);
int MPI_Comm_group(MPI_Comm comm, MPI_Group* group);
int MPI_Comm_set_name(MPI_Comm comm, const char* comm_name);
int MPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen);
int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup);
int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup);
int MPI_Group_rank(MPI_Group group, int* rank);
int MPI_Group_size(MPI_Group group, int* size);
int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]);
int MPI_Group_free(MPI_Group* group);

/* ---- point to point ---- */
int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm);
int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status);
int MPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request* request);
int MPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request);
int MPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request);
int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status);
int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status* status);
int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status);
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count);
int MPI_Wait(MPI_Request* request, MPI_Status* status);
int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]);
int MPI_Waitany(int count, MPI_Request array_of_requests[], int* index, MPI_Status* status);
int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
                 MPI_Status array_of_statuses[]);
int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status);
int MPI_Testall(int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]);
int MPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status);
int MPI_Request_free(MPI_Request* request);
int MPI_Cancel(MPI_Request* request);
int MPI_Test_cancelled(const MPI_Status* status, int* flag);

/* ---- datatypes ---- */
int MPI_Type_size(MPI_Datatype datatype, int* size);
int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent);
int MPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen);
int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[],
                     MPI_Datatype oldtype, MPI_Datatype* newtype);
int MPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
                           const MPI_Datatype array_of_types[], MPI_Datatype* newtype);
int MPI_Type_commit(MPI_Datatype* datatype);
int MPI_Type_free(MPI_Datatype* datatype);

/* ---- operations ---- */
int MPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op);
int MPI_Op_free(MPI_Op* op);

/* ---- collectives ---- */
int MPI_Barrier(MPI_Comm comm);
int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm);
int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                       MPI_Comm comm);
int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm);
int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request);
int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request);
int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request* request);
int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request);
int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request);
int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request);
int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request);
int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request);
int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request);
int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
              MPI_Request* request);
int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                MPI_Request* request);

#ifdef __cplusplus
}
#endif

#endif /* RCC_MPI_H */
