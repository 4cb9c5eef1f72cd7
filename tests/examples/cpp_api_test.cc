// The C++ API (include/rcc/rcc.hpp) on 1..3 ranks: typed collectives and point to point, the
// argument checks of the C++ layer, Request and Communicator ownership, split and dup, and (at
// compile time) which types and buffers the calls accept. Every call goes through rcc.hpp, on a
// dup of the test program's communicator (ranktest::comm() itself stays the harness's).
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "rank_test.h"
#include "rcc/rcc.hpp"

// A user's own half type, mapped by specialising rcc::datatype_of.
struct MyHalf {
  std::uint16_t bits;
};
template <>
struct rcc::datatype_of<MyHalf> : std::integral_constant<rcc_datatype_t, RCC_FLOAT16> {};
// A mapping of the wrong size is rejected.
struct WrongSize {
  std::uint32_t bits;
};
template <>
struct rcc::datatype_of<WrongSize> : std::integral_constant<rcc_datatype_t, RCC_FLOAT16> {};

namespace {

// ---- compile time: which element types and buffers the calls take ----
static_assert(rcc::element<std::int8_t> && rcc::element<std::uint8_t> && rcc::element<std::int16_t> &&
              rcc::element<std::uint16_t> && rcc::element<std::int32_t> && rcc::element<std::uint32_t> &&
              rcc::element<std::int64_t> && rcc::element<std::uint64_t> && rcc::element<float> &&
              rcc::element<double> && rcc::element<rcc::float16_t> && rcc::element<rcc::bfloat16_t>);
static_assert(rcc::datatype_v<std::int16_t> == RCC_INT16 && rcc::datatype_v<std::uint16_t> == RCC_UINT16);
static_assert(rcc::datatype_v<long long> == RCC_INT64 && rcc::datatype_v<unsigned long long> == RCC_UINT64);
static_assert(rcc::datatype_v<unsigned char> == RCC_UINT8 && rcc::datatype_v<signed char> == RCC_INT8);
static_assert(rcc::datatype_v<float> == RCC_FLOAT32 && rcc::datatype_v<double> == RCC_FLOAT64);
static_assert(rcc::datatype_v<rcc::float16_t> == RCC_FLOAT16 && rcc::datatype_v<rcc::bfloat16_t> == RCC_BFLOAT16);
static_assert(!rcc::element<std::string> && !rcc::element<long double> && !rcc::element<bool> && !rcc::element<char> &&
              !rcc::element<char16_t> && !rcc::element<int*> && !rcc::element<const int>);
static_assert(rcc::element<MyHalf> && rcc::datatype_v<MyHalf> == RCC_FLOAT16);
static_assert(!rcc::element<WrongSize>);

template <class V>
concept can_allreduce_in_place = requires(const rcc::Communicator& comm, V&& data) {
  comm.allreduce(std::forward<V>(data), rcc::Op::Sum);
};
template <class In, class Out>
concept can_allreduce = requires(const rcc::Communicator& comm, In&& in, Out&& out) {
  comm.allreduce(std::forward<In>(in), std::forward<Out>(out), rcc::Op::Sum);
};
template <class V>
concept can_iallreduce_in_place = requires(const rcc::Communicator& comm, V&& data) {
  comm.iallreduce(std::forward<V>(data), rcc::Op::Sum);
};
static_assert(can_allreduce_in_place<std::vector<int>&> && can_allreduce_in_place<std::span<float>> &&
              can_allreduce_in_place<std::array<double, 4>&> && can_allreduce_in_place<std::int16_t (&)[8]>);
static_assert(!can_allreduce_in_place<std::vector<long double>&> && !can_allreduce_in_place<std::vector<std::string>&>);
static_assert(!can_allreduce_in_place<const std::vector<int>&> && !can_allreduce_in_place<std::span<const int>>);
static_assert(can_allreduce<const std::vector<int>&, std::vector<int>&> &&
              can_allreduce<std::span<const float>, std::span<float>>);
static_assert(!can_allreduce<std::vector<int>&, std::vector<float>&>);  // one datatype per call
static_assert(!can_allreduce<std::vector<int>&, const std::vector<int>&>);
// A nonblocking call's buffers must outlive it: no temporary containers (spans are views).
static_assert(can_iallreduce_in_place<std::vector<int>&> && can_iallreduce_in_place<std::span<int>>);
static_assert(!can_iallreduce_in_place<std::vector<int>>);
// So must its counts and displacements (rcc reads them until it completes).
template <class C>
concept can_iallgatherv_with = requires(const rcc::Communicator& comm, std::vector<int>& in, std::vector<int>& out,
                                        C&& counts) {
  comm.iallgatherv(in, out, std::forward<C>(counts), std::forward<C>(counts));
};
static_assert(can_iallgatherv_with<std::vector<std::size_t>&> && can_iallgatherv_with<std::span<const std::size_t>>);
static_assert(!can_iallgatherv_with<std::vector<std::size_t>>);
// Move-only owners.
static_assert(!std::is_copy_constructible_v<rcc::Communicator> && !std::is_copy_assignable_v<rcc::Communicator>);
static_assert(!std::is_copy_constructible_v<rcc::Request> && !std::is_copy_assignable_v<rcc::Request>);
static_assert(std::is_nothrow_move_constructible_v<rcc::Communicator> &&
              std::is_nothrow_move_assignable_v<rcc::Communicator>);
static_assert(std::is_nothrow_move_constructible_v<rcc::Request> && std::is_nothrow_move_assignable_v<rcc::Request>);
static_assert(std::is_base_of_v<std::runtime_error, rcc::Error>);
static_assert(static_cast<int>(rcc::Op::BitXor) == RCC_BXOR && static_cast<int>(rcc::Op::Avg) == RCC_AVG);
static_assert(rcc::undefined == RCC_UNDEFINED && rcc::any_source == RCC_ANY_SOURCE && rcc::any_tag == RCC_ANY_TAG);

// ---- the communicator the tests use: a dup of the harness's, made once ----
rcc::Communicator g_world;

class World : public testing::Environment {
 public:
  void SetUp() override {
    rcc_comm_t comm = nullptr;
    RCC_ASSERT_OK(rcc_comm_dup(ranktest::comm(), &comm));
    g_world = rcc::Communicator::adopt(comm);
  }
  void TearDown() override { g_world = rcc::Communicator(); }
};
const testing::Environment* const g_environment = testing::AddGlobalTestEnvironment(new World);

const rcc::Communicator& world() { return g_world; }

// Runs call, which must throw rcc::Error with status; returns what().
template <class Call>
std::string expect_error(rcc_status_t status, Call call) {
  try {
    call();
  } catch (const rcc::Error& error) {
    EXPECT_EQ(error.status(), status) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "no rcc::Error thrown";
  return "";
}

template <class T>
void expect_sum() {
  const int n = world().size(), r = world().rank();
  std::vector<T> in(257), out(257);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i % 50 + static_cast<std::size_t>(r));
  world().allreduce(std::as_const(in), out, rcc::Op::Sum);
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_EQ(out[i], static_cast<T>(n * static_cast<int>(i % 50) + n * (n - 1) / 2)) << "element " << i;
  }
}

