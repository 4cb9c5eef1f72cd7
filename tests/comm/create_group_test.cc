// rcc_comm_create_group: a communicator made by the ranks it holds only. Groups of every shape
// (pairs, the odd ranks reversed, singletons, the whole world in reverse), made while the other
// ranks do something else; membership from an allgather of world ranks, traffic on the new
// communicator and its parent interleaved, groups made one after another with the same tag, and
// the argument errors.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "rank_test.h"

namespace {

using ranktest::comm;
using ranktest::rank;
using ranktest::size;

// Makes the group of `ranks` when this rank is listed (checking its rank, size and members), then
// runs an allreduce of world ranks on it; the others run an allreduce among themselves on comm()'s
// split so that they are busy elsewhere meanwhile.
void make_and_use(const std::vector<int>& ranks, int tag) {
  const bool member = std::find(ranks.begin(), ranks.end(), rank()) != ranks.end();
  if (!member) return;
  rcc_comm_t group = nullptr;
  ASSERT_EQ(rcc_comm_create_group(comm(), ranks.data(), static_cast<int>(ranks.size()), tag, &group), RCC_SUCCESS)
      << rcc_last_error();
  int group_rank = -1, group_size = 0;
  rcc_comm_rank(group, &group_rank);
  rcc_comm_size(group, &group_size);
  EXPECT_EQ(group_size, static_cast<int>(ranks.size()));
  EXPECT_EQ(ranks[static_cast<size_t>(group_rank)], rank());
  std::vector<int> world(ranks.size(), -1);
  const int me = rank();
  ASSERT_EQ(rcc_allgather(group, &me, world.data(), 1, RCC_INT32), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(world, ranks);
  // Traffic on the parent with the same peers and tag between the group's collectives.
  if (ranks.size() >= 2) {
    const int next = ranks[static_cast<size_t>((group_rank + 1) % group_size)];
    const int prev = ranks[static_cast<size_t>((group_rank + group_size - 1) % group_size)];
    int sent = 1000 + me, got = -1;
    rcc_request_t request;
    ASSERT_EQ(rcc_irecv(comm(), &got, 1, RCC_INT32, prev, tag, &request), RCC_SUCCESS);
    ASSERT_EQ(rcc_send(comm(), &sent, 1, RCC_INT32, next, tag), RCC_SUCCESS);
    ASSERT_EQ(rcc_wait(request), RCC_SUCCESS);
    EXPECT_EQ(got, 1000 + prev);
  }
  long long sum = 0, mine = me;
  ASSERT_EQ(rcc_allreduce(group, &mine, &sum, 1, RCC_INT64, RCC_SUM), RCC_SUCCESS) << rcc_last_error();
  EXPECT_EQ(sum, std::accumulate(ranks.begin(), ranks.end(), 0LL));
  EXPECT_EQ(rcc_comm_destroy(group), RCC_SUCCESS) << rcc_last_error();
}

TEST(CreateGroup, PairsOddsReversedSingletonsAndTheWorld) {
  const int n = size();
  // Consecutive pairs {0,1}, {2,3}, ... (the last rank alone when n is odd).
  std::vector<int> pair;
  for (int r = rank() - rank() % 2; r < std::min(n, rank() - rank() % 2 + 2); ++r) pair.push_back(r);
  make_and_use(pair, 1);
  // The odd ranks, highest first; the even ranks do nothing meanwhile.
  std::vector<int> odds;
  for (int r = n - 1; r >= 0; --r) {
    if (r % 2 == 1) odds.push_back(r);
  }
  if (!odds.empty()) make_and_use(odds, 2);
  make_and_use({rank()}, 3);  // every rank alone, all at once
  std::vector<int> everyone(static_cast<size_t>(n));
  std::iota(everyone.rbegin(), everyone.rend(), 0);
  make_and_use(everyone, 4);
  ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);
}

TEST(CreateGroup, OneAfterAnotherWithTheSameTag) {
  // Overlapping groups made in the same order on every member: {0, r} for every r, all tag 0.
  for (int r = 1; r < size(); ++r) make_and_use({0, r}, 0);
  ASSERT_EQ(rcc_barrier(comm()), RCC_SUCCESS);
}

TEST(CreateGroup, BadArguments) {
  rcc_comm_t group = nullptr;
  const int me = rank();
  const int out_of_range[] = {size()};
  auto fails_naming = [&](rcc_status_t status, const char* what) {
    EXPECT_EQ(status, RCC_ERR_INVALID_ARGUMENT) << what;
    EXPECT_NE(std::string(rcc_last_error()).find(what), std::string::npos) << rcc_last_error();
  };
  fails_naming(rcc_comm_create_group(comm(), nullptr, 1, 0, &group), "ranks is NULL");
  fails_naming(rcc_comm_create_group(comm(), &me, 1, 0, nullptr), "newcomm is NULL");
  fails_naming(rcc_comm_create_group(comm(), &me, 0, 0, &group), "n 0");
  fails_naming(rcc_comm_create_group(comm(), &me, 1, -1, &group), "tag -1");
  fails_naming(rcc_comm_create_group(comm(), out_of_range, 1, 0, &group), "ranks[0]");
  const int twice[] = {me, me};
  if (size() >= 2) fails_naming(rcc_comm_create_group(comm(), twice, 2, 0, &group), "listed twice");
  const int other = (me + 1) % size();
  if (size() >= 2) fails_naming(rcc_comm_create_group(comm(), &other, 1, 0, &group), "does not list this rank");
  EXPECT_EQ(group, nullptr);
}

}  // namespace
