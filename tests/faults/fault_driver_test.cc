// Kills one rank of a real job (tests/faults/victim.cc under rccrun) at a random point of a loop
// of p2p or collective calls, over many seeds, and checks that every survivor reported the dead
// rank within RCC_TIMEOUT, destroyed its communicator promptly and exited by itself; that rccrun
// named the victim and exited non-zero; and that no process is left.
//   RCC_FAULT_RANKS (default 3), RCC_FAULT_SEEDS (runs per case, default 3; 1 with
//   RCC_TEST_QUICK), RCC_FAULT_SEED_BASE. Inherits RCC_TRANSPORT, so it runs on verbs in the VM.
//   Across hosts (scripts/vm-cross-tests.sh, two guests): RCC_FAULT_HOSTS (rccrun -H, e.g.
//   "rccvm-a:2,10.0.9.2:2"; replaces RCC_FAULT_RANKS), RCC_FAULT_RSH (--rsh) and RCC_FAULT_FORWARD
//   (comma-separated variables the remote ranks get, rccrun -x). The victim is then a rank of the
//   first host, rccrun's own, where its SIGKILL is seen as such (a remote shell reports a killed
//   command as its own failure); the survivors on both hosts must name it.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "launch.h"

namespace {

int env_int(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::atoi(value) : fallback;
}

// The job's placement across hosts, when RCC_FAULT_HOSTS is set.
struct Hosts {
  std::string list;    // rccrun -H
  int ranks = 0;       // all hosts
  int first_host = 0;  // ranks on the first (rccrun's) host
};

std::optional<Hosts> fault_hosts() {
  const char* list = std::getenv("RCC_FAULT_HOSTS");
  if (list == nullptr || *list == '\0') return std::nullopt;
  Hosts hosts{list};
  std::stringstream entries(list);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    const size_t colon = entry.rfind(':');
    const int count = colon == std::string::npos ? 1 : std::atoi(entry.c_str() + colon + 1);
    if (hosts.ranks == 0) hosts.first_host = count;
    hosts.ranks += count;
  }
  return hosts;
}

// rccrun's words that place the job: "-n RANKS" on this host, or the hosts of RCC_FAULT_HOSTS.
std::vector<std::string> placement_words(const std::optional<Hosts>& hosts, int ranks) {
  if (!hosts) return {"-n", std::to_string(ranks)};
  std::vector<std::string> words = {"-H", hosts->list, "--rsh", faults::required_env("RCC_FAULT_RSH")};
  std::stringstream names(std::getenv("RCC_FAULT_FORWARD") != nullptr ? std::getenv("RCC_FAULT_FORWARD") : "");
  std::string name;
  while (std::getline(names, name, ',')) {
    if (name.empty()) continue;
    words.push_back("-x");
    words.push_back(name);
  }
  return words;
}

struct Case {
  const char* name;  // gtest-friendly
  const char* op;    // victim's OP
  const char* algo;  // RCC_ALGO, or "" for the tuner's choice
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class FaultTest : public testing::TestWithParam<Case> {};

// One job: the victim program under rccrun at `ranks` ranks, the victim rank seed % ranks. Returns
// whether it passed (every check below; failures are reported as gtest failures too).
bool run_one(const Case& c, int ranks, unsigned seed) {
  const int failures_before = testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count();
  [&] {
    std::optional<Hosts> hosts = fault_hosts();
    const int victim = static_cast<int>(seed % static_cast<unsigned>(hosts ? hosts->first_host : ranks));
    if (hosts) ranks = hosts->ranks;
    const int timeout_s = env_int("RCC_TIMEOUT", 10);
    const std::string marker =
        "rcc-fault-marker-" + std::to_string(getpid()) + "-" + c.name + "-" + std::to_string(seed);
    std::vector<std::string> argv = {faults::required_env("RCC_TEST_RCCRUN")};
    for (std::string word : placement_words(hosts, ranks)) argv.push_back(word);
    argv.push_back("--failure-grace");
    argv.push_back(std::to_string(timeout_s + 5));
    if (*c.algo != '\0') {
      argv.push_back("--env");
      argv.push_back(std::string("RCC_ALGO=") + c.algo);
    }
    for (std::string a : {faults::required_env("RCC_TEST_VICTIM"), std::string(c.op), std::to_string(victim),
                          std::to_string(seed), marker}) {
      argv.push_back(a);
    }
    SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed) + " victim rank " + std::to_string(victim));
    // Generous: init + the loop + detection + teardown; a hang shows up as timed_out.
    faults::Outcome run = faults::run(argv, 3.0 * timeout_s + 30);
    const std::string output = "stdout:\n" + run.out + "\nstderr:\n" + run.err;
    ASSERT_FALSE(run.timed_out) << "the job hung; " << output;

