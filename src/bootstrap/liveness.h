// The liveness channel: TCP connections between each rank and a few partners (rank +- 2^k, so
// 2 log2(N) per rank, whatever the job's size), watched by a thread that sleeps in poll(). When a
// process dies the kernel closes its sockets, so its partners learn of it at once, whatever the data
// transport would (or would not) report; a host that stops answering closes nothing (its link is
// cut, or it or the rank is frozen), so each watcher also sends a heartbeat byte to its partners
// several times per peer timeout, and a partner heard from not at all for that long is reported
// unreachable. A rank that learns of a death (from its own partner, or told) reports it and tells
// its partners, who tell theirs: every rank hears of every death within a few hops (log2 N on an
// intact graph; the graph stays connected after any one death). A rank leaving normally says
// goodbye first, so its closing is not taken for a death; that news travels the same way.
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

  // Listens, publishes its address through the exchange (its ranks are the job's), connects to its
  // partners (the lower rank dials), then watches them from a thread, calling on_failure once per
  // dead or unreachable rank of the job (its partners' and those it is told of). peer_timeout_s
  // (RCC_PEER_TIMEOUT): silence after which a partner is unreachable; 0: no heartbeats (only closed
  // connections count).
  static Status start(Exchange& exchange, const std::string& secret, double timeout_s, double peer_timeout_s,
                      FailureCallback on_failure, std::unique_ptr<LivenessMonitor>* out);
  ~LivenessMonitor();  // says goodbye to every peer, stops the thread, closes the sockets

  // Whether peer said goodbye (to this rank, or to a rank that passed it on): it is ending its
  // job's connections (a write of its still in flight then fails on its side only).
  bool has_left(int peer) const { return said_goodbye_[peer].load(std::memory_order_acquire); }

  // The ranks a rank watches and is watched by: (rank +- 2^k) mod size, ascending, without itself.
  static std::vector<int> partners(int rank, int size);

 private:
  LivenessMonitor(int rank, int size, FailureCallback on_failure);
  Status connect_links(Exchange& exchange, const std::string& secret, double timeout_s);
  void watch();

  // Sends a heartbeat to every partner (never blocks: a full buffer skips one).
  void beat();
  // Reports and drops the partners not heard from within the peer timeout.
  void drop_silent(const std::vector<Clock::time_point>& heard, Clock::time_point now);
  // Takes the frames that arrived from a partner; false when its connection is to be dropped.
  void take_frames(int partner, const char* data, size_t bytes);
  // A rank is dead: reported once, and passed on to every partner but the one that told.
  void report_death(int rank, const std::string& why, int told_by);
  // A rank said goodbye: recorded once, and passed on likewise.
  void note_goodbye(int rank, int told_by);
  void send_to_partners(const std::string& frame, int except);

  int rank_;
  int size_;
  double peer_timeout_s_ = 0;
  FailureCallback on_failure_;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};
  std::vector<int> partners_;                          // partners(rank_, size_): whom fds_ can hold
  std::vector<int> fds_;                               // per rank; -1 but for connected partners
  std::vector<std::string> hosts_;                     // per rank; known for partners
  std::vector<std::string> unparsed_;                  // per rank: a partner's partial frame
  std::vector<bool> reported_;                         // per rank: its death was reported
  std::unique_ptr<std::atomic<bool>[]> said_goodbye_;  // set by the watcher, read by has_left
  std::thread watcher_;
};

}  // namespace rcc::bootstrap
