// Job detection from each launcher's variables, the unique id encoding, the advertised address.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "bootstrap/job.h"
#include "bootstrap/slurm_store.h"

namespace rcc::bootstrap {
namespace {

const char* kLauncherVariables[] = {"RCC_RANK",
                                    "RCC_SIZE",
                                    "RCC_LOCAL_RANK",
                                    "RCC_LOCAL_SIZE",
                                    "RCC_STORE_ADDR",
                                    "RCC_JOB_SECRET",
                                    "RCC_JOB_ID",
                                    "SLURM_PROCID",
                                    "SLURM_NTASKS",
                                    "SLURM_LOCALID",
                                    "SLURM_NODEID",
                                    "SLURM_STEP_TASKS_PER_NODE",
                                    "SLURM_TASKS_PER_NODE",
                                    "SLURM_NTASKS_PER_NODE",
                                    "SLURM_JOB_ID",
                                    "SLURM_STEP_ID",
                                    "SLURM_STEP_NODELIST",
                                    "SLURM_JOB_NODELIST",
                                    "SLURMD_NODENAME",
                                    "PMIX_NAMESPACE",
                                    "PMIX_RANK",
                                    "TORCHELASTIC_USE_AGENT_STORE",
                                    "OMPI_COMM_WORLD_RANK",
                                    "OMPI_COMM_WORLD_SIZE",
                                    "OMPI_COMM_WORLD_LOCAL_RANK",
                                    "OMPI_COMM_WORLD_LOCAL_SIZE",
                                    "PMI_RANK",
                                    "PMI_SIZE",
                                    "MPI_LOCALRANKID",
                                    "MPI_LOCALNRANKS",
                                    "RANK",
                                    "WORLD_SIZE",
                                    "LOCAL_RANK",
                                    "LOCAL_WORLD_SIZE",
                                    "MASTER_ADDR",
                                    "MASTER_PORT",
                                    "RCC_SOCKET_IFNAME"};

class JobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kLauncherVariables) unsetenv(name);
  }
  void TearDown() override { SetUp(); }
};

TEST_F(JobTest, NothingSetListsEveryVariable) {
  JobInfo info;
  EXPECT_EQ(detect_job(&info), RCC_ERR_BOOTSTRAP);
  for (const char* name : {"RCC_RANK", "PMIX_NAMESPACE", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                           "WORLD_SIZE", "MASTER_ADDR"}) {
    EXPECT_NE(last_error().find(name), std::string::npos) << name << ": " << last_error();
  }
  EXPECT_EQ(info.rank, -1);  // untouched on failure
}

TEST_F(JobTest, Rccrun) {
  setenv("RCC_RANK", "2", 1);
  setenv("RCC_SIZE", "4", 1);
  setenv("RCC_LOCAL_RANK", "0", 1);
  setenv("RCC_LOCAL_SIZE", "2", 1);
  setenv("RCC_STORE_ADDR", "10.0.0.1:1234", 1);
  setenv("RCC_JOB_SECRET", "s3cret", 1);
  JobInfo info;
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.source, "rccrun");
  EXPECT_EQ(info.rank, 2);
  EXPECT_EQ(info.size, 4);
  EXPECT_EQ(info.local_rank, 0);
  EXPECT_EQ(info.local_size, 2);
  EXPECT_EQ(info.store_address, "10.0.0.1:1234");
  EXPECT_EQ(info.secret, "s3cret");
  EXPECT_EQ(info.meeting, rcc::bootstrap::Meeting::kDialStore);
  unsetenv("RCC_JOB_SECRET");
  EXPECT_EQ(detect_job(&info), RCC_ERR_BOOTSTRAP);
  EXPECT_NE(last_error().find("RCC_JOB_SECRET"), std::string::npos) << last_error();
}

