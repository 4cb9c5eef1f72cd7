// The collectives that move data (barrier, broadcast, gather, scatter, allgather, alltoall and
// their v-forms), blocking and nonblocking from one body each. Buffers whose elements adjoin go to
// rcc as bytes; others are packed into scratch before and unpacked after. MPI_IN_PLACE becomes
// rcc's own in-place form where it has one, or scratch where it has none.
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "internal.h"
#include "layout.h"

namespace rcc_mpi {

int run_collective(MPI_Comm comm, const char* function, const StartCall& start, std::function<int()> finish,
                   MPI_Request* request) {
  if (request == nullptr) {
    rcc_status_t status = start(nullptr);
    if (status != RCC_SUCCESS) return fail_rcc(comm, status, function);
    return finish ? finish() : MPI_SUCCESS;
  }
  rcc_request_t inner = nullptr;
  rcc_status_t status = start(&inner);
  if (status != RCC_SUCCESS) return fail_rcc(comm, status, function);
  MPI_Request created = new_request(comm, rcc_mpi_request::Kind::kRcc);
  created->inner = inner;
  if (finish) created->finish = [finish](size_t, std::string*) { return finish(); };
  *request = created;
  return MPI_SUCCESS;
}

namespace {

// What a nonblocking call must keep until it completes: scratch, layouts, held datatypes.
struct Kept {
  Scratch send, recv;
  Layout send_layout, recv_layout;
  std::vector<int> counts, displs;  // the program's, for unpacking
  TypeRef type;
};

int begin(MPI_Comm comm, MPI_Request* request, const char* function) {
  if (int error = check_comm(comm, function)) return error;
  if (request != nullptr) *request = nullptr;
  return MPI_SUCCESS;
}

int barrier(MPI_Comm comm, MPI_Request* request, const char* function) {
  if (int error = begin(comm, request, function)) return error;
  rcc_comm_t c = comm->comm;
  if (request == nullptr) {  // blocking: rcc's call, nothing wrapped
    rcc_status_t status = rcc_barrier(c);
    return status == RCC_SUCCESS ? MPI_SUCCESS : fail_rcc(comm, status, function);
  }
  return run_collective(
      comm, function, [c](rcc_request_t* r) { return r ? rcc_ibarrier(c, r) : rcc_barrier(c); }, nullptr, request);
}

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request,
          const char* function) {
  if (int error = begin(comm, request, function)) return error;
  if (int error = check_buffer(comm, buffer, count, type, function, "buffer")) return error;
  if (int error = check_root(comm, root, function)) return error;
  const size_t bytes = static_cast<size_t>(count) * type->size;
  rcc_comm_t c = comm->comm;
  if (type->contiguous) {
    void* data = data_start(buffer, type);
    if (request == nullptr) {  // blocking: rcc's call, nothing wrapped
      rcc_status_t status = rcc_broadcast(c, data, bytes, RCC_UINT8, root);
      return status == RCC_SUCCESS ? MPI_SUCCESS : fail_rcc(comm, status, function);
    }
    return run_collective(
        comm, function,
        [=](rcc_request_t* r) {
          return r ? rcc_ibroadcast(c, data, bytes, RCC_UINT8, root, r)
                   : rcc_broadcast(c, data, bytes, RCC_UINT8, root);
        },
        nullptr, request);
  }
  auto kept = std::make_shared<Kept>();
  kept->send = scratch(bytes);
  kept->type = hold(type);
  if (comm->rank == root) pack(buffer, static_cast<size_t>(count), type, kept->send->data());
  void* data = kept->send->data();
  const bool unpack_after = comm->rank != root;
  return run_collective(
      comm, function,
      [=](rcc_request_t* r) {
        return r ? rcc_ibroadcast(c, data, bytes, RCC_UINT8, root, r) : rcc_broadcast(c, data, bytes, RCC_UINT8, root);
      },
      [=]() {
        if (unpack_after) unpack(kept->send->data(), bytes, kept->type.get(), buffer);
        return MPI_SUCCESS;
      },
      request);
}

// The send side of a gather-like call: the program's buffer or a packed copy of it.
const void* send_data(const void* buffer, int count, MPI_Datatype type, Kept* kept) {
  if (type->contiguous) return data_start(buffer, type);
  kept->send = scratch(static_cast<size_t>(count) * type->size);
  pack(buffer, static_cast<size_t>(count), type, kept->send->data());
  return kept->send->data();
}

// The blocks of a v-call, or of its uniform form (`uniform_count` elements each, one after
// another), checked and copied into *counts and *displs. `count_name` names the uniform count
// ("recvcount"); its v-form's array adds an s.
int take_blocks(MPI_Comm comm, const char* function, const char* count_name, const char* displs_name, bool uniform,
                int uniform_count, const int* given_counts, const int* given_displs, std::vector<int>* counts,
                std::vector<int>* displs) {
  const int n = comm->size;
  if (uniform) {
    if (int error = check_count(comm, uniform_count, function, count_name)) return error;
    Uniform blocks(uniform_count, n);
    *counts = std::move(blocks.counts);
    *displs = std::move(blocks.displs);
    return MPI_SUCCESS;
  }
  const std::string counts_name = std::string(count_name) + "s";
  if (int error = check_counts(comm, given_counts, function, counts_name.c_str())) return error;
  if (given_displs == nullptr) return fail(comm, MPI_ERR_ARG, function, "%s is NULL", displs_name);
  counts->assign(given_counts, given_counts + n);
  displs->assign(given_displs, given_displs + n);
  return MPI_SUCCESS;
}

// The send side of a v-call for rcc: the program's buffer when its elements adjoin (and `pack` is
// false), else the blocks packed into scratch one after another. Sets kept->send_layout.
const void* send_blocks(const void* buffer, MPI_Datatype type, const std::vector<int>& counts,
                        const std::vector<int>& displs, bool pack, Kept* kept) {
  const int n = static_cast<int>(counts.size());
  if (type->contiguous && !pack) {
    kept->send_layout = direct_layout(counts.data(), displs.data(), type, n);
    return data_start(buffer, type);
  }
  kept->send_layout = packed_layout(counts.data(), type, n);
  kept->send = scratch(kept->send_layout.total);
  pack_blocks(buffer, counts.data(), displs.data(), type, n, kept->send_layout, kept->send->data());
  return kept->send->data();
}

// The receive side of a v-call for rcc, the blocks in kept->counts and kept->displs: the program's
// buffer when its elements adjoin, else scratch that the call unpacks when it completes (then
// *unpack_after). Sets kept->recv_layout and holds the type.
void* receive_blocks(void* buffer, MPI_Datatype type, Kept* kept, bool* unpack_after) {
  const int n = static_cast<int>(kept->counts.size());
  kept->type = hold(type);
  *unpack_after = !type->contiguous;
  if (type->contiguous) {
    kept->recv_layout = direct_layout(kept->counts.data(), kept->displs.data(), type, n);
    return data_start(buffer, type);
  }
  kept->recv_layout = packed_layout(kept->counts.data(), type, n);
  kept->recv = scratch(kept->recv_layout.total);
  return kept->recv->data();
}

int gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
            const int* displs, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request,
            const char* function, bool uniform, int uniform_count) {
  if (int error = begin(comm, request, function)) return error;
  if (int error = check_root(comm, root, function)) return error;
  const bool is_root = comm->rank == root;
  const bool in_place = is_root && sendbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int error = check_buffer(comm, sendbuf, sendcount, sendtype, function, "sendbuf")) return error;
  }
  auto kept = std::make_shared<Kept>();
  const int n = comm->size;
  void* recv = nullptr;
  bool unpack_after = false;
  if (is_root) {
    if (int error = check_type(comm, recvtype, function, "recvtype")) return error;
    if (int error = take_blocks(comm, function, "recvcount", "displs", uniform, uniform_count, recvcounts, displs,
                                &kept->counts, &kept->displs)) {
      return error;
    }
    recv = receive_blocks(recvbuf, recvtype, kept.get(), &unpack_after);
  }
  const void* send = nullptr;
  size_t send_bytes = 0;
  if (in_place) {
    // rcc's in-place form: the root's block already where it belongs.
    send = static_cast<char*>(recv) + kept->recv_layout.displs[static_cast<size_t>(root)];
    send_bytes = kept->recv_layout.counts[static_cast<size_t>(root)];
  } else {
    send = send_data(sendbuf, sendcount, sendtype, kept.get());
    send_bytes = static_cast<size_t>(sendcount) * sendtype->size;
  }
  rcc_comm_t c = comm->comm;
  std::function<int()> finish;
  if (unpack_after) {
    finish = [=]() {
      unpack_blocks(kept->recv->data(), kept->recv_layout, kept->displs.data(), kept->type.get(), n, recvbuf,
                    in_place ? root : -1);
      return MPI_SUCCESS;
    };
  } else {
    finish = [kept]() { return MPI_SUCCESS; };
  }
  if (uniform) {
    return run_collective(
        comm, function,
        [=](rcc_request_t* r) {
          return r ? rcc_igather(c, send, recv, send_bytes, RCC_UINT8, root, r)
                   : rcc_gather(c, send, recv, send_bytes, RCC_UINT8, root);
        },
        finish, request);
  }
  const size_t* counts = is_root ? kept->recv_layout.counts.data() : nullptr;
  const size_t* byte_displs = is_root ? kept->recv_layout.displs.data() : nullptr;
  return run_collective(
      comm, function,
      [=](rcc_request_t* r) {
        return r ? rcc_igatherv(c, send, send_bytes, recv, counts, byte_displs, RCC_UINT8, root, r)
                 : rcc_gatherv(c, send, send_bytes, recv, counts, byte_displs, RCC_UINT8, root);
      },
      finish, request);
}