TEST(CppApi, TypedAllreduce) {
  expect_sum<std::int32_t>();
  expect_sum<float>();
  expect_sum<double>();
  expect_sum<std::int16_t>();
  expect_sum<std::uint16_t>();
  expect_sum<std::int64_t>();
  expect_sum<std::uint8_t>();
  expect_sum<long long>();
}

TEST(CppApi, InPlaceAllreduce) {
  const int n = world().size(), r = world().rank();
  std::vector<double> data(1000, 0.5 + r);
  world().allreduce(data, rcc::Op::Sum);
  for (double v : data) ASSERT_EQ(v, 0.5 * n + n * (n - 1) / 2.0);
  std::array<std::int32_t, 3> maxima{r, -r, 7};
  world().allreduce(maxima, rcc::Op::Max);
  EXPECT_EQ(maxima, (std::array<std::int32_t, 3>{n - 1, 0, 7}));
  std::int64_t minima[2] = {r, 100 - r};
  world().allreduce(minima, rcc::Op::Min);
  EXPECT_EQ(minima[0], 0);
  EXPECT_EQ(minima[1], 100 - (n - 1));
  std::vector<float> average(5, static_cast<float>(2 * r));
  world().allreduce(std::span(average), rcc::Op::Avg);
  for (float v : average) EXPECT_EQ(v, static_cast<float>(n - 1));
}

