// Soak: many randomized collectives, each checked against a serial reference and across ranks.
//
// Every rank draws the same sequence from one seeded RNG: batches of 1..4 collectives (every kind,
// the vector ones and the scans included; every datatype; every op defined for it; counts up to
// 4 MiB per call, mostly small; a random root; in place or not where rcc.h allows it; blocking or
// nonblocking, the nonblocking ones of a batch in flight together and waited for in a random
// order). Inputs are a deterministic function of (rank, block, salt), so every rank computes every
// rank's input: reductions use coll_test_util.h's exact inputs (small integers, powers of two for
// float PROD: exact in every order) and its reference; data movements use pseudo-random bytes, and
// the whole receive buffer (gaps between displaced blocks and a guard after it included) is
// compared with its expected image. Results that must be the same on every rank (allreduce,
// broadcast, allgather, allgatherv) are folded into a running hash compared across ranks (an
// allreduce MAX of the hash and of its complement) every 32 batches and at the end.
//
//   RCC_SOAK_ITERATIONS  collectives to run (default: RCC_SOAK_CI_ITERATIONS, which ctest sets, or 100000)
//   RCC_SOAK_SECONDS     stop earlier after this many seconds (0: no limit; default RCC_SOAK_CI_SECONDS or 0)
//   RCC_SOAK_SEED        the RNG seed (default 1)
//   RCC_SOAK_SELFTEST=1  flips a bit of the last rank's result in every 50th collective: the test
//                        must then fail, reporting them (checks the checks)
// Prints "soak: N collectives at R ranks in S s (X/s), W wrong, D disagreements" on rank 0.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "coll_test_util.h"

using namespace coll_test;

namespace {

enum Kind {
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
  kNumKinds
};
const char* const kKindNames[] = {"allreduce", "broadcast",       "reduce",  "allgather",  "reduce_scatter", "alltoall",
                                  "gather",    "scatter",         "barrier", "allgatherv", "alltoallv",      "gatherv",
                                  "scatterv",  "reduce_scatterv", "scan",    "exscan"};
static_assert(sizeof kKindNames / sizeof kKindNames[0] == kNumKinds);

constexpr uint8_t kSentinel = 0xee;
constexpr size_t kGuard = 16;  // bytes after every receive buffer that must stay kSentinel

long env_long(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atol(value) : fallback;
}

// Pseudo-random bytes of (rank, block, salt): rank `from`'s data for block `to`.
void pattern(uint8_t* p, size_t n, int from, int to, uint64_t salt) {
  uint64_t x = (static_cast<uint64_t>(from) * 0x9E3779B97F4A7C15ull) ^
               (static_cast<uint64_t>(to) * 0xC2B2AE3D27D4EB4Full) ^ (salt * 0x165667B19E3779F9ull) ^
               0x27BB2EE687B0B0FDull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t v = x ^ (x >> 29);
    std::memcpy(p + i, &v, 8);
  }
  for (; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<uint8_t>(x >> 56);
  }
}

// One collective of a batch: its parameters, buffers and expected result.
struct Call {
  Kind kind = kBarrier;
  rcc_datatype_t type = RCC_UINT8;
  rcc_op_t op = RCC_SUM;
  size_t count = 0;  // elements: of the call, or of each rank's block
  int root = 0;
  bool in_place = false;
  bool nonblocking = false;
  int salt = 0;
  std::vector<size_t> counts, displs, counts2, displs2;  // vector collectives (this rank's view)
  std::vector<uint8_t> send, recv;
  uint8_t* sendp = nullptr;  // what is passed (in place: inside recv or send)
  uint8_t* recvp = nullptr;
  uint8_t* result = nullptr;  // where this rank's result is after the call
  rcc_request_t request = nullptr;

  std::string describe() const {
    return std::string(kKindNames[kind]) + " " + type_name(type) + " " + op_name(op) + " count " +
           std::to_string(count) + " root " + std::to_string(root) + (in_place ? " in place" : "") +
           (nonblocking ? " nonblocking" : " blocking") + " salt " + std::to_string(salt);
  }
};

