// The API around the algorithms: nonblocking collectives, back-to-back calls, barrier, bad
// arguments and RCC_CHECK=1 mismatches.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "coll_test_util.h"

using namespace coll_test;

TEST(Nonblocking, ManyInFlightWaitedInReverseOrder) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const int kAllreduces = quick() ? 8 : 16;
  std::vector<std::vector<float>> sums(kAllreduces);
  std::vector<rcc_request_t> requests;
  for (int k = 0; k < kAllreduces; ++k) {
    const size_t count = k % 3 == 0 ? 100003 : static_cast<size_t>(k * 37 + 1);
    sums[k].assign(count, static_cast<float>(rank + k));
    rcc_request_t request = nullptr;
    RCC_ASSERT_OK(
        rcc_iallreduce(ranktest::comm(), sums[k].data(), sums[k].data(), count, RCC_FLOAT32, RCC_SUM, &request));
    requests.push_back(request);
  }
  std::vector<int64_t> bcast(5000, rank == 0 ? 42 : -1);
  rcc_request_t request = nullptr;
  RCC_ASSERT_OK(rcc_ibroadcast(ranktest::comm(), bcast.data(), bcast.size(), RCC_INT64, 0, &request));
  requests.push_back(request);
  std::vector<int32_t> gathered(static_cast<size_t>(ranks) * 3), mine(3, rank);
  RCC_ASSERT_OK(rcc_iallgather(ranktest::comm(), mine.data(), gathered.data(), 3, RCC_INT32, &request));
  requests.push_back(request);
  RCC_ASSERT_OK(rcc_ibarrier(ranktest::comm(), &request));
  requests.push_back(request);
  // Poll the first one for a while, then wait for all newest first.
  int done = 0;
  RCC_ASSERT_OK(rcc_test(requests[0], &done));
  if (done) requests[0] = nullptr;
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
    if (*it != nullptr) RCC_ASSERT_OK(rcc_wait(*it));
  }
  for (int k = 0; k < kAllreduces; ++k) {
    const float expected = static_cast<float>(ranks * (ranks - 1) / 2 + ranks * k);
    size_t bad = 0;
    for (float v : sums[k]) bad += v != expected;
    EXPECT_EQ(bad, 0u) << "allreduce " << k;
  }
  for (int64_t v : bcast) ASSERT_EQ(v, 42);
  for (int r = 0; r < ranks; ++r) {
    for (int i = 0; i < 3; ++i) ASSERT_EQ(gathered[r * 3 + i], r);
  }
}

TEST(BackToBack, DifferentSizesAndAlgorithmsWithoutBarrier) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  const size_t sizes[] = {1, 262149, 3, 1023, 100000, 0, 7, 65536};
  const std::vector<const char*> algorithms = and_local({"ring", "tree", "recursive_doubling"});
  int round = 0;
  for (size_t count : sizes) {
    for (const char* algorithm : algorithms) {
      ForceAlgo force(std::string("allreduce:") + algorithm);
      std::vector<int32_t> buf(count);
      for (size_t i = 0; i < count; ++i) buf[i] = static_cast<int32_t>(i % 13) * (rank + 1) + round;
      RCC_ASSERT_OK(rcc_allreduce(ranktest::comm(), buf.data(), buf.data(), count, RCC_INT32, RCC_SUM));
      size_t bad = 0;
      for (size_t i = 0; i < count; ++i) {
        bad += buf[i] != static_cast<int32_t>(i % 13) * ranks * (ranks + 1) / 2 + round * ranks;
      }
      ASSERT_EQ(bad, 0u) << algorithm << " count " << count;
      ++round;
    }
  }
}

namespace {
// This kernel's boot id: CLOCK_MONOTONIC is one clock only for processes of one kernel.
std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}
}  // namespace

TEST(Barrier, NobodyLeavesBeforeTheLastArrives) {
  const int rank = ranktest::rank();
  // Every rank on the late rank's kernel compares the time it left with the time the late rank
  // arrived (steady_clock is CLOCK_MONOTONIC: one clock for all processes of a kernel; ranks in
  // another VM have another, so they skip the comparison). Measuring each rank's own wait instead
  // failed when a rank started the round late (7 ranks on 2 cores).
  auto now = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  struct Arrival {
    double time;
    char kernel[40];
  };
  const std::string kernel = boot_id();
  for (const char* algorithm : and_local({"dissemination"}))
    for (int round = 0; round < 3; ++round) {
      ForceAlgo force(std::string("barrier:") + algorithm);
      SCOPED_TRACE(algorithm);
      const int late = round % ranktest::size();
      if (rank == late) std::this_thread::sleep_for(std::chrono::milliseconds(200));
      Arrival arrival{now(), {}};
      std::snprintf(arrival.kernel, sizeof arrival.kernel, "%s", kernel.c_str());
      RCC_ASSERT_OK(rcc_barrier(ranktest::comm()));
      const double left = now();
      RCC_ASSERT_OK(rcc_broadcast(ranktest::comm(), &arrival, sizeof arrival, RCC_UINT8, late));
      if (kernel != arrival.kernel) continue;
      EXPECT_GE(left, arrival.time) << "left the barrier " << (arrival.time - left) * 1e3 << " ms before rank " << late
                                    << " arrived";
    }
}

