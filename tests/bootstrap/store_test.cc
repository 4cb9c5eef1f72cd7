// The rendezvous store with a real server thread and real TCP clients in one process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "bootstrap/frame.h"
#include "bootstrap/refusals.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {
namespace {

using std::chrono::steady_clock;

std::vector<uint8_t> bytes(const std::string& text) { return {text.begin(), text.end()}; }
std::string text(const std::vector<uint8_t>& data) { return {data.begin(), data.end()}; }

double seconds_since(steady_clock::time_point start) {
  return std::chrono::duration<double>(steady_clock::now() - start).count();
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(make_secret(&secret_), RCC_SUCCESS);
    ASSERT_EQ(StoreServer::start("127.0.0.1", 0, "127.0.0.1", secret_, &server_), RCC_SUCCESS);
  }
  std::unique_ptr<StoreClient> client() {
    std::unique_ptr<StoreClient> c;
    EXPECT_EQ(StoreClient::connect(server_->address(), secret_, 5, &c), RCC_SUCCESS) << last_error();
    return c;
  }
  // A plain TCP connection to the server, for misbehaving peers.
  int raw_connection() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    return fd;
  }
  // True when the server closed fd within timeout_ms (reads and discards any replies first).
  static bool closed_by_server(int fd, int timeout_ms) {
    auto deadline = steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (steady_clock::now() < deadline) {
      pollfd pfd{fd, POLLIN, 0};
      if (poll(&pfd, 1, 100) <= 0) continue;
      char buffer[256];
      ssize_t n = recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) return true;
    }
    return false;
  }
  void send_raw(int fd, const std::vector<uint8_t>& data) {
    ASSERT_EQ(send(fd, data.data(), data.size(), MSG_NOSIGNAL), static_cast<ssize_t>(data.size()));
  }
  std::vector<uint8_t> hello_frame(const std::string& secret) {
    std::vector<uint8_t> wire;
    append_frame(FrameType::kHello, 1, "", reinterpret_cast<const uint8_t*>(secret.data()), secret.size(), &wire);
    return wire;
  }
  // Runs an allgather among size fresh clients on threads; returns how many saw the right data.
  int run_allgather(int size, const std::string& prefix) {
    std::atomic<int> good{0};
    std::vector<std::thread> threads;
    for (int rank = 0; rank < size; ++rank) {
      threads.emplace_back([&, rank] {
        auto c = client();
        if (!c) return;
        std::vector<std::vector<uint8_t>> all;
        if (allgather(*c, prefix, rank, size, bytes("rank" + std::to_string(rank)), 10, &all) != RCC_SUCCESS) return;
        bool ok = static_cast<int>(all.size()) == size;
        for (int r = 0; ok && r < size; ++r) ok = text(all[r]) == "rank" + std::to_string(r);
        if (ok && barrier(*c, prefix + "/barrier", rank, size, 10) == RCC_SUCCESS) ++good;
      });
    }
    for (auto& t : threads) t.join();
    return good.load();
  }

  std::string secret_;
  std::unique_ptr<StoreServer> server_;
};

TEST_F(StoreTest, SecretIs32HexCharactersAndRandom) {
  std::string other;
  ASSERT_EQ(make_secret(&other), RCC_SUCCESS);
  EXPECT_EQ(secret_.size(), 32u);
  EXPECT_EQ(secret_.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(secret_, other);
}

TEST_F(StoreTest, SetGetAndWaitForKey) {
  auto a = client();
  auto b = client();
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->set("x", bytes("1")), RCC_SUCCESS);
  std::vector<uint8_t> value;
  ASSERT_EQ(b->get("x", 1, &value), RCC_SUCCESS);
  EXPECT_EQ(text(value), "1");
  // b waits for a key a sets later.
  std::thread setter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(a->set("later", bytes("hello")), RCC_SUCCESS);
  });
  auto start = steady_clock::now();
  ASSERT_EQ(b->get("later", 5, &value), RCC_SUCCESS);
  EXPECT_GE(seconds_since(start), 0.25);
  EXPECT_EQ(text(value), "hello");
  setter.join();
  // Overwrite.
  ASSERT_EQ(a->set("x", bytes("2")), RCC_SUCCESS);
  ASSERT_EQ(b->get("x", 1, &value), RCC_SUCCESS);
  EXPECT_EQ(text(value), "2");
}

