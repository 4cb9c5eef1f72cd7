#include "bootstrap/liveness.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/cpu.h"
#include "base/log.h"
#include "bootstrap/job.h"
#include "bootstrap/liveness_hello.h"
#include "bootstrap/refusals.h"
#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {
namespace {

// Frames on a partner's connection: a heartbeat; the sender's goodbye; "rank R said goodbye"
// ('L', u32 R); "rank R is dead" ('D', u32 R, u16 length, that many bytes of why). Little endian.
constexpr char kGoodbye = 'G';
constexpr char kHeartbeat = 'H';
constexpr char kLeft = 'L';
constexpr char kDead = 'D';
constexpr size_t kMaxWhy = 1024;
// Heartbeats per peer timeout: a peer misses several before it counts as unreachable.
constexpr double kBeatsPerTimeout = 5;
// A connection to the listener must deliver its whole hello within this time of being accepted.
constexpr auto kHelloDeadline = std::chrono::seconds(5);
// Connections waiting for their hello, at most; one more is closed at once (and counted as refused).
constexpr size_t kMaxPending = 4096;
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

// A connection accepted by the listener that has not delivered its hello yet.
struct Pending {
  int fd = -1;
  std::string peer;
  Clock::time_point until;
  size_t got = 0;
  uint8_t hello[kLivenessHelloBytes] = {};
};

}  // namespace

LivenessMonitor::LivenessMonitor(int rank, int size, FailureCallback on_failure)
    : rank_(rank),
      size_(size),
      on_failure_(std::move(on_failure)),
      fds_(size, -1),
      hosts_(size),
      unparsed_(size),
      reported_(size, false),
      said_goodbye_(new std::atomic<bool>[size]()) {}

