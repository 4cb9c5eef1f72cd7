// Strangers for the listening-socket tests: connections that speak no rcc code (the store's frame
// and the liveness hello are built by hand from their documented layouts), each kind held by a
// Strangers object until it is destroyed. Shared by stranger_job_test and liveness_stranger_test.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace strangers {

// A TCP connection to 127.0.0.1:port (blocking), -1 if it fails.
int dial(int port);

// The store frame (src/bootstrap/frame.h): u32 length | u8 type | u64 id | u32 key length | key | value.
std::vector<uint8_t> store_frame(uint8_t type, const std::string& key, const std::string& value,
                                 uint32_t claimed_length = 0);

// Listening TCP ports (IPv4 and IPv6) of process pid, from /proc/pid/fd and /proc/pid/net/tcp*.
std::vector<int> listening_ports(pid_t pid);

// Open file descriptors of process pid (-1 if unreadable).
int open_fds(pid_t pid);
// Resident memory of process pid in KiB (-1 if unreadable).
long rss_kib(pid_t pid);

enum class Protocol { kStore, kLiveness };

// Attacks one port with every kind of stranger: random bytes, a well-formed hello with a wrong
// secret, requests without a hello, a truncated frame (then silence), an oversized frame, a
// connection that sends one byte a second, one that never sends, and flood connections opened at
// once (1000 by default). Connections stay open until stop() (or the peer closes them).
class Attack {
 public:
  Attack(int port, Protocol protocol, int flood = 1000);
  ~Attack() { stop(); }
  void stop();
  int connections() const { return static_cast<int>(fds_.size()) + 1; }  // + the slow one
  // How many of the held connections the peer has closed (EOF or reset) by now.
  int closed_by_peer() const;
  // Whether the one-byte-a-second connection was closed by the peer (and after how many bytes).
  bool slow_closed() const { return slow_closed_.load(); }
  int slow_bytes_sent() const { return slow_sent_.load(); }

 private:
  std::vector<int> fds_;
  std::thread slow_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> slow_closed_{false};
  std::atomic<int> slow_sent_{0};
};

}  // namespace strangers