class Soak {
 public:
  Soak(rcc_comm_t comm, int rank, int size, unsigned seed) : comm_(comm), rank_(rank), size_(size), draw_(seed) {}

  uint64_t pick(uint64_t n) { return draw_() % n; }

  // Elements of one call (or block), up to 4 MiB / divisor bytes, mostly small.
  size_t draw_count(rcc_datatype_t t, size_t divisor) {
    const size_t element = rcc_datatype_size(t);
    const uint64_t band = pick(100);
    size_t max_bytes = band < 60 ? 256 : band < 85 ? (16u << 10) : band < 97 ? (512u << 10) : (4u << 20);
    max_bytes = std::max<size_t>(max_bytes / divisor, element);
    return pick(max_bytes / element + 1);
  }

  // Random counts (0..max) and displacements with gaps of 0..3 elements; returns the extent.
  size_t layout(size_t max, std::vector<size_t>& counts, std::vector<size_t>& displs) {
    counts.resize(static_cast<size_t>(size_));
    displs.resize(static_cast<size_t>(size_));
    size_t at = 0;
    for (int r = 0; r < size_; ++r) {
      at += pick(4);
      counts[r] = pick(max + 1);
      displs[r] = at;
      at += counts[r];
    }
    return at;
  }

  void draw_call(Call& c, int salt) {
    c.kind = static_cast<Kind>(pick(kNumKinds));
    c.type = static_cast<rcc_datatype_t>(pick(RCC_NUM_DATATYPES));
    do {
      c.op = static_cast<rcc_op_t>(pick(RCC_NUM_OPS));
    } while (!op_defined(c.type, c.op));
    c.root = static_cast<int>(pick(static_cast<uint64_t>(size_)));
    c.in_place = pick(2) == 1;
    c.nonblocking = pick(2) == 1;
    c.salt = salt;
    const bool per_rank = c.kind == kAllgather || c.kind == kReduceScatter || c.kind == kAlltoall ||
                          c.kind == kGather || c.kind == kScatter ||
                          (c.kind >= kAllgatherv && c.kind <= kReduceScatterv);
    c.count = c.kind == kBarrier ? 0 : draw_count(c.type, per_rank ? static_cast<size_t>(size_) : 1);
  }