TEST(Errors, BadArgumentsOnEveryRank) {
  rcc_comm_t comm = ranktest::comm();
  const int ranks = ranktest::size();
  std::vector<float> f(8 * ranks);
  std::vector<int32_t> n(8 * ranks);
  rcc_request_t request = nullptr;
  auto expect_invalid = [](rcc_status_t status, const char* what, const char* must_mention) {
    EXPECT_EQ(status, RCC_ERR_INVALID_ARGUMENT) << what;
    EXPECT_NE(std::string(rcc_last_error()).find(must_mention), std::string::npos)
        << what << ": message '" << rcc_last_error() << "' does not name " << must_mention;
  };
  expect_invalid(rcc_broadcast(comm, f.data(), 4, RCC_FLOAT32, ranks), "root = size", "root");
  expect_invalid(rcc_broadcast(comm, f.data(), 4, RCC_FLOAT32, -1), "root = -1", "root");
  expect_invalid(rcc_reduce(comm, f.data(), f.data(), 4, RCC_FLOAT32, RCC_SUM, ranks), "reduce root", "root");
  expect_invalid(rcc_gather(comm, f.data(), f.data(), 4, RCC_FLOAT32, -5), "gather root", "root");
  expect_invalid(rcc_scatter(comm, f.data(), f.data(), 4, RCC_FLOAT32, ranks + 3), "scatter root", "root");
  expect_invalid(rcc_allreduce(comm, n.data(), n.data(), 4, RCC_INT32, RCC_AVG), "avg on int32", "RCC_AVG");
  expect_invalid(rcc_reduce_scatter(comm, n.data(), n.data(), 4, RCC_INT32, RCC_AVG), "rs avg on int32", "RCC_AVG");
  expect_invalid(rcc_allreduce(comm, f.data(), f.data(), 4, RCC_FLOAT32, RCC_BXOR), "bxor on float32", "op");
  expect_invalid(rcc_reduce(comm, f.data(), f.data(), 4, RCC_FLOAT32, RCC_BAND, 0), "reduce band on float32", "op");
  expect_invalid(rcc_reduce_scatter(comm, f.data(), f.data(), 2, RCC_FLOAT64, RCC_BOR), "rs bor on float64", "op");
  expect_invalid(rcc_allreduce(comm, n.data(), n.data(), 4, RCC_INT16, RCC_AVG), "avg on int16", "RCC_AVG");
  expect_invalid(rcc_allreduce(comm, nullptr, f.data(), 4, RCC_FLOAT32, RCC_SUM), "null sendbuf", "sendbuf");
  expect_invalid(rcc_allreduce(comm, f.data(), nullptr, 4, RCC_FLOAT32, RCC_SUM), "null recvbuf", "recvbuf");
  expect_invalid(rcc_broadcast(comm, nullptr, 1, RCC_FLOAT32, 0), "null buf", "buf");
  expect_invalid(rcc_allgather(comm, f.data(), nullptr, 1, RCC_FLOAT32), "allgather null recvbuf", "recvbuf");
  expect_invalid(rcc_alltoall(comm, nullptr, f.data(), 1, RCC_FLOAT32), "alltoall null sendbuf", "sendbuf");
  expect_invalid(rcc_allreduce(comm, f.data(), f.data(), 4, static_cast<rcc_datatype_t>(RCC_NUM_DATATYPES), RCC_SUM),
                 "datatype out of range", "datatype");
  expect_invalid(rcc_allreduce(comm, f.data(), f.data(), 4, static_cast<rcc_datatype_t>(-1), RCC_SUM),
                 "negative datatype", "datatype");
  expect_invalid(rcc_allreduce(comm, f.data(), f.data(), 4, RCC_FLOAT32, static_cast<rcc_op_t>(RCC_NUM_OPS)),
                 "op out of range", "op");
  expect_invalid(rcc_allreduce(comm, f.data(), f.data(), SIZE_MAX / 2, RCC_FLOAT32, RCC_SUM), "count overflow",
                 "count");
  expect_invalid(rcc_allgather(comm, f.data(), f.data(), SIZE_MAX / 2 + 1, RCC_INT8), "allgather overflow", "count");
  expect_invalid(rcc_allreduce(nullptr, f.data(), f.data(), 4, RCC_FLOAT32, RCC_SUM), "null comm", "comm");
  expect_invalid(rcc_barrier(nullptr), "barrier null comm", "comm");
  expect_invalid(rcc_iallreduce(comm, f.data(), f.data(), 4, RCC_FLOAT32, RCC_SUM, nullptr), "null request", "request");
  expect_invalid(rcc_ibarrier(comm, nullptr), "ibarrier null request", "request");
  expect_invalid(rcc_iallreduce(comm, f.data(), f.data(), 4, RCC_INT8, RCC_AVG, &request), "iallreduce avg int8",
                 "RCC_AVG");
  {
    ForceAlgo bad("allreduce:bogus");
    expect_invalid(rcc_allreduce(comm, f.data(), f.data(), 4, RCC_FLOAT32, RCC_SUM), "unknown algorithm", "bogus");
  }
  {
    ForceAlgo bad("allfoo:ring");
    expect_invalid(rcc_allreduce(comm, f.data(), f.data(), 4, RCC_FLOAT32, RCC_SUM), "unknown collective", "allfoo");
  }
  {
    ForceAlgo bad("broadcast:ring");  // ring is not a broadcast algorithm
    expect_invalid(rcc_broadcast(comm, f.data(), 4, RCC_FLOAT32, 0), "wrong algorithm", "ring");
  }
  if (!shm_enabled()) {
    // Without a segment (RCC_SHM=0), forcing the shared-memory algorithm is a usage error that
    // says why, not a crash.
    ForceAlgo shm("allreduce:shm");
    EXPECT_EQ(rcc_allreduce(comm, f.data(), f.data(), 4, RCC_FLOAT32, RCC_SUM), RCC_ERR_INVALID_USAGE);
    EXPECT_NE(std::string(rcc_last_error()).find("RCC_SHM"), std::string::npos) << rcc_last_error();
  }
  // Count 0 with NULL buffers is a valid no-op, and nothing was left in flight: this still works.
  RCC_EXPECT_OK(rcc_allreduce(comm, nullptr, nullptr, 0, RCC_FLOAT32, RCC_SUM));
  RCC_EXPECT_OK(rcc_alltoall(comm, nullptr, nullptr, 0, RCC_INT32));
  for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f;
  RCC_EXPECT_OK(rcc_allreduce(comm, f.data(), f.data(), 8, RCC_FLOAT32, RCC_SUM));
  EXPECT_EQ(f[7], static_cast<float>(ranks));
}

