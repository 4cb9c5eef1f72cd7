// The vector collectives (allgatherv, alltoallv, gatherv, scatterv, reduce_scatterv), blocking and
// nonblocking: random counts with zeros (the same on every rank, from fixed seeds), blocks placed
// out of order with gaps between them; the gaps of every receive buffer hold a sentinel that must
// survive. Data is checked exactly; reductions against the exact reference of coll_test_util.h.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include "coll_test_util.h"

using namespace coll_test;

namespace {

constexpr uint8_t kJunk = 0x5c;  // send-buffer bytes no block covers: never delivered

// splitmix64: one deterministic stream, identical on every rank for the same seed.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }

 private:
  uint64_t state_;
};

const rcc_datatype_t kTypes[] = {RCC_INT8,   RCC_UINT8, RCC_INT16,  RCC_UINT16,  RCC_INT32,
                                 RCC_UINT32, RCC_INT64, RCC_UINT64, RCC_FLOAT32, RCC_FLOAT64};
// Largest count per block of the cases (0: every block empty).
const size_t kMaxCounts[] = {0, 1, 5, 40, 1000};

// Element i of the block rank `from` sends to rank `to` (to = 0 where every rank gets the same
// block), as raw bits of a valid value of t: floats are integers below 2^20 in magnitude, so no
// NaN payload a copy might change.
uint64_t element(rcc_datatype_t t, int from, int to, size_t i) {
  uint64_t h = (static_cast<uint64_t>(from) * 131 + static_cast<uint64_t>(to) + 1) * 1000003u + i * 7919u;
  h ^= h >> 13;
  switch (t) {
    case RCC_FLOAT32: return bits_f32(static_cast<float>(static_cast<int64_t>(h % (1u << 21)) - (1 << 20)));
    case RCC_FLOAT64: {
      const double d = static_cast<double>(static_cast<int64_t>(h % (uint64_t{1} << 41)) - (int64_t{1} << 40));
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return bits;
    }
    default: return masked(t, h);
  }
}

void write_block(rcc_datatype_t t, void* base, size_t displ, size_t count, int from, int to) {
  for (size_t i = 0; i < count; ++i) store_bits(t, base, displ + i, element(t, from, to, i));
}

// Random counts, about a quarter of them zero, none above max.
std::vector<size_t> random_counts(Rng& rng, size_t n, size_t max) {
  std::vector<size_t> counts(n);
  for (auto& c : counts) c = rng.below(4) == 0 ? 0 : rng.below(max + 1);
  return counts;
}

std::vector<size_t> prefix_sums(const std::vector<size_t>& counts) {
  std::vector<size_t> starts(counts.size());
  size_t at = 0;
  for (size_t i = 0; i < counts.size(); ++i) starts[i] = at, at += counts[i];
  return starts;
}

// Blocks of the given counts placed in a random order (never the rank order when there are two or
// more) with a gap of 0..3 elements before each and 1..4 after the last: displacements that are
// not monotone and never overlap.
struct Layout {
  std::vector<size_t> displs;
  size_t extent = 0;  // elements of the whole buffer
};
Layout make_layout(Rng& rng, const std::vector<size_t>& counts) {
  const size_t n = counts.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  for (size_t k = n; k > 1; --k) std::swap(order[k - 1], order[rng.below(k)]);
  if (n >= 2 && std::is_sorted(order.begin(), order.end())) std::reverse(order.begin(), order.end());
  Layout layout;
  layout.displs.assign(n, 0);
  size_t at = 0;
  for (size_t k : order) {
    at += rng.below(4);
    layout.displs[k] = at;
    at += counts[k];
  }
  layout.extent = at + 1 + rng.below(4);
  return layout;
}

std::vector<uint8_t> filled(rcc_datatype_t t, size_t elements, uint8_t byte) {
  return std::vector<uint8_t>(elements * rcc_datatype_size(t), byte);
}

