// Synchronous sends (rcc_ssend, rcc_issend), cancelled receives (rcc_cancel) and rcc_comm_host:
// what MPI_Ssend, MPI_Cancel and MPI_Comm_split_type need from the C API. Part of p2p_test, so it
// also runs on the verbs backend in the soft-RDMA VM and across network namespaces.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "rank_test.h"

namespace {

using ranktest::comm;
using ranktest::rank;
using ranktest::size;

// Rank 0's synchronous send to rank 1 is not complete while rank 1 has posted no receive, and is
// complete once it has, at 0 bytes, small and large.
TEST(SyncSend, CompletesOnlyOnceMatched) {
  ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{70001}, size_t{1} << 20}) {
    std::vector<uint8_t> data(bytes + 1, static_cast<uint8_t>(bytes % 251));
    if (size() >= 2 && rank() == 0) {
      rcc_request_t request = nullptr;
      ASSERT_EQ(rcc_issend(comm(), data.data(), bytes, RCC_UINT8, 1, 7, &request), RCC_SUCCESS) << rcc_last_error();
      int done = 0;
      for (int i = 0; i < 100 && done == 0; ++i) ASSERT_EQ(rcc_test(request, &done), RCC_SUCCESS);
      EXPECT_EQ(done, 0) << "a synchronous send of " << bytes << " bytes completed before any receive";
      ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);  // rank 1 receives after this
      if (done == 0) {
        ASSERT_EQ(rcc_wait(request), RCC_SUCCESS) << rcc_last_error();
      }
    } else if (size() >= 2 && rank() == 1) {
      ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);
      std::vector<uint8_t> got(bytes + 1, 0);
      ASSERT_EQ(rcc_recv(comm(), got.data(), bytes, RCC_UINT8, 0, 7), RCC_SUCCESS) << rcc_last_error();
      EXPECT_EQ(std::memcmp(got.data(), data.data(), bytes), 0);
    } else {
      ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);
    }
  }
  // To oneself: the blocking form would wait forever; the nonblocking one completes on the receive.
  std::vector<int32_t> out(20000, rank()), in(20000, -1);
  rcc_request_t request = nullptr;
  ASSERT_EQ(rcc_issend(comm(), out.data(), out.size(), RCC_INT32, rank(), 8, &request), RCC_SUCCESS);
  int done = 0;
  ASSERT_EQ(rcc_test(request, &done), RCC_SUCCESS);
  EXPECT_EQ(done, 0);
  ASSERT_EQ(rcc_recv(comm(), in.data(), in.size(), RCC_INT32, rank(), 8), RCC_SUCCESS);
  if (done == 0) {
    ASSERT_EQ(rcc_wait(request), RCC_SUCCESS);
  }
  EXPECT_EQ(in, out);
  ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);
}

// A receive nobody sends to is cancelled: its wait says RCC_ERR_CANCELLED and the buffer is
// untouched; a later message with that tag goes to a later receive.
TEST(Cancel, UnmatchedReceive) {
  ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);
  int32_t value = -5;
  rcc_request_t request = nullptr;
  ASSERT_EQ(rcc_irecv(comm(), &value, 1, RCC_INT32, RCC_ANY_SOURCE, 11, &request), RCC_SUCCESS);
  int cancelled = -1;
  ASSERT_EQ(rcc_cancel(request, &cancelled), RCC_SUCCESS);
  EXPECT_EQ(cancelled, 1);
  EXPECT_EQ(rcc_wait(request), RCC_ERR_CANCELLED);
  EXPECT_EQ(value, -5);
  // A matched receive is not cancelled: it completes with its message.
  int32_t mine = 100 + rank(), got = -1;
  ASSERT_EQ(rcc_send(comm(), &mine, 1, RCC_INT32, rank(), 11), RCC_SUCCESS);
  ASSERT_EQ(rcc_irecv(comm(), &got, 1, RCC_INT32, rank(), 11, &request), RCC_SUCCESS);
  ASSERT_EQ(rcc_cancel(request, &cancelled), RCC_SUCCESS);
  EXPECT_EQ(cancelled, 0);
  EXPECT_EQ(rcc_wait(request), RCC_SUCCESS);
  EXPECT_EQ(got, mine);
  EXPECT_EQ(rcc_cancel(nullptr, &cancelled), RCC_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);
}

// The hosts rcc sees: one unless the run says otherwise (RCC_TEST_HOSTS=H: the ranks in H equal
// blocks, each on a test host of its own with a private /dev/shm, as netns_tcp_test.sh runs them).
TEST(CommHost, AsLaunched) {
  const char* given = std::getenv("RCC_TEST_HOSTS");
  const int expected = given != nullptr ? std::atoi(given) : 1;
  int host = -1, hosts = -1;
  ASSERT_EQ(rcc_comm_host(comm(), &host, &hosts), RCC_SUCCESS);
  EXPECT_EQ(hosts, expected);
  EXPECT_EQ(host, rank() / (size() / expected));
  EXPECT_EQ(rcc_comm_host(nullptr, &host, &hosts), RCC_ERR_INVALID_ARGUMENT);
}

}  // namespace