    // rccrun: non-zero, the first failure it names is the victim's SIGKILL.
    EXPECT_EQ(run.status, 128 + 9) << output;
    auto reports = faults::lines_starting(run.err, "rccrun: rank ");
    ASSERT_FALSE(reports.empty()) << output;
    EXPECT_EQ(reports[0].find("rccrun: rank " + std::to_string(victim) + " (host "), 0u) << output;
    EXPECT_NE(reports[0].find("was killed by signal 9 (SIGKILL)"), std::string::npos) << output;
    EXPECT_EQ(reports.size(), 1u) << "rccrun reported more than one death; " << output;
    // The survivors exited by themselves: rccrun never had to signal them.
    EXPECT_EQ(run.err.find("sending SIGTERM"), std::string::npos) << output;

    auto victims = faults::lines_starting(run.out, "fault-victim ");
    ASSERT_EQ(victims.size(), 1u) << output;
    EXPECT_EQ(faults::field(victims[0], "rank"), std::to_string(victim)) << output;
    const long long kill_ms = std::atoll(faults::field(victims[0], "kill_ms").c_str());

    auto results = faults::lines_starting(run.out, "fault-result ");
    EXPECT_EQ(results.size(), static_cast<size_t>(ranks - 1)) << output;
    for (const std::string& line : results) {
      const std::string status = faults::field(line, "status");
      EXPECT_TRUE(status == "RCC_ERR_PEER_FAILED" || status == "RCC_ERR_TIMEOUT") << line;
      EXPECT_EQ(faults::field(line, "named_victim"), "1") << "the error does not name rank " << victim << ": " << line;
      const long long latency = std::atoll(faults::field(line, "error_ms").c_str()) - kill_ms;
      EXPECT_LE(latency, timeout_s * 1000LL + 2000) << "reported " << latency << " ms after the kill: " << line;
      EXPECT_EQ(faults::field(line, "checks"), "ok") << line;
      EXPECT_EQ(faults::field(line, "destroy_status"), "RCC_SUCCESS") << line;
      EXPECT_LT(std::atoll(faults::field(line, "destroy_ms").c_str()), 3000) << line;
    }
    EXPECT_FALSE(faults::processes_left(marker)) << "processes of " << marker << " survived";
  }();
  return testing::UnitTest::GetInstance()->current_test_info()->result()->total_part_count() == failures_before;
}

TEST_P(FaultTest, SurvivorsReportTheDeadRank) {
  const int ranks = env_int("RCC_FAULT_RANKS", 3);
  int seeds = env_int("RCC_FAULT_SEEDS", 3);
  // The soft-RDMA VM (scripts/vm-tests.sh sets RCC_TEST_QUICK) is slow: one kill per case there.
  if (std::getenv("RCC_TEST_QUICK") != nullptr && seeds > 1) seeds = 1;
  const unsigned base = static_cast<unsigned>(env_int("RCC_FAULT_SEED_BASE", 1));
  for (unsigned seed = base; seed < base + static_cast<unsigned>(seeds); ++seed) {
    run_one(GetParam(), ranks, seed);
    if (HasFatalFailure()) return;
  }
}

