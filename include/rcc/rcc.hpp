// rcc's C++ API (C++20, header-only over the C API of rcc/rcc.h).
//
//   rcc::Communicator world = rcc::Communicator::init();   // rank and size from rccrun, Slurm, ...
//   std::vector<float> grad(n);
//   world.allreduce(grad, rcc::Op::Sum);                    // in place
//   rcc::Communicator row = world.split(world.rank() / 4, world.rank());
//   rcc::Request pending = row.ibroadcast(grad, 0);
//   pending.wait();
//
// Failures throw rcc::Error (status and message). Buffers are contiguous ranges of an element type
// (std::span, std::vector, std::array, C arrays of the types rcc::datatype_of maps); calls whose
// buffer sizes do not fit together throw RCC_ERR_INVALID_ARGUMENT naming the buffer before calling
// rcc. The buffers, counts and displacements of a nonblocking call must stay alive and untouched
// until its Request completes. Communicator and Request are move-only owners of their C handles;
// a Communicator's calls are const (it is a handle: the call changes no C++ state of it).
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "rcc/detail/checks.hpp"
#include "rcc/detail/datatype.hpp"
#include "rcc/detail/error.hpp"
#include "rcc/detail/request.hpp"
#include "rcc/detail/shared_array.hpp"
#include "rcc/rcc.h"

namespace rcc {

inline constexpr int undefined = RCC_UNDEFINED;  // split color: this rank joins no communicator
inline constexpr int any_source = RCC_ANY_SOURCE;
inline constexpr int any_tag = RCC_ANY_TAG;

// Reductions. Avg is for floating-point types only; BitAnd, BitOr and BitXor for integers only.
enum class Op {
  Sum = RCC_SUM,
  Prod = RCC_PROD,
  Min = RCC_MIN,
  Max = RCC_MAX,
  Avg = RCC_AVG,
  BitAnd = RCC_BAND,
  BitOr = RCC_BOR,
  BitXor = RCC_BXOR
};

class Communicator {
 public:
  // Counts and displacements of the vector collectives: one entry per rank, in elements (those of
  // the nonblocking forms are BorrowedCounts: they must outlive the request).
  using Counts = detail::Checker::Counts;