TEST_F(StoreTest, GetTimesOutAndTheClientStaysUsable) {
  auto a = client();
  auto b = client();
  std::vector<uint8_t> value;
  auto start = steady_clock::now();
  EXPECT_EQ(a->get("never", 0.3, &value), RCC_ERR_TIMEOUT);
  EXPECT_GE(seconds_since(start), 0.29);
  EXPECT_LT(seconds_since(start), 3.0);
  EXPECT_NE(last_error().find("never"), std::string::npos) << last_error();
  // The late answer to the timed-out get must not be taken for the answer to the next request.
  ASSERT_EQ(b->set("never", bytes("late")), RCC_SUCCESS);
  ASSERT_EQ(b->set("other", bytes("right")), RCC_SUCCESS);
  ASSERT_EQ(a->get("other", 1, &value), RCC_SUCCESS);
  EXPECT_EQ(text(value), "right");
}

TEST_F(StoreTest, TryGet) {
  auto a = client();
  bool found = true;
  std::vector<uint8_t> value;
  ASSERT_EQ(a->try_get("k", &found, &value), RCC_SUCCESS);
  EXPECT_FALSE(found);
  ASSERT_EQ(a->set("k", {}), RCC_SUCCESS);
  ASSERT_EQ(a->try_get("k", &found, &value), RCC_SUCCESS);
  EXPECT_TRUE(found);
  EXPECT_TRUE(value.empty());
}

TEST_F(StoreTest, LargeValueRoundTrip) {
  auto a = client();
  auto b = client();
  std::vector<uint8_t> big(8u << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 31 + 7);
  ASSERT_EQ(a->set("big", big), RCC_SUCCESS);
  std::vector<uint8_t> value;
  ASSERT_EQ(b->get("big", 10, &value), RCC_SUCCESS);
  EXPECT_TRUE(value == big);
}

TEST_F(StoreTest, BadArgumentsAreErrors) {
  auto a = client();
  EXPECT_EQ(a->set("", bytes("v")), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(a->set(std::string(kMaxKeyBytes + 1, 'k'), bytes("v")), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("key"), std::string::npos);
  std::vector<std::vector<uint8_t>> all;
  EXPECT_EQ(allgather(*a, "p", 3, 3, {}, 1, &all), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(allgather(*a, "p", 0, 0, {}, 1, &all), RCC_ERR_INVALID_ARGUMENT);
  std::unique_ptr<StoreClient> c;
  EXPECT_EQ(StoreClient::connect("no-port-here", secret_, 1, &c), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(StoreClient::connect("127.0.0.1:99999", secret_, 1, &c), RCC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  std::unique_ptr<StoreServer> s;
  EXPECT_EQ(StoreServer::start("127.0.0.1", 0, "127.0.0.1", "", &s), RCC_ERR_INVALID_ARGUMENT);
}

TEST_F(StoreTest, AllgatherOneToEightClients) {
  for (int size = 1; size <= 8; ++size) {
    EXPECT_EQ(run_allgather(size, "ag" + std::to_string(size)), size) << "size " << size;
  }
}

TEST_F(StoreTest, AllgatherTimeoutNamesMissingRanks) {
  std::vector<std::thread> threads;
  std::vector<std::string> messages(2);
  std::vector<Status> statuses(2);
  auto start = steady_clock::now();
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      auto c = client();
      std::vector<std::vector<uint8_t>> all;
      statuses[rank] = allgather(*c, "partial", rank, 5, {}, 1.0, &all);
      messages[rank] = last_error();
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LT(seconds_since(start), 5);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_EQ(statuses[rank], RCC_ERR_TIMEOUT);
    EXPECT_NE(messages[rank].find("ranks 2, 3, 4 of 5 did not arrive"), std::string::npos) << messages[rank];
    EXPECT_NE(messages[rank].find("RCC_BOOTSTRAP_TIMEOUT"), std::string::npos) << messages[rank];
  }
}

TEST_F(StoreTest, ClientConnectsBeforeServerStarts) {
  // Find a free port, then start a server there only after the client began dialing.
  std::unique_ptr<StoreServer> probe;
  ASSERT_EQ(StoreServer::start("127.0.0.1", 0, "127.0.0.1", secret_, &probe), RCC_SUCCESS);
  int port = probe->port();
  probe.reset();
  std::unique_ptr<StoreServer> late;
  std::thread starter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(StoreServer::start("127.0.0.1", port, "127.0.0.1", secret_, &late), RCC_SUCCESS);
  });
  std::unique_ptr<StoreClient> c;
  EXPECT_EQ(StoreClient::connect("127.0.0.1:" + std::to_string(port), secret_, 10, &c), RCC_SUCCESS) << last_error();
  starter.join();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->set("k", bytes("v")), RCC_SUCCESS);
}

