// rcc_scan and rcc_exscan and their nonblocking forms: every datatype with every op rcc.h defines
// for it (RCC_AVG apart), counts 0..100000, against the reference over ranks 0..r (0..r-1 for
// exscan) reduced in rank order. Inputs make every float result exact (coll_test_util.h), so all
// checks are bitwise. Exscan leaves rank 0's recvbuf alone, and rank 0 may pass NULL.
#include <algorithm>

#include "coll_test_util.h"

using namespace coll_test;

namespace {

const size_t kCounts[] = {0, 1, 7, 1000, 100000};
constexpr size_t kLarge = 100000;

enum class Form { kScan, kExscan, kIscan, kIexscan };
const Form kForms[] = {Form::kScan, Form::kExscan, Form::kIscan, Form::kIexscan};

bool is_exclusive(Form f) { return f == Form::kExscan || f == Form::kIexscan; }
bool is_nonblocking(Form f) { return f == Form::kIscan || f == Form::kIexscan; }
const char* form_name(Form f) {
  switch (f) {
    case Form::kScan: return "scan";
    case Form::kExscan: return "exscan";
    case Form::kIscan: return "iscan";
    case Form::kIexscan: return "iexscan";
  }
  return "?";
}

rcc_status_t call(Form f, const void* send, void* recv, size_t count, rcc_datatype_t t, rcc_op_t op) {
  rcc_comm_t comm = ranktest::comm();
  rcc_request_t request = nullptr;
  rcc_status_t status = RCC_SUCCESS;
  switch (f) {
    case Form::kScan: return rcc_scan(comm, send, recv, count, t, op);
    case Form::kExscan: return rcc_exscan(comm, send, recv, count, t, op);
    case Form::kIscan: status = rcc_iscan(comm, send, recv, count, t, op, &request); break;
    case Form::kIexscan: status = rcc_iexscan(comm, send, recv, count, t, op, &request); break;
  }
  return status == RCC_SUCCESS ? rcc_wait(request) : status;
}

// One scan checked against the reference. Out of place the receive buffer has one guard element
// after count; in place the input buffer receives. null_on_rank0: exscan's rank 0 passes NULL.
void run_scan(Form form, rcc_datatype_t t, rcc_op_t op, size_t count, bool in_place, bool null_on_rank0, int salt) {
  const int rank = ranktest::rank();
  const size_t element = rcc_datatype_size(t);
  const bool exclusive = is_exclusive(form);
  std::vector<uint8_t> input((count + 1) * element, kSentinel);
  fill(t, op, rank, input.data(), count, salt);
  std::vector<uint8_t> send = input, recv((count + 1) * element, kSentinel);
  uint8_t* out = in_place ? send.data() : recv.data();
  void* out_arg = exclusive && rank == 0 && null_on_rank0 && !in_place ? nullptr : out;
  const std::string what = std::string(form_name(form)) + " " + type_name(t) + " " + op_name(op) + " count " +
                           std::to_string(count) + (in_place ? " in place" : "") +
                           (out_arg == nullptr ? " (NULL recvbuf)" : "") + " on rank " + std::to_string(rank);
  const rcc_status_t status = call(form, send.data(), out_arg, count, t, op);
  ASSERT_EQ(status, RCC_SUCCESS) << what << ": " << rcc_status_string(status) << ": " << rcc_last_error();
  if (exclusive && rank == 0) {
    // Untouched: the sentinel, or in place the input itself.
    if (in_place) {
      ASSERT_TRUE(send == input) << what << ": rank 0's buffer changed";
    } else {
      ASSERT_TRUE(std::all_of(recv.begin(), recv.end(), [](uint8_t b) { return b == kSentinel; }))
          << what << ": rank 0's recvbuf was written";
    }
  } else {
    std::string first;
    ASSERT_EQ(check_reduced(t, op, exclusive ? rank : rank + 1, out, count, 0, &first, salt), 0u)
        << what << ": " << first;
  }
  const uint8_t* guard = out + count * element;
  ASSERT_TRUE(std::all_of(guard, guard + element, [](uint8_t b) { return b == kSentinel; }))
      << what << ": wrote past count";
  if (!in_place) {
    ASSERT_TRUE(send == input) << what << ": the send buffer changed";
  }
}

}  // namespace