// Every op of the victim (the nonblocking ones killed in flight, the vector collectives, the scans,
// a sub-communicator), with some algorithms forced. "hundred" draws from these too.
const Case kCases[] = {Case{"p2p", "p2p", ""},
                       Case{"allreduce", "allreduce", ""},
                       Case{"allreduce_ring", "allreduce", "allreduce:ring"},
                       Case{"allreduce_tree", "allreduce", "allreduce:tree"},
                       Case{"allreduce_rd", "allreduce", "allreduce:recursive_doubling"},
                       Case{"broadcast_tree", "broadcast", "broadcast:tree"},
                       Case{"broadcast_pipeline", "broadcast", "broadcast:pipeline"},
                       Case{"allreduce_shm", "allreduce", "allreduce:shm"},
                       Case{"broadcast_shm", "broadcast", "broadcast:shm"},
                       Case{"barrier", "barrier", ""},
                       Case{"barrier_dissemination", "barrier", "barrier:dissemination"},
                       Case{"allgather", "allgather", ""},
                       Case{"allgather_ring", "allgather", "allgather:ring"},
                       Case{"alltoall", "alltoall", ""},
                       Case{"alltoall_pairwise", "alltoall", "alltoall:pairwise"},
                       Case{"reduce", "reduce", ""},
                       Case{"gather", "gather", ""},
                       Case{"scatter", "scatter", ""},
                       Case{"reduce_scatter", "reduce_scatter", ""},
                       Case{"scan", "scan", ""},
                       Case{"exscan", "exscan", ""},
                       Case{"allgatherv", "allgatherv", ""},
                       Case{"alltoallv", "alltoallv", ""},
                       Case{"gatherv", "gatherv", ""},
                       Case{"scatterv", "scatterv", ""},
                       Case{"reduce_scatterv", "reduce_scatterv", ""},
                       Case{"inflight", "inflight", ""},
                       Case{"inflight_ring", "inflight", "allreduce:ring"},
                       Case{"split", "split", ""}};

