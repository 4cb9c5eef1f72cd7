// Verbs-only checks (device, GID, notify path, error events). Meant for the RDMA VM: the rxe tests
// run with label verbs-rxe, the Siw* ones with verbs-siw. Without a device they fail.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "rank_threads.h"
#include "transport/verbs/verbs_transport.h"

namespace transport_test {
namespace {

using rcc::transport::Options;
using rcc::transport::verbs::LinkKind;
using rcc::transport::verbs::VerbsInfo;

rcc::Status create_single(std::unique_ptr<rcc::transport::Transport>* out) {
  Options options;
  options.rank = 0;
  options.size = 1;
  return rcc::transport::create_verbs(options, out);
}

int expected_rxe_gid_index() {
  for (const char* name : {"RCC_VM_RXE_GID_INDEX", "RDMA_VM_RXE_GID_INDEX"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return -1;
}

TEST(VerbsRxe, AutomaticGidIsTheRoceV2Ipv4One) {
  ScopedEnv device("RCC_IB_DEVICE", "rxe0");
  ScopedEnv gid("RCC_IB_GID_INDEX", nullptr);
  std::unique_ptr<rcc::transport::Transport> transport;
  ASSERT_EQ(create_single(&transport), RCC_SUCCESS) << rcc::last_error();
  VerbsInfo info;
  ASSERT_TRUE(rcc::transport::verbs::query(*transport, &info));
  EXPECT_EQ(info.device, "rxe0");
  EXPECT_EQ(info.kind, LinkKind::kRoce);
  int expected = expected_rxe_gid_index();
  ASSERT_GE(expected, 0) << "RCC_VM_RXE_GID_INDEX is not set: run inside tests/vm/run-in-vm.sh --rxe";
  EXPECT_EQ(info.gid_index, expected);
  EXPECT_EQ(info.gid.rfind("::ffff:", 0), 0u) << info.gid;
}

TEST(VerbsRxe, UnknownDeviceListsWhatExists) {
  ScopedEnv device("RCC_IB_DEVICE", "nosuch");
  std::unique_ptr<rcc::transport::Transport> transport;
  EXPECT_EQ(create_single(&transport), RCC_ERR_NO_DEVICE);
  EXPECT_EQ(transport, nullptr);
  EXPECT_NE(rcc::last_error().find("nosuch"), std::string::npos) << rcc::last_error();
  EXPECT_NE(rcc::last_error().find("rxe0:1 ("), std::string::npos) << rcc::last_error();
}

TEST(VerbsRxe, ExcludingEveryDeviceIsNoDevice) {
  ScopedEnv device("RCC_IB_DEVICE", "^rxe0,siw0");
  std::unique_ptr<rcc::transport::Transport> transport;
  EXPECT_EQ(create_single(&transport), RCC_ERR_NO_DEVICE);
  EXPECT_NE(rcc::last_error().find("rxe0"), std::string::npos) << rcc::last_error();
}

TEST(VerbsRxe, GidIndexOutOfRangeIsAClearError) {
  ScopedEnv device("RCC_IB_DEVICE", "rxe0");
  ScopedEnv gid("RCC_IB_GID_INDEX", "99");
  std::unique_ptr<rcc::transport::Transport> transport;
  EXPECT_EQ(create_single(&transport), RCC_ERR_INVALID_ARGUMENT);
  const std::string& message = rcc::last_error();
  EXPECT_NE(message.find("RCC_IB_GID_INDEX=99"), std::string::npos) << message;
  EXPECT_NE(message.find("usable indexes"), std::string::npos) << message;
  EXPECT_NE(message.find("::ffff:"), std::string::npos) << message;
}

TEST(VerbsRxe, ExplicitGidIndexIsUsed) {
  int expected = expected_rxe_gid_index();
  ASSERT_GE(expected, 0) << "RCC_VM_RXE_GID_INDEX is not set";
  ScopedEnv device("RCC_IB_DEVICE", "rxe0");
  ScopedEnv gid("RCC_IB_GID_INDEX", std::to_string(expected).c_str());
  std::unique_ptr<rcc::transport::Transport> transport;
  ASSERT_EQ(create_single(&transport), RCC_SUCCESS) << rcc::last_error();
  VerbsInfo info;
  ASSERT_TRUE(rcc::transport::verbs::query(*transport, &info));
  EXPECT_EQ(info.gid_index, expected);
}

// One notified write between two ranks; returns the sender's counters.
VerbsInfo notified_write_counters() {
  VerbsInfo sender;
  run_ranks(2, [&](Rank& rank) {
    Rank::Region region;
    if (!rank.share_region(4096, &region)) return;
    if (rank.rank() == 0) {
      region.bytes[100] = 42;
      ASSERT_EQ(rank.transport().write(1, region.bytes.data(), 4096, *region.memory, region.remote_base[1],
                                       *region.keys[1], true, 77, 1),
                RCC_SUCCESS);
      ASSERT_TRUE(rank.progress_until([&] { return !rank.write_done_cookies.empty(); }));
      ASSERT_TRUE(rcc::transport::verbs::query(rank.transport(), &sender));
    } else {
      ASSERT_TRUE(rank.progress_until([&] { return !rank.notifies.empty(); }));
      EXPECT_EQ(rank.notifies[0].imm, 77u);
      EXPECT_EQ(rank.notifies[0].length, 4096u);
      EXPECT_EQ(region.bytes[100], 42);
    }
    rank.barrier();
  });
  return sender;
}

TEST(VerbsRxe, RoceUsesWriteWithImmediate) {
  ScopedEnv transport("RCC_TRANSPORT", "verbs");
  ScopedEnv device("RCC_IB_DEVICE", "rxe0");
  VerbsInfo info = notified_write_counters();
  EXPECT_TRUE(info.uses_immediate);
  EXPECT_EQ(info.writes_with_immediate, 1u);
  EXPECT_EQ(info.notify_sends, 0u);
}

TEST(VerbsRxe, UseImmZeroForcesWriteThenSend) {
  ScopedEnv transport("RCC_TRANSPORT", "verbs");
  ScopedEnv device("RCC_IB_DEVICE", "rxe0");
  ScopedEnv imm("RCC_IB_USE_IMM", "0");
  VerbsInfo info = notified_write_counters();
  EXPECT_FALSE(info.uses_immediate);
  EXPECT_EQ(info.writes_with_immediate, 0u);
  EXPECT_EQ(info.notify_sends, 1u);
}

// More writes than the send queue holds: the rest wait in software and still all complete.
TEST(VerbsRxe, BurstBeyondSendQueueIsQueuedInSoftware) {
  ScopedEnv transport("RCC_TRANSPORT", "verbs");
  ScopedEnv device("RCC_IB_DEVICE", "rxe0");
  run_ranks(2, [&](Rank& rank) {
    Rank::Region region;
    if (!rank.share_region(64 << 10, &region)) return;
    if (rank.rank() == 0) {
      VerbsInfo info;
      ASSERT_TRUE(rcc::transport::verbs::query(rank.transport(), &info));
      const int writes = 3 * info.send_queue_depth;
      for (int w = 0; w < writes; ++w) {
        ASSERT_EQ(rank.transport().write(1, region.bytes.data(), 64, *region.memory,
                                         region.remote_base[1] + 64 * (w % 1000), *region.keys[1], false, 0, w + 1),
                  RCC_SUCCESS);
      }
      ASSERT_TRUE(rank.progress_until([&] { return rank.write_done_cookies.size() >= static_cast<size_t>(writes); }));
      EXPECT_EQ(rank.write_done_cookies.size(), static_cast<size_t>(writes));
      ASSERT_TRUE(rcc::transport::verbs::query(rank.transport(), &info));
      EXPECT_GT(info.queued_in_software, 0u);
      EXPECT_EQ(info.work_requests, static_cast<uint64_t>(writes));
    }
    rank.barrier();
  });
}

// A write into memory the peer has deregistered becomes a kError naming the peer, the device and
// the completion status, and later writes to that peer fail at once.
TEST(VerbsRxe, RemoteAccessErrorIsReported) {
  ScopedEnv transport("RCC_TRANSPORT", "verbs");
  ScopedEnv device("RCC_IB_DEVICE", "rxe0");
  run_ranks(2, [&](Rank& rank) {
    Rank::Region region;
    if (!rank.share_region(4096, &region)) return;
    // The responder's queue pair goes to error as well, so both ranks see kError.
    rank.expect_errors = true;
    if (rank.rank() == 1) region.memory.reset();  // rank 0's key now points at nothing
    if (!rank.barrier()) return;
    if (rank.rank() == 0) {
      ASSERT_EQ(rank.transport().write(1, region.bytes.data(), 64, *region.memory, region.remote_base[1],
                                       *region.keys[1], true, 1, 1),
                RCC_SUCCESS);
      ASSERT_TRUE(rank.progress_until([&] { return !rank.errors.empty(); }));
      const Event& error = rank.errors[0];
      EXPECT_EQ(error.peer, 1);
      EXPECT_EQ(error.status, RCC_ERR_PEER_FAILED);
      EXPECT_NE(error.message.find("rank 1"), std::string::npos) << error.message;
      EXPECT_NE(error.message.find("rxe0"), std::string::npos) << error.message;
      EXPECT_NE(error.message.find("remote access"), std::string::npos) << error.message;
      EXPECT_NE(error.message.find("GID"), std::string::npos) << error.message;
      EXPECT_TRUE(rank.write_done_cookies.empty());
      EXPECT_EQ(rank.transport().write(1, region.bytes.data(), 64, *region.memory, region.remote_base[1],
                                       *region.keys[1], false, 0, 2),
                RCC_ERR_PEER_FAILED);
    }
    rank.barrier();
  });
}

TEST(VerbsSiw, IwarpUsesWriteThenSend) {
  ScopedEnv transport("RCC_TRANSPORT", "verbs");
  ScopedEnv device("RCC_IB_DEVICE", "siw0");
  VerbsInfo info = notified_write_counters();
  EXPECT_EQ(info.device, "siw0");
  EXPECT_EQ(info.kind, LinkKind::kIwarp);
  EXPECT_FALSE(info.uses_immediate);
  EXPECT_EQ(info.writes_with_immediate, 0u);
  EXPECT_EQ(info.notify_sends, 1u);
}

// Soft devices have no PCI locality, so both are equally near: IB/RoCE wins over iWARP.
TEST(VerbsSiw, AutomaticChoicePrefersRoceOverIwarp) {
  ScopedEnv device("RCC_IB_DEVICE", nullptr);
  std::unique_ptr<rcc::transport::Transport> transport;
  ASSERT_EQ(create_single(&transport), RCC_SUCCESS) << rcc::last_error();
  VerbsInfo info;
  ASSERT_TRUE(rcc::transport::verbs::query(*transport, &info));
  EXPECT_EQ(info.device, "rxe0");
  ScopedEnv exclude("RCC_IB_DEVICE", "^rxe0");
  ASSERT_EQ(create_single(&transport), RCC_SUCCESS) << rcc::last_error();
  ASSERT_TRUE(rcc::transport::verbs::query(*transport, &info));
  EXPECT_EQ(info.device, "siw0");
}

TEST(VerbsSiw, UseImmOneIsRefusedOnIwarp) {
  ScopedEnv device("RCC_IB_DEVICE", "siw0");
  ScopedEnv imm("RCC_IB_USE_IMM", "1");
  std::unique_ptr<rcc::transport::Transport> transport;
  EXPECT_EQ(create_single(&transport), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(rcc::last_error().find("iWARP"), std::string::npos) << rcc::last_error();
}

// Polled delivery relies on a write's bytes landing in address order, which iWARP does not promise.
TEST(VerbsSiw, PolledEagerIsRefusedOnIwarp) {
  ScopedEnv device("RCC_IB_DEVICE", "siw0");
  std::unique_ptr<rcc::transport::Transport> transport;
  {
    ScopedEnv polled("RCC_IB_POLLED_EAGER", "1");
    EXPECT_EQ(create_single(&transport), RCC_ERR_INVALID_ARGUMENT);
    EXPECT_NE(rcc::last_error().find("RCC_IB_POLLED_EAGER=1 is refused on iWARP"), std::string::npos)
        << rcc::last_error();
  }
  ASSERT_EQ(create_single(&transport), RCC_SUCCESS) << rcc::last_error();  // the default: notified
  EXPECT_FALSE(transport->polled_delivery());
}

TEST(VerbsSiw, RoceAndIwarpRanksRefuseToConnect) {
  std::vector<uint8_t> roce_blob, iwarp_blob;
  std::unique_ptr<rcc::transport::Transport> roce, iwarp;
  Options options;
  options.size = 2;
  {
    ScopedEnv device("RCC_IB_DEVICE", "rxe0");
    options.rank = 0;
    ASSERT_EQ(rcc::transport::create_verbs(options, &roce), RCC_SUCCESS) << rcc::last_error();
  }
  {
    ScopedEnv device("RCC_IB_DEVICE", "siw0");
    options.rank = 1;
    ASSERT_EQ(rcc::transport::create_verbs(options, &iwarp), RCC_SUCCESS) << rcc::last_error();
  }
  ASSERT_EQ(roce->local_address(&roce_blob), RCC_SUCCESS);
  ASSERT_EQ(iwarp->local_address(&iwarp_blob), RCC_SUCCESS);
  EXPECT_EQ(roce->connect_all({roce_blob, iwarp_blob}), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(rcc::last_error().find("rank 1 uses iWARP"), std::string::npos) << rcc::last_error();
}

}  // namespace
}  // namespace transport_test
