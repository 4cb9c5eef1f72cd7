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
  RCC_ERR_NO_DEVICE = 9, /* the requested transport or device does not exist or is down */
  RCC_ERR_UNSUPPORTED = 10,
  RCC_ERR_ABORTED = 11,  /* the communicator was aborted with rcc_comm_abort */
  RCC_ERR_MISMATCH = 12, /* ranks called a collective with different arguments (RCC_CHECK=1) */
  RCC_ERR_INTERNAL = 13,
  RCC_ERR_CANCELLED = 14 /* the receive was cancelled (rcc_cancel) before a message matched it */
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
  RCC_INT16 = 10,
  RCC_UINT16 = 11,
  RCC_NUM_DATATYPES = 12
} rcc_datatype_t;

/* RCC_AVG is the sum divided by the number of ranks; it is defined for floating-point types only.
 * RCC_BAND, RCC_BOR and RCC_BXOR are bitwise and defined for integer types only. */
typedef enum {
  RCC_SUM = 0,
  RCC_PROD = 1,
  RCC_MIN = 2,
  RCC_MAX = 3,
  RCC_AVG = 4,
  RCC_BAND = 5,
  RCC_BOR = 6,
  RCC_BXOR = 7,
  RCC_NUM_OPS = 8
} rcc_op_t;

/* A color that puts the rank in no new communicator (rcc_comm_split); an index rcc_waitany found
 * no request for. */
#define RCC_UNDEFINED (-32766)
/* Wildcards of a receive or probe. */
#define RCC_ANY_SOURCE (-1)
#define RCC_ANY_TAG (-1)

/* What a receive matched: its sender (rank in the communicator), tag and length in bytes. */
typedef struct {
  int source;
  int tag;
  size_t bytes;
} rcc_msg_info_t;

typedef struct rcc_comm* rcc_comm_t;
typedef struct rcc_request* rcc_request_t;

#define RCC_UNIQUE_ID_BYTES 128
/* Created by one rank with rcc_get_unique_id and passed to the others by the caller's own channel. */
typedef struct {
  char internal[RCC_UNIQUE_ID_BYTES];
} rcc_unique_id_t;

/* A key-value store the caller already has (the store a framework made for a process group, such
 * as PyTorch's c10d::Store), for rcc_comm_init_store: rcc's rendezvous runs over it and rcc opens
 * no port of its own for it. Keys are NUL-terminated strings of at most 255 bytes, values bytes.
 * Each function returns RCC_SUCCESS or another status, and is called by one thread at a time. */
typedef struct {
  void* context; /* passed back to every function */
  /* Stores the size bytes at value under key, replacing what it held. */
  rcc_status_t (*set)(void* context, const char* key, const void* value, size_t size);
  /* Waits up to timeout_ms milliseconds (0: does not wait) for key to be set, then makes *value a
   * buffer of *size bytes from malloc() (NULL when *size is 0), which rcc frees. A key not set in
   * time: RCC_ERR_TIMEOUT. */
  rcc_status_t (*get)(void* context, const char* key, int64_t timeout_ms, void** value, size_t* size);
  /* Optional, both or neither (NULL: every key rcc writes stays in the store). add: adds amount to
   * the integer counter at key (created as 0), *result its new value; remove: deletes key. With
   * them, rcc removes each key once every rank has read it. */
  rcc_status_t (*add)(void* context, const char* key, int64_t amount, int64_t* result);
  rcc_status_t (*remove)(void* context, const char* key);
} rcc_store_t;

/* ---- status ---- */
const char* rcc_status_string(rcc_status_t status);
const char* rcc_last_error(void);                  /* thread-local message for this thread's last failure */
size_t rcc_datatype_size(rcc_datatype_t datatype); /* 0 for an invalid datatype */

/* ---- memory ---- */
/* Buffers the ranks on one host can reach in each other's memory (as MPI_Alloc_mem promises):
 * *memory gets `bytes` (page-aligned; NULL when bytes is 0) that any thread may use like malloc'd
 * memory. An allreduce of 16 KiB or more through shared memory whose buffers on every rank lie in
 * such allocations moves the data straight between them, one copy instead of two (where the ranks
 * may take each other's file descriptors: pidfd_getfd, checked at set-up), from the second such
 * allreduce on (the first tells the ranks that every rank's buffers are shared). Buffers anywhere
 * else work as before. Each allocation of 16 KiB or more is a memory file of its own (one file
 * descriptor, up to half of RLIMIT_NOFILE; beyond, and where memfd_create fails, they come from the
 * heap, unshared), mapped shared: a child made by fork() writes into the parent's. A peer that
 * mapped an allocation keeps its pages until its communicator is destroyed or newer ones pushed it
 * out (it keeps the last 16, or 2 per rank if more). */