// Checks a receive buffer laid out by (counts, displs) over `extent` elements: block j must hold
// element(t, j, to, i), every element outside the blocks the sentinel. Returns the number of wrong
// elements; *first describes the first.
size_t check_blocks(rcc_datatype_t t, const uint8_t* buf, size_t extent, const std::vector<size_t>& counts,
                    const std::vector<size_t>& displs, int to, std::string* first) {
  const size_t element_bytes = rcc_datatype_size(t);
  std::vector<bool> covered(extent, false);
  size_t bad = 0;
  auto note = [&](const std::string& what) {
    if (bad++ == 0) *first = what;
  };
  for (size_t j = 0; j < counts.size(); ++j) {
    for (size_t i = 0; i < counts[j]; ++i) {
      covered[displs[j] + i] = true;
      const uint64_t got = load_bits(t, buf, displs[j] + i), want = element(t, static_cast<int>(j), to, i);
      if (got != want) {
        note("block " + std::to_string(j) + " (displ " + std::to_string(displs[j]) + ", count " +
             std::to_string(counts[j]) + ") element " + std::to_string(i) + ": got " + std::to_string(got) +
             " expected " + std::to_string(want));
      }
    }
  }
  for (size_t e = 0; e < extent; ++e) {
    if (covered[e]) continue;
    for (size_t b = 0; b < element_bytes; ++b) {
      if (buf[e * element_bytes + b] != kSentinel) {
        note("gap element " + std::to_string(e) + " was written");
        break;
      }
    }
  }
  return bad;
}

std::string describe(rcc_datatype_t t, size_t max, const std::vector<size_t>& counts, bool nonblocking) {
  std::string text =
      std::string(type_name(t)) + " max " + std::to_string(max) + (nonblocking ? " nonblocking" : "") + " counts {";
  for (size_t c : counts) text += std::to_string(c) + ",";
  return text + "}";
}

// The status of a started nonblocking call, then of its wait (request is read after the start).
rcc_status_t wait_for(rcc_status_t started, const rcc_request_t* request) {
  return started == RCC_SUCCESS ? rcc_wait(*request) : started;
}

// ---- one checked call of each collective ----

void run_allgatherv(rcc_datatype_t t, const std::vector<size_t>& counts, const Layout& layout, bool nonblocking,
                    const std::string& what) {
  const int rank = ranktest::rank();
  std::vector<uint8_t> mine = filled(t, counts[rank], 0), all = filled(t, layout.extent, kSentinel);
  write_block(t, mine.data(), 0, counts[rank], rank, 0);
  const void* send = counts[rank] == 0 ? nullptr : mine.data();  // an empty block may come from NULL
  if (nonblocking) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(wait_for(rcc_iallgatherv(ranktest::comm(), send, counts[rank], all.data(), counts.data(),
                                           layout.displs.data(), t, &request),
                           &request));
  } else {
    RCC_ASSERT_OK(
        rcc_allgatherv(ranktest::comm(), send, counts[rank], all.data(), counts.data(), layout.displs.data(), t));
  }
  std::string first;
  ASSERT_EQ(check_blocks(t, all.data(), layout.extent, counts, layout.displs, 0, &first), 0u) << what << ": " << first;
  ASSERT_TRUE(same_on_all_ranks(all.data(), all.size())) << what << ": ranks' results differ";
}

// sendcounts[to] on rank `from`: a function of both, zero for about a quarter of the pairs.
size_t pair_count(uint64_t seed, int from, int to, size_t max) {
  Rng rng(seed * 7919 + static_cast<uint64_t>(from) * 104729 + static_cast<uint64_t>(to));
  return rng.below(4) == 0 ? 0 : rng.below(max + 1);
}