// SharedArray: rcc_mem_alloc memory as a range, zeroed like a vector. Sizes from one element to
// past the size from which an allreduce may move straight between such buffers (the second call
// over them; tests/collectives checks that it does), out of place and in place.
TEST(CppApi, SharedArrayAllreduce) {
  const int n = world().size(), r = world().rank();
  for (std::size_t size : {std::size_t{1}, std::size_t{4097}, std::size_t{300001}}) {
    rcc::SharedArray<float> in(size), out(size);
    ASSERT_EQ(in.size(), size);
    ASSERT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == 0.0f; }));
    for (int call = 0; call < 2; ++call) {
      for (std::size_t i = 0; i < size; ++i) in[i] = static_cast<float>((i + static_cast<std::size_t>(r + call)) % 61);
      world().allreduce(in, out, rcc::Op::Sum);
      for (std::size_t i = 0; i < size; ++i) {
        float expected = 0;
        for (int q = 0; q < n; ++q) expected += static_cast<float>((i + static_cast<std::size_t>(q + call)) % 61);
        ASSERT_EQ(out[i], expected) << "size " << size << " element " << i;
      }
      world().allreduce(out, rcc::Op::Sum);  // in place: every rank holds the same sums, so n times them
      for (std::size_t i = 0; i < size; ++i) {
        float expected = 0;
        for (int q = 0; q < n; ++q) expected += static_cast<float>((i + static_cast<std::size_t>(q + call)) % 61);
        ASSERT_EQ(out[i], expected * static_cast<float>(n)) << "in place, size " << size << " element " << i;
      }
    }
  }
  rcc::SharedArray<double> moved(8);
  moved[7] = 2.5;
  rcc::SharedArray<double> owner = std::move(moved);
  EXPECT_TRUE(moved.empty());
  EXPECT_EQ(owner[7], 2.5);
  EXPECT_THROW(rcc::SharedArray<double>(std::numeric_limits<std::size_t>::max() / 4), rcc::Error);
}

TEST(CppApi, BitwiseOps) {
  const int n = world().size(), r = world().rank();
  std::vector<std::uint32_t> bits(4, 1u << r);
  world().allreduce(bits, rcc::Op::BitOr);
  for (std::uint32_t v : bits) EXPECT_EQ(v, (1u << n) - 1);
  std::vector<std::uint16_t> cleared(4, static_cast<std::uint16_t>(0xffff & ~(1u << r)));
  world().allreduce(cleared, rcc::Op::BitAnd);
  for (std::uint16_t v : cleared) EXPECT_EQ(v, static_cast<std::uint16_t>(0xffff & ~((1u << n) - 1)));
  std::vector<std::int64_t> flipped(4, std::int64_t{1} << (r % 2));
  world().allreduce(flipped, rcc::Op::BitXor);
  const std::int64_t ones = (n + 1) / 2, twos = n / 2;  // ranks with bit 0, with bit 1
  for (std::int64_t v : flipped) EXPECT_EQ(v, (ones % 2) | ((twos % 2) << 1));
}

TEST(CppApi, HalfTypes) {
  const int n = world().size();
  // n * 1.0 in binary16 and bfloat16 (n <= 3 here).
  const std::uint16_t half[] = {0, 0x3c00, 0x4000, 0x4200}, brain[] = {0, 0x3f80, 0x4000, 0x4040};
  ASSERT_LE(n, 3);
  std::vector<rcc::float16_t> h(9, rcc::float16_t{0x3c00});
  std::vector<rcc::bfloat16_t> b(9, rcc::bfloat16_t{0x3f80});
  std::vector<MyHalf> mine(9, MyHalf{0x3c00});
  world().allreduce(h, rcc::Op::Sum);
  world().allreduce(b, rcc::Op::Sum);
  world().allreduce(mine, rcc::Op::Sum);
  for (const auto& v : h) EXPECT_EQ(v.bits, half[n]);
  for (const auto& v : b) EXPECT_EQ(v.bits, brain[n]);
  for (const auto& v : mine) EXPECT_EQ(v.bits, half[n]);
}

