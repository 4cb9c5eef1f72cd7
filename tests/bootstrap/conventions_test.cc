// Starts bootstrap_probe processes with each launcher's variables set by hand (as Slurm, Open MPI,
// MPICH/Hydra and torchrun would) and checks they all meet at the rendezvous.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "bootstrap/store.h"

extern char** environ;

namespace {

using Env = std::map<std::string, std::string>;

const char* kStripped[] = {"RCC_RANK",       "RCC_SIZE",       "RCC_LOCAL_RANK",    "RCC_LOCAL_SIZE",
                           "RCC_STORE_ADDR", "RCC_JOB_SECRET", "RCC_JOB_ID",        "RCC_STORE_DIR",
                           "SLURM_",         "SLURMD_",        "TORCHELASTIC_",     "OMPI_",
                           "PMI_",           "PMIX_",          "MPI_LOCAL",         "RANK=",
                           "WORLD_SIZE=",    "LOCAL_RANK=",    "LOCAL_WORLD_SIZE=", "MASTER_"};

struct Result {
  int status = -1;
  std::string output;
};

class ConventionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* probe = std::getenv("RCC_TEST_PROBE");
    ASSERT_NE(probe, nullptr) << "RCC_TEST_PROBE must name the bootstrap_probe binary";
    probe_ = probe;
    char dir_template[] = "/tmp/rcc-conventions-XXXXXX";
    ASSERT_NE(mkdtemp(dir_template), nullptr);
    dir_ = dir_template;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  // Runs one probe per entry of per_rank (each with common + its own variables); waits up to
  // limit_s for all, killing stragglers (which then count as failures).
  std::vector<Result> run(const Env& common, const std::vector<Env>& per_rank, double limit_s = 60) {
    std::vector<pid_t> pids;
    std::vector<std::string> logs;
    for (size_t i = 0; i < per_rank.size(); ++i) {
      std::vector<std::string> env;
      for (char** e = environ; *e != nullptr; ++e) {
        bool strip = false;
        for (const char* prefix : kStripped) strip = strip || std::strncmp(*e, prefix, std::strlen(prefix)) == 0;
        if (!strip) env.emplace_back(*e);
      }
      for (const auto& [k, v] : common) env.push_back(k + "=" + v);
      for (const auto& [k, v] : per_rank[i]) env.push_back(k + "=" + v);
      std::vector<char*> envp;
      for (auto& s : env) envp.push_back(s.data());
      envp.push_back(nullptr);
      logs.push_back(dir_ + "/out." + std::to_string(i));
      posix_spawn_file_actions_t actions;
      posix_spawn_file_actions_init(&actions);
      posix_spawn_file_actions_addopen(&actions, 1, logs.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      posix_spawn_file_actions_adddup2(&actions, 1, 2);
      char* argv[] = {probe_.data(), nullptr};
      pid_t pid = -1;
      EXPECT_EQ(posix_spawn(&pid, probe_.c_str(), &actions, nullptr, argv, envp.data()), 0);
      posix_spawn_file_actions_destroy(&actions);
      pids.push_back(pid);
    }
    std::vector<Result> results(pids.size());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
    size_t left = pids.size();
    while (left > 0) {
      for (size_t i = 0; i < pids.size(); ++i) {
        if (pids[i] <= 0) continue;
        int status = 0;
        if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
          results[i].status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          pids[i] = 0;
          --left;
        } else if (std::chrono::steady_clock::now() > deadline) {
          kill(pids[i], SIGKILL);
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (size_t i = 0; i < logs.size(); ++i) {
      std::ifstream in(logs[i]);
      std::stringstream text;
      text << in.rdbuf();
      results[i].output = text.str();
    }
    return results;
  }

  void expect_all_ok(const std::vector<Result>& results, const std::string& source) {
    for (size_t r = 0; r < results.size(); ++r) {
      EXPECT_EQ(results[r].status, 0) << "rank " << r << ": " << results[r].output;
      std::string line =
          "probe rank " + std::to_string(r) + " of " + std::to_string(results.size()) + " (" + source + ") ok";
      EXPECT_NE(results[r].output.find(line), std::string::npos) << results[r].output;
    }
  }

  int free_port() {
    std::string secret = "x";
    std::unique_ptr<rcc::bootstrap::StoreServer> server;
    EXPECT_EQ(rcc::bootstrap::StoreServer::start("127.0.0.1", 0, "127.0.0.1", secret, &server), RCC_SUCCESS);
    return server->port();
  }

  std::string probe_;
  std::string dir_;
};

TEST_F(ConventionsTest, Slurm) {
  const int n = 3;
  std::vector<Env> ranks;
  for (int r = 0; r < n; ++r)
    ranks.push_back({{"SLURM_PROCID", std::to_string(r)}, {"SLURM_LOCALID", std::to_string(r)}});
  std::string job = "4242" + std::to_string(getpid());
  auto results = run({{"SLURM_NTASKS", std::to_string(n)},
                      {"SLURM_JOB_ID", job},
                      {"SLURM_STEP_ID", "0"},
                      {"SLURM_STEP_TASKS_PER_NODE", "3"},
                      {"RCC_STORE_DIR", dir_ + "/store"}},
                     ranks);
  expect_all_ok(results, "slurm");
  EXPECT_NE(results[2].output.find("local 2/3"), std::string::npos) << results[2].output;
  // Rank 0 removed its published address when it finished.
  EXPECT_NE(access((dir_ + "/store/rcc-slurm-" + job + ".0").c_str(), F_OK), 0);
}

TEST_F(ConventionsTest, SlurmStepMeetsWithoutASharedDirectory) {
  // What srun --mpi=none sets: the step's node list and each task's node name. The first task of
  // the first node hosts the store on a port derived from the job and step; nothing is written to
  // a shared directory (HOME is empty and must stay so).
  const int n = 3;
  std::vector<Env> ranks;
  for (int r = 0; r < n; ++r)
    ranks.push_back({{"SLURM_PROCID", std::to_string(r)}, {"SLURM_LOCALID", std::to_string(r)}});
  const std::string home = dir_ + "/home";
  ASSERT_EQ(mkdir(home.c_str(), 0700), 0);
  auto results = run({{"SLURM_NTASKS", std::to_string(n)},
                      {"SLURM_JOB_ID", "5" + std::to_string(getpid())},
                      {"SLURM_STEP_ID", "0"},
                      {"SLURM_STEP_NODELIST", "localhost"},
                      {"SLURMD_NODENAME", "localhost"},
                      {"SLURM_STEP_TASKS_PER_NODE", "3"},
                      {"HOME", home},
                      {"RCC_DEBUG", "INFO"}},
                     ranks);
  expect_all_ok(results, "slurm");
  EXPECT_NE(results[0].output.find("hosts the step's rendezvous at localhost:"), std::string::npos)
      << results[0].output;
  EXPECT_NE(results[2].output.find("the step's rendezvous is at localhost:"), std::string::npos) << results[2].output;
  EXPECT_NE(access((home + "/.rcc").c_str(), F_OK), 0) << "something was written to HOME";
}

TEST_F(ConventionsTest, OpenMpi) {
  const int n = 4;
  std::vector<Env> ranks;
  for (int r = 0; r < n; ++r) {
    ranks.push_back({{"OMPI_COMM_WORLD_RANK", std::to_string(r)}, {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r)}});
  }
  auto results = run({{"OMPI_COMM_WORLD_SIZE", std::to_string(n)},
                      {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(n)},
                      {"OMPI_MCA_ess_base_jobid", "77" + std::to_string(getpid())},
                      {"RCC_STORE_DIR", dir_}},
                     ranks);
  expect_all_ok(results, "openmpi");
}

TEST_F(ConventionsTest, PmiHydraKeyedByParentPid) {
  const int n = 3;
  std::vector<Env> ranks;
  for (int r = 0; r < n; ++r)
    ranks.push_back({{"PMI_RANK", std::to_string(r)}, {"MPI_LOCALRANKID", std::to_string(r)}});
  // No job id at all: the ranks share their parent (this test), like under one local mpiexec.
  auto results = run({{"PMI_SIZE", std::to_string(n)}, {"RCC_STORE_DIR", dir_}}, ranks);
  expect_all_ok(results, "pmi");
}

TEST_F(ConventionsTest, TorchrunWithMasterAddrAndPort) {
  const int n = 4;
  std::vector<Env> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back({{"RANK", std::to_string(r)}, {"LOCAL_RANK", std::to_string(r)}});
  auto results = run({{"WORLD_SIZE", std::to_string(n)},
                      {"LOCAL_WORLD_SIZE", std::to_string(n)},
                      {"MASTER_ADDR", "127.0.0.1"},
                      {"MASTER_PORT", std::to_string(free_port())}},
                     ranks);
  expect_all_ok(results, "torchrun");
  // No RCC_JOB_SECRET: the derived secret is said once, at WARN, by rank 0 only.
  const std::string warning = "RCC_JOB_SECRET is not set: the rendezvous secret is derived from public values";
  for (int r = 0; r < n; ++r) {
    const std::string& out = results[static_cast<size_t>(r)].output;
    const size_t first = out.find(warning);
    if (r == 0) {
      EXPECT_NE(first, std::string::npos) << out;
      EXPECT_EQ(out.find(warning, first + 1), std::string::npos) << "said more than once: " << out;
    } else {
      EXPECT_EQ(first, std::string::npos) << "rank " << r << ": " << out;
    }
  }
}

TEST_F(ConventionsTest, SlurmWithMasterAddrAndSecret) {
  const int n = 2;
  std::vector<Env> ranks;
  for (int r = 0; r < n; ++r) ranks.push_back({{"SLURM_PROCID", std::to_string(r)}});
  auto results = run({{"SLURM_NTASKS", std::to_string(n)},
                      {"SLURM_JOB_ID", "1"},
                      {"MASTER_ADDR", "127.0.0.1"},
                      {"MASTER_PORT", std::to_string(free_port())},
                      {"RCC_JOB_SECRET", "a-secret-for-the-test"}},
                     ranks);
  expect_all_ok(results, "slurm");
  for (const Result& result : results) {
    EXPECT_EQ(result.output.find("RCC_JOB_SECRET is not set"), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find("a-secret-for-the-test"), std::string::npos) << "the secret is in the log";
  }
}

TEST_F(ConventionsTest, MissingRankIsNamedAndEveryoneFailsInBoundedTime) {
  std::vector<Env> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back({{"SLURM_PROCID", std::to_string(r)}});  // rank 3 never starts
  auto start = std::chrono::steady_clock::now();
  auto results = run({{"SLURM_NTASKS", "4"},
                      {"SLURM_JOB_ID", "9" + std::to_string(getpid())},
                      {"RCC_STORE_DIR", dir_},
                      {"RCC_BOOTSTRAP_TIMEOUT", "2"}},
                     ranks, 30);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(elapsed, 15);
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].status, 1) << results[r].output;
    EXPECT_NE(results[r].output.find("rank 3 of 4 did not arrive at the rendezvous"), std::string::npos)
        << "rank " << r << ": " << results[r].output;
  }
}

TEST_F(ConventionsTest, NoLauncherIsAClearError) {
  auto results = run({}, {Env{}});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, 1);
  EXPECT_NE(results[0].output.find("SLURM_PROCID"), std::string::npos) << results[0].output;
}

}  // namespace