void run_alltoallv(rcc_datatype_t t, uint64_t seed, size_t max, bool nonblocking, const std::string& what) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  std::vector<size_t> sendcounts(ranks), recvcounts(ranks);
  for (int r = 0; r < ranks; ++r) {
    sendcounts[r] = pair_count(seed, rank, r, max);
    recvcounts[r] = pair_count(seed, r, rank, max);
  }
  // Layouts are local to a rank: seeded by the rank.
  Rng rng(seed * 1000 + static_cast<uint64_t>(rank));
  const Layout send_layout = make_layout(rng, sendcounts), recv_layout = make_layout(rng, recvcounts);
  std::vector<uint8_t> send = filled(t, send_layout.extent, kJunk), recv = filled(t, recv_layout.extent, kSentinel);
  for (int to = 0; to < ranks; ++to) write_block(t, send.data(), send_layout.displs[to], sendcounts[to], rank, to);
  const std::vector<uint8_t> send_before = send;
  if (nonblocking) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(wait_for(rcc_ialltoallv(ranktest::comm(), send.data(), sendcounts.data(), send_layout.displs.data(),
                                          recv.data(), recvcounts.data(), recv_layout.displs.data(), t, &request),
                           &request));
  } else {
    RCC_ASSERT_OK(rcc_alltoallv(ranktest::comm(), send.data(), sendcounts.data(), send_layout.displs.data(),
                                recv.data(), recvcounts.data(), recv_layout.displs.data(), t));
  }
  std::string first;
  ASSERT_EQ(check_blocks(t, recv.data(), recv_layout.extent, recvcounts, recv_layout.displs, rank, &first), 0u)
      << what << ": " << first;
  ASSERT_TRUE(send == send_before) << what << ": the send buffer changed";
}

void run_gatherv(rcc_datatype_t t, const std::vector<size_t>& counts, const Layout& layout, int root, bool nonblocking,
                 const std::string& what) {
  const int rank = ranktest::rank();
  const bool is_root = rank == root;
  std::vector<uint8_t> mine = filled(t, counts[rank], 0);
  std::vector<uint8_t> all = filled(t, is_root ? layout.extent : 0, kSentinel);
  write_block(t, mine.data(), 0, counts[rank], rank, 0);
  const void* send = counts[rank] == 0 ? nullptr : mine.data();
  if (nonblocking) {
    // Other ranks pass the root's arrays too (ignored there).
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(wait_for(rcc_igatherv(ranktest::comm(), send, counts[rank], is_root ? all.data() : nullptr,
                                        counts.data(), layout.displs.data(), t, root, &request),
                           &request));
  } else {
    // recvbuf, recvcounts and displs matter at the root only: NULL elsewhere.
    RCC_ASSERT_OK(rcc_gatherv(ranktest::comm(), send, counts[rank], is_root ? all.data() : nullptr,
                              is_root ? counts.data() : nullptr, is_root ? layout.displs.data() : nullptr, t, root));
  }
  if (is_root) {
    std::string first;
    ASSERT_EQ(check_blocks(t, all.data(), layout.extent, counts, layout.displs, 0, &first), 0u)
        << what << " root " << root << ": " << first;
  }
}

void run_scatterv(rcc_datatype_t t, const std::vector<size_t>& counts, const Layout& layout, int root, bool nonblocking,
                  const std::string& what) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const bool is_root = rank == root;
  std::vector<uint8_t> source = filled(t, is_root ? layout.extent : 0, kJunk);
  if (is_root) {
    for (int r = 0; r < ranks; ++r) write_block(t, source.data(), layout.displs[r], counts[r], root, r);
  }
  // The received block and two guard elements after it.
  std::vector<uint8_t> got = filled(t, counts[rank] + 2, kSentinel);
  if (nonblocking) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(wait_for(rcc_iscatterv(ranktest::comm(), is_root ? source.data() : nullptr, counts.data(),
                                         layout.displs.data(), got.data(), counts[rank], t, root, &request),
                           &request));
  } else {
    // sendbuf, sendcounts and displs matter at the root only: NULL elsewhere.
    RCC_ASSERT_OK(rcc_scatterv(ranktest::comm(), is_root ? source.data() : nullptr, is_root ? counts.data() : nullptr,
                               is_root ? layout.displs.data() : nullptr, got.data(), counts[rank], t, root));
  }
  size_t bad = 0;
  for (size_t i = 0; i < counts[rank]; ++i) bad += load_bits(t, got.data(), i) != element(t, root, rank, i);
  for (size_t b = counts[rank] * rcc_datatype_size(t); b < got.size(); ++b) bad += got[b] != kSentinel;
  ASSERT_EQ(bad, 0u) << what << " root " << root << " on rank " << rank;
}