TEST(CppApi, ErrorCarriesStatusAndMessage) {
  const rcc::Error made(RCC_ERR_TIMEOUT, "waited too long");
  EXPECT_EQ(made.status(), RCC_ERR_TIMEOUT);
  EXPECT_EQ(made.message(), "waited too long");
  EXPECT_EQ(std::string(made.what()), std::string(rcc_status_string(RCC_ERR_TIMEOUT)) + ": waited too long");
  // A failure of the C layer: its status and rcc_last_error().
  std::vector<int> data(2);
  const std::string what =
      expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().send(data, (world().rank() + 1) % world().size(), -5); });
  EXPECT_EQ(what, std::string(rcc_status_string(RCC_ERR_INVALID_ARGUMENT)) + ": " + rcc_last_error());
  EXPECT_NE(what.find("tag"), std::string::npos) << what;
}

TEST(CppApi, WrongSizesThrowBeforeCalling) {
  const int n = world().size();
  const auto ranks = static_cast<std::size_t>(n);
  std::vector<int> four(4), three(3), many(4 * ranks + 1);
  std::string what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().allreduce(four, three, rcc::Op::Sum); });
  EXPECT_NE(what.find("rcc::Communicator::allreduce: out has 3 elements, expected 4"), std::string::npos) << what;
  EXPECT_EQ(what.rfind(rcc_status_string(RCC_ERR_INVALID_ARGUMENT), 0), 0u) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().allgather(four, many); });
  EXPECT_NE(what.find("allgather: out has"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().reduce_scatter(three, four, rcc::Op::Sum); });
  EXPECT_NE(what.find("reduce_scatter: in has 3 elements"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().scan(four, three, rcc::Op::Sum); });
  EXPECT_NE(what.find("scan: out has 3"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { auto r = world().iallreduce(four, three, rcc::Op::Max); });
  EXPECT_NE(what.find("iallreduce: out"), std::string::npos) << what;
  if (n > 1) {
    std::vector<int> odd(ranks + 1), odd_out(ranks + 1);
    what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().alltoall(odd, odd_out); });
    EXPECT_NE(what.find("alltoall: in has"), std::string::npos) << what;
  }
  // Vector collectives: counts and displacements one per rank, every block inside its buffer.
  std::vector<std::size_t> short_counts(ranks - 1, 1), counts(ranks, 1), displs(ranks, 0), far(ranks, 10);
  std::vector<int> one(1), out(ranks);
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().allgatherv(one, out, short_counts, displs); });
  EXPECT_NE(what.find("allgatherv: recvcounts has"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().allgatherv(one, out, counts, far); });
  EXPECT_NE(what.find("allgatherv: out has"), std::string::npos) << what;
  EXPECT_NE(what.find("displs[0] = 10"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().allgatherv(three, out, counts, displs); });
  EXPECT_NE(what.find("allgatherv: in has 3 elements, expected 1 (recvcounts["), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().alltoallv(out, counts, displs, one, counts, far); });
  EXPECT_NE(what.find("alltoallv: out has 1 elements"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().reduce_scatterv(many, one, counts, rcc::Op::Sum); });
  EXPECT_NE(what.find("reduce_scatterv: in has"), std::string::npos) << what;
  // None of these reached rcc: the communicator still works, with nothing left over.
  std::vector<int> ones(8, 1);
  world().allreduce(ones, rcc::Op::Sum);
  for (int v : ones) EXPECT_EQ(v, n);
}

TEST(CppApi, BadRootThrows) {
  const int n = world().size();
  std::vector<int> data(4), all(4 * static_cast<std::size_t>(n));
  std::string what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().broadcast(data, n); });
  EXPECT_NE(what.find("root"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().gather(data, all, -1); });
  EXPECT_NE(what.find("root"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { world().reduce(data, data, rcc::Op::Sum, n + 3); });
  EXPECT_NE(what.find("root"), std::string::npos) << what;
  what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { auto r = world().ibroadcast(data, -2); });
  EXPECT_NE(what.find("root"), std::string::npos) << what;
  world().barrier();
}

TEST(CppApi, EmptyCommunicator) {
  rcc::Communicator empty;
  EXPECT_FALSE(empty);
  EXPECT_EQ(empty.native(), nullptr);
  EXPECT_EQ(empty.rank(), -1);
  EXPECT_EQ(empty.size(), 0);
  expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { empty.barrier(); });
  std::vector<int> in(2), out(4);
  const std::string what = expect_error(RCC_ERR_INVALID_ARGUMENT, [&] { empty.allgather(in, out); });
  EXPECT_NE(what.find("the communicator is empty"), std::string::npos) << what;
  EXPECT_FALSE(rcc::Communicator::adopt(nullptr));
}

