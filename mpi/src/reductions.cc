// The reducing collectives: reduce, allreduce, reduce_scatter(_block), scan and exscan, blocking
// and nonblocking. A predefined operation on a type of one basic kind runs on rcc's kernels (the
// buffer as rcc elements; packed first if its elements do not adjoin; logical operations on inputs
// normalised to 0 or 1). MINLOC/MAXLOC and the program's own operations run in layer_reduce.cc.
#include <cstring>
#include <numeric>

#include "internal.h"
#include "layer_reduce.h"

namespace rcc_mpi {
namespace {

struct Kept {
  Scratch in, out;
  std::vector<size_t> counts;
  TypeRef type;
};

int check_common(MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request* request, const char* function) {
  if (int error = check_comm(comm, function)) return error;
  if (request != nullptr) *request = nullptr;
  if (int error = check_type(comm, type, function, "datatype")) return error;
  if (int error = check_op(comm, op, type, function)) return error;
  return MPI_SUCCESS;
}

// A blocking reduction of contiguous buffers: rcc's call itself (its in-place form when sendbuf
// is recvbuf). Non-roots' and exscan rank 0's recvbuf are never written by rcc.
int direct_reduction(Reduction kind, const void* in, void* out, const std::vector<int>& out_counts, size_t count,
                     size_t per_element, rcc_datatype_t basic, rcc_op_t op, int root, MPI_Comm comm,
                     const char* function) {
  rcc_comm_t c = comm->comm;
  const size_t elements = count * per_element;
  rcc_status_t status = RCC_SUCCESS;
  switch (kind) {
    case Reduction::kReduce: status = rcc_reduce(c, in, out, elements, basic, op, root); break;
    case Reduction::kAllreduce: status = rcc_allreduce(c, in, out, elements, basic, op); break;
    case Reduction::kScan: status = rcc_scan(c, in, out, elements, basic, op); break;
    case Reduction::kExscan: status = rcc_exscan(c, in, out, elements, basic, op); break;
    case Reduction::kReduceScatterBlock: status = rcc_reduce_scatter(c, in, out, elements, basic, op); break;
    case Reduction::kReduceScatter: {
      std::vector<size_t> counts(out_counts.size());
      for (size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<size_t>(out_counts[i]) * per_element;
      status = rcc_reduce_scatterv(c, in, out, counts.data(), basic, op);
      break;
    }
  }
  return status == RCC_SUCCESS ? MPI_SUCCESS : fail_rcc(comm, status, function);
}

}  // namespace

int reduction(Reduction kind, const void* sendbuf, void* recvbuf, const std::vector<int>& out_counts, int count,
              MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request, const char* function) {
  const int n = comm->size, me = comm->rank;
  // Elements in (every rank's input) and out (this rank's result).
  size_t in_count = static_cast<size_t>(count), out_count = static_cast<size_t>(count);
  if (kind == Reduction::kReduceScatter) {
    in_count = std::accumulate(out_counts.begin(), out_counts.end(), size_t{0});
    out_count = static_cast<size_t>(out_counts[static_cast<size_t>(me)]);
  } else if (kind == Reduction::kReduceScatterBlock) {
    in_count = static_cast<size_t>(count) * static_cast<size_t>(n);
  }
  if (int error = check_common(type, op, comm, request, function)) return error;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && kind == Reduction::kReduce && me != root) {
    return fail(comm, MPI_ERR_BUFFER, function, "sendbuf is MPI_IN_PLACE on rank %d, which is not the root %d", me,
                root);
  }
  const void* input = in_place ? recvbuf : sendbuf;
  // Who writes a result: the root of a reduce, not rank 0 of an exscan.
  const bool has_output = (kind != Reduction::kReduce || me == root) && !(kind == Reduction::kExscan && me == 0);