TEST_F(JobTest, RejectsBadNumbers) {
  setenv("RCC_STORE_ADDR", "h:1", 1);
  setenv("RCC_JOB_SECRET", "s", 1);
  JobInfo info;
  setenv("RCC_RANK", "4", 1);
  setenv("RCC_SIZE", "4", 1);
  EXPECT_EQ(detect_job(&info), RCC_ERR_BOOTSTRAP);
  EXPECT_NE(last_error().find("RCC_RANK=4"), std::string::npos) << last_error();
  setenv("RCC_RANK", "abc", 1);
  EXPECT_EQ(detect_job(&info), RCC_ERR_BOOTSTRAP);
  EXPECT_NE(last_error().find("RCC_RANK='abc'"), std::string::npos) << last_error();
  setenv("RCC_RANK", "0", 1);
  setenv("RCC_SIZE", "0", 1);
  EXPECT_EQ(detect_job(&info), RCC_ERR_BOOTSTRAP);
  setenv("RCC_SIZE", "-3", 1);
  EXPECT_EQ(detect_job(&info), RCC_ERR_BOOTSTRAP);
}

TEST_F(JobTest, SlurmWithTasksPerNode) {
  setenv("SLURM_PROCID", "7", 1);
  setenv("SLURM_NTASKS", "8", 1);
  setenv("SLURM_LOCALID", "0", 1);
  setenv("SLURM_NODEID", "3", 1);
  setenv("SLURM_STEP_TASKS_PER_NODE", "2(x3),1", 1);
  JobInfo info;
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.source, "slurm");
  EXPECT_EQ(info.rank, 7);
  EXPECT_EQ(info.size, 8);
  EXPECT_EQ(info.local_rank, 0);
  EXPECT_EQ(info.local_size, 1);
  EXPECT_EQ(info.meeting, rcc::bootstrap::Meeting::kRank0Hosts);
  EXPECT_TRUE(info.store_address.empty());  // published by rank 0 through a file: no node list to derive it from
}

TEST_F(JobTest, SlurmStepDerivesWhereToMeet) {
  setenv("SLURM_PROCID", "1", 1);
  setenv("SLURM_NTASKS", "4", 1);
  setenv("SLURM_LOCALID", "1", 1);
  setenv("SLURM_JOB_ID", "77", 1);
  setenv("SLURM_STEP_ID", "0", 1);
  setenv("SLURM_STEP_NODELIST", "rccnode[1-2]", 1);
  setenv("SLURMD_NODENAME", "rccnode1", 1);
  JobInfo info;
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.source, "slurm");
  EXPECT_EQ(info.meeting, rcc::bootstrap::Meeting::kSlurmStep);
  EXPECT_FALSE(info.secret.empty());
  // MASTER_ADDR and MASTER_PORT, when the user sets them, win.
  setenv("MASTER_ADDR", "10.1.2.3", 1);
  setenv("MASTER_PORT", "4567", 1);
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.meeting, rcc::bootstrap::Meeting::kRank0Hosts);
  EXPECT_EQ(info.store_address, "10.1.2.3:4567");
}

TEST_F(JobTest, SlurmFirstHost) {
  using rcc::bootstrap::slurm_first_host;
  EXPECT_EQ(slurm_first_host("localhost"), "localhost");
  EXPECT_EQ(slurm_first_host("node[07-09,12],gpu1"), "node07");
  EXPECT_EQ(slurm_first_host("gpu1,node[07-09]"), "gpu1");
  EXPECT_EQ(slurm_first_host("rack1-node[3,5]"), "rack1-node3");
  EXPECT_EQ(slurm_first_host("a[2-3]b[10-11]"), "a2b10");
  EXPECT_EQ(slurm_first_host("node[07"), "");
  EXPECT_EQ(slurm_first_host("node[-]"), "");
  EXPECT_EQ(slurm_first_host(""), "");
}