TEST(CppApi, RequestMoveWaitTest) {
  const int n = world().size();
  rcc::Request none;
  EXPECT_FALSE(none.valid());
  EXPECT_TRUE(none.test());  // an empty request counts as complete
  none.wait();
  expect_error(RCC_ERR_INVALID_USAGE, [&] { none.wait_info(); });

  rcc::Request barrier = world().ibarrier();
  EXPECT_TRUE(barrier.valid());
  rcc::Request moved(std::move(barrier));
  EXPECT_FALSE(barrier.valid());
  EXPECT_TRUE(moved.valid());
  moved.wait();
  EXPECT_FALSE(moved.valid());

  std::vector<int> polled(1000, 1);
  rcc::Request poll = world().iallreduce(polled, rcc::Op::Sum);
  while (!poll.test()) {
  }
  EXPECT_FALSE(poll.valid());
  EXPECT_TRUE(poll.test());
  for (int v : polled) ASSERT_EQ(v, n);

  // Assigning over a pending request waits for it; so does the destructor.
  std::vector<int> first(100, 2), second(100, 3), third(100, 4);
  rcc::Request a = world().iallreduce(first, rcc::Op::Sum);
  rcc::Request b = world().iallreduce(second, rcc::Op::Sum);
  a = std::move(b);
  for (int v : first) ASSERT_EQ(v, 2 * n);
  EXPECT_TRUE(a.valid());
  EXPECT_FALSE(b.valid());
  a.wait();
  for (int v : second) ASSERT_EQ(v, 3 * n);
  { rcc::Request scoped = world().iallreduce(third, rcc::Op::Sum); }
  for (int v : third) ASSERT_EQ(v, 4 * n);
  // The handle can be taken out and back.
  rcc::Request adopted(world().ibarrier().release());
  EXPECT_TRUE(adopted.valid());
  adopted.wait();
}

TEST(CppApi, WaitAllAndWaitAny) {
  const int n = world().size();
  std::vector<std::vector<double>> data(5, std::vector<double>(64, 1.0));
  std::vector<rcc::Request> requests;
  for (auto& d : data) requests.push_back(world().iallreduce(d, rcc::Op::Sum));
  requests.emplace_back();  // an empty one is skipped
  rcc::wait_all(requests);
  for (const auto& r : requests) EXPECT_FALSE(r.valid());
  for (const auto& d : data) {
    for (double v : d) ASSERT_EQ(v, n);
  }

  std::vector<int> x(10, 1), y(10, 2);
  std::vector<rcc::Request> pair;
  pair.push_back(world().iallreduce(x, rcc::Op::Sum));
  pair.push_back(world().iallreduce(y, rcc::Op::Sum));
  std::set<std::size_t> finished;
  while (std::optional<std::size_t> index = rcc::wait_any(pair)) {
    EXPECT_FALSE(pair[*index].valid());
    finished.insert(*index);
  }
  EXPECT_EQ(finished, (std::set<std::size_t>{0, 1}));
  for (int v : x) ASSERT_EQ(v, n);
  for (int v : y) ASSERT_EQ(v, 2 * n);
}

TEST(CppApi, SplitAndDup) {
  const int n = world().size(), r = world().rank();
  // By parity, in reverse rank order.
  rcc::Communicator parity = world().split(r % 2, -r);
  ASSERT_TRUE(parity);
  const int members = (n - r % 2 + 1) / 2;
  EXPECT_EQ(parity.size(), members);
  int position = 0;  // ranks of my parity above me come first
  for (int other = r + 2; other < n; other += 2) ++position;
  EXPECT_EQ(parity.rank(), position);
  std::vector<int> ranks_sum(1, r);
  parity.allreduce(ranks_sum, rcc::Op::Sum);
  int expected = 0;
  for (int other = r % 2; other < n; other += 2) expected += other;
  EXPECT_EQ(ranks_sum[0], expected);

  rcc::Communicator copy = world().dup();
  EXPECT_EQ(copy.rank(), r);
  EXPECT_EQ(copy.size(), n);
  EXPECT_NE(copy.native(), world().native());
  std::vector<int> ones(3, 1);
  copy.allreduce(ones, rcc::Op::Sum);
  EXPECT_EQ(ones, std::vector<int>(3, n));

  // Odd ranks join nothing.
  rcc::Communicator evens = world().split(r % 2 == 0 ? 0 : rcc::undefined, r);
  EXPECT_EQ(static_cast<bool>(evens), r % 2 == 0);
  if (evens) {
    EXPECT_EQ(evens.size(), (n + 1) / 2);
    EXPECT_EQ(evens.rank(), r / 2);
    evens.barrier();
  }
  // Moving hands the communicator over.
  rcc::Communicator taken = std::move(copy);
  EXPECT_FALSE(copy);
  EXPECT_EQ(copy.size(), 0);
  EXPECT_EQ(taken.size(), n);
  taken.barrier();
  const std::string_view transport = taken.transport();
  EXPECT_TRUE(transport == "ucx" || transport == "verbs") << transport;
}