  rcc_op_t rcc_op = RCC_SUM;
  bool normalise = false;
  // Logical operations where some result is a single rank's input, which MPI hands back as it
  // was (not as 0 or 1): a scan's rank 0, an exscan's rank 1, any call on one rank. They run in
  // the layer, which never applies the operation to a single contribution.
  const bool native = native_op(op, type, &rcc_op, &normalise);
  if (!native || (normalise && (kind == Reduction::kScan || kind == Reduction::kExscan || n == 1))) {
    return layer_reduction(kind, input, recvbuf, out_counts, count, type, op, root, comm, request, function);
  }
  const size_t per_element = type->basic_size == 0 ? 0 : type->size / type->basic_size;
  const auto basic = static_cast<rcc_datatype_t>(type->basic);
  if (request == nullptr && !normalise && type->contiguous &&
      !(in_place && (kind == Reduction::kReduceScatter || kind == Reduction::kReduceScatterBlock))) {
    // The common case, straight to rcc: a blocking call on buffers rcc takes as they are (no
    // scratch, nothing kept, no allocation).
    // data_start: a contiguous derived type's data may begin past its lower bound's zero.
    void* out = recvbuf == nullptr ? nullptr : data_start(recvbuf, type);
    const void* in = in_place ? out : input == nullptr ? nullptr : data_start(input, type);
    return direct_reduction(kind, in, out, out_counts, static_cast<size_t>(count), per_element, basic, rcc_op, root,
                            comm, function);
  }
  auto kept = std::make_shared<Kept>();
  kept->type = hold(type);
  // The input: the program's buffer, or packed (and normalised) into scratch. rcc's in-place forms
  // differ from MPI's for reduce_scatter, so there the input is always a copy when in place.
  const bool copy_in = !type->contiguous || normalise ||
                       (in_place && (kind == Reduction::kReduceScatter || kind == Reduction::kReduceScatterBlock));
  const void* in = data_start(input, type);
  if (copy_in) {
    kept->in = scratch(in_count * type->size);
    pack(input, in_count, type, kept->in->data());
    if (normalise) normalise_logical(kept->in->data(), in_count * per_element, type->basic_size);
    in = kept->in->data();
  }
  void* out = data_start(recvbuf, type);
  const bool copy_out = !type->contiguous;
  if (copy_out || !has_output) {
    kept->out = scratch(std::max<size_t>(out_count * type->size, 1));
    out = kept->out->data();
  }
  // rcc's in-place form (the same buffer) where the result lands in the program's buffer; else
  // the input (packed, or the program's) and the output are apart.
  if (in_place && !copy_in && has_output && !copy_out) in = out;
  const bool result_in_scratch = has_output && copy_out;
  const size_t elements = static_cast<size_t>(count) * per_element;
  for (size_t i = 0; i < out_counts.size(); ++i)
    kept->counts.push_back(static_cast<size_t>(out_counts[i]) * per_element);
  rcc_comm_t c = comm->comm;
  std::function<int()> finish = [=]() {
    if (result_in_scratch) unpack(kept->out->data(), out_count * kept->type->size, kept->type.get(), recvbuf);
    return MPI_SUCCESS;
  };
  StartCall start;
  switch (kind) {
    case Reduction::kReduce:
      start = [=](rcc_request_t* r) {
        return r ? rcc_ireduce(c, in, out, elements, basic, rcc_op, root, r)
                 : rcc_reduce(c, in, out, elements, basic, rcc_op, root);
      };
      break;
    case Reduction::kAllreduce:
      start = [=](rcc_request_t* r) {
        return r ? rcc_iallreduce(c, in, out, elements, basic, rcc_op, r)
                 : rcc_allreduce(c, in, out, elements, basic, rcc_op);
      };
      break;
    case Reduction::kScan:
      start = [=](rcc_request_t* r) {
        return r ? rcc_iscan(c, in, out, elements, basic, rcc_op, r) : rcc_scan(c, in, out, elements, basic, rcc_op);
      };
      break;
    case Reduction::kExscan:
      start = [=](rcc_request_t* r) {
        return r ? rcc_iexscan(c, in, out, elements, basic, rcc_op, r)
                 : rcc_exscan(c, in, out, elements, basic, rcc_op);
      };
      break;
    case Reduction::kReduceScatterBlock:
      start = [=](rcc_request_t* r) {
        return r ? rcc_ireduce_scatter(c, in, out, elements, basic, rcc_op, r)
                 : rcc_reduce_scatter(c, in, out, elements, basic, rcc_op);
      };
      break;
    case Reduction::kReduceScatter: {
      const size_t* counts = kept->counts.data();
      start = [=](rcc_request_t* r) {
        return r ? rcc_ireduce_scatterv(c, in, out, counts, basic, rcc_op, r)
                 : rcc_reduce_scatterv(c, in, out, counts, basic, rcc_op);
      };
      break;
    }
  }
  return run_collective(comm, function, start, finish, request);
}

}  // namespace rcc_mpi