  // Prepares buffers and the expected image of this rank's receive buffer (into expect).
  void prepare(Call& c, std::vector<uint8_t>& expect) {
    const size_t e = rcc_datatype_size(c.type), n = c.count, block = n * e;
    const int R = size_, me = rank_;
    const uint64_t salt = static_cast<uint64_t>(c.salt);
    auto sized = [&](std::vector<uint8_t>& v, size_t bytes) { v.assign(bytes + kGuard, kSentinel); };
    expect.clear();
    c.sendp = c.recvp = c.result = nullptr;
    switch (c.kind) {
      case kAllreduce:
      case kScan:
      case kExscan:
        sized(c.send, block);
        fill(c.type, c.op, me, c.send.data(), n, c.salt);
        sized(c.recv, block);
        c.sendp = c.send.data();
        c.recvp = c.in_place ? c.send.data() : c.recv.data();
        c.result = c.recvp;
        break;
      case kReduce:
        sized(c.send, block);
        fill(c.type, c.op, me, c.send.data(), n, c.salt);
        sized(c.recv, me == c.root ? block : 0);
        c.sendp = c.send.data();
        c.recvp = me == c.root ? (c.in_place ? c.send.data() : c.recv.data()) : nullptr;
        c.result = c.recvp;
        break;
      case kReduceScatter:
        sized(c.send, block * R);
        fill(c.type, c.op, me, c.send.data(), n * R, c.salt);
        sized(c.recv, block);
        c.sendp = c.send.data();
        c.recvp = c.in_place ? c.send.data() + me * block : c.recv.data();
        c.result = c.recvp;
        break;
      case kReduceScatterv: {
        // Every rank draws the same counts (the draw is shared); the input covers their sum.
        c.counts.resize(static_cast<size_t>(R));
        size_t total = 0, before = 0;
        for (int r = 0; r < R; ++r) {
          c.counts[r] = pick(n + 1);
          if (r < me) before += c.counts[r];
          total += c.counts[r];
        }
        c.displs.assign(1, before);  // where this rank's block is in the reduction
        sized(c.send, total * e);
        fill(c.type, c.op, me, c.send.data(), total, c.salt);
        sized(c.recv, c.counts[me] * e);
        c.sendp = c.send.data();
        c.recvp = c.recv.data();
        c.result = c.recvp;
        break;
      }
      case kBroadcast:
        sized(c.recv, block);
        if (me == c.root) pattern(c.recv.data(), block, c.root, 0, salt);
        c.recvp = c.recv.data();
        expect.assign(block + kGuard, kSentinel);
        pattern(expect.data(), block, c.root, 0, salt);
        break;
      case kAllgather:
        sized(c.recv, block * R);
        sized(c.send, block);
        pattern(c.in_place ? c.recv.data() + me * block : c.send.data(), block, me, 0, salt);
        c.sendp = c.in_place ? c.recv.data() + me * block : c.send.data();
        c.recvp = c.recv.data();
        expect.assign(block * R + kGuard, kSentinel);
        for (int r = 0; r < R; ++r) pattern(expect.data() + r * block, block, r, 0, salt);
        break;
      case kAlltoall:
        sized(c.send, block * R);
        for (int to = 0; to < R; ++to) pattern(c.send.data() + to * block, block, me, to, salt);
        sized(c.recv, block * R);
        c.sendp = c.send.data();
        c.recvp = c.in_place ? c.send.data() : c.recv.data();
        expect.assign(block * R + kGuard, kSentinel);
        for (int from = 0; from < R; ++from) pattern(expect.data() + from * block, block, from, me, salt);
        break;
      case kGather:
        sized(c.recv, me == c.root ? block * R : 0);
        sized(c.send, block);
        if (c.in_place && me == c.root) {
          c.sendp = c.recv.data() + me * block;
        } else {
          c.sendp = c.send.data();
        }
        pattern(c.sendp, block, me, 0, salt);
        c.recvp = me == c.root ? c.recv.data() : nullptr;
        if (me == c.root) {
          expect.assign(block * R + kGuard, kSentinel);
          for (int r = 0; r < R; ++r) pattern(expect.data() + r * block, block, r, 0, salt);
        }
        break;
      case kScatter:
        sized(c.send, me == c.root ? block * R : 0);
        if (me == c.root) {
          for (int to = 0; to < R; ++to) pattern(c.send.data() + to * block, block, c.root, to, salt);
        }
        sized(c.recv, block);
        c.sendp = me == c.root ? c.send.data() : nullptr;
        c.recvp = c.in_place && me == c.root ? c.send.data() + me * block : c.recv.data();
        expect.assign(block + kGuard, kSentinel);
        pattern(expect.data(), block, c.root, me, salt);
        if (c.in_place && me == c.root) {
          // The expected image is of send there (its own block untouched, the rest the input).
          expect.assign(c.send.begin(), c.send.end());
        }
        break;
      case kBarrier: break;
      case kAllgatherv: {
        const size_t extent = layout(n, c.counts, c.displs);
        sized(c.recv, extent * e);
        sized(c.send, c.counts[me] * e);
        c.sendp = c.in_place ? c.recv.data() + c.displs[me] * e : c.send.data();
        pattern(c.sendp, c.counts[me] * e, me, 0, salt);
        c.recvp = c.recv.data();
        expect.assign(extent * e + kGuard, kSentinel);
        for (int r = 0; r < R; ++r) pattern(expect.data() + c.displs[r] * e, c.counts[r] * e, r, 0, salt);
        break;
      }
      case kGatherv: {
        const size_t extent = layout(n, c.counts, c.displs);
        sized(c.recv, me == c.root ? extent * e : 0);
        sized(c.send, c.counts[me] * e);
        c.sendp = c.in_place && me == c.root ? c.recv.data() + c.displs[me] * e : c.send.data();
        pattern(c.sendp, c.counts[me] * e, me, 0, salt);
        c.recvp = me == c.root ? c.recv.data() : nullptr;
        if (me == c.root) {
          expect.assign(extent * e + kGuard, kSentinel);
          for (int r = 0; r < R; ++r) pattern(expect.data() + c.displs[r] * e, c.counts[r] * e, r, 0, salt);
        }
        break;
      }
      case kScatterv: {
        const size_t extent = layout(n, c.counts, c.displs);
        sized(c.send, me == c.root ? extent * e : 0);
        if (me == c.root) {
          for (int to = 0; to < R; ++to) pattern(c.send.data() + c.displs[to] * e, c.counts[to] * e, c.root, to, salt);
        }
        sized(c.recv, c.counts[me] * e);
        c.sendp = me == c.root ? c.send.data() : nullptr;
        c.recvp = c.recv.data();
        expect.assign(c.counts[me] * e + kGuard, kSentinel);
        pattern(expect.data(), c.counts[me] * e, c.root, me, salt);
        break;
      }
      case kAlltoallv: {
        // c[i][j]: elements from rank i to rank j, drawn by all; each rank's send and receive
        // layouts with gaps of their own.
        std::vector<size_t> matrix(static_cast<size_t>(R * R));
        for (auto& m : matrix) m = pick(n + 1);
        c.counts.resize(static_cast<size_t>(R));
        c.counts2.resize(static_cast<size_t>(R));
        c.displs.resize(static_cast<size_t>(R));
        c.displs2.resize(static_cast<size_t>(R));
        size_t send_at = 0, recv_at = 0;
        for (int r = 0; r < R; ++r) {
          send_at += pick(4);
          recv_at += pick(4);
          c.counts[r] = matrix[me * R + r];
          c.displs[r] = send_at;
          send_at += c.counts[r];
          c.counts2[r] = matrix[r * R + me];
          c.displs2[r] = recv_at;
          recv_at += c.counts2[r];
        }
        sized(c.send, send_at * e);
        for (int to = 0; to < R; ++to) pattern(c.send.data() + c.displs[to] * e, c.counts[to] * e, me, to, salt);
        sized(c.recv, recv_at * e);
        c.sendp = c.send.data();
        c.recvp = c.recv.data();
        expect.assign(recv_at * e + kGuard, kSentinel);
        for (int from = 0; from < R; ++from) {
          pattern(expect.data() + c.displs2[from] * e, c.counts2[from] * e, from, me, salt);
        }
        break;
      }
      default: break;
    }
  }