TEST(CppApi, SendRecvAnySource) {
  const int n = world().size(), r = world().rank();
  // Every rank (rank 0 too) sends 3 + r elements with tag 10 + r to rank 0.
  std::vector<std::int32_t> mine(static_cast<std::size_t>(3 + r));
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = r * 100 + static_cast<std::int32_t>(i);
  rcc::Request sent = world().isend(mine, 0, 10 + r);
  if (r == 0) {
    std::set<int> sources;
    for (int k = 0; k < n; ++k) {
      std::vector<std::int32_t> got(16, -1);
      const rcc::MessageInfo info = world().recv(got, rcc::any_source, rcc::any_tag);
      ASSERT_GE(info.source, 0);
      ASSERT_LT(info.source, n);
      EXPECT_EQ(info.tag, 10 + info.source);
      EXPECT_EQ(info.bytes, (3 + static_cast<std::size_t>(info.source)) * sizeof(std::int32_t));
      EXPECT_EQ(info.count<std::int32_t>(), 3 + static_cast<std::size_t>(info.source));
      for (std::size_t i = 0; i < info.count<std::int32_t>(); ++i) {
        EXPECT_EQ(got[i], info.source * 100 + static_cast<std::int32_t>(i));
      }
      EXPECT_EQ(got[info.count<std::int32_t>()], -1);
      sources.insert(info.source);
    }
    EXPECT_EQ(sources.size(), static_cast<std::size_t>(n));
  }
  const rcc::MessageInfo send_info = sent.wait_info();
  EXPECT_EQ(send_info.source, 0);
  EXPECT_EQ(send_info.tag, 10 + r);
  EXPECT_EQ(send_info.bytes, mine.size() * sizeof(std::int32_t));
  world().barrier();
}

TEST(CppApi, ProbeAndIprobe) {
  const int n = world().size(), r = world().rank();
  EXPECT_FALSE(world().iprobe(rcc::any_source, 99).has_value());  // nothing with tag 99 is ever sent
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  std::vector<std::int64_t> payload(static_cast<std::size_t>(5 + r), r);
  rcc::Request sent = world().isend(payload, right, 7);
  const rcc::MessageInfo info = world().probe(rcc::any_source, 7);
  EXPECT_EQ(info.source, left);
  EXPECT_EQ(info.tag, 7);
  ASSERT_EQ(info.count<std::int64_t>(), static_cast<std::size_t>(5 + left));
  std::optional<rcc::MessageInfo> again = world().iprobe(left, rcc::any_tag);
  ASSERT_TRUE(again.has_value());  // still there: probing does not receive
  EXPECT_EQ(*again, info);
  std::vector<std::int64_t> got(info.count<std::int64_t>());
  const rcc::MessageInfo received = world().recv(got, info.source, info.tag);
  EXPECT_EQ(received, info);
  EXPECT_EQ(got, std::vector<std::int64_t>(got.size(), left));
  sent.wait();
  world().barrier();
}

TEST(CppApi, SendRecvRing) {
  const int n = world().size(), r = world().rank();
  const int right = (r + 1) % n, left = (r + n - 1) % n;
  std::vector<float> out(6, static_cast<float>(r)), in(8, -1.0f);
  const rcc::MessageInfo info = world().sendrecv(out, right, 3, in, left, 3);
  EXPECT_EQ(info.source, left);
  EXPECT_EQ(info.tag, 3);
  EXPECT_EQ(info.bytes, 6 * sizeof(float));
  for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(in[i], static_cast<float>(left));
  EXPECT_EQ(in[6], -1.0f);
}