void run_reduce_scatterv(rcc_datatype_t t, rcc_op_t op, const std::vector<size_t>& recvcounts, bool nonblocking,
                         int salt, const std::string& what) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const size_t element_bytes = rcc_datatype_size(t);
  const std::vector<size_t> starts = prefix_sums(recvcounts);
  const size_t total = starts.back() + recvcounts.back();
  std::vector<uint8_t> send(total * element_bytes);
  fill(t, op, rank, send.data(), total, salt);
  std::vector<uint8_t> recv = filled(t, recvcounts[rank] + 2, kSentinel);
  if (nonblocking) {
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(
        wait_for(rcc_ireduce_scatterv(ranktest::comm(), send.data(), recv.data(), recvcounts.data(), t, op, &request),
                 &request));
  } else {
    RCC_ASSERT_OK(rcc_reduce_scatterv(ranktest::comm(), send.data(), recv.data(), recvcounts.data(), t, op));
  }
  std::string first;
  ASSERT_EQ(check_reduced(t, op, ranks, recv.data(), recvcounts[rank], starts[rank], &first, salt), 0u)
      << what << " " << op_name(op) << " on rank " << rank << ": " << first;
  for (size_t b = recvcounts[rank] * element_bytes; b < recv.size(); ++b) {
    ASSERT_EQ(recv[b], kSentinel) << what << " " << op_name(op) << ": wrote past recvcounts[" << rank << "]";
  }
}

}  // namespace

TEST(VectorAllgatherv, RandomCountsGapsOutOfOrderEveryType) {
  const int ranks = ranktest::size();
  uint64_t seed = 1;
  for (rcc_datatype_t t : kTypes) {
    for (size_t max : kMaxCounts) {
      Rng rng(seed++);
      const std::vector<size_t> counts = random_counts(rng, static_cast<size_t>(ranks), max);
      const Layout layout = make_layout(rng, counts);
      for (bool nonblocking : {false, true}) {
        run_allgatherv(t, counts, layout, nonblocking, describe(t, max, counts, nonblocking));
        if (HasFailure()) return;
      }
    }
  }
}

TEST(VectorAlltoallv, PairCountsGapsOutOfOrderEveryType) {
  uint64_t seed = 100;
  for (rcc_datatype_t t : kTypes) {
    for (size_t max : kMaxCounts) {
      for (bool nonblocking : {false, true}) {
        run_alltoallv(t, seed, max, nonblocking,
                      std::string(type_name(t)) + " max " + std::to_string(max) + " seed " + std::to_string(seed) +
                          (nonblocking ? " nonblocking" : ""));
        if (HasFailure()) return;
      }
      ++seed;
    }
  }
}

// Every type and count range, the root moving on with each case (every root is used); then every
// root for one type.
TEST(VectorGathervScatterv, EveryRootRandomCountsGapsOutOfOrder) {
  const int ranks = ranktest::size();
  uint64_t seed = 200;
  int root = 0;
  auto run_case = [&](rcc_datatype_t t, size_t max) {
    Rng rng(seed++);
    const std::vector<size_t> counts = random_counts(rng, static_cast<size_t>(ranks), max);
    const Layout layout = make_layout(rng, counts);
    for (bool nonblocking : {false, true}) {
      const std::string what = describe(t, max, counts, nonblocking);
      run_gatherv(t, counts, layout, root, nonblocking, "gatherv " + what);
      if (::testing::Test::HasFailure()) return;
      run_scatterv(t, counts, layout, root, nonblocking, "scatterv " + what);
      if (::testing::Test::HasFailure()) return;
    }
    root = (root + 1) % ranks;
  };
  for (rcc_datatype_t t : kTypes) {
    for (size_t max : kMaxCounts) {
      run_case(t, max);
      if (HasFailure()) return;
    }
  }
  for (int r = 0; r < ranks; ++r) {
    root = r;
    run_case(RCC_INT32, 40);
    if (HasFailure()) return;
  }
}