rcc_status_t rcc_mem_alloc(size_t bytes, void** memory);
/* Frees what rcc_mem_alloc returned; NULL is ignored; anything else is RCC_ERR_INVALID_ARGUMENT. */
rcc_status_t rcc_mem_free(void* memory);

/* ---- communicator ---- */
/* Rank, size and rendezvous from the environment: rccrun, Slurm, Open MPI/PMI/Hydra, torchrun. */
rcc_status_t rcc_comm_init(rcc_comm_t* comm);
/* The embedding path: one rank creates the id (and hosts the rendezvous), all pass it here. */
rcc_status_t rcc_get_unique_id(rcc_unique_id_t* id);
rcc_status_t rcc_comm_init_rank(rcc_comm_t* comm, rcc_unique_id_t id, int rank, int size);
/* The embedding path for frameworks with a store of their own: every rank passes the same store
 * (its own rcc_store_t over it), its rank and the size; rcc's keys start with "rcc/". Rank 0 draws
 * the secret of the connections rcc makes itself and hands it out through the store. */
rcc_status_t rcc_comm_init_store(rcc_comm_t* comm, const rcc_store_t* store, int rank, int size);
rcc_status_t rcc_comm_rank(rcc_comm_t comm, int* rank);
rcc_status_t rcc_comm_size(rcc_comm_t comm, int* size);
/* Name of the transport in use: "ucx" or "verbs". */
rcc_status_t rcc_comm_transport(rcc_comm_t comm, const char** name);
/* What this rank holds for the peers of comm's job now, for reports: how many of them it is
 * connected to (RCC_CONNECT=lazy connects a peer at the first message to or from it), and the
 * bytes of its eager slot areas that hold memory (they grow with the peers it talks to). */
typedef struct {
  int connected_peers; /* of the job's size - 1 */
  int job_size;
  size_t eager_bytes; /* resident bytes of this rank's eager receive and staging areas */
} rcc_footprint_t;
rcc_status_t rcc_comm_footprint(rcc_comm_t comm, rcc_footprint_t* footprint);
/* Makes every pending and later call on comm return RCC_ERR_ABORTED; never blocks on peers. */
rcc_status_t rcc_comm_abort(rcc_comm_t comm);
/* Local for a sub-communicator; the job's last communicator first waits for the other ranks to
 * destroy theirs (at most RCC_TIMEOUT), progressing meanwhile. Completed sends are still
 * delivered. A rank that aborted a communicator or saw a failure does not wait, and the others do
 * not wait for it (docs/communicators.md). */
rcc_status_t rcc_comm_destroy(rcc_comm_t comm);
/* Collective over comm. Ranks passing the same color form one new communicator, ranked by key,
 * ties by rank in comm. color >= 0 or RCC_UNDEFINED (then *newcomm = NULL). The new communicator
 * shares comm's connections; either may be destroyed first. */
rcc_status_t rcc_comm_split(rcc_comm_t comm, int color, int key, rcc_comm_t* newcomm);
/* Which host of comm this rank runs on: *host in [0, *hosts), hosts numbered in the order of their
 * lowest rank. Ranks on one host can share memory (decided at set-up from what they share, as
 * MPI_COMM_TYPE_SHARED wants); rcc_comm_split with color *host groups them. Either output may be
 * NULL. */
rcc_status_t rcc_comm_host(rcc_comm_t comm, int* host, int* hosts);
/* The same ranks in the same order, with traffic of its own. Collective over comm. */
rcc_status_t rcc_comm_dup(rcc_comm_t comm, rcc_comm_t* newcomm);
/* Collective over the n ranks listed only (as MPI_Comm_create_group): a communicator of comm's
 * ranks ranks[0..n), ranked in that order, sharing comm's connections. Every listed rank passes
 * the same list and tag (>= 0); the others do not call it. Calls whose rank lists overlap and
 * that may run at the same time need different tags. */
rcc_status_t rcc_comm_create_group(rcc_comm_t comm, const int* ranks, int n, int tag, rcc_comm_t* newcomm);