TEST(CppApi, FixedCountCollectives) {
  const int n = world().size(), r = world().rank();
  const auto ranks = static_cast<std::size_t>(n);
  std::vector<int> mine(2, r), all(2 * ranks, -1);
  world().allgather(mine, all);
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], static_cast<int>(i / 2));

  std::vector<int> root_data(3, r == 0 ? 42 : 0);
  world().broadcast(root_data, 0);
  EXPECT_EQ(root_data, std::vector<int>(3, 42));

  std::vector<int> contribution(2, r + 1), total(2, -1), nothing;
  const int last = n - 1;
  world().reduce(contribution, r == last ? std::span<int>(total) : std::span<int>(nothing), rcc::Op::Sum, last);
  if (r == last) {
    EXPECT_EQ(total, std::vector<int>(2, n * (n + 1) / 2));
  }

  std::vector<int> gathered(r == 0 ? 2 * ranks : 0);
  world().gather(mine, gathered, 0);
  if (r == 0) {
    EXPECT_EQ(gathered, all);
  }

  std::vector<int> blocks(r == 0 ? 2 * ranks : 0), block(2, -1);
  for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<int>(i);
  world().scatter(blocks, block, 0);
  EXPECT_EQ(block, (std::vector<int>{2 * r, 2 * r + 1}));

  std::vector<int> spread(2 * ranks), reduced(2);
  for (std::size_t i = 0; i < spread.size(); ++i) spread[i] = static_cast<int>(i);
  world().reduce_scatter(spread, reduced, rcc::Op::Sum);
  EXPECT_EQ(reduced, (std::vector<int>{2 * r * n, (2 * r + 1) * n}));

  std::vector<int> to_each(ranks), from_each(ranks, -1);
  for (std::size_t d = 0; d < ranks; ++d) to_each[d] = r * 10 + static_cast<int>(d);
  world().alltoall(to_each, from_each);
  for (std::size_t s = 0; s < ranks; ++s) EXPECT_EQ(from_each[s], static_cast<int>(s) * 10 + r);

  // The nonblocking forms of the same.
  std::vector<int> all2(2 * ranks, -1), from_each2(ranks, -1), gathered2(r == 0 ? 2 * ranks : 0);
  std::vector<rcc::Request> requests;
  requests.push_back(world().iallgather(mine, all2));
  requests.push_back(world().ialltoall(to_each, from_each2));
  requests.push_back(world().igather(mine, gathered2, 0));
  rcc::wait_all(requests);
  EXPECT_EQ(all2, all);
  EXPECT_EQ(from_each2, from_each);
  if (r == 0) {
    EXPECT_EQ(gathered2, all);
  }
}