INSTANTIATE_TEST_SUITE_P(Ops, FaultTest, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// The "100 kills": RCC_FAULT_TRIALS trials (default 100; 10 with RCC_TEST_QUICK, as in
// the VM), each drawing from RCC_FAULT_HUNDRED_SEED (default 1) an op of kCases, 2..8 ranks and
// the victim program's seed (victim rank, kill point, nonblocking-in-flight or not, size). Every
// trial must pass; prints one line per trial and the tally "faults_hundred: N passed, M failed".
TEST(FaultHundred, EveryTrialReportsTheDeadRank) {
  const char* trials_env = std::getenv("RCC_FAULT_TRIALS");
  const int trials = trials_env != nullptr && *trials_env != '\0' ? std::atoi(trials_env)
                     : std::getenv("RCC_TEST_QUICK") != nullptr   ? 10
                                                                  : 100;
  std::mt19937 draw(static_cast<unsigned>(env_int("RCC_FAULT_HUNDRED_SEED", 1)));
  int passed = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int trial = 0; trial < trials; ++trial) {
    const Case& c = kCases[draw() % (sizeof kCases / sizeof kCases[0])];
    const int ranks = 2 + static_cast<int>(draw() % 7);
    const unsigned seed = draw() % 1000000u;
    const auto trial_start = std::chrono::steady_clock::now();
    const bool ok = run_one(c, ranks, seed);
    (ok ? passed : failed)++;
    std::printf("faults_hundred: trial %d %s ranks=%d seed=%u victim=%u %.2f s %s\n", trial + 1, c.name, ranks, seed,
                seed % static_cast<unsigned>(ranks),
                std::chrono::duration<double>(std::chrono::steady_clock::now() - trial_start).count(),
                ok ? "passed" : "FAILED");
    std::fflush(stdout);
  }
  std::printf("faults_hundred: %d passed, %d failed (%.1f s)\n", passed, failed,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  EXPECT_EQ(failed, 0);
}

// rcc_comm_abort from another thread ends a blocked receive (or a collective waiting for a peer
// that never comes: "abort-collective") at once; later calls fail with RCC_ERR_ABORTED; destroy
// returns promptly; a receive whose sender may still write into it ("abort-transfer") returns only
// once nothing can land in the buffer (checked inside the victim program).
class AbortTest : public testing::TestWithParam<const char*> {};

TEST_P(AbortTest, AbortEndsBlockedCall) {
  const std::string marker = "rcc-fault-marker-" + std::to_string(getpid()) + "-" + GetParam();
  faults::Outcome run = faults::run(
      {faults::required_env("RCC_TEST_RCCRUN"), "-n", "2", faults::required_env("RCC_TEST_VICTIM"), GetParam(), marker},
      60);
  ASSERT_FALSE(run.timed_out) << run.out << run.err;
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  auto results = faults::lines_starting(run.out, "abort-result ");
  EXPECT_EQ(results.size(), 2u) << run.out << run.err;
  for (const std::string& line : results) EXPECT_EQ(faults::field(line, "failures"), "0") << line;
  EXPECT_FALSE(faults::processes_left(marker));
}

// A rank that joins a shared-memory allreduce after the others timed out gets an error, not a
// result paired with another call, and the failure sticks on every rank (victim.cc run_late_check).
TEST(ShmFailureTest, LateRankGetsAnErrorNotAMismatchedResult) {
  const std::string marker = "rcc-fault-marker-" + std::to_string(getpid()) + "-late";
  faults::Outcome run = faults::run({faults::required_env("RCC_TEST_RCCRUN"), "-n", "3", "--env", "RCC_TIMEOUT=1",
                                     faults::required_env("RCC_TEST_VICTIM"), "late", marker},
                                    60);
  ASSERT_FALSE(run.timed_out) << run.out << run.err;
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  auto results = faults::lines_starting(run.out, "late-result ");
  ASSERT_EQ(results.size(), 3u) << run.out << run.err;
  for (const std::string& line : results) {
    EXPECT_NE(faults::field(line, "first"), "RCC_SUCCESS") << line;
    EXPECT_NE(faults::field(line, "second"), "RCC_SUCCESS") << line;
    // The late rank learns at once; the others within about RCC_TIMEOUT.
    EXPECT_LT(std::atoll(faults::field(line, "first_ms").c_str()), 5000) << line;
  }
  EXPECT_FALSE(faults::processes_left(marker));
}

INSTANTIATE_TEST_SUITE_P(Calls, AbortTest, testing::Values("abort", "abort-collective", "abort-transfer"),
                         [](const testing::TestParamInfo<const char*>& info) {
                           const std::string op = info.param;
                           return op == "abort" ? std::string("receive") : op.substr(op.find('-') + 1);
                         });

}  // namespace

