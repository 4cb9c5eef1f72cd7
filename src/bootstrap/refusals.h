// Strangers on rcc's listening sockets (the rendezvous store, the liveness listener): each one is
// refused and logged once, but at most kBurst lines per listener every kWindow; the others are
// counted and their number written with the next line (or when the listener goes away), so a flood
// of connections cannot flood the log. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {

class RefusalLog {
 public:
  static constexpr int kBurst = 5;
  static constexpr auto kWindow = std::chrono::seconds(10);

  explicit RefusalLog(std::string listener) : listener_(std::move(listener)) {}
  ~RefusalLog();  // writes the number of refusals not logged yet, if any
  RefusalLog(const RefusalLog&) = delete;
  RefusalLog& operator=(const RefusalLog&) = delete;

  // One refused connection from peer ("1.2.3.4:5678"), why: what it did wrong.
  void refused(const std::string& peer, const std::string& why);
  uint64_t total() const;

 private:
  mutable std::mutex mutex_;
  std::string listener_;
  Clock::time_point window_start_{};
  int logged_in_window_ = 0;
  uint64_t unlogged_ = 0;
  uint64_t total_ = 0;
};

}  // namespace rcc::bootstrap