TEST(VectorReduceScatterv, RandomCountsEveryOpExact) {
  const int ranks = ranktest::size();
  uint64_t seed = 300;
  const size_t maxes[] = {0, 5, 300};
  const std::vector<rcc_op_t> int_ops = {RCC_SUM, RCC_PROD, RCC_MIN, RCC_MAX, RCC_BAND, RCC_BOR, RCC_BXOR};
  const std::vector<rcc_op_t> float_ops = {RCC_SUM, RCC_PROD, RCC_MIN, RCC_MAX, RCC_AVG};
  int salt = 0;
  for (int ti = 0; ti < RCC_NUM_DATATYPES; ++ti) {
    const auto t = static_cast<rcc_datatype_t>(ti);
    const bool half = t == RCC_FLOAT16 || t == RCC_BFLOAT16;
    const std::vector<rcc_op_t> ops = !is_float(t) ? int_ops : half ? std::vector<rcc_op_t>{RCC_SUM} : float_ops;
    for (rcc_op_t op : ops) {
      for (size_t max : maxes) {
        Rng rng(seed++);
        const std::vector<size_t> counts = random_counts(rng, static_cast<size_t>(ranks), max);
        const bool nonblocking = (salt & 1) != 0;
        run_reduce_scatterv(t, op, counts, nonblocking, salt++, describe(t, max, counts, nonblocking));
        if (HasFailure()) return;
      }
    }
  }
}

// Every block but one empty, and the other way round: rank r alone receives (or sends) data.
TEST(VectorReduceScatterv, OneRankGetsEverything) {
  const int ranks = ranktest::size();
  for (int lucky = 0; lucky < ranks; ++lucky) {
    std::vector<size_t> counts(static_cast<size_t>(ranks), 0);
    counts[lucky] = 1000 + static_cast<size_t>(lucky);
    run_reduce_scatterv(RCC_INT32, RCC_SUM, counts, lucky % 2 == 1, lucky, "int32 only rank " + std::to_string(lucky));
    if (HasFailure()) return;
    run_reduce_scatterv(RCC_UINT16, RCC_BXOR, counts, lucky % 2 == 0, lucky,
                        "uint16 only rank " + std::to_string(lucky));
    if (HasFailure()) return;
  }
}