TEST(Check, MismatchedArgumentsFailOnEveryRank) {
  const int ranks = ranktest::size(), rank = ranktest::rank();
  rcc_comm_t comm = ranktest::comm();
  ScopedEnv check("RCC_CHECK", "1");
  std::vector<float> buf(64 * ranks, 1.0f);
  // Matching calls still succeed with the check on.
  RCC_ASSERT_OK(rcc_allreduce(comm, buf.data(), buf.data(), 16, RCC_FLOAT32, RCC_SUM));
  if (ranks == 1) GTEST_SKIP() << "a single rank cannot disagree";
  const int odd = ranks - 1;
  rcc_status_t status = rcc_allreduce(comm, buf.data(), buf.data(), rank == odd ? 17 : 16, RCC_FLOAT32, RCC_SUM);
  EXPECT_EQ(status, RCC_ERR_MISMATCH);
  EXPECT_NE(std::string(rcc_last_error()).find("rank " + std::to_string(odd)), std::string::npos) << rcc_last_error();
  EXPECT_NE(std::string(rcc_last_error()).find("count"), std::string::npos) << rcc_last_error();
  status = rcc_broadcast(comm, buf.data(), 8, RCC_FLOAT32, rank == 0 ? 0 : ranks - 1);
  EXPECT_EQ(status, RCC_ERR_MISMATCH);
  EXPECT_NE(std::string(rcc_last_error()).find("root"), std::string::npos) << rcc_last_error();
  status = rcc_reduce_scatter(comm, buf.data(), buf.data(), 4, RCC_FLOAT32, rank == odd ? RCC_MAX : RCC_SUM);
  EXPECT_EQ(status, RCC_ERR_MISMATCH);
  EXPECT_NE(std::string(rcc_last_error()).find("op"), std::string::npos) << rcc_last_error();
  rcc_request_t request = nullptr;
  RCC_ASSERT_OK(rcc_iallgather(comm, buf.data(), buf.data() + 32 * ranks, rank == odd ? 2 : 1, RCC_FLOAT32, &request));
  EXPECT_EQ(rcc_wait(request), RCC_ERR_MISMATCH);
  // Afterwards the communicator still works.
  std::fill(buf.begin(), buf.end(), 2.0f);
  RCC_ASSERT_OK(rcc_allreduce(comm, buf.data(), buf.data(), 16, RCC_FLOAT32, RCC_SUM));
  EXPECT_EQ(buf[0], 2.0f * ranks);
}