namespace {

// rccrun's grace period after a failure, with plain shell ranks (no rcc involved).
faults::Outcome run_shell_job(const std::string& grace, const std::string& script, const std::string& marker) {
  return faults::run(
      {faults::required_env("RCC_TEST_RCCRUN"), "-n", "3", "--failure-grace", grace, "/bin/sh", "-c", script, marker},
      60);
}

TEST(FailureGraceTest, SurvivorsThatExitByThemselvesAreNotSignalled) {
  const std::string marker = "rcc-fault-marker-" + std::to_string(getpid()) + "-selfexit";
  // Rank 1 dies; the others exit (status 9) by themselves within the grace, as rcc ranks would.
  faults::Outcome run = run_shell_job(
      "10",
      "trap 'echo got-term; exit 1' TERM; if [ \"$RCC_RANK\" = 1 ]; then sleep 0.3; kill -9 $$; fi; sleep 1; exit 9",
      marker);
  ASSERT_FALSE(run.timed_out) << run.err;
  EXPECT_EQ(run.status, 137) << run.err;
  EXPECT_NE(run.err.find("rccrun: rank 1 (host localhost, pid "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("was killed by signal 9 (SIGKILL)"), std::string::npos) << run.err;
  EXPECT_EQ(run.out.find("got-term"), std::string::npos) << run.out;
  EXPECT_EQ(faults::lines_starting(run.err, "rccrun: rank ").size(), 1u) << run.err;
  EXPECT_LT(run.seconds, 5);
  EXPECT_FALSE(faults::processes_left(marker));
}

TEST(FailureGraceTest, StragglersGetSigtermAfterTheGrace) {
  const std::string marker = "rcc-fault-marker-" + std::to_string(getpid()) + "-straggler";
  faults::Outcome run = run_shell_job(
      "1.5",
      "trap 'echo got-term; exit 1' TERM; if [ \"$RCC_RANK\" = 0 ]; then exit 4; fi; while :; do sleep 0.1; done",
      marker);
  ASSERT_FALSE(run.timed_out) << run.err;
  EXPECT_EQ(run.status, 4) << run.err;
  EXPECT_NE(run.err.find("rccrun: rank 0 (host localhost, pid "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("exited with status 4"), std::string::npos) << run.err;
  // The stragglers by name: ranks 1 and 2 of the job.
  EXPECT_NE(run.err.find("ranks 1 (host localhost), 2 (host localhost) still running 1.5 s after the failure"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("sending SIGTERM"), std::string::npos) << run.err;
  EXPECT_EQ(faults::lines_starting(run.out, "got-term").size(), 2u) << run.out;
  EXPECT_GE(run.seconds, 1.4);
  EXPECT_LT(run.seconds, 6);
  EXPECT_FALSE(faults::processes_left(marker));
}

TEST(FailureGraceTest, ZeroGraceStopsAtOnceAndBadValuesAreRefused) {
  const std::string marker = "rcc-fault-marker-" + std::to_string(getpid()) + "-zero";
  faults::Outcome run = run_shell_job("0", "trap '' TERM; if [ \"$RCC_RANK\" = 2 ]; then exit 6; fi; sleep 60", marker);
  EXPECT_EQ(run.status, 6) << run.err;
  EXPECT_NE(run.err.find("sending SIGKILL"), std::string::npos) << run.err;  // they ignored SIGTERM
  EXPECT_LT(run.seconds, 8);
  EXPECT_FALSE(faults::processes_left(marker));
  for (const char* bad : {"-1", "soon", ""}) {
    faults::Outcome refused =
        faults::run({faults::required_env("RCC_TEST_RCCRUN"), "-n", "1", "--failure-grace", bad, "true"}, 30);
    EXPECT_EQ(refused.status, 2) << bad;
    EXPECT_NE(refused.err.find("--failure-grace: '" + std::string(bad) + "'"), std::string::npos) << refused.err;
  }
}

}  // namespace

namespace {

// The rendezvous store under attack during a real job (tests/faults/stranger_rank.cc).
TEST(RendezvousStrangerTest, JobCompletesWhileStrangersAttackTheStore) {
  const std::string marker = "rcc-fault-marker-" + std::to_string(getpid()) + "-stranger";
  faults::Outcome run = faults::run(
      {faults::required_env("RCC_TEST_RCCRUN"), "-n", "3", faults::required_env("RCC_TEST_STRANGER"), marker}, 90);
  ASSERT_FALSE(run.timed_out) << run.out << run.err;
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_EQ(faults::lines_starting(run.out, "stranger-job rank=").size(), 3u) << run.out << run.err;
  // The store saw the wrong secret (so the attack did reach it) and said so.
  EXPECT_NE(run.err.find("wrong job secret"), std::string::npos) << run.err;
  // Stalled strangers must not hold the job up until some timeout.
  EXPECT_LT(run.seconds, 15) << run.err;
  EXPECT_FALSE(faults::processes_left(marker));
}

}  // namespace