/* ---- point to point ---- */
/* Messages from one sender to one receiver arrive in the order sent: of two that both match a
 * receive, the earlier is received first. tag >= 0 in sends. A receive's peer may be
 * RCC_ANY_SOURCE and its tag RCC_ANY_TAG; a message shorter than the receive is accepted, a
 * longer one fails it with RCC_ERR_TRUNCATED. A send of up to RCC_EAGER_LIMIT bytes may return
 * before the receiver posts its receive: it is buffered, up to two windows of RCC_EAGER_SLOTS
 * messages per peer, beyond which it waits until the receiver takes messages in (which it does
 * in any rcc call). A larger send waits for its matching receive (as a standard-mode MPI send may). */
rcc_status_t rcc_send(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag);
rcc_status_t rcc_recv(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag);
/* Synchronous sends (MPI_Ssend): complete only once the receiver's receive matched the message,
 * whatever its size (such a send always goes by rendezvous). */
rcc_status_t rcc_ssend(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag);
rcc_status_t rcc_issend(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                        rcc_request_t* request);
rcc_status_t rcc_isend(rcc_comm_t comm, const void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                       rcc_request_t* request);
rcc_status_t rcc_irecv(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                       rcc_request_t* request);
/* On completion (done = 1, or rcc_wait returning) the request is freed and returns its status. */
rcc_status_t rcc_test(rcc_request_t request, int* done);
rcc_status_t rcc_wait(rcc_request_t request);
/* As rcc_recv, rcc_wait and rcc_test, also saying what was received (source, tag, bytes; for a
 * send request: its peer, tag and length). info may be NULL. */
rcc_status_t rcc_recv_info(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int peer, int tag,
                           rcc_msg_info_t* info);
rcc_status_t rcc_wait_info(rcc_request_t request, rcc_msg_info_t* info);
rcc_status_t rcc_test_info(rcc_request_t request, int* done, rcc_msg_info_t* info);
/* Waits until a message a receive of (peer, tag) would match has arrived and describes it without
 * receiving it; rcc_iprobe returns at once with *found = 0 when none has. */
rcc_status_t rcc_probe(rcc_comm_t comm, int peer, int tag, rcc_msg_info_t* info);
rcc_status_t rcc_iprobe(rcc_comm_t comm, int peer, int tag, int* found, rcc_msg_info_t* info);
/* Sends to dest and receives from source at once (a ring shift cannot deadlock); info describes
 * the message received. */
rcc_status_t rcc_sendrecv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, int dest, int sendtag, void* recvbuf,
                          size_t recvcount, int source, int recvtag, rcc_datatype_t datatype, rcc_msg_info_t* info);
/* Cancels a receive that no message has matched yet: it is taken off, and its rcc_wait / rcc_test
 * then returns RCC_ERR_CANCELLED (*cancelled = 1). A matched receive, a send or a collective is
 * not affected (*cancelled = 0) and completes as it would. cancelled may be NULL. The request
 * must still be waited for or tested to free it. */
rcc_status_t rcc_cancel(rcc_request_t request, int* cancelled);
/* Waits for every request (NULL entries are skipped), frees all, sets every entry to NULL and
 * returns the first failure. */
rcc_status_t rcc_waitall(int n, rcc_request_t* requests);
/* Waits for one request to complete, frees it, sets requests[*index] = NULL and returns its
 * status. With no non-NULL entry: *index = RCC_UNDEFINED and RCC_SUCCESS. */
rcc_status_t rcc_waitany(int n, rcc_request_t* requests, int* index);

/* ---- collectives (sendbuf == recvbuf means in place) ---- */
rcc_status_t rcc_allreduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                           rcc_op_t op);
rcc_status_t rcc_broadcast(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int root);
rcc_status_t rcc_reduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                        rcc_op_t op, int root);
rcc_status_t rcc_allgather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount,
                           rcc_datatype_t datatype);
rcc_status_t rcc_reduce_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                                rcc_datatype_t datatype, rcc_op_t op);
rcc_status_t rcc_alltoall(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype);
rcc_status_t rcc_gather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount, rcc_datatype_t datatype,
                        int root);
rcc_status_t rcc_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount, rcc_datatype_t datatype,
                         int root);
rcc_status_t rcc_barrier(rcc_comm_t comm);