// Several vector collectives (and scans) in flight at once, waited for newest first.
TEST(VectorNonblocking, ManyInFlightWaitedInReverseOrder) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const auto n = static_cast<size_t>(ranks);
  rcc_comm_t comm = ranktest::comm();
  std::vector<rcc_request_t> requests;
  rcc_request_t request = nullptr;
  Rng rng(400);
  const rcc_datatype_t t = RCC_INT32;

  // allgatherv
  const std::vector<size_t> ag_counts = random_counts(rng, n, 3000);
  const Layout ag_layout = make_layout(rng, ag_counts);
  std::vector<uint8_t> ag_mine = filled(t, ag_counts[rank], 0), ag_all = filled(t, ag_layout.extent, kSentinel);
  write_block(t, ag_mine.data(), 0, ag_counts[rank], rank, 0);
  RCC_ASSERT_OK(rcc_iallgatherv(comm, ag_mine.data(), ag_counts[rank], ag_all.data(), ag_counts.data(),
                                ag_layout.displs.data(), t, &request));
  requests.push_back(request);

  // alltoallv
  std::vector<size_t> a2a_send_counts(n), a2a_recv_counts(n);
  for (int r = 0; r < ranks; ++r) {
    a2a_send_counts[r] = pair_count(401, rank, r, 2000);
    a2a_recv_counts[r] = pair_count(401, r, rank, 2000);
  }
  Rng local(402 + static_cast<uint64_t>(rank));
  const Layout a2a_send_layout = make_layout(local, a2a_send_counts),
               a2a_recv_layout = make_layout(local, a2a_recv_counts);
  std::vector<uint8_t> a2a_send = filled(t, a2a_send_layout.extent, kJunk),
                       a2a_recv = filled(t, a2a_recv_layout.extent, kSentinel);
  for (int to = 0; to < ranks; ++to) {
    write_block(t, a2a_send.data(), a2a_send_layout.displs[to], a2a_send_counts[to], rank, to);
  }
  RCC_ASSERT_OK(rcc_ialltoallv(comm, a2a_send.data(), a2a_send_counts.data(), a2a_send_layout.displs.data(),
                               a2a_recv.data(), a2a_recv_counts.data(), a2a_recv_layout.displs.data(), t, &request));
  requests.push_back(request);

  // gatherv at the last rank
  const int g_root = ranks - 1;
  const std::vector<size_t> g_counts = random_counts(rng, n, 500);
  const Layout g_layout = make_layout(rng, g_counts);
  std::vector<uint8_t> g_mine = filled(t, g_counts[rank], 0), g_all = filled(t, g_layout.extent, kSentinel);
  write_block(t, g_mine.data(), 0, g_counts[rank], rank, 0);
  RCC_ASSERT_OK(rcc_igatherv(comm, g_mine.data(), g_counts[rank], g_all.data(), g_counts.data(), g_layout.displs.data(),
                             t, g_root, &request));
  requests.push_back(request);

  // scatterv from rank 0
  const std::vector<size_t> s_counts = random_counts(rng, n, 500);
  const Layout s_layout = make_layout(rng, s_counts);
  std::vector<uint8_t> s_source = filled(t, s_layout.extent, kJunk), s_got = filled(t, s_counts[rank] + 1, kSentinel);
  for (int r = 0; r < ranks; ++r) write_block(t, s_source.data(), s_layout.displs[r], s_counts[r], 0, r);
  RCC_ASSERT_OK(rcc_iscatterv(comm, s_source.data(), s_counts.data(), s_layout.displs.data(), s_got.data(),
                              s_counts[rank], t, 0, &request));
  requests.push_back(request);

  // reduce_scatterv
  const std::vector<size_t> rs_counts = random_counts(rng, n, 4000);
  const std::vector<size_t> rs_starts = prefix_sums(rs_counts);
  const size_t rs_total = rs_starts.back() + rs_counts.back();
  std::vector<uint8_t> rs_send(rs_total * 4), rs_recv = filled(t, rs_counts[rank], kSentinel);
  fill(t, RCC_SUM, rank, rs_send.data(), rs_total, 9);
  RCC_ASSERT_OK(rcc_ireduce_scatterv(comm, rs_send.data(), rs_recv.data(), rs_counts.data(), t, RCC_SUM, &request));
  requests.push_back(request);

  // scan and exscan
  const size_t scan_count = 777;
  std::vector<uint8_t> scan_send(scan_count * 4), scan_recv(scan_count * 4), exscan_recv(scan_count * 4, kSentinel);
  fill(t, RCC_MAX, rank, scan_send.data(), scan_count, 5);
  RCC_ASSERT_OK(rcc_iscan(comm, scan_send.data(), scan_recv.data(), scan_count, t, RCC_MAX, &request));
  requests.push_back(request);
  RCC_ASSERT_OK(rcc_iexscan(comm, scan_send.data(), exscan_recv.data(), scan_count, t, RCC_MAX, &request));
  requests.push_back(request);

  for (auto it = requests.rbegin(); it != requests.rend(); ++it) RCC_ASSERT_OK(rcc_wait(*it));

  std::string first;
  EXPECT_EQ(check_blocks(t, ag_all.data(), ag_layout.extent, ag_counts, ag_layout.displs, 0, &first), 0u)
      << "allgatherv: " << first;
  EXPECT_EQ(
      check_blocks(t, a2a_recv.data(), a2a_recv_layout.extent, a2a_recv_counts, a2a_recv_layout.displs, rank, &first),
      0u)
      << "alltoallv: " << first;
  if (rank == g_root) {
    EXPECT_EQ(check_blocks(t, g_all.data(), g_layout.extent, g_counts, g_layout.displs, 0, &first), 0u)
        << "gatherv: " << first;
  }
  size_t bad = 0;
  for (size_t i = 0; i < s_counts[rank]; ++i) bad += load_bits(t, s_got.data(), i) != element(t, 0, rank, i);
  for (size_t b = s_counts[rank] * 4; b < s_got.size(); ++b) bad += s_got[b] != kSentinel;
  EXPECT_EQ(bad, 0u) << "scatterv";
  EXPECT_EQ(check_reduced(t, RCC_SUM, ranks, rs_recv.data(), rs_counts[rank], rs_starts[rank], &first, 9), 0u)
      << "reduce_scatterv: " << first;
  EXPECT_EQ(check_reduced(t, RCC_MAX, rank + 1, scan_recv.data(), scan_count, 0, &first, 5), 0u) << "scan: " << first;
  if (rank == 0) {
    EXPECT_TRUE(std::all_of(exscan_recv.begin(), exscan_recv.end(), [](uint8_t b) { return b == kSentinel; }))
        << "exscan wrote rank 0's recvbuf";
  } else {
    EXPECT_EQ(check_reduced(t, RCC_MAX, rank, exscan_recv.data(), scan_count, 0, &first, 5), 0u) << "exscan: " << first;
  }
}

