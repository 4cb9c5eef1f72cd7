// In-process "ranks" for transport tests: N threads, each with its own Transport from
// create_transport, exchanging address and key blobs through memory (not the bootstrap).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "bootstrap/hosts.h"
#include "bootstrap/store.h"
#include "p2p/engine.h"
#include "transport/transport.h"

namespace transport_test {

using rcc::transport::Event;
using rcc::transport::EventKind;
using rcc::transport::Memory;
using rcc::transport::RemoteKey;
using rcc::transport::Transport;

// Generous: rxe under TCG is slow and 4 ranks share 2 vCPUs.
inline constexpr auto kTimeout = std::chrono::seconds(120);

// Sets an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    had_ = old != nullptr;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::string old_;
  bool had_ = false;
};

class World {
 public:
  explicit World(int size) : size_(size), slots_(size) {}
  int size() const { return size_; }
  // All ranks contribute one blob and get everyone's; false if the world was aborted or timed out.
  bool allgather(int rank, const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>* all,
                 const std::function<void()>& progress);
  bool barrier(const std::function<void()>& progress);
  void abort() { aborted_ = true; }
  bool aborted() const { return aborted_; }

 private:
  int size_;
  std::mutex mutex_;
  std::vector<std::vector<uint8_t>> slots_;
  std::atomic<int> arrived_{0};
  std::atomic<int> generation_{0};
  std::atomic<bool> aborted_{false};
};

class Rank {
 public:
  Rank(World* world, int rank) : world_(world), rank_(rank) {}
  int rank() const { return rank_; }
  int size() const { return world_->size(); }
  Transport& transport() { return *transport_; }
  std::unique_ptr<Transport>& transport_ptr() { return transport_; }

  // Creates and connects the transport; false (with a gtest failure) on error.
  bool connect(int max_notifies_per_peer = 64);
  bool barrier();
  bool allgather(const std::vector<uint8_t>& mine, std::vector<std::vector<uint8_t>>* all);

  // Registers `bytes` and gives every rank a key to it; keys[peer] addresses peer's buffer.
  struct Region {
    std::vector<uint8_t> bytes;
    std::unique_ptr<Memory> memory;
    std::vector<std::unique_ptr<RemoteKey>> keys;
    std::vector<uint64_t> remote_base;  // start address of each peer's buffer
  };
  bool share_region(size_t length, Region* region);

  // Polls (blocking in wait_for_event between polls) until done() holds; kError fails the test.
  bool progress_until(const std::function<bool()>& done);
  // Events seen so far (consumers erase what they use).
  std::vector<Event> notifies;
  std::vector<uint64_t> write_done_cookies;
  std::vector<Event> errors;
  bool expect_errors = false;  // tests that provoke kError set this

  // One non-blocking pass: poll and sort the events into the vectors above.
  void poll_once();

 private:
  World* world_;
  int rank_;
  std::unique_ptr<Transport> transport_;
};

// Runs body on `size` threads; each gets a connected Rank unless connect_first is false.
void run_ranks(int size, const std::function<void(Rank&)>& body, bool connect_first = true,
               int max_notifies_per_peer = 64);

// A rendezvous store on loopback for in-process ranks: engines meet through it as a job's do.
class LoopbackStore {
 public:
  // Starts the server; false (with a gtest failure) on error.
  bool start();
  // A client of it, for one rank; null (with a gtest failure) on error.
  std::unique_ptr<rcc::bootstrap::StoreClient> client() const;

 private:
  std::string secret_;
  std::unique_ptr<rcc::bootstrap::StoreServer> server_;
};

// Creates an engine over each of two transports at once (a thread each, meeting through a
// LoopbackStore), for ranks that are expected to refuse each other: each rank's status and the
// message it recorded.
struct EngineCreation {
  rcc::Status status = RCC_SUCCESS;
  std::string message;
};
std::vector<EngineCreation> create_two_engines(std::unique_ptr<Transport> transports[2],
                                               const rcc::bootstrap::HostMap* hosts);

}  // namespace transport_test
