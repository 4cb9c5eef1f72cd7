/* rcc: collective communication over RDMA verbs (InfiniBand, RoCE v2, iWARP) and UCX.
 *
 * Every function returns an rcc_status_t; on failure rcc_last_error() gives a thread-local message
 * that names the offending argument, peer or device. Output parameters are written only on success.
 * Configuration is by RCC_* environment variables, listed in docs/configuration.md.
 */
#ifndef RCC_RCC_H
#define RCC_RCC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RCC_VERSION_MAJOR 0
#define RCC_VERSION_MINOR 1
#define RCC_VERSION_PATCH 0

typedef enum {
  RCC_SUCCESS = 0,
  RCC_ERR_INVALID_ARGUMENT = 1, /* an argument is out of range or null; the message names it */
  RCC_ERR_INVALID_USAGE = 2,    /* call not allowed now: destroyed communicator, freed request */
  RCC_ERR_TIMEOUT = 3,          /* a deadline passed (bootstrap, RCC_TIMEOUT) */
  RCC_ERR_PEER_FAILED = 4,      /* a peer rank died or its connection broke; the message names it */
  RCC_ERR_TRANSPORT = 5,        /* the network layer (verbs, UCX, sockets) reported an error */
  RCC_ERR_BOOTSTRAP = 6,        /* rank/size/rendezvous could not be found or reached */
  RCC_ERR_TRUNCATED = 7,        /* a message was longer than the posted receive */
  RCC_ERR_NO_MEMORY = 8,
  RCC_ERR_NO_DEVICE = 9,        /* the requested transport or device does not exist or is down */
  RCC_ERR_UNSUPPORTED = 10,
  RCC_ERR_ABORTED = 11,         /* the communicator was aborted with rcc_comm_abort */
  RCC_ERR_MISMATCH = 12,        /* ranks called a collective with different arguments (RCC_CHECK=1) */
  RCC_ERR_INTERNAL = 13
} rcc_status_t;

typedef enum {
  RCC_INT8 = 0,
  RCC_UINT8 = 1,
  RCC_INT32 = 2,
  RCC_UINT32 = 3,
  RCC_INT64 = 4,
  RCC_UINT64 = 5,
  RCC_FLOAT16 = 6,  /* IEEE 754 binary16 */
  RCC_BFLOAT16 = 7, /* bfloat16 */
  RCC_FLOAT32 = 8,
  RCC_FLOAT64 = 9,
  RCC_NUM_DATATYPES = 10
} rcc_datatype_t;

/* RCC_AVG is the sum divided by the number of ranks; it is defined for floating-point types only. */
typedef enum { RCC_SUM = 0, RCC_PROD = 1, RCC_MIN = 2, RCC_MAX = 3, RCC_AVG = 4, RCC_NUM_OPS = 5 } rcc_op_t;

typedef struct rcc_comm* rcc_comm_t;
typedef struct rcc_request* rcc_request_t;

#define RCC_UNIQUE_ID_BYTES 128
/* Created by one rank with rcc_get_unique_id and passed to the others by the caller's own channel. */
typedef struct {
  char internal[RCC_UNIQUE_ID_BYTES];
} rcc_unique_id_t;

/* ---- status ---- */
const char* rcc_status_string(rcc_status_t status);
const char* rcc_last_error(void); /* thread-local message for this thread's last failure */
size_t rcc_datatype_size(rcc_datatype_t datatype); /* 0 for an invalid datatype */

/* ---- communicator ---- */
/* Rank, size and rendezvous from the environment: rccrun, Slurm, Open MPI/PMI/Hydra, torchrun. */
rcc_status_t rcc_comm_init(rcc_comm_t* comm);
/* The embedding path: one rank creates the id (and hosts the rendezvous), all pass it here. */
rcc_status_t rcc_get_unique_id(rcc_unique_id_t* id);
rcc_status_t rcc_comm_init_rank(rcc_comm_t* comm, rcc_unique_id_t id, int rank, int size);
rcc_status_t rcc_comm_rank(rcc_comm_t comm, int* rank);
rcc_status_t rcc_comm_size(rcc_comm_t comm, int* size);
/* Name of the transport in use: "ucx" or "verbs". */
rcc_status_t rcc_comm_transport(rcc_comm_t comm, const char** name);
/* Makes every pending and later call on comm return RCC_ERR_ABORTED; never blocks on peers. */
rcc_status_t rcc_comm_abort(rcc_comm_t comm);
rcc_status_t rcc_comm_destroy(rcc_comm_t comm);

/* ---- point to point ---- */
/* Messages from one sender to one receiver with one tag arrive in the order sent. tag >= 0. */
rcc_status_t rcc_send(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer,
                      int tag);
rcc_status_t rcc_recv(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag);
rcc_status_t rcc_isend(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer,
                       int tag, rcc_request_t* request);
rcc_status_t rcc_irecv(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                       rcc_request_t* request);
/* On completion (done = 1, or rcc_wait returning) the request is freed and returns its status. */
rcc_status_t rcc_test(rcc_request_t request, int* done);
rcc_status_t rcc_wait(rcc_request_t request);

/* ---- collectives (sendbuf == recvbuf means in place) ---- */
rcc_status_t rcc_allreduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count,
                           rcc_datatype_t datatype, rcc_op_t op);
rcc_status_t rcc_broadcast(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int root);
rcc_status_t rcc_reduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count,
                        rcc_datatype_t datatype, rcc_op_t op, int root);
rcc_status_t rcc_allgather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount,
                           rcc_datatype_t datatype);
rcc_status_t rcc_reduce_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                                rcc_datatype_t datatype, rcc_op_t op);
rcc_status_t rcc_alltoall(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count,
                          rcc_datatype_t datatype);
rcc_status_t rcc_gather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount,
                        rcc_datatype_t datatype, int root);
rcc_status_t rcc_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                         rcc_datatype_t datatype, int root);
rcc_status_t rcc_barrier(rcc_comm_t comm);

/* Nonblocking forms: several may be in flight; they run in the order issued (the same on every
 * rank) and may be waited for in any order. */
rcc_status_t rcc_iallreduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count,
                            rcc_datatype_t datatype, rcc_op_t op, rcc_request_t* request);
rcc_status_t rcc_ibroadcast(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int root,
                            rcc_request_t* request);
rcc_status_t rcc_ireduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count,
                         rcc_datatype_t datatype, rcc_op_t op, int root, rcc_request_t* request);
rcc_status_t rcc_iallgather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount,
                            rcc_datatype_t datatype, rcc_request_t* request);
rcc_status_t rcc_ireduce_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                                 rcc_datatype_t datatype, rcc_op_t op, rcc_request_t* request);
rcc_status_t rcc_ialltoall(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count,
                           rcc_datatype_t datatype, rcc_request_t* request);
rcc_status_t rcc_igather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount,
                         rcc_datatype_t datatype, int root, rcc_request_t* request);
rcc_status_t rcc_iscatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                          rcc_datatype_t datatype, int root, rcc_request_t* request);
rcc_status_t rcc_ibarrier(rcc_comm_t comm, rcc_request_t* request);

#ifdef __cplusplus
}
#endif

#endif /* RCC_RCC_H */
