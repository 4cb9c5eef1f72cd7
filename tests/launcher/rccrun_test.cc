// rccrun end to end: real rank processes (sh scripts and bootstrap_probe), real signals and pipes.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

struct Outcome {
  int status = -1;  // exit status, or 128+signal
  std::string out;
  std::string err;
  double seconds = 0;
};

std::string env_or_die(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) {
    ADD_FAILURE() << name << " is not set (run through ctest)";
    return "/nonexistent";
  }
  return value;
}

// Runs rccrun with args; during_run (if given) is called with rccrun's pid once it started.
Outcome rccrun(std::vector<std::string> args, const std::function<void(pid_t)>& during_run = nullptr,
               const std::vector<std::string>& extra_env = {}) {
  args.insert(args.begin(), env_or_die("RCC_TEST_RCCRUN"));
  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(pipe2(out_pipe, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err_pipe, O_CLOEXEC), 0);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  auto start = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (const auto& e : extra_env) putenv(const_cast<char*>(e.c_str()));
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (during_run) during_run(pid);
  Outcome run;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, 60000) <= 0) break;
    for (auto& fd : fds) {
      if (fd.fd < 0 || fd.revents == 0) continue;
      char buffer[4096];
      ssize_t n = read(fd.fd, buffer, sizeof buffer);
      if (n <= 0) {
        close(fd.fd);
        fd.fd = -1;
        --open_fds;
      } else {
        (fd.fd == out_pipe[0] ? run.out : run.err).append(buffer, static_cast<size_t>(n));
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

// Whether any process has marker in its command line, checked for up to wait_ms.
bool processes_left(const std::string& marker, int wait_ms = 2000) {
  auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    // "[r]cc-..." matches the marker but not this pgrep's own shell command line.
    std::string command = "pgrep -f -- '[" + marker.substr(0, 1) + "]" + marker.substr(1) + "' > /dev/null";
    if (std::system(command.c_str()) != 0) return false;
    if (Clock::now() > deadline) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

std::string marker(const char* what) { return std::string("rcc-test-marker-") + what + "-" + std::to_string(getpid()); }

TEST(RccrunTest, HelpVersionAndBadUsage) {
  Outcome help = rccrun({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--hostfile"), std::string::npos);
  Outcome version = rccrun({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out.find("rccrun (rcc) "), std::string::npos);
  Outcome bad = rccrun({"-n", "two", "true"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("-n: 'two'"), std::string::npos) << bad.err;
  Outcome no_n = rccrun({"true"});
  EXPECT_EQ(no_n.status, 2);
  EXPECT_NE(no_n.err.find("-n N"), std::string::npos) << no_n.err;
  Outcome missing = rccrun({"-n", "2", "/nonexistent/program"});
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("'/nonexistent/program': not found"), std::string::npos) << missing.err;
  Outcome too_many = rccrun({"-n", "3", "-H", "localhost:2", "true"});
  EXPECT_EQ(too_many.status, 2);
  EXPECT_NE(too_many.err.find("only 2 slots"), std::string::npos) << too_many.err;
}

TEST(RccrunTest, AllRanksSucceed) {
  Outcome run = rccrun({"-n", "4", "sh", "-c", "exit 0"});
  EXPECT_EQ(run.status, 0) << run.err;
}

TEST(RccrunTest, ProbeThroughRccrunAgrees) {
  Outcome run = rccrun({"-n", "4", "--tag-output", env_or_die("RCC_TEST_PROBE")});
  EXPECT_EQ(run.status, 0) << run.err;
  for (int r = 0; r < 4; ++r) {
    std::string line = "[" + std::to_string(r) + "] probe rank " + std::to_string(r) + " of 4 (rccrun) ok local " +
                       std::to_string(r) + "/4";
    EXPECT_NE(run.out.find(line), std::string::npos) << run.out;
  }
}

TEST(RccrunTest, FailingRankStopsTheJobAndLeavesNothing) {
  std::string mark = marker("exit");
  // Every rank also starts a grandchild carrying the marker; all of them must be gone afterwards.
  std::string script =
      "sh -c 'sleep 60' " + mark + "-child & if [ \"$RCC_RANK\" = 1 ]; then sleep 0.3; exit 3; fi; wait";
  Outcome run = rccrun({"-n", "3", "sh", "-c", script, mark});
  EXPECT_EQ(run.status, 3) << run.err;
  EXPECT_NE(run.err.find("rccrun: rank 1 (host localhost, pid "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("exited with status 3"), std::string::npos) << run.err;
  EXPECT_LT(run.seconds, 15);
  EXPECT_FALSE(processes_left(mark)) << "processes with " << mark << " survived";
}

TEST(RccrunTest, RankKilledBySignal) {
  std::string mark = marker("signal");
  // No failure grace: the default one (10 s) is waited out by FailingRankStopsTheJobAndLeavesNothing.
  Outcome run = rccrun(
      {"-n", "3", "--failure-grace", "0", "sh", "-c", "if [ \"$RCC_RANK\" = 2 ]; then kill -9 $$; fi; sleep 60", mark});
  EXPECT_EQ(run.status, 128 + 9) << run.err;
  EXPECT_NE(run.err.find("rank 2 (host localhost, pid "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("was killed by signal 9 (SIGKILL)"), std::string::npos) << run.err;
  EXPECT_FALSE(processes_left(mark));
}

TEST(RccrunTest, RanksIgnoringSigtermAreKilled) {
  std::string mark = marker("stubborn");
  Outcome run = rccrun({"-n", "2", "--failure-grace", "0", "sh", "-c",
                        "trap '' TERM; if [ \"$RCC_RANK\" = 0 ]; then sleep 0.5; exit 5; fi; sleep 60", mark});
  EXPECT_EQ(run.status, 5) << run.err;
  EXPECT_NE(run.err.find("sending SIGKILL"), std::string::npos) << run.err;
  EXPECT_LT(run.seconds, 15);
  EXPECT_FALSE(processes_left(mark));
}

TEST(RccrunTest, TimeoutStopsTheJob) {
  std::string mark = marker("timeout");
  Outcome run = rccrun({"-n", "2", "--timeout", "1", "sh", "-c", "sleep 60", mark});
  EXPECT_EQ(run.status, 124) << run.err;
  EXPECT_NE(run.err.find("--timeout 1 s"), std::string::npos) << run.err;
  EXPECT_LT(run.seconds, 10);
  EXPECT_FALSE(processes_left(mark));
}

TEST(RccrunTest, TagOutput) {
  Outcome run = rccrun({"-n", "2", "--tag-output", "sh", "-c",
                        "echo \"out $RCC_RANK\"; echo \"err $RCC_RANK\" >&2; echo second; printf 'no newline'"});
  EXPECT_EQ(run.status, 0) << run.err;
  for (std::string rank : {"0", "1"}) {
    EXPECT_NE(run.out.find("[" + rank + "] out " + rank + "\n"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("[" + rank + "] second\n"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("[" + rank + "] no newline\n"), std::string::npos) << run.out;
    EXPECT_NE(run.err.find("[" + rank + "] err " + rank + "\n"), std::string::npos) << run.err;
  }
}

TEST(RccrunTest, EnvironmentForLocalRanks) {
  Outcome run =
      rccrun({"-n", "2", "--tag-output", "-x", "RCC_TEST_FORWARDED", "--env", "RCC_TEST_SET=two words", "-x",
              "RCC_TEST_X=3", "sh", "-c",
              "echo \"$RCC_RANK/$RCC_SIZE/$RCC_LOCAL_RANK/$RCC_LOCAL_SIZE $RCC_TEST_FORWARDED|$RCC_TEST_SET|"
              "$RCC_TEST_X|$RCC_TEST_INHERITED\"; test -n \"$RCC_STORE_ADDR\" && test -n \"$RCC_JOB_SECRET\""},
             nullptr, {"RCC_TEST_FORWARDED=fwd", "RCC_TEST_INHERITED=inh", "RCC_RANK=99"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("[0] 0/2/0/2 fwd|two words|3|inh"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[1] 1/2/1/2 fwd|two words|3|inh"), std::string::npos) << run.out;
}

TEST(RccrunTest, RemoteRanksThroughRshGetOnlyTheirVariables) {
  // Two "remote" hosts reached with a stand-in rsh that runs the command string in a clean
  // environment; arguments with quotes and spaces must arrive intact.
  Outcome run = rccrun({"-H", "nodeA:2,nodeB:1", "--rsh", env_or_die("RCC_TEST_LOCAL_RSH"), "--tag-output", "-x",
                        "RCC_TEST_FORWARDED", "--env", "RCC_TEST_SET=a b", "sh", "-c",
                        "echo \"$RCC_TEST_REMOTE_HOST $RCC_RANK/$RCC_SIZE/$RCC_LOCAL_RANK/$RCC_LOCAL_SIZE "
                        "$RCC_TEST_FORWARDED|$RCC_TEST_SET|${RCC_TEST_INHERITED:-unset}|$0|$1|$(pwd)\"",
                        "it's $HOME", "two  spaces"},
                       nullptr, {"RCC_TEST_FORWARDED=fwd", "RCC_TEST_INHERITED=inh"});
  EXPECT_EQ(run.status, 0) << run.err;
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  std::string tail = " fwd|a b|unset|it's $HOME|two  spaces|" + std::string(cwd);
  EXPECT_NE(run.out.find("[0] nodeA 0/3/0/2" + tail), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[1] nodeA 1/3/1/2" + tail), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[2] nodeB 2/3/0/1" + tail), std::string::npos) << run.out;
}

TEST(RccrunTest, ProbeThroughRshOnTwoHosts) {
  Outcome run =
      rccrun({"-H", "nodeA:2,nodeB:2", "--rsh", env_or_die("RCC_TEST_LOCAL_RSH"), env_or_die("RCC_TEST_PROBE")});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("probe rank 3 of 4 (rccrun) ok local 1/2"), std::string::npos) << run.out;
}

TEST(RccrunTest, SigtermIsForwardedToRanks) {
  std::string mark = marker("sigterm");
  Outcome run = rccrun({"-n", "2", "--tag-output", "sh", "-c",
                        "trap 'echo got-term-$RCC_RANK; exit 7' TERM; echo ready; while :; do sleep 0.1; done", mark},
                       [](pid_t pid) {
                         std::this_thread::sleep_for(std::chrono::milliseconds(700));
                         kill(pid, SIGTERM);
                       });
  EXPECT_EQ(run.status, 128 + SIGTERM) << run.err;
  EXPECT_NE(run.out.find("[0] got-term-0"), std::string::npos) << run.out << run.err;
  EXPECT_NE(run.out.find("[1] got-term-1"), std::string::npos) << run.out << run.err;
  EXPECT_NE(run.err.find("received signal 15 (SIGTERM)"), std::string::npos) << run.err;
  EXPECT_FALSE(processes_left(mark));
}

TEST(RccrunTest, HostfileEndToEnd) {
  char path[] = "/tmp/rcc-hostfile-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string text = "# test hosts\nlocalhost slots=2   # this one\n\n127.0.0.1:1\n";
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  Outcome run = rccrun({"--hostfile", path, "--display-map", "--tag-output", "sh", "-c",
                        "echo \"$RCC_RANK $RCC_LOCAL_RANK $RCC_LOCAL_SIZE\""});
  unlink(path);
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("[0] 0 0 2"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[1] 1 1 2"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[2] 2 0 1"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("rank 2 on 127.0.0.1 (local rank 0 of 1"), std::string::npos) << run.err;
}

TEST(RccrunTest, BindToCore) {
  Outcome bound =
      rccrun({"-n", "2", "--bind-to", "core", "--tag-output", "sh", "-c", "grep Cpus_allowed_list /proc/self/status"});
  Outcome free = rccrun({"-n", "1", "--bind-to", "none", "sh", "-c", "grep Cpus_allowed_list /proc/self/status"});
  EXPECT_EQ(bound.status, 0) << bound.err;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  auto list_of = [&](const std::string& text, const std::string& tag) {
    size_t at = text.find(tag + "Cpus_allowed_list:");
    if (at == std::string::npos) return std::string("?");
    size_t start = text.find_first_not_of(" \t", text.find(':', at) + 1);
    return text.substr(start, text.find('\n', start) - start);
  };
  std::string rank0 = list_of(bound.out, "[0] ");
  std::string rank1 = list_of(bound.out, "[1] ");
  EXPECT_NE(rank0, "?") << bound.out;
  if (cores >= 2) {
    EXPECT_NE(rank0, rank1) << bound.out;
    EXPECT_NE(rank0, list_of(free.out, "")) << "rank 0 was not narrowed: " << bound.out << free.out;
  }
}

// By default a host running no more ranks than cores gets a core per rank, and one running more
// leaves them unbound (as much of the machine as rccrun may use); --report-bindings says which.
TEST(RccrunTest, BindsByDefaultOnlyWhenRanksFitTheCores) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  Outcome all = rccrun({"-n", "1", "--bind-to", "none", "sh", "-c", "grep Cpus_allowed_list /proc/self/status"});
  const std::string everything = all.out.substr(all.out.find(':') + 1);
  const int fitting = static_cast<int>(std::min<long>(cores, 2));
  Outcome fit = rccrun({"-n", std::to_string(fitting), "--report-bindings", "--tag-output", "sh", "-c",
                        "grep Cpus_allowed_list /proc/self/status"});
  EXPECT_EQ(fit.status, 0) << fit.err;
  EXPECT_NE(fit.err.find("binding: bound to a core each"), std::string::npos) << fit.err;
  EXPECT_NE(fit.err.find("rank 0 (local 0) bound to CPUs"), std::string::npos) << fit.err;
  Outcome crowded = rccrun({"-n", std::to_string(cores + 1), "--report-bindings", "--tag-output", "sh", "-c",
                            "grep Cpus_allowed_list /proc/self/status"});
  EXPECT_EQ(crowded.status, 0) << crowded.err;
  EXPECT_NE(crowded.err.find("not binding: " + std::to_string(cores + 1) + " ranks on"), std::string::npos)
      << crowded.err;
  EXPECT_NE(crowded.out.find("[0] Cpus_allowed_list:" + everything.substr(0, everything.find('\n'))), std::string::npos)
      << crowded.out << " vs unbound " << all.out;
}

}  // namespace