/* Vector collectives: counts and displacements in elements, one entry per rank of comm. Gaps
 * between displaced blocks of a receive buffer are never written. recvcounts and displs matter
 * at the root only for gatherv, sendcounts and displs at the root only for scatterv. Not in
 * place: send and receive buffers must not overlap, except that allgatherv's and gatherv's
 * sendbuf may already be the rank's own block of recvbuf. */
rcc_status_t rcc_allgatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf,
                            const size_t* recvcounts, const size_t* displs, rcc_datatype_t datatype);
rcc_status_t rcc_alltoallv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                           void* recvbuf, const size_t* recvcounts, const size_t* rdispls, rcc_datatype_t datatype);
rcc_status_t rcc_gatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf,
                         const size_t* recvcounts, const size_t* displs, rcc_datatype_t datatype, int root);
rcc_status_t rcc_scatterv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* displs,
                          void* recvbuf, size_t recvcount, rcc_datatype_t datatype, int root);
/* Rank r gets recvcounts[r] elements: the reduction of the block of sendbuf at the sum of the
 * counts before r. */
rcc_status_t rcc_reduce_scatterv(rcc_comm_t comm, const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                 rcc_datatype_t datatype, rcc_op_t op);
/* Inclusive prefix reduction over ranks: rank r gets sendbuf of ranks 0..r reduced (RCC_AVG:
 * divided by r + 1, the ranks in the prefix). In place when sendbuf == recvbuf. */
rcc_status_t rcc_scan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                      rcc_op_t op);
/* Exclusive: rank r gets ranks 0..r-1 reduced (RCC_AVG: divided by r); rank 0's recvbuf is
 * untouched (and may be NULL). */
rcc_status_t rcc_exscan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                        rcc_op_t op);

/* Nonblocking forms: several may be in flight; they run in the order issued (the same on every
 * rank) and may be waited for in any order. */
rcc_status_t rcc_iallreduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                            rcc_op_t op, rcc_request_t* request);
rcc_status_t rcc_ibroadcast(rcc_comm_t comm, void* buf, size_t count, rcc_datatype_t datatype, int root,
                            rcc_request_t* request);
rcc_status_t rcc_ireduce(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                         rcc_op_t op, int root, rcc_request_t* request);
rcc_status_t rcc_iallgather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount,
                            rcc_datatype_t datatype, rcc_request_t* request);
rcc_status_t rcc_ireduce_scatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                                 rcc_datatype_t datatype, rcc_op_t op, rcc_request_t* request);
rcc_status_t rcc_ialltoall(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                           rcc_request_t* request);
rcc_status_t rcc_igather(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t sendcount, rcc_datatype_t datatype,
                         int root, rcc_request_t* request);
rcc_status_t rcc_iscatter(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t recvcount,
                          rcc_datatype_t datatype, int root, rcc_request_t* request);
rcc_status_t rcc_ibarrier(rcc_comm_t comm, rcc_request_t* request);
rcc_status_t rcc_iallgatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf,
                             const size_t* recvcounts, const size_t* displs, rcc_datatype_t datatype,
                             rcc_request_t* request);
rcc_status_t rcc_ialltoallv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* sdispls,
                            void* recvbuf, const size_t* recvcounts, const size_t* rdispls, rcc_datatype_t datatype,
                            rcc_request_t* request);
rcc_status_t rcc_igatherv(rcc_comm_t comm, const void* sendbuf, size_t sendcount, void* recvbuf,
                          const size_t* recvcounts, const size_t* displs, rcc_datatype_t datatype, int root,
                          rcc_request_t* request);
rcc_status_t rcc_iscatterv(rcc_comm_t comm, const void* sendbuf, const size_t* sendcounts, const size_t* displs,
                           void* recvbuf, size_t recvcount, rcc_datatype_t datatype, int root, rcc_request_t* request);
rcc_status_t rcc_ireduce_scatterv(rcc_comm_t comm, const void* sendbuf, void* recvbuf, const size_t* recvcounts,
                                  rcc_datatype_t datatype, rcc_op_t op, rcc_request_t* request);
rcc_status_t rcc_iscan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                       rcc_op_t op, rcc_request_t* request);
rcc_status_t rcc_iexscan(rcc_comm_t comm, const void* sendbuf, void* recvbuf, size_t count, rcc_datatype_t datatype,
                         rcc_op_t op, rcc_request_t* request);

#ifdef __cplusplus
}
#endif

#endif /* RCC_RCC_H */