TEST_F(JobTest, TorchrunAgentStore) {
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  setenv("MASTER_PORT", "29500", 1);
  setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
  JobInfo info;
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.source, "torchrun");
  EXPECT_EQ(info.meeting, rcc::bootstrap::Meeting::kTorchAgent);
  EXPECT_EQ(info.store_address, "127.0.0.1:29500");
  // c10d rendezvous: the agent's store is elsewhere; rank 0 hosts one on MASTER_PORT, as torch's.
  setenv("TORCHELASTIC_USE_AGENT_STORE", "False", 1);
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.meeting, rcc::bootstrap::Meeting::kRank0Hosts);
}

TEST_F(JobTest, OpenMpiPmiAndTorchrun) {
  JobInfo info;
  setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.source, "openmpi");
  EXPECT_EQ(info.local_size, 2);
  SetUp();
  setenv("PMI_RANK", "0", 1);
  setenv("PMI_SIZE", "3", 1);
  setenv("MPI_LOCALRANKID", "0", 1);
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.source, "pmi");
  EXPECT_EQ(info.size, 3);
  SetUp();
  setenv("RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  setenv("MASTER_ADDR", "127.0.0.1", 1);
  EXPECT_EQ(detect_job(&info), RCC_ERR_BOOTSTRAP);
  EXPECT_NE(last_error().find("MASTER_PORT"), std::string::npos) << last_error();
  setenv("MASTER_PORT", "29500", 1);
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS) << last_error();
  EXPECT_EQ(info.source, "torchrun");
  EXPECT_EQ(info.store_address, "127.0.0.1:29500");
  EXPECT_EQ(info.secret.size(), 32u);  // derived from the job identity
  JobInfo again;
  ASSERT_EQ(detect_job(&again), RCC_SUCCESS);
  EXPECT_EQ(again.secret, info.secret);  // every rank derives the same one
  setenv("RCC_JOB_SECRET", "given", 1);
  ASSERT_EQ(detect_job(&info), RCC_SUCCESS);
  EXPECT_EQ(info.secret, "given");
  setenv("MASTER_PORT", "70000", 1);
  EXPECT_EQ(detect_job(&info), RCC_ERR_BOOTSTRAP);
}

TEST_F(JobTest, UniqueIdRoundTripAndValidation) {
  char id[128];
  ASSERT_EQ(encode_unique_id("192.168.1.20:40000", "0123456789abcdef0123456789abcdef", id), RCC_SUCCESS);
  std::string address, secret;
  ASSERT_EQ(decode_unique_id(id, &address, &secret), RCC_SUCCESS);
  EXPECT_EQ(address, "192.168.1.20:40000");
  EXPECT_EQ(secret, "0123456789abcdef0123456789abcdef");
  // Every single-bit flip is caught.
  for (int byte = 0; byte < 128; ++byte) {
    char copy[128];
    std::memcpy(copy, id, sizeof copy);
    copy[byte] ^= 0x10;
    std::string a = "unchanged", s = "unchanged";
    EXPECT_EQ(decode_unique_id(copy, &a, &s), RCC_ERR_INVALID_ARGUMENT) << byte;
    EXPECT_EQ(a, "unchanged");
  }
  char zeros[128] = {};
  EXPECT_EQ(decode_unique_id(zeros, &address, &secret), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("unique id"), std::string::npos);
  EXPECT_EQ(encode_unique_id(std::string(100, 'h') + ":1", "0123456789abcdef0123456789abcdef", id),
            RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(encode_unique_id("", "s", id), RCC_ERR_INVALID_ARGUMENT);
}

TEST_F(JobTest, AdvertisedHost) {
  unsetenv("RCC_SOCKET_IFNAME");
  const std::string automatic = advertised_host();
  EXPECT_FALSE(automatic.empty());
  setenv("RCC_SOCKET_IFNAME", "lo", 1);
  EXPECT_EQ(advertised_host(), "127.0.0.1");
  // RCC_* variables reach every host; where the named interface does not exist the automatic
  // choice is used.
  setenv("RCC_SOCKET_IFNAME", "no-such-if0", 1);
  EXPECT_EQ(advertised_host(), automatic);
  unsetenv("RCC_SOCKET_IFNAME");
}

}  // namespace
}  // namespace rcc::bootstrap