TEST(Scan, EveryTypeOpCountEveryForm) {
  int salt = 0;
  for (int ti = 0; ti < RCC_NUM_DATATYPES; ++ti) {
    for (int o = 0; o < RCC_NUM_OPS; ++o) {
      const auto t = static_cast<rcc_datatype_t>(ti);
      const auto op = static_cast<rcc_op_t>(o);
      if (!op_defined(t, op) || op == RCC_AVG) continue;  // AVG: see AvgOnFloatingTypes
      for (size_t count : kCounts) {
        const bool large = count == kLarge;
        if (large && quick() && op != RCC_SUM) continue;
        for (Form form : kForms) {
          // The large count: both blocking forms for every op, the nonblocking ones with SUM.
          if (large && is_nonblocking(form) && op != RCC_SUM) continue;
          // Exscan's rank 0: a sentinel buffer in the blocking form, NULL in the nonblocking one.
          run_scan(form, t, op, count, false, form == Form::kIexscan, salt++);
          if (HasFailure()) return;
        }
        // In place (sendbuf == recvbuf, as for every collective in rcc.h); the large count with SUM
        // spans two 512 KiB shared-memory slots for 8-byte types, and up to 13 with the small slots.
        if (count == 7 || count == 1000 || (large && op == RCC_SUM)) {
          run_scan(Form::kScan, t, op, count, true, false, salt++);
          run_scan(Form::kExscan, t, op, count, true, false, salt++);
          if (HasFailure()) return;
        }
      }
    }
  }
}

// Full-width random integers (odd ones for PROD, so products do not collapse to zero): sums and
// products wrap, MIN/MAX order by sign for the signed types; the reference reduces ranks 0..r in
// rank order.
TEST(Scan, RandomIntegerBitsWrapAround) {
  const int rank = ranktest::rank();
  const size_t count = 1000;
  auto value = [](rcc_datatype_t t, rcc_op_t op, int r, size_t i) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(r) + 7) * 0xBF58476D1CE4E5B9ull ^
                 (static_cast<uint64_t>(t) * 8 + static_cast<uint64_t>(op)) * 0x94D049BB133111EBull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return op == RCC_PROD ? x | 1 : x;
  };
  for (int ti = 0; ti < RCC_NUM_DATATYPES; ++ti) {
    const auto t = static_cast<rcc_datatype_t>(ti);
    if (is_float(t)) continue;
    const size_t element = rcc_datatype_size(t);
    for (rcc_op_t op : {RCC_SUM, RCC_PROD, RCC_MIN, RCC_MAX, RCC_BAND, RCC_BOR, RCC_BXOR}) {
      for (bool exclusive : {false, true}) {
        std::vector<uint8_t> send(count * element), recv(count * element, kSentinel);
        for (size_t i = 0; i < count; ++i) store_bits(t, send.data(), i, value(t, op, rank, i));
        if (exclusive) {
          RCC_ASSERT_OK(rcc_exscan(ranktest::comm(), send.data(), recv.data(), count, t, op));
        } else {
          RCC_ASSERT_OK(rcc_scan(ranktest::comm(), send.data(), recv.data(), count, t, op));
        }
        const int last = exclusive ? rank - 1 : rank;
        size_t bad = 0;
        std::string first;
        for (size_t i = 0; i < count; ++i) {
          const uint64_t got = load_bits(t, recv.data(), i);
          uint64_t want = 0;
          if (last < 0) {
            want = load_bits(t, std::vector<uint8_t>(element, kSentinel).data(), 0);
          } else {
            want = value(t, op, 0, i);
            for (int r = 1; r <= last; ++r) want = int_combine(t, op, want, value(t, op, r, i));
            want = load_bits(t, &want, 0);  // the low bytes (little endian)
          }
          if (got != want && bad++ == 0) {
            first =
                "element " + std::to_string(i) + ": got " + std::to_string(got) + " expected " + std::to_string(want);
          }
        }
        ASSERT_EQ(bad, 0u) << (exclusive ? "exscan " : "scan ") << type_name(t) << " " << op_name(op) << " on rank "
                           << rank << ": " << first;
      }
    }
  }
}