TEST(CppApi, VectorCollectives) {
  const int n = world().size(), r = world().rank();
  const auto ranks = static_cast<std::size_t>(n), me = static_cast<std::size_t>(r);
  constexpr int kGap = -9;
  // Rank s contributes s + 1 elements s * 10 + i; blocks are placed one element apart.
  std::vector<std::size_t> counts(ranks), displs(ranks);
  std::size_t end = 0;
  for (std::size_t s = 0; s < ranks; ++s) {
    counts[s] = s + 1;
    displs[s] = end + 1;
    end = displs[s] + counts[s];
  }
  std::vector<int> mine(me + 1);
  for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = r * 10 + static_cast<int>(i);
  std::vector<int> expected(end + 1, kGap);
  for (std::size_t s = 0; s < ranks; ++s) {
    for (std::size_t i = 0; i < counts[s]; ++i) expected[displs[s] + i] = static_cast<int>(s * 10 + i);
  }
  std::vector<int> gathered(end + 1, kGap);
  world().allgatherv(mine, gathered, counts, displs);
  EXPECT_EQ(gathered, expected);

  const int root = n - 1;
  std::vector<int> at_root(r == root ? end + 1 : 0, kGap);
  world().gatherv(mine, at_root, counts, displs, root);
  if (r == root) {
    EXPECT_EQ(at_root, expected);
  }

  // scatterv from the last rank of expected's blocks: rank s gets its own contribution back.
  std::vector<int> back(me + 1, kGap);
  world().scatterv(r == root ? expected : std::vector<int>{}, counts, displs, back, root);
  EXPECT_EQ(back, mine);

  // reduce_scatterv: rank s gets counts[s] elements, the sum over ranks of (rank + position).
  std::size_t total = 0;
  for (std::size_t c : counts) total += c;
  std::vector<int> contributions(total), reduced(me + 1, kGap);
  for (std::size_t i = 0; i < total; ++i) contributions[i] = r + static_cast<int>(i);
  world().reduce_scatterv(contributions, reduced, counts, rcc::Op::Sum);
  const std::size_t offset = me * (me + 1) / 2;
  for (std::size_t i = 0; i < reduced.size(); ++i) {
    EXPECT_EQ(reduced[i], n * (n - 1) / 2 + n * static_cast<int>(offset + i));
  }

  // alltoallv: d + 1 elements r * 100 + d to rank d; receive blocks of r + 1 elements one apart.
  std::vector<std::size_t> sendcounts(ranks), sdispls(ranks), recvcounts(ranks, me + 1), rdispls(ranks);
  std::size_t sent = 0;
  for (std::size_t d = 0; d < ranks; ++d) {
    sendcounts[d] = d + 1;
    sdispls[d] = sent;
    sent += d + 1;
    rdispls[d] = d * (me + 2);
  }
  std::vector<int> out(sent), in(ranks * (me + 2), kGap);
  for (std::size_t d = 0; d < ranks; ++d) {
    for (std::size_t i = 0; i < sendcounts[d]; ++i) out[sdispls[d] + i] = r * 100 + static_cast<int>(d);
  }
  world().alltoallv(out, sendcounts, sdispls, in, recvcounts, rdispls);
  for (std::size_t s = 0; s < ranks; ++s) {
    for (std::size_t i = 0; i < me + 1; ++i) EXPECT_EQ(in[rdispls[s] + i], static_cast<int>(s) * 100 + r);
    EXPECT_EQ(in[rdispls[s] + me + 1], kGap) << "gap after block " << s;
  }

  // The nonblocking forms.
  std::vector<int> gathered2(end + 1, kGap), in2(in.size(), kGap), reduced2(me + 1, kGap);
  std::vector<rcc::Request> requests;
  requests.push_back(world().iallgatherv(mine, gathered2, counts, displs));
  requests.push_back(world().ialltoallv(out, sendcounts, sdispls, in2, recvcounts, rdispls));
  requests.push_back(world().ireduce_scatterv(contributions, reduced2, counts, rcc::Op::Sum));
  rcc::wait_all(requests);
  EXPECT_EQ(gathered2, expected);
  EXPECT_EQ(in2, in);
  EXPECT_EQ(reduced2, reduced);
}

TEST(CppApi, ScanAndExscan) {
  const int r = world().rank();
  std::vector<std::int64_t> value(3, r + 1), inclusive(3), exclusive(r == 0 ? 0 : 3, -1);
  world().scan(value, inclusive, rcc::Op::Sum);
  EXPECT_EQ(inclusive, std::vector<std::int64_t>(3, (r + 1) * (r + 2) / 2));
  world().exscan(value, exclusive, rcc::Op::Sum);  // rank 0 passes no buffer
  if (r > 0) {
    EXPECT_EQ(exclusive, std::vector<std::int64_t>(3, r * (r + 1) / 2));
  }
  std::vector<std::int64_t> inclusive2(3), exclusive2(3, -1);
  rcc::Request scan = world().iscan(value, inclusive2, rcc::Op::Max);
  rcc::Request exscan = world().iexscan(value, exclusive2, rcc::Op::Sum);
  exscan.wait();
  scan.wait();
  EXPECT_EQ(inclusive2, std::vector<std::int64_t>(3, r + 1));
  EXPECT_EQ(exclusive2, std::vector<std::int64_t>(3, r == 0 ? -1 : r * (r + 1) / 2));  // rank 0's is untouched
}

TEST(CppApi, OwnCommunicatorByUniqueId) {
  // A one-rank communicator of this rank alone: init_rank, then abort.
  rcc::Communicator solo = rcc::Communicator::init_rank(rcc::Communicator::unique_id(), 0, 1);
  ASSERT_TRUE(solo);
  EXPECT_EQ(solo.rank(), 0);
  EXPECT_EQ(solo.size(), 1);
  std::vector<int> data{1, 2, 3};
  solo.allreduce(data, rcc::Op::Sum);
  EXPECT_EQ(data, (std::vector<int>{1, 2, 3}));
  solo.abort();
  expect_error(RCC_ERR_ABORTED, [&] { solo.barrier(); });
  EXPECT_EQ(solo.rank(), 0);  // still known
}

}  // namespace