  rcc_status_t start(Call& c) {
    rcc_request_t* q = c.nonblocking ? &c.request : nullptr;
    const rcc_datatype_t t = c.type;
    const size_t n = c.count;
    switch (c.kind) {
      case kAllreduce:
        return q ? rcc_iallreduce(comm_, c.sendp, c.recvp, n, t, c.op, q)
                 : rcc_allreduce(comm_, c.sendp, c.recvp, n, t, c.op);
      case kBroadcast:
        return q ? rcc_ibroadcast(comm_, c.recvp, n, t, c.root, q) : rcc_broadcast(comm_, c.recvp, n, t, c.root);
      case kReduce:
        return q ? rcc_ireduce(comm_, c.sendp, c.recvp, n, t, c.op, c.root, q)
                 : rcc_reduce(comm_, c.sendp, c.recvp, n, t, c.op, c.root);
      case kAllgather:
        return q ? rcc_iallgather(comm_, c.sendp, c.recvp, n, t, q) : rcc_allgather(comm_, c.sendp, c.recvp, n, t);
      case kReduceScatter:
        return q ? rcc_ireduce_scatter(comm_, c.sendp, c.recvp, n, t, c.op, q)
                 : rcc_reduce_scatter(comm_, c.sendp, c.recvp, n, t, c.op);
      case kAlltoall:
        return q ? rcc_ialltoall(comm_, c.sendp, c.recvp, n, t, q) : rcc_alltoall(comm_, c.sendp, c.recvp, n, t);
      case kGather:
        return q ? rcc_igather(comm_, c.sendp, c.recvp, n, t, c.root, q)
                 : rcc_gather(comm_, c.sendp, c.recvp, n, t, c.root);
      case kScatter:
        return q ? rcc_iscatter(comm_, c.sendp, c.recvp, n, t, c.root, q)
                 : rcc_scatter(comm_, c.sendp, c.recvp, n, t, c.root);
      case kBarrier: return q ? rcc_ibarrier(comm_, q) : rcc_barrier(comm_);
      case kAllgatherv:
        return q ? rcc_iallgatherv(comm_, c.sendp, c.counts[rank_], c.recvp, c.counts.data(), c.displs.data(), t, q)
                 : rcc_allgatherv(comm_, c.sendp, c.counts[rank_], c.recvp, c.counts.data(), c.displs.data(), t);
      case kAlltoallv:
        return q ? rcc_ialltoallv(comm_, c.sendp, c.counts.data(), c.displs.data(), c.recvp, c.counts2.data(),
                                  c.displs2.data(), t, q)
                 : rcc_alltoallv(comm_, c.sendp, c.counts.data(), c.displs.data(), c.recvp, c.counts2.data(),
                                 c.displs2.data(), t);
      case kGatherv:
        return q ? rcc_igatherv(comm_, c.sendp, c.counts[rank_], c.recvp, c.counts.data(), c.displs.data(), t, c.root,
                                q)
                 : rcc_gatherv(comm_, c.sendp, c.counts[rank_], c.recvp, c.counts.data(), c.displs.data(), t, c.root);
      case kScatterv:
        return q ? rcc_iscatterv(comm_, c.sendp, c.counts.data(), c.displs.data(), c.recvp, c.counts[rank_], t, c.root,
                                 q)
                 : rcc_scatterv(comm_, c.sendp, c.counts.data(), c.displs.data(), c.recvp, c.counts[rank_], t, c.root);
      case kReduceScatterv:
        return q ? rcc_ireduce_scatterv(comm_, c.sendp, c.recvp, c.counts.data(), t, c.op, q)
                 : rcc_reduce_scatterv(comm_, c.sendp, c.recvp, c.counts.data(), t, c.op);
      case kScan:
        return q ? rcc_iscan(comm_, c.sendp, c.recvp, n, t, c.op, q) : rcc_scan(comm_, c.sendp, c.recvp, n, t, c.op);
      case kExscan:
        return q ? rcc_iexscan(comm_, c.sendp, c.recvp, n, t, c.op, q)
                 : rcc_exscan(comm_, c.sendp, c.recvp, n, t, c.op);
      default: return RCC_ERR_INTERNAL;
    }
  }

