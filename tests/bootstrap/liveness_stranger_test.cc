// The liveness listener under attack: ranks 1 and 2 of a 3-rank mesh (threads of this process,
// with a real store) publish their listeners and wait for rank 0; meanwhile every kind of stranger
// (strangers.h), 1000 connections opened at once among them, is sent to both listeners. Then rank 0
// arrives: the mesh must complete at once (strangers are served side by side, not one after the
// other), every stranger must be closed, the log must name at most RefusalLog::kBurst of them per
// listener, and the mesh must still tell a goodbye from a death.
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "bootstrap/liveness.h"
#include "bootstrap/refusals.h"
#include "bootstrap/socket_util.h"
#include "bootstrap/store.h"
#include "bootstrap/store_rendezvous.h"
#include "strangers.h"

namespace rcc::bootstrap {
namespace {

using std::chrono::steady_clock;

int flood_size() {
  // Every flood connection costs two descriptors here (both ends), for two listeners.
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < 8192 && limit.rlim_max > limit.rlim_cur) {
    limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, 8192);
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  getrlimit(RLIMIT_NOFILE, &limit);
  return static_cast<int>(std::min<rlim_t>(1000, (limit.rlim_cur - 256) / 4));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(LivenessStrangers, MeshCompletesAndEveryStrangerIsRefused) {
  const int flood = flood_size();
  std::string secret;
  ASSERT_EQ(make_secret(&secret), RCC_SUCCESS);
  std::unique_ptr<StoreServer> server;
  ASSERT_EQ(StoreServer::start("127.0.0.1", 0, "127.0.0.1", secret, &server), RCC_SUCCESS);
  const int size = 3;
  std::unique_ptr<StoreClient> clients[size];
  for (auto& c : clients) ASSERT_EQ(StoreClient::connect(server->address(), secret, 10, &c), RCC_SUCCESS);
  std::unique_ptr<LivenessMonitor> monitors[size];
  Status statuses[size] = {RCC_ERR_INTERNAL, RCC_ERR_INTERNAL, RCC_ERR_INTERNAL};
  double ready_at[size] = {};
  std::atomic<int> failures{0};
  const auto t0 = steady_clock::now();
  auto start_rank = [&](int rank) {
    return std::thread([&, rank] {
      StoreExchange meet(*clients[rank], "job", rank, size);
      statuses[rank] = LivenessMonitor::start(
          meet, secret, 30, 5, [&](int, const std::string&) { ++failures; }, &monitors[rank]);
      ready_at[rank] = std::chrono::duration<double>(steady_clock::now() - t0).count();
    });
  };

  testing::internal::CaptureStderr();
  std::thread rank1 = start_rank(1), rank2 = start_rank(2);
  std::unique_ptr<StoreClient> insider;  // only to learn where the listeners are
  ASSERT_EQ(StoreClient::connect(server->address(), secret, 10, &insider), RCC_SUCCESS);
  std::vector<std::unique_ptr<strangers::Attack>> attacks;
  for (int rank : {1, 2}) {
    std::vector<uint8_t> published;
    // try_get: the key is the ranks' (consumable: a counted get would take one rank's read).
    bool found = false;
    for (int tries = 0; tries < 10000 && !found; ++tries) {
      ASSERT_EQ(insider->try_get("job/published/liveness/" + std::to_string(rank), &found, &published), RCC_SUCCESS);
      if (!found) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(found) << "rank " << rank << " did not publish its liveness listener";
    const std::string text(published.begin(), published.end());  // "host:port hostname"
    const std::string address = text.substr(0, text.find(' '));
    std::string host;
    int port = 0;
    ASSERT_EQ(split_address(address, "liveness", &host, &port), RCC_SUCCESS);
    attacks.push_back(std::make_unique<strangers::Attack>(port, strangers::Protocol::kLiveness, flood));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the strangers queue up first
  const double rank0_starts = std::chrono::duration<double>(steady_clock::now() - t0).count();
  std::thread rank0 = start_rank(0);
  rank0.join();
  rank1.join();
  rank2.join();
  for (int rank = 0; rank < size; ++rank) {
    ASSERT_EQ(statuses[rank], RCC_SUCCESS) << "rank " << rank << ": " << last_error();
    // Before the fix the listener served one connection at a time, 5 s for each silent one.
    EXPECT_LT(ready_at[rank] - rank0_starts, 3.0) << "rank " << rank;
  }
  // Every stranger's connection was closed by the ranks once the mesh was complete.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (auto& attack : attacks) {
    EXPECT_EQ(attack->closed_by_peer(), attack->connections() - 1) << "strangers still connected";
    EXPECT_TRUE(attack->slow_closed() || attack->slow_bytes_sent() < 3);
  }
  attacks.clear();
  for (auto& m : monitors) m.reset();  // goodbyes: no failure reported
  EXPECT_EQ(failures.load(), 0);
  std::string log = testing::internal::GetCapturedStderr();
  for (int rank : {1, 2}) {
    const std::string listener = "liveness listener of rank " + std::to_string(rank);
    EXPECT_LE(count(log, listener + ": refused a connection from"), static_cast<size_t>(RefusalLog::kBurst)) << log;
    EXPECT_GE(count(log, listener + ": refused a connection from"), 1u) << log;
    EXPECT_NE(log.find(listener + ": "), std::string::npos) << log;
  }
  EXPECT_EQ(log.find(secret), std::string::npos) << "the secret is in the log";
  EXPECT_LT(count(log, "\n"), 40u) << log;
  std::printf("liveness strangers: %d flood connections per listener; mesh ready %.2f s after rank 0 started\n", flood,
              std::max({ready_at[0], ready_at[1], ready_at[2]}) - rank0_starts);
}

}  // namespace
}  // namespace rcc::bootstrap