using namespace rcc_mpi;

namespace {

int reduce_call(Reduction kind, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root,
                MPI_Comm comm, MPI_Request* request, const char* function) {
  if (int error = check_comm(comm, function)) return error;
  if (int error = check_count(comm, count, function, "count")) return error;
  if (kind == Reduction::kReduce) {
    if (int error = check_root(comm, root, function)) return error;
  }
  return reduction(kind, sendbuf, recvbuf, {}, count, type, op, root, comm, request, function);
}

int reduce_scatter_call(const void* sendbuf, void* recvbuf, const int* recvcounts, MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request, const char* function) {
  if (int error = check_comm(comm, function)) return error;
  if (int error = check_counts(comm, recvcounts, function, "recvcounts")) return error;
  std::vector<int> counts(recvcounts, recvcounts + comm->size);
  return reduction(Reduction::kReduceScatter, sendbuf, recvbuf, counts, 0, type, op, 0, comm, request, function);
}

}  // namespace

extern "C" int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                          MPI_Comm comm) {
  return reduce_call(Reduction::kReduce, sendbuf, recvbuf, count, datatype, op, root, comm, nullptr, "MPI_Reduce");
}
extern "C" int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                           MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Ireduce")) return error;
  return reduce_call(Reduction::kReduce, sendbuf, recvbuf, count, datatype, op, root, comm, request, "MPI_Ireduce");
}
extern "C" int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             MPI_Comm comm) {
  return reduce_call(Reduction::kAllreduce, sendbuf, recvbuf, count, datatype, op, 0, comm, nullptr, "MPI_Allreduce");
}
extern "C" int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Iallreduce")) return error;
  return reduce_call(Reduction::kAllreduce, sendbuf, recvbuf, count, datatype, op, 0, comm, request, "MPI_Iallreduce");
}
extern "C" int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                        MPI_Comm comm) {
  return reduce_call(Reduction::kScan, sendbuf, recvbuf, count, datatype, op, 0, comm, nullptr, "MPI_Scan");
}
extern "C" int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                         MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Iscan")) return error;
  return reduce_call(Reduction::kScan, sendbuf, recvbuf, count, datatype, op, 0, comm, request, "MPI_Iscan");
}
extern "C" int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                          MPI_Comm comm) {
  return reduce_call(Reduction::kExscan, sendbuf, recvbuf, count, datatype, op, 0, comm, nullptr, "MPI_Exscan");
}
extern "C" int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Iexscan")) return error;
  return reduce_call(Reduction::kExscan, sendbuf, recvbuf, count, datatype, op, 0, comm, request, "MPI_Iexscan");
}
extern "C" int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm comm) {
  return reduce_call(Reduction::kReduceScatterBlock, sendbuf, recvbuf, recvcount, datatype, op, 0, comm, nullptr,
                     "MPI_Reduce_scatter_block");
}
extern "C" int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Ireduce_scatter_block")) return error;
  return reduce_call(Reduction::kReduceScatterBlock, sendbuf, recvbuf, recvcount, datatype, op, 0, comm, request,
                     "MPI_Ireduce_scatter_block");
}
extern "C" int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                  MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_call(sendbuf, recvbuf, recvcounts, datatype, op, comm, nullptr, "MPI_Reduce_scatter");
}
extern "C" int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                   MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  if (int error = check_request_out(comm, request, "MPI_Ireduce_scatter")) return error;
  return reduce_scatter_call(sendbuf, recvbuf, recvcounts, datatype, op, comm, request, "MPI_Ireduce_scatter");
}