std::vector<int> LivenessMonitor::partners(int rank, int size) {
  std::vector<int> out;
  for (int64_t step = 1; step < size; step *= 2) {
    out.push_back(static_cast<int>((rank + step) % size));
    out.push_back(static_cast<int>((rank - step % size + size) % size));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  out.erase(std::remove(out.begin(), out.end(), rank), out.end());
  return out;
}

LivenessMonitor::~LivenessMonitor() {
  // Stop the watcher first: it closes sockets of dead peers, so only this thread may touch fds_.
  if (watcher_.joinable()) {
    char stop = 's';
    ssize_t ignored = ::write(wake_pipe_[1], &stop, 1);
    (void)ignored;
    watcher_.join();
  }
  for (int fd : fds_) {
    if (fd >= 0) {
      ssize_t ignored = ::send(fd, &kGoodbye, 1, MSG_NOSIGNAL);
      (void)ignored;
      ::close(fd);
    }
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  for (int fd : wake_pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

Status LivenessMonitor::start(Exchange& exchange, const std::string& secret, double timeout_s, double peer_timeout_s,
                              FailureCallback on_failure, std::unique_ptr<LivenessMonitor>* out) {
  std::unique_ptr<LivenessMonitor> monitor(
      new LivenessMonitor(exchange.rank(), exchange.size(), std::move(on_failure)));
  monitor->peer_timeout_s_ = peer_timeout_s;
  if (::pipe2(monitor->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return fail(RCC_ERR_INTERNAL, "liveness: pipe2 failed: %s", std::strerror(errno));
  }
  RCC_RETURN_IF_ERROR(monitor->connect_links(exchange, secret, timeout_s));
  monitor->watcher_ = std::thread(&LivenessMonitor::watch, monitor.get());
  *out = std::move(monitor);
  return RCC_SUCCESS;
}

Status LivenessMonitor::connect_links(Exchange& exchange, const std::string& secret, double timeout_s) {
  int port = 0;
  RCC_RETURN_IF_ERROR(listen_tcp("0.0.0.0", 0, &listen_fd_, &port));
  const std::string mine = join_address(advertised_host(), port) + " " + host_name();
  partners_ = partners(rank_, size_);
  const std::vector<int>& watched = partners_;
  std::vector<bool> is_partner(static_cast<size_t>(size_), false);
  for (int peer : watched) is_partner[static_cast<size_t>(peer)] = true;
  std::vector<std::vector<uint8_t>> published(static_cast<size_t>(size_));
  if (exchange.serves_lookups()) {
    RCC_RETURN_IF_ERROR(exchange.publish("liveness", bytes_of(mine)));
    for (int peer : watched) {
      RCC_RETURN_IF_ERROR(exchange.lookup("liveness", peer, timeout_s, &published[static_cast<size_t>(peer)]));
    }
  } else {
    RCC_RETURN_IF_ERROR(exchange.allgather("liveness", bytes_of(mine), timeout_s, &published));
  }
  std::vector<std::string> addresses(size_);
  for (int peer : watched) {
    std::string text(published[peer].begin(), published[peer].end());
    size_t space = text.find(' ');
    if (space == std::string::npos)
      return fail(RCC_ERR_BOOTSTRAP, "liveness: rank %d published a malformed address", peer);
    addresses[peer] = text.substr(0, space);
    hosts_[peer] = text.substr(space + 1);
  }
  int expected = 0;
  for (int peer : watched) expected += peer < rank_ ? 1 : 0;

  uint8_t hello[kLivenessHelloBytes];
  encode_liveness_hello(rank_, secret, hello);
  const auto deadline = deadline_after(timeout_s);
  // Dial every higher partner; the lower ones dial this one.
  for (int peer : watched) {
    if (peer < rank_) continue;
    std::string host;
    int peer_port = 0;
    RCC_RETURN_IF_ERROR(split_address(addresses[peer], "liveness address", &host, &peer_port));
    int fd = -1;
    Status status;
    while ((status = dial_tcp(host, peer_port, deadline, &fd)) != RCC_SUCCESS) {
      if (ms_until(deadline) == 0) {
        return fail(RCC_ERR_TIMEOUT, "liveness: cannot reach rank %d at %s: %s", peer, addresses[peer].c_str(),
                    last_error().c_str());
      }
      ::usleep(20000);
    }
    fds_[peer] = fd;
    RCC_RETURN_IF_ERROR(send_all(fd, hello, sizeof hello, deadline, "liveness peer"));
  }
  // Accept until every lower rank has presented its hello. Anyone may connect to the listener:
  // connections are served side by side (non-blocking), each must deliver a valid hello within
  // kHelloDeadline of being accepted, and a stranger is refused (and logged, rate-limited) without
  // delaying the ranks.
  RefusalLog refusals("liveness listener of rank " + std::to_string(rank_));
  std::vector<Pending> pending;
  Clock::time_point accept_paused_until{};
  auto close_pending = [&](size_t i, const char* why) {
    if (why != nullptr) refusals.refused(pending[i].peer, why);
    ::close(pending[i].fd);
    pending[i] = std::move(pending.back());
    pending.pop_back();
  };
  int accepted = 0;
  Status result = RCC_SUCCESS;
  std::vector<struct pollfd> pfds;
  while (accepted < expected) {
    auto now = Clock::now();
    if (now >= deadline) {
      std::string missing;
      for (int peer : watched) {
        if (peer < rank_ && fds_[peer] < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(peer);
      }
      result = fail(RCC_ERR_TIMEOUT, "liveness: ranks %s did not connect within %.0f s", missing.c_str(), timeout_s);
      break;
    }
    Clock::time_point wake = deadline;
    const bool accepting = now >= accept_paused_until;
    if (!accepting) wake = std::min(wake, accept_paused_until);
    pfds.clear();
    pfds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    for (const Pending& p : pending) {
      pfds.push_back({p.fd, POLLIN, 0});
      wake = std::min(wake, p.until);
    }
    if (::poll(pfds.data(), pfds.size(), ms_until(wake)) < 0 && errno != EINTR) {
      result = fail(RCC_ERR_INTERNAL, "liveness: poll failed: %s", std::strerror(errno));
      break;
    }
    // Read what the pending connections sent (in reverse: close_pending moves the last one into i).
    for (size_t i = pending.size(); i-- > 0;) {
      if (pfds[i + 1].revents == 0) continue;
      Pending& p = pending[i];
      ssize_t n = ::recv(p.fd, p.hello + p.got, sizeof p.hello - p.got, 0);
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (n <= 0) {
        close_pending(i, "closed before its hello was complete");
        continue;
      }
      p.got += static_cast<size_t>(n);
      if (p.got < sizeof p.hello) continue;
      std::string why;
      const int peer = parse_liveness_hello(p.hello, p.got, secret, rank_, &why);
      if (peer >= 0 && fds_[peer] >= 0) why = "a second hello for rank " + std::to_string(peer);
      if (peer >= 0 && !is_partner[static_cast<size_t>(peer)]) why = "rank " + std::to_string(peer) + " is no partner";
      if (peer < 0 || fds_[peer] >= 0 || !is_partner[static_cast<size_t>(peer)]) {
        close_pending(i, why.c_str());
        continue;
      }
      fds_[peer] = p.fd;
      p.fd = -1;
      ++accepted;
      pending[i] = std::move(pending.back());
      pending.pop_back();
    }
    if (accepting && (pfds[0].revents & POLLIN)) {
      for (;;) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EINTR || errno == ECONNABORTED) continue;
          if (errno != EAGAIN && errno != EWOULDBLOCK) accept_paused_until = Clock::now() + kAcceptPause;  // EMFILE
          break;
        }
        if (pending.size() >= kMaxPending) {
          refusals.refused(peer_address(fd), "too many connections waiting for their hello");
          ::close(fd);
          continue;
        }
        Pending p;
        p.fd = fd;
        p.peer = peer_address(fd);
        p.until = std::min(Clock::now() + kHelloDeadline, deadline);
        pending.push_back(std::move(p));
      }
    }
    now = Clock::now();
    for (size_t i = pending.size(); i-- > 0;) {
      if (now >= pending[i].until) close_pending(i, "no complete hello within 5 s");
    }
  }
  // Whoever is still connected without a hello when every partner is is a stranger too.
  while (!pending.empty()) close_pending(pending.size() - 1, "no hello before every partner connected");
  if (result != RCC_SUCCESS) return result;
  ::close(listen_fd_);
  listen_fd_ = -1;
  return RCC_SUCCESS;
}

void LivenessMonitor::beat() {
  for (int peer : partners_) {
    const int fd = fds_[peer];
    if (fd < 0) continue;
    ssize_t ignored = ::send(fd, &kHeartbeat, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
}

void LivenessMonitor::send_to_partners(const std::string& frame, int except) {
  for (int peer : partners_) {
    if (fds_[peer] < 0 || peer == except) continue;
    // Never blocks: a partner whose buffer is full is not reading (it is frozen, and will be found
    // silent by its other partners).
    ssize_t ignored = ::send(fds_[peer], frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
  }
}

void LivenessMonitor::report_death(int rank, const std::string& why, int told_by) {
  if (rank < 0 || rank >= size_ || rank == rank_ || reported_[static_cast<size_t>(rank)]) return;
  if (said_goodbye_[rank].load(std::memory_order_relaxed)) return;
  reported_[static_cast<size_t>(rank)] = true;
  if (fds_[rank] >= 0) {
    ::close(fds_[rank]);
    fds_[rank] = -1;
  }
  const std::string text = why.size() > kMaxWhy ? why.substr(0, kMaxWhy) : why;
  std::string frame(1, kDead);
  const uint32_t who = static_cast<uint32_t>(rank);
  const uint16_t length = static_cast<uint16_t>(text.size());
  frame.append(reinterpret_cast<const char*>(&who), sizeof who);
  frame.append(reinterpret_cast<const char*>(&length), sizeof length);
  frame += text;
  send_to_partners(frame, told_by);
  on_failure_(rank, text);
}

void LivenessMonitor::note_goodbye(int rank, int told_by) {
  if (rank < 0 || rank >= size_ || rank == rank_ || said_goodbye_[rank].load(std::memory_order_relaxed)) return;
  said_goodbye_[rank].store(true, std::memory_order_release);
  std::string frame(1, kLeft);
  const uint32_t who = static_cast<uint32_t>(rank);
  frame.append(reinterpret_cast<const char*>(&who), sizeof who);
  send_to_partners(frame, told_by);
}

void LivenessMonitor::take_frames(int partner, const char* data, size_t bytes) {
  std::string& buffer = unparsed_[static_cast<size_t>(partner)];
  buffer.append(data, bytes);
  size_t at = 0;
  while (at < buffer.size()) {
    const char kind = buffer[at];
    if (kind == kHeartbeat) {
      ++at;
    } else if (kind == kGoodbye) {
      ++at;
      note_goodbye(partner, -1);
    } else if (kind == kLeft || kind == kDead) {
      uint32_t who = 0;
      uint16_t length = 0;
      const size_t head = 1 + sizeof who + (kind == kDead ? sizeof length : 0);
      if (buffer.size() - at < head) break;
      std::memcpy(&who, buffer.data() + at + 1, sizeof who);
      if (kind == kDead) std::memcpy(&length, buffer.data() + at + 1 + sizeof who, sizeof length);
      if (buffer.size() - at < head + length) break;
      if (kind == kLeft) {
        note_goodbye(static_cast<int>(who), partner);
      } else {
        report_death(static_cast<int>(who), std::string(buffer.data() + at + head, length), partner);
      }
      at += head + length;
    } else {
      // Partners passed the job's secret: this is a bug, not an attack. Drop what cannot be read.
      RCC_WARN("liveness: rank %d sent an unknown frame 0x%02x; ignoring the rest of what it sent", partner,
               static_cast<unsigned>(static_cast<unsigned char>(kind)));
      at = buffer.size();
    }
  }
  buffer.erase(0, at);
}

void LivenessMonitor::drop_silent(const std::vector<Clock::time_point>& heard, Clock::time_point now) {
  const auto limit = std::chrono::duration<double>(peer_timeout_s_);
  for (int peer : partners_) {
    if (fds_[peer] < 0 || said_goodbye_[peer].load(std::memory_order_relaxed) || now - heard[peer] < limit) continue;
    char why[512];
    std::snprintf(why, sizeof why,
                  "rank %d (host %s) is unreachable: nothing heard from it for %.1f s (RCC_PEER_TIMEOUT=%g): its "
                  "host stopped answering (link down, or the host or the process frozen)",
                  peer, hosts_[peer].c_str(), std::chrono::duration<double>(now - heard[peer]).count(),
                  peer_timeout_s_);
    report_death(peer, why, -1);
  }
}

void LivenessMonitor::watch() {
  name_this_thread("rcc-liveness");
  const bool beating = peer_timeout_s_ > 0;
  const auto interval =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(peer_timeout_s_ / kBeatsPerTimeout));
  std::vector<Clock::time_point> heard(static_cast<size_t>(size_), Clock::now());
  Clock::time_point next_beat = Clock::now();
  std::vector<struct pollfd> pfds;
  std::vector<int> peers;
  for (;;) {
    int wait_ms = -1;
    if (beating) {
      if (Clock::now() >= next_beat) {
        beat();
        next_beat = Clock::now() + interval;
      }
      wait_ms = ms_until(next_beat);
    }
    pfds.clear();
    peers.clear();
    pfds.push_back({wake_pipe_[0], POLLIN, 0});
    peers.push_back(-1);
    for (int peer : partners_) {
      if (fds_[peer] >= 0) {
        pfds.push_back({fds_[peer], POLLIN, 0});
        peers.push_back(peer);
      }
    }
    if (::poll(pfds.data(), pfds.size(), wait_ms) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (pfds[0].revents != 0) return;  // stopping
    const Clock::time_point now = Clock::now();
    for (size_t i = 1; i < pfds.size(); ++i) {
      if (pfds[i].revents == 0) continue;
      const int peer = peers[i];
      if (fds_[peer] < 0) continue;  // closed meanwhile: a death reported by another partner
      char buffer[2048];
      ssize_t n = ::recv(fds_[peer], buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        heard[static_cast<size_t>(peer)] = now;
        take_frames(peer, buffer, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (said_goodbye_[peer].load(std::memory_order_relaxed)) {
        ::close(fds_[peer]);
        fds_[peer] = -1;
        continue;
      }
      report_death(peer,
                   "rank " + std::to_string(peer) + " (host " + hosts_[peer] +
                       ") died: its connection closed without a goodbye (the process exited or was killed)",
                   -1);
    }
    // After reading: what arrived while this thread was not running counts as heard.
    if (beating) drop_silent(heard, now);
  }
}

}  // namespace rcc::bootstrap
