// What every collective algorithm shares: its arguments, a context that numbers its messages, and
// blocking helpers over the p2p engine. Algorithms use only engine send/receive, so they run
// unchanged on every transport (UCX, verbs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "p2p/engine.h"
#include "rcc/rcc.h"
#include "shm/segment.h"

namespace rcc::collectives {

enum class Kind {
  kAllreduce,
  kBroadcast,
  kReduce,
  kAllgather,
  kReduceScatter,
  kAlltoall,
  kGather,
  kScatter,
  kBarrier,
  kAllgatherv,
  kAlltoallv,
  kGatherv,
  kScatterv,
  kReduceScatterv,
  kScan,
  kExscan,
};
constexpr int kNumKinds = 16;
const char* kind_name(Kind kind);
// The vector collectives: each rank's counts differ, so count says only how much this rank moves.
inline bool is_vector(Kind kind) {
  return kind == Kind::kAllgatherv || kind == Kind::kAlltoallv || kind == Kind::kGatherv || kind == Kind::kScatterv ||
         kind == Kind::kReduceScatterv;
}

// The arguments of one collective call, already validated by the public API. count is the
// per-rank element count the public function takes (sendcount, recvcount, count per peer); for
// the vector collectives, the elements this rank sends and receives (what the tuner weighs), with
// the counts and displacements (one per rank, in elements) below.
struct Args {
  Kind kind = Kind::kBarrier;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  size_t count = 0;
  rcc_datatype_t datatype = RCC_UINT8;
  rcc_op_t op = RCC_SUM;
  int root = 0;
  const size_t* sendcounts = nullptr;  // alltoallv, scatterv (root)
  const size_t* sdispls = nullptr;     // alltoallv, scatterv (root)
  const size_t* recvcounts = nullptr;  // allgatherv, alltoallv, gatherv (root), reduce_scatterv
  const size_t* rdispls = nullptr;     // allgatherv, alltoallv, gatherv (root)
};

// The two levels of a communicator whose ranks span hosts, several on some (docs/hierarchy.md):
// this host's ranks, which share a segment, and the ranks of every host with this rank's index on
// its host. Made by the communicator (comm/levels.cc); the hierarchical algorithms run on them.
struct Level {
  shm::Segment* segment = nullptr;  // the host level's (never null there); null on the cross level
  const p2p::Group* group = nullptr;
  int rank = 0;
  int size = 1;
  uint64_t calls = 0;  // numbers this level's collectives, as the parent's sequence numbers its own
};
struct Levels {
  Level host;   // this host's ranks in communicator order; host.rank is this rank's local index
  Level cross;  // the ranks with this local index, one per host that has one, in host order
  int hosts = 0;
  // Ranks on the smallest host: local ranks below it each carry one slice of the data between
  // hosts (the cross level of such a rank has a member on every host, and its rank is the host's).
  int channels = 0;
  int my_host = 0;
  std::vector<int> host_of;   // communicator rank -> host (numbered in the order of their lowest rank)
  std::vector<int> local_of;  // communicator rank -> index among its host's ranks
  std::vector<int> host_sizes;
  // Each host's ranks are consecutive communicator ranks, hosts in rank order (as launchers place
  // them): what the hierarchical reduce_scatter needs.
  bool blocked = false;
};

// One collective in flight on one rank. Tags carry the collective's sequence number, so messages
// of consecutive collectives (and of different phases of one) never match each other.
class Context {
 public:
  // segment may be null (then only message-based algorithms run); group holds the communicator's
  // ranks among the engine's, rank is this one's in it; sequence numbers the collective among the
  // communicator's collectives (the same on every rank). Peers are ranks of the group.
  Context(p2p::Engine& engine, shm::Segment* segment, const p2p::Group& group, int rank, uint64_t sequence)
      : engine_(&engine),
        shm_(segment),
        group_(&group),
        context_(p2p::collective_context(group.id())),
        rank_(rank),
        size_(group.size()),
        sequence_(sequence) {}

  // With the communicator's levels (null when it has none).
  Context(p2p::Engine& engine, shm::Segment* segment, const p2p::Group& group, int rank, uint64_t sequence,
          Levels* levels)
      : Context(engine, segment, group, rank, sequence) {
    levels_ = levels;
  }

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool has_levels() const { return levels_ != nullptr; }
  Levels& levels() { return *levels_; }
  // Contexts of the next collective on each level (the levels' own numbering keeps the phases of
  // one hierarchical call, and of consecutive calls, from matching each other's messages).
  Context host_level() { return level(levels_->host); }
  Context cross_level() { return level(levels_->cross); }
  p2p::Engine& engine() { return *engine_; }
  // The communicator's shared-memory segment; only the shm algorithms use it (chosen only if it exists).
  shm::Segment& shm() { return *shm_; }
  // Tag for a phase (< 65536) of this collective.
  int tag(uint32_t phase) const { return static_cast<int>(((sequence_ % 4096) << 16) | (phase & 0xffffu)); }