  Communicator() noexcept = default;  // empty: owns no communicator
  Communicator(Communicator&& other) noexcept
      : comm_(std::exchange(other.comm_, nullptr)),
        rank_(std::exchange(other.rank_, -1)),
        size_(std::exchange(other.size_, 0)) {}
  Communicator& operator=(Communicator&& other) noexcept {
    if (this != &other) {
      destroy();
      comm_ = std::exchange(other.comm_, nullptr);
      rank_ = std::exchange(other.rank_, -1);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() { destroy(); }  // rcc_comm_destroy

  // Rank, size and rendezvous from the environment (rcc_comm_init).
  static Communicator init() {
    rcc_comm_t comm = nullptr;
    detail::check(rcc_comm_init(&comm));
    return adopt(comm);
  }
  // The embedding path: one rank makes the id with unique_id(), every rank passes it here.
  static Communicator init_rank(const rcc_unique_id_t& id, int rank, int size) {
    rcc_comm_t comm = nullptr;
    detail::check(rcc_comm_init_rank(&comm, id, rank, size));
    return adopt(comm);
  }
  static rcc_unique_id_t unique_id() {
    rcc_unique_id_t id;
    detail::check(rcc_get_unique_id(&id));
    return id;
  }
  // Takes ownership of a live rcc_comm_t (nullptr: empty); it is destroyed with the Communicator.
  static Communicator adopt(rcc_comm_t comm) {
    Communicator owner;
    if (comm == nullptr) return owner;
    owner.comm_ = comm;
    detail::check(rcc_comm_rank(comm, &owner.rank_));
    detail::check(rcc_comm_size(comm, &owner.size_));
    return owner;
  }

  explicit operator bool() const noexcept { return comm_ != nullptr; }
  rcc_comm_t native() const noexcept { return comm_; }
  // Gives up ownership: the caller destroys the handle, the Communicator is empty.
  rcc_comm_t release() noexcept {
    rank_ = -1;
    size_ = 0;
    return std::exchange(comm_, nullptr);
  }
  int rank() const noexcept { return rank_; }  // -1 when empty
  int size() const noexcept { return size_; }  // 0 when empty
  std::string_view transport() const {         // "ucx" or "verbs"
    const char* name = nullptr;
    detail::check(rcc_comm_transport(comm_, &name));
    return name;
  }
  // Collective: ranks passing one color form a communicator, ordered by key, then by rank here.
  // Color undefined: this rank gets an empty Communicator.
  [[nodiscard]] Communicator split(int color, int key = 0) const {
    rcc_comm_t comm = nullptr;
    detail::check(rcc_comm_split(comm_, color, key, &comm));
    return adopt(comm);
  }
  // Collective: the same ranks in the same order, with traffic of their own.
  [[nodiscard]] Communicator dup() const {
    rcc_comm_t comm = nullptr;
    detail::check(rcc_comm_dup(comm_, &comm));
    return adopt(comm);
  }
  // Collective over the listed ranks only: a communicator of those ranks of this one, in that
  // order (rcc_comm_create_group). Concurrent calls over overlapping ranks need different tags.
  [[nodiscard]] Communicator create_group(std::span<const int> ranks, int tag = 0) const {
    if (ranks.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
      throw Error(RCC_ERR_INVALID_ARGUMENT, "create_group: ranks has more entries than an int counts");
    }
    rcc_comm_t comm = nullptr;
    detail::check(rcc_comm_create_group(comm_, ranks.data(), static_cast<int>(ranks.size()), tag, &comm));
    return adopt(comm);
  }
  // Every pending and later call on this communicator fails with RCC_ERR_ABORTED.
  void abort() { detail::check(rcc_comm_abort(comm_)); }

  // ---- point to point (tags >= 0; a receive or probe may use any_source and any_tag) ----
  template <input_buffer In>
  void send(In&& data, int peer, int tag) const {
    detail::check(rcc_send(comm_, ptr(data), len(data), type<In>, peer, tag));
  }
  // Accepts a message up to data's length; a longer one fails with RCC_ERR_TRUNCATED.
  template <output_buffer Out>
  MessageInfo recv(Out&& data, int peer, int tag) const {
    rcc_msg_info_t info{};
    detail::check(rcc_recv_info(comm_, ptr(data), len(data), type<Out>, peer, tag, &info));
    return detail::to_message_info(info);
  }
  template <borrowed_input_buffer In>
  [[nodiscard]] Request isend(In&& data, int peer, int tag) const {
    return start([&](rcc_request_t* r) { return rcc_isend(comm_, ptr(data), len(data), type<In>, peer, tag, r); });
  }
  template <borrowed_output_buffer Out>
  [[nodiscard]] Request irecv(Out&& data, int peer, int tag) const {
    return start([&](rcc_request_t* r) { return rcc_irecv(comm_, ptr(data), len(data), type<Out>, peer, tag, r); });
  }
  // Waits for a message a receive of (peer, tag) would match, and describes it without receiving it.
  MessageInfo probe(int peer, int tag) const {
    rcc_msg_info_t info{};
    detail::check(rcc_probe(comm_, peer, tag, &info));
    return detail::to_message_info(info);
  }
  [[nodiscard]] std::optional<MessageInfo> iprobe(int peer, int tag) const {
    int found = 0;
    rcc_msg_info_t info{};
    detail::check(rcc_iprobe(comm_, peer, tag, &found, &info));
    return found != 0 ? std::optional(detail::to_message_info(info)) : std::nullopt;
  }
  // Sends to dest and receives from source at once; says what was received.
  template <input_buffer In, output_buffer_for<In> Out>
  MessageInfo sendrecv(In&& send, int dest, int sendtag, Out&& recv, int source, int recvtag) const {
    rcc_msg_info_t info{};
    detail::check(rcc_sendrecv(comm_, ptr(send), len(send), dest, sendtag, ptr(recv), len(recv), source, recvtag,
                               type<In>, &info));
    return detail::to_message_info(info);
  }

  // ---- collectives; each has a nonblocking i-form returning a Request ----
  void barrier() const { detail::check(rcc_barrier(comm_)); }
  [[nodiscard]] Request ibarrier() const {
    return start([&](rcc_request_t* r) { return rcc_ibarrier(comm_, r); });
  }

  template <input_buffer In, output_buffer_for<In> Out>
  void allreduce(In&& in, Out&& out, Op op) const {
    checker("allreduce").equal("out", len(out), len(in), "in.size()");
    detail::check(rcc_allreduce(comm_, ptr(in), ptr(out), len(in), type<In>, c_op(op)));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request iallreduce(In&& in, Out&& out, Op op) const {
    checker("iallreduce").equal("out", len(out), len(in), "in.size()");
    return start(
        [&](rcc_request_t* r) { return rcc_iallreduce(comm_, ptr(in), ptr(out), len(in), type<In>, c_op(op), r); });
  }
  // In place: data becomes the reduction of every rank's data.
  template <output_buffer Data>
  void allreduce(Data&& data, Op op) const {
    detail::check(rcc_allreduce(comm_, ptr(data), ptr(data), len(data), type<Data>, c_op(op)));
  }
  template <borrowed_output_buffer Data>
  [[nodiscard]] Request iallreduce(Data&& data, Op op) const {
    return start([&](rcc_request_t* r) {
      return rcc_iallreduce(comm_, ptr(data), ptr(data), len(data), type<Data>, c_op(op), r);
    });
  }

  template <output_buffer Data>
  void broadcast(Data&& data, int root) const {
    detail::check(rcc_broadcast(comm_, ptr(data), len(data), type<Data>, root));
  }
  template <borrowed_output_buffer Data>
  [[nodiscard]] Request ibroadcast(Data&& data, int root) const {
    return start([&](rcc_request_t* r) { return rcc_ibroadcast(comm_, ptr(data), len(data), type<Data>, root, r); });
  }

  // out matters at the root only (other ranks may pass an empty one).
  template <input_buffer In, output_buffer_for<In> Out>
  void reduce(In&& in, Out&& out, Op op, int root) const {
    if (rank_ == root) checker("reduce").equal("out", len(out), len(in), "in.size() at the root");
    detail::check(rcc_reduce(comm_, ptr(in), ptr(out), len(in), type<In>, c_op(op), root));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request ireduce(In&& in, Out&& out, Op op, int root) const {
    if (rank_ == root) checker("ireduce").equal("out", len(out), len(in), "in.size() at the root");
    return start(
        [&](rcc_request_t* r) { return rcc_ireduce(comm_, ptr(in), ptr(out), len(in), type<In>, c_op(op), root, r); });
  }

  // out: every rank's in, in rank order.
  template <input_buffer In, output_buffer_for<In> Out>
  void allgather(In&& in, Out&& out) const {
    checker("allgather").times_size("out", len(out), len(in), "in.size() * size()");
    detail::check(rcc_allgather(comm_, ptr(in), ptr(out), len(in), type<In>));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request iallgather(In&& in, Out&& out) const {
    checker("iallgather").times_size("out", len(out), len(in), "in.size() * size()");
    return start([&](rcc_request_t* r) { return rcc_iallgather(comm_, ptr(in), ptr(out), len(in), type<In>, r); });
  }

  // Rank r gets block r (out.size() elements) of the reduction of every rank's in.
  template <input_buffer In, output_buffer_for<In> Out>
  void reduce_scatter(In&& in, Out&& out, Op op) const {
    checker("reduce_scatter").times_size("in", len(in), len(out), "out.size() * size()");
    detail::check(rcc_reduce_scatter(comm_, ptr(in), ptr(out), len(out), type<In>, c_op(op)));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request ireduce_scatter(In&& in, Out&& out, Op op) const {
    checker("ireduce_scatter").times_size("in", len(in), len(out), "out.size() * size()");
    return start([&](rcc_request_t* r) {
      return rcc_ireduce_scatter(comm_, ptr(in), ptr(out), len(out), type<In>, c_op(op), r);
    });
  }

  // in and out hold size() equal blocks; block r of in goes to rank r.
  template <input_buffer In, output_buffer_for<In> Out>
  void alltoall(In&& in, Out&& out) const {
    detail::check(rcc_alltoall(comm_, ptr(in), ptr(out), checker("alltoall").blocks(len(in), len(out)), type<In>));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request ialltoall(In&& in, Out&& out) const {
    const std::size_t count = checker("ialltoall").blocks(len(in), len(out));
    return start([&](rcc_request_t* r) { return rcc_ialltoall(comm_, ptr(in), ptr(out), count, type<In>, r); });
  }

  // out (at the root only): every rank's in, in rank order.
  template <input_buffer In, output_buffer_for<In> Out>
  void gather(In&& in, Out&& out, int root) const {
    if (rank_ == root) checker("gather").times_size("out", len(out), len(in), "in.size() * size()");
    detail::check(rcc_gather(comm_, ptr(in), ptr(out), len(in), type<In>, root));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request igather(In&& in, Out&& out, int root) const {
    if (rank_ == root) checker("igather").times_size("out", len(out), len(in), "in.size() * size()");
    return start([&](rcc_request_t* r) { return rcc_igather(comm_, ptr(in), ptr(out), len(in), type<In>, root, r); });
  }

  // Rank r gets block r of the root's in (which matters at the root only).
  template <input_buffer In, output_buffer_for<In> Out>
  void scatter(In&& in, Out&& out, int root) const {
    if (rank_ == root) checker("scatter").times_size("in", len(in), len(out), "out.size() * size()");
    detail::check(rcc_scatter(comm_, ptr(in), ptr(out), len(out), type<In>, root));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request iscatter(In&& in, Out&& out, int root) const {
    if (rank_ == root) checker("iscatter").times_size("in", len(in), len(out), "out.size() * size()");
    return start([&](rcc_request_t* r) { return rcc_iscatter(comm_, ptr(in), ptr(out), len(out), type<In>, root, r); });
  }

  // ---- vector collectives: counts and displacements in elements, one entry per rank ----
  // Block r of out (recvcounts[r] elements at displs[r]) is rank r's in; gaps are not written.
  template <input_buffer In, output_buffer_for<In> Out>
  void allgatherv(In&& in, Out&& out, Counts recvcounts, Counts displs) const {
    checker("allgatherv").vector("in", len(in), "out", len(out), "recvcounts", recvcounts, displs);
    detail::check(rcc_allgatherv(comm_, ptr(in), len(in), ptr(out), recvcounts.data(), displs.data(), type<In>));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request iallgatherv(In&& in, Out&& out, BorrowedCounts recvcounts, BorrowedCounts displs) const {
    checker("iallgatherv").vector("in", len(in), "out", len(out), "recvcounts", recvcounts, displs);
    return start([&](rcc_request_t* r) {
      return rcc_iallgatherv(comm_, ptr(in), len(in), ptr(out), recvcounts.data(), displs.data(), type<In>, r);
    });
  }

  // sendcounts[r] elements at sdispls[r] of in go to rank r, into out at its rdispls[me].
  template <input_buffer In, output_buffer_for<In> Out>
  void alltoallv(In&& in, Counts sendcounts, Counts sdispls, Out&& out, Counts recvcounts, Counts rdispls) const {
    checker("alltoallv").alltoallv(len(in), sendcounts, sdispls, len(out), recvcounts, rdispls);
    detail::check(rcc_alltoallv(comm_, ptr(in), sendcounts.data(), sdispls.data(), ptr(out), recvcounts.data(),
                                rdispls.data(), type<In>));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request ialltoallv(In&& in, BorrowedCounts sendcounts, BorrowedCounts sdispls, Out&& out,
                                   BorrowedCounts recvcounts, BorrowedCounts rdispls) const {
    checker("ialltoallv").alltoallv(len(in), sendcounts, sdispls, len(out), recvcounts, rdispls);
    return start([&](rcc_request_t* r) {
      return rcc_ialltoallv(comm_, ptr(in), sendcounts.data(), sdispls.data(), ptr(out), recvcounts.data(),
                            rdispls.data(), type<In>, r);
    });
  }

  // As allgatherv, into the root's out only (out, recvcounts and displs matter at the root only).
  template <input_buffer In, output_buffer_for<In> Out>
  void gatherv(In&& in, Out&& out, Counts recvcounts, Counts displs, int root) const {
    if (rank_ == root) checker("gatherv").vector("in", len(in), "out", len(out), "recvcounts", recvcounts, displs);
    detail::check(rcc_gatherv(comm_, ptr(in), len(in), ptr(out), recvcounts.data(), displs.data(), type<In>, root));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request igatherv(In&& in, Out&& out, BorrowedCounts recvcounts, BorrowedCounts displs, int root) const {
    if (rank_ == root) checker("igatherv").vector("in", len(in), "out", len(out), "recvcounts", recvcounts, displs);
    return start([&](rcc_request_t* r) {
      return rcc_igatherv(comm_, ptr(in), len(in), ptr(out), recvcounts.data(), displs.data(), type<In>, root, r);
    });
  }

  // Rank r's out gets sendcounts[r] elements at displs[r] of the root's in (in, sendcounts and
  // displs matter at the root only).
  template <input_buffer In, output_buffer_for<In> Out>
  void scatterv(In&& in, Counts sendcounts, Counts displs, Out&& out, int root) const {
    if (rank_ == root) checker("scatterv").vector("out", len(out), "in", len(in), "sendcounts", sendcounts, displs);
    detail::check(rcc_scatterv(comm_, ptr(in), sendcounts.data(), displs.data(), ptr(out), len(out), type<In>, root));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request iscatterv(In&& in, BorrowedCounts sendcounts, BorrowedCounts displs, Out&& out,
                                  int root) const {
    if (rank_ == root) checker("iscatterv").vector("out", len(out), "in", len(in), "sendcounts", sendcounts, displs);
    return start([&](rcc_request_t* r) {
      return rcc_iscatterv(comm_, ptr(in), sendcounts.data(), displs.data(), ptr(out), len(out), type<In>, root, r);
    });
  }

  // in holds size() consecutive blocks of recvcounts[r] elements; rank r's out gets block r reduced.
  template <input_buffer In, output_buffer_for<In> Out>
  void reduce_scatterv(In&& in, Out&& out, Counts recvcounts, Op op) const {
    checker("reduce_scatterv").reduce_scatterv(len(in), len(out), recvcounts);
    detail::check(rcc_reduce_scatterv(comm_, ptr(in), ptr(out), recvcounts.data(), type<In>, c_op(op)));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request ireduce_scatterv(In&& in, Out&& out, BorrowedCounts recvcounts, Op op) const {
    checker("ireduce_scatterv").reduce_scatterv(len(in), len(out), recvcounts);
    return start([&](rcc_request_t* r) {
      return rcc_ireduce_scatterv(comm_, ptr(in), ptr(out), recvcounts.data(), type<In>, c_op(op), r);
    });
  }

  // ---- prefix reductions: rank r's out gets in of ranks 0..r (scan) or 0..r-1 (exscan) reduced ----
  template <input_buffer In, output_buffer_for<In> Out>
  void scan(In&& in, Out&& out, Op op) const {
    checker("scan").equal("out", len(out), len(in), "in.size()");
    detail::check(rcc_scan(comm_, ptr(in), ptr(out), len(in), type<In>, c_op(op)));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request iscan(In&& in, Out&& out, Op op) const {
    checker("iscan").equal("out", len(out), len(in), "in.size()");
    return start([&](rcc_request_t* r) { return rcc_iscan(comm_, ptr(in), ptr(out), len(in), type<In>, c_op(op), r); });
  }
  // Rank 0's out is not written (it may be empty).
  template <input_buffer In, output_buffer_for<In> Out>
  void exscan(In&& in, Out&& out, Op op) const {
    if (rank_ != 0 || len(out) != 0) checker("exscan").equal("out", len(out), len(in), "in.size(); empty at rank 0");
    detail::check(rcc_exscan(comm_, ptr(in), ptr(out), len(in), type<In>, c_op(op)));
  }
  template <borrowed_input_buffer In, borrowed_output_buffer_for<In> Out>
  [[nodiscard]] Request iexscan(In&& in, Out&& out, Op op) const {
    if (rank_ != 0 || len(out) != 0) checker("iexscan").equal("out", len(out), len(in), "in.size(); empty at rank 0");
    return start(
        [&](rcc_request_t* r) { return rcc_iexscan(comm_, ptr(in), ptr(out), len(in), type<In>, c_op(op), r); });
  }

 private:
  template <class R>
  static constexpr rcc_datatype_t type = detail::datatype_of_range<R>;
  template <class R>
  static auto* ptr(R& range) {
    return std::ranges::data(range);
  }
  template <class R>
  static std::size_t len(R& range) {
    return static_cast<std::size_t>(std::ranges::size(range));
  }
  static rcc_op_t c_op(Op op) noexcept { return static_cast<rcc_op_t>(op); }
  template <class Call>
  static Request start(Call call) {
    rcc_request_t request = nullptr;
    detail::check(call(&request));
    return Request(request);
  }

  void destroy() noexcept {
    if (comm_ != nullptr) static_cast<void>(rcc_comm_destroy(comm_));
    comm_ = nullptr;
  }

  detail::Checker checker(const char* function) const noexcept {
    return detail::Checker(function, comm_ == nullptr, rank_, size_);
  }

  rcc_comm_t comm_ = nullptr;
  int rank_ = -1;
  int size_ = 0;
};

}  // namespace rcc