TEST_F(StoreTest, NoServerGivesBootstrapErrorAfterTimeout) {
  std::unique_ptr<StoreServer> probe;
  ASSERT_EQ(StoreServer::start("127.0.0.1", 0, "127.0.0.1", secret_, &probe), RCC_SUCCESS);
  std::string address = probe->address();
  probe.reset();
  std::unique_ptr<StoreClient> c;
  auto start = steady_clock::now();
  EXPECT_EQ(StoreClient::connect(address, secret_, 0.5, &c), RCC_ERR_BOOTSTRAP);
  EXPECT_LT(seconds_since(start), 3);
  EXPECT_NE(last_error().find(address), std::string::npos) << last_error();
}

TEST_F(StoreTest, WrongSecretIsRefusedAndLoggedWhileOthersFinish) {
  testing::internal::CaptureStderr();
  std::atomic<int> good{0};
  std::thread job([&] { good = run_allgather(4, "job"); });
  for (int i = 0; i < 5; ++i) {
    std::unique_ptr<StoreClient> intruder;
    EXPECT_EQ(StoreClient::connect(server_->address(), "0123456789abcdef0123456789abcdef", 5, &intruder),
              RCC_ERR_BOOTSTRAP);
    EXPECT_EQ(intruder, nullptr);
    EXPECT_NE(last_error().find("refused"), std::string::npos) << last_error();
  }
  job.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(good.load(), 4);
  EXPECT_NE(log.find("refused a connection from 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("wrong job secret"), std::string::npos) << log;
}

TEST_F(StoreTest, RequestsBeforeHelloAreRefused) {
  int fd = raw_connection();
  std::vector<uint8_t> wire;
  append_frame(FrameType::kGet, 1, "k", nullptr, 0, &wire);
  send_raw(fd, wire);
  EXPECT_TRUE(closed_by_server(fd, 3000));
  close(fd);
}

TEST_F(StoreTest, GarbageAndOversizedFramesCloseOnlyThatConnection) {
  auto good = client();
  // Garbage before the hello.
  int garbage = raw_connection();
  send_raw(garbage, std::vector<uint8_t>(100, 0xee));
  // A valid hello followed by garbage.
  int after_hello = raw_connection();
  send_raw(after_hello, hello_frame(secret_));
  send_raw(after_hello, std::vector<uint8_t>{9, 9, 9, 9, 42, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  // A header announcing a value over kMaxValueBytes.
  int oversized = raw_connection();
  send_raw(oversized, hello_frame(secret_));
  std::vector<uint8_t> header;
  append_frame(FrameType::kSet, 2, "k", nullptr, 0, &header);
  uint32_t huge = static_cast<uint32_t>(kFrameHeaderBytes + kMaxKeyBytes + kMaxValueBytes + 1);
  for (int i = 0; i < 4; ++i) header[i] = static_cast<uint8_t>(huge >> (8 * i));
  send_raw(oversized, header);
  // An oversized hello (a stranger may not make the server buffer megabytes).
  int big_hello = raw_connection();
  send_raw(big_hello, hello_frame(std::string(100000, 'a')));
  EXPECT_TRUE(closed_by_server(garbage, 3000));
  EXPECT_TRUE(closed_by_server(after_hello, 3000));
  EXPECT_TRUE(closed_by_server(oversized, 3000));
  EXPECT_TRUE(closed_by_server(big_hello, 3000));
  for (int fd : {garbage, after_hello, oversized, big_hello}) close(fd);
  ASSERT_EQ(good->set("still", bytes("works")), RCC_SUCCESS);
  std::vector<uint8_t> value;
  ASSERT_EQ(good->get("still", 1, &value), RCC_SUCCESS);
  EXPECT_EQ(text(value), "works");
}

TEST_F(StoreTest, StalledClientsDoNotBlockOthersAndAreDropped) {
  int silent = raw_connection();      // never sends anything
  int half_hello = raw_connection();  // sends part of a hello, then stalls
  auto hello = hello_frame(secret_);
  send_raw(half_hello, std::vector<uint8_t>(hello.begin(), hello.begin() + 6));
  int unread = raw_connection();  // authenticated, floods gets and never reads a reply
  send_raw(unread, hello);
  std::vector<uint8_t> flood;
  std::vector<uint8_t> big(1u << 20, 7);
  append_frame(FrameType::kSet, 2, "big", big.data(), big.size(), &flood);
  for (uint64_t id = 3; id < 23; ++id) append_frame(FrameType::kTryGet, id, "big", nullptr, 0, &flood);
  send_raw(unread, flood);
  auto start = steady_clock::now();
  EXPECT_EQ(run_allgather(6, "busy"), 6);
  EXPECT_LT(seconds_since(start), 4);  // not held up by the stalled peers
  EXPECT_TRUE(closed_by_server(silent, 10000));
  EXPECT_TRUE(closed_by_server(half_hello, 10000));
  EXPECT_LT(seconds_since(start), 12);
  for (int fd : {silent, half_hello, unread}) close(fd);
}

TEST_F(StoreTest, DeletePrefixRemovesOnlyThoseKeys) {
  std::unique_ptr<StoreClient> c = client();
  for (const char* key : {"job/split1.0/a", "job/split1.0/b", "job/split1.1/a", "job/split10.0/a", "other"}) {
    ASSERT_EQ(c->set(key, {1}), RCC_SUCCESS);
  }
  ASSERT_EQ(c->delete_prefix("job/split1."), RCC_SUCCESS);
  ASSERT_EQ(c->delete_prefix("nothing/here"), RCC_SUCCESS);
  bool found = true;
  std::vector<uint8_t> value;
  for (const char* gone : {"job/split1.0/a", "job/split1.0/b", "job/split1.1/a"}) {
    ASSERT_EQ(c->try_get(gone, &found, &value), RCC_SUCCESS);
    EXPECT_FALSE(found) << gone;
  }
  for (const char* kept : {"job/split10.0/a", "other"}) {
    ASSERT_EQ(c->try_get(kept, &found, &value), RCC_SUCCESS);
    EXPECT_TRUE(found) << kept;
  }
  // A removed key can be set again, and a get waiting for it is answered.
  std::thread later([&] {
    std::unique_ptr<StoreClient> other = client();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(other->set("job/split1.0/a", {7}), RCC_SUCCESS);
  });
  ASSERT_EQ(c->get("job/split1.0/a", 5, &value), RCC_SUCCESS);
  EXPECT_EQ(value, std::vector<uint8_t>{7});
  later.join();
}

TEST_F(StoreTest, ConsumableKeysGoAfterTheirReads) {
  std::unique_ptr<StoreClient> c = client();
  bool found = false;
  std::vector<uint8_t> value;
  // Read twice (a get waiting before the set counts), try_get never counts.
  std::thread waiting([&] {
    std::unique_ptr<StoreClient> other = client();
    std::vector<uint8_t> got;
    EXPECT_EQ(other->get("c/a", 5, &got), RCC_SUCCESS);
    EXPECT_EQ(got, std::vector<uint8_t>{5});
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(c->set_consumable("c/a", {5}, 2), RCC_SUCCESS);
  waiting.join();
  ASSERT_EQ(c->try_get("c/a", &found, &value), RCC_SUCCESS);
  EXPECT_TRUE(found);
  ASSERT_EQ(c->get("c/a", 5, &value), RCC_SUCCESS);  // the second read
  ASSERT_EQ(c->try_get("c/a", &found, &value), RCC_SUCCESS);
  EXPECT_FALSE(found) << "read twice, yet still there";
  // A plain set of the same key is kept again.
  ASSERT_EQ(c->set("c/a", {6}), RCC_SUCCESS);
  ASSERT_EQ(c->get("c/a", 5, &value), RCC_SUCCESS);
  ASSERT_EQ(c->try_get("c/a", &found, &value), RCC_SUCCESS);
  EXPECT_TRUE(found);
  // An allgather leaves none of its keys behind.
  for (int size : {1, 2, 5}) {
    const std::string prefix = "gone" + std::to_string(size);
    EXPECT_EQ(run_allgather(size, prefix), size);
    for (int r = 0; r < size; ++r) {
      ASSERT_EQ(c->try_get(prefix + "/" + std::to_string(r), &found, &value), RCC_SUCCESS);
      EXPECT_FALSE(found) << prefix << "/" << r;
    }
  }
}

// 100 strangers with a wrong secret: each is refused, but the log holds RefusalLog::kBurst lines
// naming one, and one line with the number of the others (when the server goes away).
TEST_F(StoreTest, RefusalsAreLoggedRateLimited) {
  testing::internal::CaptureStderr();
  for (int i = 0; i < 100; ++i) {
    int fd = raw_connection();
    std::vector<uint8_t> wire;
    std::string wrong(secret_.size(), 'x');
    append_frame(FrameType::kHello, 1, "", reinterpret_cast<const uint8_t*>(wrong.data()), wrong.size(), &wire);
    ASSERT_EQ(send(fd, wire.data(), wire.size(), MSG_NOSIGNAL), static_cast<ssize_t>(wire.size()));
    char byte;
    EXPECT_EQ(recv(fd, &byte, 1, 0), 0);  // closed by the server
    close(fd);
  }
  EXPECT_EQ(run_allgather(4, "after-strangers"), 4);
  server_.reset();
  std::string log = testing::internal::GetCapturedStderr();
  size_t lines = 0;
  for (size_t at = log.find("refused a connection from"); at != std::string::npos;
       at = log.find("refused a connection from", at + 1)) {
    ++lines;
  }
  EXPECT_EQ(lines, static_cast<size_t>(RefusalLog::kBurst)) << log;
  EXPECT_NE(log.find("95 more refused connection(s) were not logged (100 refused in all)"), std::string::npos) << log;
}

TEST_F(StoreTest, ManyConcurrentConnections) {
  EXPECT_EQ(run_allgather(64, "many"), 64);
  // And a crowd of idle connections does not stop service.
  std::vector<int> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(raw_connection());
  EXPECT_EQ(run_allgather(8, "crowd"), 8);
  for (int fd : idle) close(fd);
}

}  // namespace
}  // namespace rcc::bootstrap