  Status isend(const void* buffer, size_t bytes, int peer, int tag, p2p::Request** out);
  Status irecv(void* buffer, size_t bytes, int peer, int tag, p2p::Request** out);
  Status send(const void* buffer, size_t bytes, int peer, int tag);
  Status recv(void* buffer, size_t bytes, int peer, int tag);
  // Sends to one peer and receives from another at once (the two may be equal).
  Status sendrecv(const void* send_buffer, size_t send_bytes, int to, void* recv_buffer, size_t recv_bytes, int from,
                  int tag);
  // Posts a send into `sends` (which may bound how many are in flight) / a receive into
  // `receives`, storing its index there in *index when index is not null.
  Status post_send(class RequestSet& sends, const void* buffer, size_t bytes, int peer, int tag);
  Status post_recv(class RequestSet& receives, void* buffer, size_t bytes, int peer, int tag, size_t* index = nullptr);

 private:
  Context level(Level& level) { return Context(*engine_, level.segment, *level.group, level.rank, level.calls++); }

  p2p::Engine* engine_;
  shm::Segment* shm_;
  const p2p::Group* group_;
  uint32_t context_;
  int rank_;
  int size_;
  uint64_t sequence_;
  Levels* levels_ = nullptr;
};

// Pending requests that are all waited for (or, on an early error, drained) together, so nothing is
// left in flight when a collective returns.
class RequestSet {
 public:
  explicit RequestSet(p2p::Engine& engine) : engine_(engine) {}
  // A window > 0 bounds the requests in flight: add() first waits for the oldest ones. Used for
  // sends, so a long pipelined message does not queue hundreds of rendezvous at one peer.
  RequestSet(p2p::Engine& engine, size_t window) : engine_(engine), window_(window) {}
  ~RequestSet();
  RequestSet(const RequestSet&) = delete;
  RequestSet& operator=(const RequestSet&) = delete;

  // Returns the request's index for wait(). With a window, posting comes first (the request is
  // already in flight); then the oldest requests beyond the window are waited for.
  size_t add(p2p::Request* request);
  // Adds a request just posted, then waits while more than the window are in flight.
  Status add_in_window(p2p::Request* request);
  // Waits for one request (added earlier and not yet waited for).
  Status wait(size_t index);
  // Waits for all remaining ones; returns the first failure.
  Status wait_all();

 private:
  Status wait_oldest_beyond_window();

  p2p::Engine& engine_;
  size_t window_ = 0;
  size_t oldest_ = 0;     // with a window: index of the oldest request not yet waited for
  size_t in_flight_ = 0;  // with a window: requests not yet waited for
  std::vector<p2p::Request*> pending_;
};

// Sends in flight per send set (see RequestSet's window).
constexpr size_t kSendWindow = 6;

// Scratch memory reused across collectives on this thread (collectives on one thread run one at a
// time), so the data path does not allocate per call or per step. Slots are independent buffers;
// a buffer stays valid until the next call for the same slot.
Status scratch(int slot, size_t bytes, void** out);
template <typename T>
Status scratch(int slot, size_t bytes, T** out) {
  void* memory = nullptr;
  RCC_RETURN_IF_ERROR(scratch(slot, bytes, &memory));
  *out = static_cast<T*>(memory);
  return RCC_SUCCESS;
}
constexpr int kNumScratchSlots = 4;

// Bytes per pipelined message segment: big enough to amortise per-message cost, small enough that
// several segments keep a link busy while the previous one is reduced.
constexpr size_t kSegmentBytes = 512 * 1024;
// Number of segments a block of `bytes` is cut into (at least 1).
size_t segment_count(size_t bytes);
// Element range [*begin, *end) of segment j of `count` elements cut into `segments` nearly equal parts.
inline void segment_range(size_t count, size_t segments, size_t j, size_t* begin, size_t* end) {
  *begin = count * j / segments;
  *end = count * (j + 1) / segments;
}

// Blocks of a buffer split over the ranks: block b covers [offset(b), offset(b) + count(b)) elements.
struct BlockLayout {
  size_t total = 0;
  int blocks = 1;
  bool even = false;  // equal blocks of `each` elements (allgather, reduce_scatter)
  size_t each = 0;
  const size_t* given_counts = nullptr;   // given blocks (the vector collectives), when not null
  const size_t* given_offsets = nullptr;  // may leave gaps and come in any order
  size_t given_max = 0;
  size_t offset(int b) const;
  size_t count(int b) const;
  size_t max_count() const;
  static BlockLayout split(size_t total, int blocks);  // first total % blocks blocks get one more
  static BlockLayout equal(size_t each, int blocks);
  // counts and offsets (one per block) must outlive the layout.
  static BlockLayout given(const size_t* counts, const size_t* offsets, int blocks);
};

inline int mod(int value, int n) { return ((value % n) + n) % n; }
// The op the kernels apply: RCC_AVG reduces as RCC_SUM and is divided once at the end.
inline rcc_op_t kernel_op(rcc_op_t op) { return op == RCC_AVG ? RCC_SUM : op; }
inline uint8_t* at(void* base, size_t elements, size_t element_bytes) {
  return static_cast<uint8_t*>(base) + elements * element_bytes;
}
inline const uint8_t* at(const void* base, size_t elements, size_t element_bytes) {
  return static_cast<const uint8_t*>(base) + elements * element_bytes;
}

}  // namespace rcc::collectives