// One multi-MiB call of each vector collective (about 3 MiB in all per call).
TEST(VectorLarge, MultiMiBEachCollective) {
  if (quick()) GTEST_SKIP() << "RCC_TEST_QUICK";
  const int ranks = ranktest::size();
  const auto n = static_cast<size_t>(ranks);
  const rcc_datatype_t t = RCC_INT32;
  const size_t per_rank = (size_t{3} << 20) / 4 / n;  // int32 elements: 3 MiB over all ranks
  // Counts around per_rank, one of them zero when there are several ranks.
  Rng rng(500);
  std::vector<size_t> counts(n);
  for (auto& c : counts) c = per_rank / 2 + rng.below(per_rank);
  if (ranks > 1) counts[1] = 0;
  const Layout layout = make_layout(rng, counts);
  run_allgatherv(t, counts, layout, false, "large allgatherv");
  ASSERT_FALSE(HasFailure());
  run_gatherv(t, counts, layout, ranks / 2, true, "large gatherv");
  ASSERT_FALSE(HasFailure());
  run_scatterv(t, counts, layout, ranks - 1, false, "large scatterv");
  ASSERT_FALSE(HasFailure());
  // Alltoallv: about 3 MiB sent by each rank in all.
  run_alltoallv(t, 501, 2 * per_rank, true, "large alltoallv");
  ASSERT_FALSE(HasFailure());
  run_reduce_scatterv(t, RCC_SUM, counts, false, 3, "large reduce_scatterv int32");
  ASSERT_FALSE(HasFailure());
  run_reduce_scatterv(RCC_FLOAT32, RCC_SUM, counts, true, 4, "large reduce_scatterv float32");
}