int scatterv(const void* sendbuf, const int* sendcounts, const int* displs, MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request, const char* function,
             bool uniform, int uniform_count) {
  if (int error = begin(comm, request, function)) return error;
  if (int error = check_root(comm, root, function)) return error;
  const bool is_root = comm->rank == root;
  const bool in_place = is_root && recvbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int error = check_buffer(comm, recvbuf, recvcount, recvtype, function, "recvbuf")) return error;
  }
  auto kept = std::make_shared<Kept>();
  const void* send = nullptr;
  if (is_root) {
    if (int error = check_type(comm, sendtype, function, "sendtype")) return error;
    if (int error = take_blocks(comm, function, "sendcount", "displs", uniform, uniform_count, sendcounts, displs,
                                &kept->counts, &kept->displs)) {
      return error;
    }
    send = send_blocks(sendbuf, sendtype, kept->counts, kept->displs, false, kept.get());
  }
  void* recv = nullptr;
  size_t recv_bytes = 0;
  bool unpack_after = false;
  if (in_place) {
    recv_bytes = kept->send_layout.counts[static_cast<size_t>(root)];
    if (uniform) {
      recv = static_cast<char*>(const_cast<void*>(send)) + kept->send_layout.displs[static_cast<size_t>(root)];
    } else {
      kept->recv = scratch(recv_bytes);  // rcc's scatterv has no in-place form: the root's block lands aside
      recv = kept->recv->data();
    }
  } else {
    recv_bytes = static_cast<size_t>(recvcount) * recvtype->size;
    if (recvtype->contiguous) {
      recv = data_start(recvbuf, recvtype);
    } else {
      kept->recv = scratch(recv_bytes);
      recv = kept->recv->data();
      kept->type = hold(recvtype);
      unpack_after = true;
    }
  }
  rcc_comm_t c = comm->comm;
  std::function<int()> finish = [=]() {
    if (unpack_after) unpack(kept->recv->data(), recv_bytes, kept->type.get(), recvbuf);
    return MPI_SUCCESS;
  };
  if (uniform) {
    return run_collective(
        comm, function,
        [=](rcc_request_t* r) {
          return r ? rcc_iscatter(c, send, recv, recv_bytes, RCC_UINT8, root, r)
                   : rcc_scatter(c, send, recv, recv_bytes, RCC_UINT8, root);
        },
        finish, request);
  }
  const size_t* counts = is_root ? kept->send_layout.counts.data() : nullptr;
  const size_t* byte_displs = is_root ? kept->send_layout.displs.data() : nullptr;
  return run_collective(
      comm, function,
      [=](rcc_request_t* r) {
        return r ? rcc_iscatterv(c, send, counts, byte_displs, recv, recv_bytes, RCC_UINT8, root, r)
                 : rcc_scatterv(c, send, counts, byte_displs, recv, recv_bytes, RCC_UINT8, root);
      },
      finish, request);
}

int allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int* recvcounts,
               const int* displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request, const char* function,
               bool uniform, int uniform_count) {
  if (int error = begin(comm, request, function)) return error;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int error = check_buffer(comm, sendbuf, sendcount, sendtype, function, "sendbuf")) return error;
  }
  if (int error = check_type(comm, recvtype, function, "recvtype")) return error;
  auto kept = std::make_shared<Kept>();
  const int n = comm->size, me = comm->rank;
  if (int error = take_blocks(comm, function, "recvcount", "displs", uniform, uniform_count, recvcounts, displs,
                              &kept->counts, &kept->displs)) {
    return error;
  }
  bool unpack_after = false;
  void* recv = receive_blocks(recvbuf, recvtype, kept.get(), &unpack_after);
  if (unpack_after && in_place) {  // the own block, packed where rcc's in-place form expects it
    pack_blocks(recvbuf, kept->counts.data(), kept->displs.data(), recvtype, n, kept->recv_layout, kept->recv->data(),
                me);
  }
  const void* send;
  size_t send_bytes;
  if (in_place) {
    send = static_cast<char*>(recv) + kept->recv_layout.displs[static_cast<size_t>(me)];
    send_bytes = kept->recv_layout.counts[static_cast<size_t>(me)];
  } else {
    send = send_data(sendbuf, sendcount, sendtype, kept.get());
    send_bytes = static_cast<size_t>(sendcount) * sendtype->size;
  }
  rcc_comm_t c = comm->comm;
  std::function<int()> finish = [=]() {
    if (unpack_after) {
      unpack_blocks(kept->recv->data(), kept->recv_layout, kept->displs.data(), kept->type.get(), n, recvbuf,
                    in_place ? me : -1);
    }
    return MPI_SUCCESS;
  };
  if (uniform) {
    return run_collective(
        comm, function,
        [=](rcc_request_t* r) {
          return r ? rcc_iallgather(c, send, recv, send_bytes, RCC_UINT8, r)
                   : rcc_allgather(c, send, recv, send_bytes, RCC_UINT8);
        },
        finish, request);
  }
  const size_t* counts = kept->recv_layout.counts.data();
  const size_t* byte_displs = kept->recv_layout.displs.data();
  return run_collective(
      comm, function,
      [=](rcc_request_t* r) {
        return r ? rcc_iallgatherv(c, send, send_bytes, recv, counts, byte_displs, RCC_UINT8, r)
                 : rcc_allgatherv(c, send, send_bytes, recv, counts, byte_displs, RCC_UINT8);
      },
      finish, request);
}