// Calls back to back without a barrier: sizes, ops, types and forms change from call to call.
TEST(Scan, BackToBackMixedCalls) {
  const size_t counts[] = {3, 4099, 0, 65, 20000, 1, 513, 9};
  const rcc_datatype_t types[] = {RCC_INT16, RCC_FLOAT32, RCC_UINT64, RCC_BFLOAT16, RCC_UINT16, RCC_INT8};
  const rcc_op_t ops[] = {RCC_SUM, RCC_MAX, RCC_MIN, RCC_PROD};
  for (int call_index = 0; call_index < 40; ++call_index) {
    const size_t count = counts[call_index % 8];
    const rcc_datatype_t t = types[call_index % 6];
    const rcc_op_t op = ops[call_index % 4];
    const Form form = kForms[(call_index / 3) % 4];
    run_scan(form, t, op, count, false, call_index % 5 == 0, 1000 + call_index);
    if (HasFailure()) return;
  }
}

// rcc.h defines RCC_AVG as the sum divided by the number of ranks, and says nothing of it for
// scans. Accepted: a rejection naming the op (the same on every rank), or a result equal to the
// prefix sum divided by the ranks reduced (r + 1) or by the communicator's size; which one is
// printed, so that it can be pinned down once rcc.h says.
TEST(Scan, AvgOnFloatingTypes) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const size_t count = 7;
  for (rcc_datatype_t t : {RCC_FLOAT32, RCC_FLOAT64}) {
    for (bool exclusive : {false, true}) {
      std::vector<uint8_t> send(count * rcc_datatype_size(t)), recv(count * rcc_datatype_size(t), kSentinel);
      fill(t, RCC_SUM, rank, send.data(), count, 77);
      const rcc_status_t status = exclusive ? rcc_exscan(ranktest::comm(), send.data(), recv.data(), count, t, RCC_AVG)
                                            : rcc_scan(ranktest::comm(), send.data(), recv.data(), count, t, RCC_AVG);
      // rcc.h: RCC_AVG divides each prefix by the number of ranks in it.
      RCC_ASSERT_OK(status);
      const int reduced = exclusive ? rank : rank + 1;
      const char* name = exclusive ? "exscan" : "scan";
      if (reduced == 0) {
        EXPECT_TRUE(std::all_of(recv.begin(), recv.end(), [](uint8_t b) { return b == kSentinel; }))
            << name << " RCC_AVG wrote rank 0's recvbuf";
      }
      for (size_t i = 0; i < count && reduced > 0; ++i) {
        double sum = 0;
        for (int r = 0; r < reduced; ++r) sum += input(t, RCC_SUM, r, i, 77);
        const double got = load(t, recv.data(), i);
        const double tolerance = avg_tolerance(t) * std::fabs(sum) + 1e-300;
        EXPECT_LE(std::fabs(got - sum / reduced), tolerance)
            << name << " " << type_name(t) << " on rank " << rank << " element " << i << ": " << got
            << ", expected the prefix sum " << sum << " / " << reduced << " (of " << ranks << " ranks)";
      }
    }
  }
}