  // Wrong elements (reductions) or bytes (movements) of this rank's result; *first describes one.
  size_t check(const Call& c, const std::vector<uint8_t>& expect, std::string* first) {
    const size_t e = rcc_datatype_size(c.type), n = c.count;
    auto guard_bad = [&](const std::vector<uint8_t>& v, size_t bytes) {
      size_t bad = 0;
      for (size_t i = bytes; i < v.size(); ++i) bad += v[i] != kSentinel;
      if (bad && first->empty()) *first = "guard bytes after the buffer overwritten";
      return bad;
    };
    auto bytes_bad = [&](const uint8_t* got, const std::vector<uint8_t>& want) {
      size_t bad = 0;
      if (std::memcmp(got, want.data(), want.size()) == 0) return bad;
      for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i]) {
          if (bad == 0 && first->empty()) {
            *first = "byte " + std::to_string(i) + " of " + std::to_string(want.size()) + ": got " +
                     std::to_string(got[i]) + " expected " + std::to_string(want[i]);
          }
          ++bad;
        }
      }
      return bad;
    };
    switch (c.kind) {
      case kAllreduce:
        return check_reduced(c.type, c.op, size_, c.result, n, 0, first, c.salt) +
               guard_bad(c.in_place ? c.send : c.recv, n * e);
      case kReduce:
        if (rank_ != c.root) return 0;
        return check_reduced(c.type, c.op, size_, c.result, n, 0, first, c.salt) +
               guard_bad(c.in_place ? c.send : c.recv, n * e);
      case kReduceScatter:
        return check_reduced(c.type, c.op, size_, c.result, n, rank_ * n, first, c.salt) +
               (c.in_place ? guard_bad(c.send, n * e * size_) : guard_bad(c.recv, n * e));
      case kReduceScatterv:
        return check_reduced(c.type, c.op, size_, c.result, c.counts[rank_], c.displs[0], first, c.salt) +
               guard_bad(c.recv, c.counts[rank_] * e);
      case kScan:
        return check_reduced(c.type, c.op, rank_ + 1, c.result, n, 0, first, c.salt) +
               guard_bad(c.in_place ? c.send : c.recv, n * e);
      case kExscan: {
        if (rank_ > 0) {
          return check_reduced(c.type, c.op, rank_, c.result, n, 0, first, c.salt) +
                 guard_bad(c.in_place ? c.send : c.recv, n * e);
        }
        // Rank 0: untouched (the sentinel, or in place its input).
        std::vector<uint8_t> want(n * e + kGuard, kSentinel);
        if (c.in_place) fill(c.type, c.op, 0, want.data(), n, c.salt);
        return bytes_bad(c.in_place ? c.send.data() : c.recv.data(), want);
      }
      case kBarrier: return 0;
      case kScatter:
        if (c.in_place && rank_ == c.root) return bytes_bad(c.send.data(), expect);
        return bytes_bad(c.recv.data(), expect);
      case kAlltoall: return bytes_bad(c.in_place ? c.send.data() : c.recv.data(), expect);
      default:  // broadcast, allgather(v), gather(v), scatterv, alltoallv: the image of recv
        if (expect.empty()) return 0;
        return bytes_bad(c.recv.data(), expect);
    }
  }

  // Whether this kind's result is the same on every rank (then it joins the agreement hash).
  static bool shared_result(Kind k) {
    return k == kAllreduce || k == kBroadcast || k == kAllgather || k == kAllgatherv;
  }

  rcc_comm_t comm_;
  int rank_, size_;
  std::mt19937_64 draw_;
};