// Allgatherv's and gatherv's sendbuf may already be the rank's own block of recvbuf (the root's,
// for gatherv): the block stays, the others arrive around it. Blocks up to 1.2 MiB take several
// rounds of the shared-memory slots (512 KiB by default, 64 KiB in the small_slots variant).
TEST(VectorInPlace, SendbufIsOwnBlockOfRecvbuf) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const rcc_datatype_t t = RCC_INT32;
  const size_t element_bytes = rcc_datatype_size(t);
  uint64_t seed = 600;
  std::vector<size_t> maxes = {1, 1000, 40000};
  if (!quick()) maxes.push_back(300000);
  for (size_t max : maxes) {
    Rng rng(seed++);
    const std::vector<size_t> counts = random_counts(rng, static_cast<size_t>(ranks), max);
    const Layout layout = make_layout(rng, counts);
    const std::string what = describe(t, max, counts, false);
    std::vector<uint8_t> all = filled(t, layout.extent, kSentinel);
    write_block(t, all.data(), layout.displs[rank], counts[rank], rank, 0);
    RCC_ASSERT_OK(rcc_allgatherv(ranktest::comm(), all.data() + layout.displs[rank] * element_bytes, counts[rank],
                                 all.data(), counts.data(), layout.displs.data(), t));
    std::string first;
    ASSERT_EQ(check_blocks(t, all.data(), layout.extent, counts, layout.displs, 0, &first), 0u)
        << "allgatherv " << what << ": " << first;

    const int root = static_cast<int>(seed % static_cast<uint64_t>(ranks));
    std::vector<uint8_t> mine = filled(t, counts[rank], 0), gathered = filled(t, layout.extent, kSentinel);
    write_block(t, mine.data(), 0, counts[rank], rank, 0);
    write_block(t, gathered.data(), layout.displs[rank], counts[rank], rank, 0);
    const void* send = rank == root ? gathered.data() + layout.displs[rank] * element_bytes : mine.data();
    RCC_ASSERT_OK(rcc_gatherv(ranktest::comm(), send, counts[rank], gathered.data(), counts.data(),
                              layout.displs.data(), t, root));
    if (rank == root) {
      ASSERT_EQ(check_blocks(t, gathered.data(), layout.extent, counts, layout.displs, 0, &first), 0u)
          << "gatherv root " << root << " " << what << ": " << first;
    }
  }
}

// Gatherv with every block empty and scatterv with small blocks let the root return before the
// others have looked at the call (through shared memory: the root posts the number of rounds and
// waits for nobody). The others arrive late here, and the root goes straight on to an allreduce of
// 8 MiB (at 2 ranks the form that tells the others, in the same word, whether it reduces in
// place): each call must still see its own arguments. Under RCC_TEST_QUICK (the VM,
// where it goes through soft-RoCE, and the sanitizers) a small allreduce instead.
TEST(VectorRooted, RootRunsOnWhileOthersAreLate) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const rcc_datatype_t t = RCC_INT32;
  const size_t count = ranks == 2 && !quick() ? (size_t{8} << 20) / 4 : 1000;
  std::vector<uint8_t> data(count * 4);
  std::vector<uint8_t> result(count * 4);
  // In place the 2-rank form's word is 1, out of place 0: what an empty gatherv (0 rounds) and a
  // scatterv copying across (0) would read instead of their own.
  auto allreduce = [&](bool in_place, int salt, const std::string& after) {
    fill(t, RCC_SUM, rank, data.data(), count, salt);
    void* out = in_place ? data.data() : result.data();
    RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), data.data(), out, count, t, RCC_SUM));
    std::string first;
    ASSERT_EQ(check_reduced(t, RCC_SUM, ranks, out, count, 0, &first, salt), 0u)
        << (in_place ? "in-place" : "out-of-place") << " allreduce after " << after << ": " << first;
  };
  const std::vector<size_t> empty(static_cast<size_t>(ranks), 0), small(static_cast<size_t>(ranks), 3);
  const std::vector<size_t> displs = prefix_sums(small);
  std::vector<uint8_t> source = filled(t, 3 * static_cast<size_t>(ranks), kJunk);
  for (int root = 0; root < ranks; ++root) {
    const std::string from = " from root " + std::to_string(root);
    if (rank != root) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    RCC_ASSERT_OK(rcc_gatherv(ranktest::comm(), nullptr, 0, nullptr, empty.data(), empty.data(), t, root));
    allreduce(true, 2 * root, "empty gatherv" + from);
    if (HasFailure()) return;

    for (int r = 0; r < ranks; ++r) write_block(t, source.data(), displs[r], 3, root, r);
    std::vector<uint8_t> got = filled(t, 3, kSentinel);
    if (rank != root) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    RCC_ASSERT_OK(rcc_scatterv(ranktest::comm(), rank == root ? source.data() : nullptr, small.data(), displs.data(),
                               got.data(), 3, t, root));
    allreduce(false, 2 * root + 1, "scatterv" + from);
    if (HasFailure()) return;
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_EQ(load_bits(t, got.data(), i), element(t, root, rank, i)) << "scatterv" << from << " element " << i;
    }
  }
}