// Bad arguments fail at once on the rank that passes them (every rank passes one, so nobody waits
// for a partner); afterwards the communicator still works.
TEST(Scan, BadArgumentsOnEveryRank) {
  rcc_comm_t comm = ranktest::comm();
  const int rank = ranktest::rank();
  std::vector<float> f(8, 1.0f), g(8, 0.0f);
  std::vector<int32_t> n(8, 1), m(8, 0);
  auto expect_invalid = [](rcc_status_t status, const std::string& what, const char* must_mention) {
    EXPECT_EQ(status, RCC_ERR_INVALID_ARGUMENT) << what << ": " << rcc_last_error();
    EXPECT_NE(std::string(rcc_last_error()).find(must_mention), std::string::npos)
        << what << ": message '" << rcc_last_error() << "' does not name " << must_mention;
  };
  // Exscan: NULL recvbuf is an error on every rank but 0 (rank 0 fails on its NULL sendbuf).
  if (rank == 0) {
    expect_invalid(rcc_exscan(comm, nullptr, m.data(), 4, RCC_INT32, RCC_SUM), "exscan null sendbuf on rank 0",
                   "sendbuf");
  } else {
    expect_invalid(rcc_exscan(comm, n.data(), nullptr, 4, RCC_INT32, RCC_SUM),
                   "exscan null recvbuf on rank " + std::to_string(rank), "recvbuf");
  }
  rcc_request_t request = nullptr;
  if (rank == 0) {
    expect_invalid(rcc_iexscan(comm, nullptr, nullptr, 4, RCC_INT32, RCC_SUM, &request), "iexscan null sendbuf",
                   "sendbuf");
  } else {
    expect_invalid(rcc_iexscan(comm, n.data(), nullptr, 4, RCC_INT32, RCC_SUM, &request),
                   "iexscan null recvbuf on rank " + std::to_string(rank), "recvbuf");
  }
  // Scan: NULL recvbuf is an error on every rank, rank 0 included.
  expect_invalid(rcc_scan(comm, n.data(), nullptr, 4, RCC_INT32, RCC_SUM), "scan null recvbuf", "recvbuf");
  expect_invalid(rcc_iscan(comm, n.data(), nullptr, 4, RCC_INT32, RCC_SUM, &request), "iscan null recvbuf", "recvbuf");
  expect_invalid(rcc_scan(comm, nullptr, m.data(), 4, RCC_INT32, RCC_SUM), "scan null sendbuf", "sendbuf");
  // Ops outside their types.
  expect_invalid(rcc_scan(comm, f.data(), g.data(), 4, RCC_FLOAT32, RCC_BXOR), "scan bxor on float32", "op");
  expect_invalid(rcc_exscan(comm, f.data(), g.data(), 2, RCC_FLOAT64, RCC_BAND), "exscan band on float64", "op");
  expect_invalid(rcc_iscan(comm, f.data(), g.data(), 8, RCC_BFLOAT16, RCC_BOR, &request), "iscan bor on bfloat16",
                 "op");
  expect_invalid(rcc_scan(comm, n.data(), m.data(), 4, RCC_INT32, RCC_AVG), "scan avg on int32", "RCC_AVG");
  expect_invalid(rcc_exscan(comm, n.data(), m.data(), 4, RCC_UINT16, RCC_AVG), "exscan avg on uint16", "RCC_AVG");
  expect_invalid(rcc_scan(comm, n.data(), m.data(), 4, RCC_INT32, static_cast<rcc_op_t>(RCC_NUM_OPS)),
                 "scan op out of range", "op");
  expect_invalid(rcc_exscan(comm, n.data(), m.data(), 4, static_cast<rcc_datatype_t>(RCC_NUM_DATATYPES), RCC_SUM),
                 "exscan datatype out of range", "datatype");
  expect_invalid(rcc_iexscan(comm, n.data(), m.data(), 4, RCC_INT32, RCC_SUM, nullptr), "iexscan null request",
                 "request");
  expect_invalid(rcc_iscan(comm, n.data(), m.data(), 4, RCC_INT32, RCC_SUM, nullptr), "iscan null request", "request");
  EXPECT_TRUE(std::all_of(m.begin(), m.end(), [](int32_t v) { return v == 0; })) << "a failed call wrote recvbuf";
  // Count 0 with NULL buffers is a valid no-op; exscan with NULL recvbuf on rank 0 is valid.
  RCC_EXPECT_OK(rcc_scan(comm, nullptr, nullptr, 0, RCC_FLOAT32, RCC_SUM));
  RCC_EXPECT_OK(rcc_exscan(comm, nullptr, nullptr, 0, RCC_UINT16, RCC_BXOR));
  RCC_EXPECT_OK(rcc_exscan(comm, n.data(), rank == 0 ? nullptr : m.data(), 4, RCC_INT32, RCC_SUM));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(m[i], rank) << "exscan of ones";
  RCC_EXPECT_OK(rcc_scan(comm, n.data(), m.data(), 8, RCC_INT32, RCC_SUM));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(m[i], rank + 1) << "scan of ones";
}