int alltoallv(const void* sendbuf, const int* sendcounts, const int* sdispls, MPI_Datatype sendtype, void* recvbuf,
              const int* recvcounts, const int* rdispls, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request,
              const char* function, bool uniform, int uniform_send, int uniform_recv) {
  if (int error = begin(comm, request, function)) return error;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (int error = check_type(comm, recvtype, function, "recvtype")) return error;
  const int n = comm->size;
  auto kept = std::make_shared<Kept>();
  if (int error = take_blocks(comm, function, "recvcount", "rdispls", uniform, uniform_recv, recvcounts, rdispls,
                              &kept->counts, &kept->displs)) {
    return error;
  }
  std::vector<int> send_counts, send_displs;  // not in place: the send side's own
  if (!in_place) {
    if (int error = check_type(comm, sendtype, function, "sendtype")) return error;
    if (int error = take_blocks(comm, function, "sendcount", "sdispls", uniform, uniform_send, sendcounts, sdispls,
                                &send_counts, &send_displs)) {
      return error;
    }
  }
  // In place, the input is the receive buffer with the receive side's blocks: packed aside first
  // (rcc's vector form is never in place).
  const void* send = in_place ? send_blocks(recvbuf, recvtype, kept->counts, kept->displs, true, kept.get())
                              : send_blocks(sendbuf, sendtype, send_counts, send_displs, false, kept.get());
  bool unpack_after = false;
  void* recv = receive_blocks(recvbuf, recvtype, kept.get(), &unpack_after);
  rcc_comm_t c = comm->comm;
  std::function<int()> finish = [=]() {
    if (unpack_after)
      unpack_blocks(kept->recv->data(), kept->recv_layout, kept->displs.data(), kept->type.get(), n, recvbuf);
    return MPI_SUCCESS;
  };
  // Every rank makes the same rcc call (a rank's types may differ from another's, MPI allows it
  // when their signatures match): a uniform call is rcc_alltoall whatever the layouts.
  if (uniform) {
    const size_t bytes = kept->recv_layout.counts[0];
    return run_collective(
        comm, function,
        [=](rcc_request_t* r) {
          return r ? rcc_ialltoall(c, send, recv, bytes, RCC_UINT8, r) : rcc_alltoall(c, send, recv, bytes, RCC_UINT8);
        },
        finish, request);
  }
  const size_t *scounts = kept->send_layout.counts.data(), *sdisp = kept->send_layout.displs.data();
  const size_t *rcounts = kept->recv_layout.counts.data(), *rdisp = kept->recv_layout.displs.data();
  return run_collective(
      comm, function,
      [=](rcc_request_t* r) {
        return r ? rcc_ialltoallv(c, send, scounts, sdisp, recv, rcounts, rdisp, RCC_UINT8, r)
                 : rcc_alltoallv(c, send, scounts, sdisp, recv, rcounts, rdisp, RCC_UINT8);
      },
      finish, request);
}

}  // namespace
}  // namespace rcc_mpi

