// A real 3-rank job (rccrun + stranger_job_rank, allreduces for a few seconds) whose rendezvous
// store is attacked while it runs, by a process that knows nothing of the job but what anyone on
// the host can see: rccrun's listening port, found in /proc. Every kind of stranger (strangers.h),
// 1000 connections opened at once among them. The job must exit 0 with correct results on every
// rank; the store must close every stranger (within its 5 s hello deadline) and log at most a few
// of them, with a count of the rest; rccrun's descriptors must come back to where they were.
// (The liveness listeners, open only while a communicator is made, are attacked in
// liveness_stranger_test.cc.)
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "launch.h"
#include "strangers.h"

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(StrangerJob, StoreUnderAttackWhileTheJobRuns) {
  const std::string rccrun = faults::required_env("RCC_TEST_RCCRUN");
  const std::string rank_program = faults::required_env("RCC_TEST_STRANGER_JOB_RANK");
  int port = 0, fds_before = -1, fds_attacked = -1, fds_after = -1, connections = 0, closed = 0;
  long rss_before = -1, rss_after = -1;
  bool slow_closed = false;
  int slow_bytes = 0;
  std::thread attacker;
  faults::Outcome outcome =
      faults::run({rccrun, "-n", "3", rank_program}, 120, {"RCC_STRANGER_JOB_SECONDS=10"}, [&](pid_t pid) {
        attacker = std::thread([&, pid] {
          const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (port == 0 && std::chrono::steady_clock::now() < until) {
            std::vector<int> ports = strangers::listening_ports(pid);
            if (!ports.empty())
              port = ports[0];
            else
              std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
          if (port == 0) return;
          fds_before = strangers::open_fds(pid);
          rss_before = strangers::rss_kib(pid);
          auto attack = std::make_unique<strangers::Attack>(port, strangers::Protocol::kStore);
          connections = attack->connections();
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
          fds_attacked = strangers::open_fds(pid);
          std::this_thread::sleep_for(std::chrono::milliseconds(6000));  // past the 5 s hello deadline
          closed = attack->closed_by_peer();
          slow_closed = attack->slow_closed();
          slow_bytes = attack->slow_bytes_sent();
          fds_after = strangers::open_fds(pid);
          rss_after = strangers::rss_kib(pid);
          attack.reset();
        });
      });
  if (attacker.joinable()) attacker.join();
  std::printf(
      "stranger job: store port %d, %d stranger connections; rccrun fds %d before, %d under attack, %d after; "
      "rccrun RSS %ld -> %ld KiB; slow connection closed after %d bytes; job %.1f s\n",
      port, connections, fds_before, fds_attacked, fds_after, rss_before, rss_after, slow_bytes, outcome.seconds);
  std::printf("--- the job's stderr:\n%s---\n", outcome.err.c_str());
  ASSERT_NE(port, 0) << "rccrun's listening port was not found";
  EXPECT_FALSE(outcome.timed_out);
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_EQ(faults::lines_starting(outcome.out, "stranger-job rank=").size(), 3u) << outcome.out << outcome.err;
  EXPECT_EQ(count(outcome.out, " ok rounds="), 3u) << outcome.out;
  // Every stranger was closed by the store (the flood ones that never got past the backlog too).
  EXPECT_EQ(closed, connections - 1) << "strangers still connected after the hello deadline";
  EXPECT_TRUE(slow_closed) << "the one-byte-a-second connection was never closed";
  EXPECT_LE(slow_bytes, 7);
  EXPECT_GE(fds_attacked, fds_before);
  EXPECT_LE(fds_after, fds_before + 3) << "rccrun kept descriptors of strangers";
  EXPECT_LT(rss_after - rss_before, 16 * 1024) << "rccrun's memory grew";
  // Logged, rate-limited: a few lines naming strangers, and the count of the others.
  const size_t named = count(outcome.err, "refused a connection from");
  EXPECT_GE(named, 1u) << outcome.err;
  EXPECT_LE(named, 3u * 5) << outcome.err;  // RefusalLog::kBurst per 10 s window, the job is ~12 s
  EXPECT_NE(outcome.err.find("more refused connection(s) were not logged"), std::string::npos) << outcome.err;
  EXPECT_LT(count(outcome.err, "\n"), 60u) << outcome.err;
  for (const char* bad : {"Sanitizer", "terminate called", "Segmentation", "Aborted", "core dumped"}) {
    EXPECT_EQ(outcome.err.find(bad), std::string::npos) << outcome.err;
  }
  EXPECT_FALSE(faults::processes_left(rank_program));
}

}  // namespace
