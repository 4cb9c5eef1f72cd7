// The liveness channel: one TCP connection between every pair of ranks, watched by a thread that
// sleeps in poll(). When a process dies the kernel closes its sockets, so every other rank learns
// of it at once, whatever the data transport would (or would not) report. A rank leaving normally
// says goodbye first, so its closing is not taken for a death. A host that stops answering closes
// nothing (its link is cut, or it or the rank is frozen), so each watcher also sends a heartbeat
// byte to every peer several times per peer timeout, and a peer heard from not at all for that
// long is reported unreachable.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "bootstrap/exchange.h"
#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {

class LivenessMonitor {
 public:
  using FailureCallback = std::function<void(int rank, const std::string& why)>;

  // Listens, exchanges addresses through the exchange (its ranks are the job's), connects the mesh
  // (the lower rank dials), then watches it from a thread, calling on_failure once per dead or
  // unreachable peer. peer_timeout_s (RCC_PEER_TIMEOUT): silence after which a peer is unreachable;
  // 0: no heartbeats (only closed connections count).
  static Status start(Exchange& exchange, const std::string& secret, double timeout_s, double peer_timeout_s,
                      FailureCallback on_failure, std::unique_ptr<LivenessMonitor>* out);
  ~LivenessMonitor();  // says goodbye to every peer, stops the thread, closes the sockets

  // Whether peer said goodbye: it is ending its job's connections (a write of its still in flight
  // then fails on its side only).
  bool has_left(int peer) const { return said_goodbye_[peer].load(std::memory_order_acquire); }

 private:
  LivenessMonitor(int rank, int size, FailureCallback on_failure);
  Status connect_mesh(Exchange& exchange, const std::string& secret, double timeout_s);
  void watch();

  // Sends a heartbeat to every connected peer (never blocks: a full buffer skips one).
  void beat();
  // Reports and drops the peers not heard from within the peer timeout.
  void drop_silent(const std::vector<Clock::time_point>& heard, Clock::time_point now);

  int rank_;
  int size_;
  double peer_timeout_s_ = 0;
  FailureCallback on_failure_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::vector<int> fds_;                               // per peer; -1 for self
  std::vector<std::string> hosts_;                     // per peer
  std::unique_ptr<std::atomic<bool>[]> said_goodbye_;  // set by the watcher, read by has_left
  std::thread watcher_;
};

}  // namespace rcc::bootstrap