using namespace rcc_mpi;

extern "C" int MPI_Barrier(MPI_Comm comm) { return barrier(comm, nullptr, "MPI_Barrier"); }
extern "C" int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Ibarrier")) return error;
  return barrier(comm, request, "MPI_Ibarrier");
}

extern "C" int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast(buffer, count, datatype, root, comm, nullptr, "MPI_Bcast");
}
extern "C" int MPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                          MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Ibcast")) return error;
  return bcast(buffer, count, datatype, root, comm, request, "MPI_Ibcast");
}

extern "C" int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvtype, root, comm, nullptr, "MPI_Gather",
                 true, recvcount);
}
extern "C" int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Igather")) return error;
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvtype, root, comm, request, "MPI_Igather",
                 true, recvcount);
}
extern "C" int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, nullptr,
                 "MPI_Gatherv", false, 0);
}
extern "C" int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                            const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
                            MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Igatherv")) return error;
  return gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request,
                 "MPI_Igatherv", false, 0);
}

extern "C" int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatterv(sendbuf, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr, "MPI_Scatter",
                  true, sendcount);
}
extern "C" int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Iscatter")) return error;
  return scatterv(sendbuf, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                  "MPI_Iscatter", true, sendcount);
}
extern "C" int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, nullptr,
                  "MPI_Scatterv", false, 0);
}
extern "C" int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                             MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Iscatterv")) return error;
  return scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request,
                  "MPI_Iscatterv", false, 0);
}

extern "C" int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvtype, comm, nullptr, "MPI_Allgather",
                    true, recvcount);
}
extern "C" int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Iallgather")) return error;
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, nullptr, nullptr, recvtype, comm, request, "MPI_Iallgather",
                    true, recvcount);
}
extern "C" int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                              const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, nullptr,
                    "MPI_Allgatherv", false, 0);
}
extern "C" int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Iallgatherv")) return error;
  return allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request,
                    "MPI_Iallgatherv", false, 0);
}

extern "C" int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoallv(sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm, nullptr,
                   "MPI_Alltoall", true, sendcount, recvcount);
}
extern "C" int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Ialltoall")) return error;
  return alltoallv(sendbuf, nullptr, nullptr, sendtype, recvbuf, nullptr, nullptr, recvtype, comm, request,
                   "MPI_Ialltoall", true, sendcount, recvcount);
}
extern "C" int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                             MPI_Comm comm) {
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, nullptr,
                   "MPI_Alltoallv", false, 0, 0);
}
extern "C" int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Ialltoallv")) return error;
  return alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request,
                   "MPI_Ialltoallv", false, 0, 0);
}