TEST(Soak, RandomizedCollectivesMatchTheReferenceAndAgree) {
  const int rank = ranktest::rank(), size = ranktest::size();
  // The ctest entries set the _CI_ forms, so RCC_SOAK_ITERATIONS / RCC_SOAK_SECONDS given by hand win.
  const long iterations = env_long("RCC_SOAK_ITERATIONS", env_long("RCC_SOAK_CI_ITERATIONS", 100000));
  const long seconds = env_long("RCC_SOAK_SECONDS", env_long("RCC_SOAK_CI_SECONDS", 0));
  const unsigned seed = static_cast<unsigned>(env_long("RCC_SOAK_SEED", 1));
  const bool selftest = env_long("RCC_SOAK_SELFTEST", 0) != 0;  // corrupt results on purpose: must fail
  Soak soak(ranktest::comm(), rank, size, seed);
  uint64_t agree = 1469598103934665603ull;
  uint64_t wrong = 0, disagreements = 0, wrong_calls = 0;
  long done = 0, batches = 0;
  size_t bytes_moved = 0;
  long kind_counts[kNumKinds] = {};
  long nonblocking_calls = 0;
  const auto start = std::chrono::steady_clock::now();
  bool stop = false;
  std::vector<Call> batch;
  std::vector<std::vector<uint8_t>> expects;

  auto check_agreement = [&](bool want_stop) -> bool {
    // MAX of the hash and of its complement: all equal iff max(h) == h == ~max(~h). The stop vote
    // (rank 0's clock) and the wrong-call count travel in the same allreduce.
    uint64_t v[4] = {agree, ~agree, want_stop ? 1u : 0u, 0}, out[4] = {};
    EXPECT_EQ(rcc_allreduce(ranktest::comm(), v, out, 4, RCC_UINT64, RCC_MAX), RCC_SUCCESS) << rcc_last_error();
    if (out[0] != agree || ~out[1] != agree) {
      ++disagreements;
      ADD_FAILURE() << "rank " << rank << ": results differ across ranks in the batches before " << batches;
    }
    return out[2] != 0;
  };

  while (done < iterations && !stop) {
    const uint64_t shape = soak.pick(10);
    const size_t k = std::min<long>(shape < 6 ? 1 : static_cast<long>(2 + soak.pick(3)), iterations - done);
    batch.assign(k, Call{});
    expects.assign(k, {});
    for (size_t j = 0; j < k; ++j) {
      soak.draw_call(batch[j], static_cast<int>((done + static_cast<long>(j)) % 100003));
      soak.prepare(batch[j], expects[j]);
    }
    for (size_t j = 0; j < k; ++j) {
      Call& c = batch[j];
      const rcc_status_t status = soak.start(c);
      ASSERT_EQ(status, RCC_SUCCESS) << "collective " << done + static_cast<long>(j) << ": " << c.describe() << ": "
                                     << rcc_status_string(status) << ": " << rcc_last_error();
    }
    // The nonblocking ones in a random order (the same on every rank: the draw is shared).
    std::vector<size_t> order;
    for (size_t j = 0; j < k; ++j) {
      if (batch[j].request != nullptr) order.push_back(j);
    }
    for (size_t j = order.size(); j > 1; --j) std::swap(order[j - 1], order[soak.pick(j)]);
    for (size_t j : order) {
      const rcc_status_t status = rcc_wait(batch[j].request);
      batch[j].request = nullptr;
      ASSERT_EQ(status, RCC_SUCCESS) << "waiting for " << batch[j].describe() << ": " << rcc_status_string(status)
                                     << ": " << rcc_last_error();
    }
    for (size_t j = 0; j < k; ++j) {
      Call& c = batch[j];
      if (selftest && (done + static_cast<long>(j)) % 50 == 0 && rank == size - 1) {
        // Checks the checks: one flipped bit in the last rank's result must be reported.
        uint8_t* target = c.result != nullptr ? c.result : c.recv.empty() ? nullptr : c.recv.data();
        if (target != nullptr && c.count > 0) target[0] ^= 0x10;
      }
      std::string first;
      const size_t bad = soak.check(c, expects[j], &first);
      if (bad != 0) {
        wrong += bad;
        if (++wrong_calls <= 10) {
          ADD_FAILURE() << "rank " << rank << " collective " << done + static_cast<long>(j) << " (" << c.describe()
                        << "): " << bad << " wrong: " << first;
        }
      }
      if (Soak::shared_result(c.kind)) {
        const size_t bytes = c.kind == kAllreduce ? c.count * rcc_datatype_size(c.type) : expects[j].size() - kGuard;
        const uint8_t* result = c.kind == kAllreduce ? c.result : c.recv.data();
        agree = (agree ^ hash_bytes(result, bytes)) * 1099511628211ull;
      }
      ++kind_counts[c.kind];
      nonblocking_calls += c.nonblocking;
      bytes_moved += c.count * rcc_datatype_size(c.type);
    }
    done += static_cast<long>(k);
    ++batches;
    if (batches % 32 == 0) {
      const bool late =
          seconds > 0 && rank == 0 && std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds);
      stop = check_agreement(late);
    }
  }
  check_agreement(false);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  uint64_t totals[2] = {wrong, disagreements}, sums[2] = {};
  ASSERT_EQ(rcc_allreduce(ranktest::comm(), totals, sums, 2, RCC_UINT64, RCC_SUM), RCC_SUCCESS) << rcc_last_error();
  if (rank == 0) {
    std::string kinds;
    for (int k = 0; k < kNumKinds; ++k)
      kinds += std::string(" ") + kKindNames[k] + "=" + std::to_string(kind_counts[k]);
    std::printf(
        "soak: %ld collectives at %d ranks in %.1f s (%.0f/s; %ld nonblocking; %.1f MiB per rank)%s, "
        "%llu wrong, %llu disagreements\n",
        done, size, elapsed, done / elapsed, nonblocking_calls, bytes_moved / 1048576.0,
        stop && done < iterations ? " [stopped by RCC_SOAK_SECONDS]" : "", static_cast<unsigned long long>(sums[0]),
        static_cast<unsigned long long>(sums[1]));
    std::printf("soak: kinds:%s\n", kinds.c_str());
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(disagreements, 0u);
}

}  // namespace
