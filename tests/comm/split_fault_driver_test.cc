// Runs split_fault_rank.cc under rccrun with 4 ranks (rank 3 SIGKILLs itself) and checks what
// every survivor reported: the pair {0,1} kept working for 2 s after rank 2 had seen the death, rank
// 2's pair {2,3} failed with RCC_ERR_PEER_FAILED naming rank 3 within RCC_TIMEOUT, the world failed
// the same way on ranks 0..2 (so did a wildcard receive pending on it across the death), the trio
// {0,1,2} still worked, and everything was destroyed promptly; rccrun named the victim and never had
// to signal a survivor; no process is left. Once as configured (a one-host job: shared memory) and
// once with RCC_SHM=0.
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "launch.h"

namespace {

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

class SplitFaultTest : public testing::TestWithParam<const char*> {};

TEST_P(SplitFaultTest, DeathFailsOnlyTheCommunicatorsThatContainIt) {
  const int timeout_s = env_int("RCC_TIMEOUT", 10);
  const std::string shm = GetParam();
  const std::string marker = "rcc-split-fault-marker-" + std::to_string(getpid()) + "-shm" + shm;
  faults::Outcome run = faults::run(
      {faults::required_env("RCC_TEST_RCCRUN"), "-n", "4", "--failure-grace", std::to_string(3 * timeout_s + 30),
       "--env", "RCC_SHM=" + shm, faults::required_env("RCC_TEST_SPLIT_FAULT_RANK"), marker},
      5.0 * timeout_s + 60);
  const std::string output = "stdout:\n" + run.out + "\nstderr:\n" + run.err;
  ASSERT_FALSE(run.timed_out) << "the job hung; " << output;

  EXPECT_EQ(run.status, 128 + 9) << output;
  auto reports = faults::lines_starting(run.err, "rccrun: rank ");
  ASSERT_FALSE(reports.empty()) << output;
  EXPECT_EQ(reports[0].find("rccrun: rank 3 (host "), 0u) << output;
  EXPECT_NE(reports[0].find("was killed by signal 9 (SIGKILL)"), std::string::npos) << output;
  EXPECT_EQ(reports.size(), 1u) << "rccrun reported more than one failure; " << output;
  EXPECT_EQ(run.err.find("sending SIGTERM"), std::string::npos) << "a survivor did not exit by itself; " << output;

  auto victims = faults::lines_starting(run.out, "comm-fault-victim ");
  ASSERT_EQ(victims.size(), 1u) << output;
  const long long kill_ms = std::atoll(faults::field(victims[0], "kill_ms").c_str());

  std::map<std::string, std::string> by_rank;
  for (const std::string& line : faults::lines_starting(run.out, "comm-fault-result ")) {
    by_rank[faults::field(line, "rank")] = line;
  }
  ASSERT_EQ(by_rank.size(), 3u) << output;
  for (const char* r : {"0", "1", "2"}) {
    ASSERT_EQ(by_rank.count(r), 1u) << "no result from rank " << r << "; " << output;
    const std::string& line = by_rank[r];
    SCOPED_TRACE(line);
    auto num = [&](const char* key) { return std::atoll(faults::field(line, key).c_str()); };
    if (std::string(r) == "2") {
      EXPECT_EQ(faults::field(line, "pair_status"), "RCC_ERR_PEER_FAILED") << output;
      EXPECT_EQ(faults::field(line, "pair_named"), "1") << "the error on {2,3} does not name rank 3; " << output;
      EXPECT_LE(num("pair_error_ms") - kill_ms, timeout_s * 1000LL + 2000) << output;
    } else {
      EXPECT_EQ(faults::field(line, "pair_status"), "RCC_SUCCESS") << "the pair {0,1} stopped working; " << output;
      EXPECT_EQ(faults::field(line, "seen"), "1") << "rank 2's news never came over the trio; " << output;
      EXPECT_GE(num("pair_iterations"), 3) << output;
      EXPECT_GE(num("pair_last_ok_ms") - kill_ms, 2000) << "the pair was not used long after the kill; " << output;
    }
    EXPECT_EQ(faults::field(line, "world_status"), "RCC_ERR_PEER_FAILED") << output;
    EXPECT_EQ(faults::field(line, "world_named"), "1") << "the world's error does not name rank 3; " << output;
    EXPECT_LE(num("world_ms"), timeout_s * 1000LL + 2000) << output;
    EXPECT_EQ(faults::field(line, "world_receive_status"), "RCC_ERR_PEER_FAILED")
        << "a wildcard receive on the world outlived the death; " << output;
    EXPECT_EQ(faults::field(line, "trio_status"), "RCC_SUCCESS") << "the trio {0,1,2} stopped working; " << output;
    EXPECT_EQ(faults::field(line, "destroy_status"), "RCC_SUCCESS") << output;
    EXPECT_LT(num("destroy_ms"), 3000) << output;
  }
  EXPECT_FALSE(faults::processes_left(marker)) << "processes of " << marker << " survived";
}

INSTANTIATE_TEST_SUITE_P(Shm, SplitFaultTest, testing::Values("auto", "0"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param) == "auto" ? std::string("shm") : std::string("transport");
                         });

}  // namespace
