// The store server: one thread, one poll() loop over the listening socket, a wakeup pipe and every
// client. Sockets are non-blocking and every client has its own input and output buffer, so a
// client that stalls, sends garbage or stops reading never holds up the others.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include "base/cpu.h"
#include "base/log.h"
#include "bootstrap/frame.h"
#include "bootstrap/refusals.h"
#include "bootstrap/socket_util.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {
namespace {

// A peer that has not presented the secret within this time is dropped.
constexpr auto kHelloDeadline = std::chrono::seconds(5);
// Before the hello, a frame may carry no more than this (the secret), so strangers cannot make
// the server buffer large amounts.
constexpr size_t kMaxHelloValueBytes = 256;
// Connections that have not presented the secret yet, at most: one more is closed at once (and
// counted as refused). Each lives kHelloDeadline at most, so a flood costs a bounded number of fds.
constexpr size_t kMaxUnauthenticated = 4096;
// When accept() finds no free descriptor (EMFILE), the listening socket rests this long instead of
// being polled (it would stay readable and spin the loop).
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

bool secrets_equal(const std::string& presented, const std::string& secret) {
  if (presented.size() != secret.size()) return false;  // the length is not the secret part
  unsigned char diff = 0;
  for (size_t i = 0; i < secret.size(); ++i) diff |= static_cast<unsigned char>(presented[i] ^ secret[i]);
  return diff == 0;
}

struct Connection {
  int fd = -1;
  std::string peer;
  bool authenticated = false;
  Clock::time_point accepted;
  std::vector<uint8_t> in;
  std::vector<uint8_t> out;
  size_t out_offset = 0;
};

constexpr auto kStopLinger = std::chrono::seconds(3);

class StoreServerImpl final : public StoreServer {
 public:
  StoreServerImpl(int listen_fd, int port, std::string address, std::string secret, int wake_read, int wake_write)
      : listen_fd_(listen_fd),
        port_(port),
        address_(std::move(address)),
        secret_(std::move(secret)),
        wake_read_(wake_read),
        wake_write_(wake_write),
        refusals_("store server on port " + std::to_string(port)) {
    thread_ = std::thread([this] { run(); });
  }

  ~StoreServerImpl() override {
    char byte = 1;
    while (write(wake_write_, &byte, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    for (auto& [id, connection] : connections_) close(connection.fd);
    close(wake_write_);
    close(wake_read_);
    close(listen_fd_);
  }

  std::string address() const override { return address_; }
  int port() const override { return port_; }

 private:
  void run() {
    name_this_thread("rcc-store");
    std::vector<pollfd> fds;
    std::vector<uint64_t> ids;
    for (;;) {
      fds.clear();
      ids.clear();
      fds.push_back({wake_read_, POLLIN, 0});
      const bool accepting = Clock::now() >= accept_paused_until_;
      fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});  // a negative fd is skipped by poll
      auto next_deadline = Clock::now() + std::chrono::seconds(60);
      if (!accepting) next_deadline = accept_paused_until_;
      if (stopping_) {
        // Linger while ranks still wait for keys, so each reports its own error (which ranks are
        // missing) instead of losing the store when its host gives up first.
        if (waiters_.empty() || Clock::now() >= stop_deadline_) return;
        next_deadline = stop_deadline_;
      }
      for (auto& [id, c] : connections_) {
        short events = POLLIN;
        if (c.out_offset < c.out.size()) events |= POLLOUT;
        fds.push_back({c.fd, events, 0});
        ids.push_back(id);
        if (!c.authenticated && c.accepted + kHelloDeadline < next_deadline)
          next_deadline = c.accepted + kHelloDeadline;
      }
      int ready = poll(fds.data(), fds.size(), ms_until(next_deadline));
      if (ready < 0 && errno != EINTR) {
        RCC_WARN("store server: poll failed: %s", std::strerror(errno));
        return;
      }
      if (fds[0].revents != 0 && !stopping_) {  // the destructor asked us to stop
        stopping_ = true;
        stop_deadline_ = Clock::now() + kStopLinger;
        char byte;
        while (read(wake_read_, &byte, 1) < 0 && errno == EINTR) {
        }
        continue;
      }
      if (fds[1].revents & POLLIN) accept_all();
      for (size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        auto it = connections_.find(ids[i - 2]);
        if (it == connections_.end()) continue;
        if (!service(it->first, it->second, fds[i].revents)) drop(it->first);
      }
      expire_silent_peers();
    }
  }

  void accept_all() {
    for (;;) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
          // Out of descriptors (EMFILE, ENFILE) or memory: rest the listener rather than spin on it;
          // silent peers expire meanwhile. Said once per pause that follows a good accept.
          if (!accept_failing_) {
            RCC_WARN("store server: accept failed: %s; pausing new connections for %lld ms", std::strerror(errno),
                     static_cast<long long>(kAcceptPause.count()));
          }
          accept_failing_ = true;
          accept_paused_until_ = Clock::now() + kAcceptPause;
        }
        return;
      }
      accept_failing_ = false;
      if (unauthenticated_ >= kMaxUnauthenticated) {
        refusals_.refused(peer_address(fd), "too many connections waiting to present the job secret");
        close(fd);
        continue;
      }
      ++unauthenticated_;
      Connection c;
      c.fd = fd;
      c.peer = peer_address(fd);
      c.accepted = Clock::now();
      RCC_TRACE("store server: connection from %s", c.peer.c_str());
      connections_.emplace(next_id_++, std::move(c));
    }
  }

  // Returns false when the connection must be closed.
  bool service(uint64_t id, Connection& c, short revents) {
    if (revents & POLLOUT) {
      if (!flush(c)) return false;
    }
    if (revents & (POLLIN | POLLHUP | POLLERR)) {
      uint8_t buffer[65536];
      for (;;) {
        ssize_t n = recv(c.fd, buffer, sizeof buffer, 0);
        if (n > 0) {
          c.in.insert(c.in.end(), buffer, buffer + n);
          if (!handle_frames(id, c)) return false;
          if (static_cast<size_t>(n) < sizeof buffer) break;
          continue;
        }
        if (n == 0) {
          if (!c.authenticated) {
            refusals_.refused(c.peer, "closed before presenting the job secret");
          } else {
            RCC_TRACE("store server: %s closed the connection", c.peer.c_str());
          }
          return false;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        if (!c.authenticated) {
          refusals_.refused(c.peer, std::string("connection broke before the job secret: ") + std::strerror(errno));
        } else {
          RCC_INFO("store server: connection from %s broke: %s", c.peer.c_str(), std::strerror(errno));
        }
        return false;
      }
    }
    return flush(c);
  }

  bool handle_frames(uint64_t id, Connection& c) {
    size_t offset = 0;
    bool keep = true;
    while (keep) {
      Frame frame;
      size_t consumed = 0;
      std::string error;
      size_t limit = c.authenticated ? kMaxValueBytes : kMaxHelloValueBytes;
      ParseResult result = parse_frame(c.in.data() + offset, c.in.size() - offset, limit, &frame, &consumed, &error);
      if (result == ParseResult::kNeedMore) break;
      if (result == ParseResult::kMalformed) {
        if (!c.authenticated) {
          refusals_.refused(c.peer, "malformed frame (" + error + ")");
        } else {
          RCC_WARN("store server: closing connection from %s: malformed frame (%s)", c.peer.c_str(), error.c_str());
        }
        return false;
      }
      offset += consumed;
      keep = handle(id, c, frame);
    }
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(offset));
    return keep;
  }

  bool handle(uint64_t id, Connection& c, const Frame& frame) {
    if (!c.authenticated) {
      std::string presented(frame.value.begin(), frame.value.end());
      if (frame.type != FrameType::kHello || !secrets_equal(presented, secret_)) {
        refusals_.refused(c.peer,
                          frame.type == FrameType::kHello ? "wrong job secret" : "no hello with the job secret");
        return false;
      }
      c.authenticated = true;
      --unauthenticated_;
      reply(c, FrameType::kOk, frame.id, "", nullptr);
      return true;
    }
    switch (frame.type) {
      case FrameType::kSet:
      case FrameType::kSetConsumable: {
        uint64_t reads = 0;
        std::vector<uint8_t> payload;
        if (frame.type == FrameType::kSetConsumable) {
          if (frame.value.size() < 4) {
            RCC_WARN("store server: closing connection from %s: a consumable set without its read count",
                     c.peer.c_str());
            return false;
          }
          for (int i = 0; i < 4; ++i) reads |= static_cast<uint64_t>(frame.value[static_cast<size_t>(i)]) << (8 * i);
          payload.assign(frame.value.begin() + 4, frame.value.end());
        } else {
          payload = std::move(frame.value);
        }
        auto& value = values_[frame.key];
        value = std::move(payload);
        reads_left_.erase(frame.key);
        reply(c, FrameType::kOk, frame.id, "", nullptr);
        uint64_t answered = 0;
        auto waiting = waiters_.equal_range(frame.key);
        for (auto it = waiting.first; it != waiting.second; ++it) {
          auto conn = connections_.find(it->second.connection);
          if (conn != connections_.end()) {
            reply(conn->second, FrameType::kValue, it->second.request, frame.key, &value);
            ++answered;
            // Its socket is flushed when poll reports it writable (or below, for this one).
          }
        }
        waiters_.erase(waiting.first, waiting.second);
        if (frame.type == FrameType::kSetConsumable) {
          if (answered >= reads) {
            values_.erase(frame.key);
          } else {
            reads_left_[frame.key] = reads - answered;
          }
        }
        return true;
      }
      case FrameType::kGet:
      case FrameType::kTryGet: {
        auto found = values_.find(frame.key);
        if (found != values_.end()) {
          reply(c, FrameType::kValue, frame.id, frame.key, &found->second);
          if (frame.type == FrameType::kGet) consume(frame.key);
        } else if (frame.type == FrameType::kGet) {
          waiters_.emplace(frame.key, Waiter{id, frame.id});  // answered by the set
        } else {
          reply(c, FrameType::kNotFound, frame.id, frame.key, nullptr);
        }
        return true;
      }
      case FrameType::kDeletePrefix: {
        // values_ is ordered: the keys with this prefix are one range.
        auto first = values_.lower_bound(frame.key);
        auto last = first;
        while (last != values_.end() && last->first.compare(0, frame.key.size(), frame.key) == 0) ++last;
        values_.erase(first, last);
        for (auto left = reads_left_.lower_bound(frame.key);
             left != reads_left_.end() && left->first.compare(0, frame.key.size(), frame.key) == 0;) {
          left = reads_left_.erase(left);
        }
        reply(c, FrameType::kOk, frame.id, "", nullptr);
        return true;
      }
      default:
        RCC_WARN("store server: closing connection from %s: unexpected frame type %d", c.peer.c_str(),
                 static_cast<int>(frame.type));
        return false;
    }
  }

  void reply(Connection& c, FrameType type, uint64_t request, const std::string& key,
             const std::vector<uint8_t>* value) {
    if (c.out_offset == c.out.size()) {
      c.out.clear();
      c.out_offset = 0;
    }
    append_frame(type, request, key, value ? value->data() : nullptr, value ? value->size() : 0, &c.out);
  }

  bool flush(Connection& c) {
    while (c.out_offset < c.out.size()) {
      ssize_t n = send(c.fd, c.out.data() + c.out_offset, c.out.size() - c.out_offset, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_offset += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      RCC_INFO("store server: cannot send to %s: %s", c.peer.c_str(), std::strerror(errno));
      return false;
    }
    c.out.clear();
    c.out_offset = 0;
    return true;
  }

  void expire_silent_peers() {
    auto now = Clock::now();
    std::vector<uint64_t> expired;
    for (auto& [id, c] : connections_) {
      if (!c.authenticated && now >= c.accepted + kHelloDeadline) expired.push_back(id);
    }
    for (uint64_t id : expired) {
      refusals_.refused(connections_[id].peer,
                        "no hello with the job secret within " + std::to_string(kHelloDeadline.count()) + " s");
      drop(id);
    }
    // Replies queued for other connections by a set are flushed here, without waiting for poll.
    std::vector<uint64_t> broken;
    for (auto& [id, c] : connections_) {
      if (c.out_offset < c.out.size() && !flush(c)) broken.push_back(id);
    }
    for (uint64_t id : broken) drop(id);
  }

  void drop(uint64_t id) {
    auto it = connections_.find(id);
    if (it == connections_.end()) return;
    if (!it->second.authenticated) --unauthenticated_;
    close(it->second.fd);
    connections_.erase(it);
    for (auto w = waiters_.begin(); w != waiters_.end();) {
      w = w->second.connection == id ? waiters_.erase(w) : std::next(w);
    }
  }

  struct Waiter {
    uint64_t connection;
    uint64_t request;
  };

  int listen_fd_;
  int port_;
  std::string address_;
  std::string secret_;
  int wake_read_;
  int wake_write_;
  bool stopping_ = false;
  Clock::time_point stop_deadline_{};
  std::thread thread_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, Connection> connections_;
  // A get returned a consumable key: one reader fewer to wait for; the last one removes it.
  void consume(const std::string& key) {
    auto left = reads_left_.find(key);
    if (left == reads_left_.end()) return;
    if (--left->second == 0) {
      reads_left_.erase(left);
      values_.erase(key);
    }
  }

  std::map<std::string, std::vector<uint8_t>> values_;  // ordered, for delete_prefix
  std::map<std::string, uint64_t> reads_left_;          // consumable keys: gets still to answer
  std::multimap<std::string, Waiter> waiters_;
  RefusalLog refusals_;
  size_t unauthenticated_ = 0;  // connections that have not presented the secret yet
  Clock::time_point accept_paused_until_{};
  bool accept_failing_ = false;
};

}  // namespace

Status StoreServer::start(const std::string& bind_host, int port, const std::string& advertise_host,
                          const std::string& secret, std::unique_ptr<StoreServer>* out) {
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "StoreServer::start: out is null");
  if (secret.empty() || secret.size() > kMaxHelloValueBytes) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "store secret must be 1..%zu bytes, got %zu", kMaxHelloValueBytes,
                secret.size());
  }
  if (advertise_host.empty()) return fail(RCC_ERR_INVALID_ARGUMENT, "store advertise_host is empty");
  int listen_fd = -1;
  int bound_port = 0;
  RCC_RETURN_IF_ERROR(listen_tcp(bind_host, port, &listen_fd, &bound_port));
  int wake[2];
  if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    int error = errno;
    close(listen_fd);
    return fail(RCC_ERR_INTERNAL, "pipe2: %s", std::strerror(error));
  }
  std::string address = join_address(advertise_host, bound_port);
  RCC_INFO("store server listening on %s, advertised as %s",
           join_address(bind_host.empty() ? "0.0.0.0" : bind_host, bound_port).c_str(), address.c_str());
  *out = std::make_unique<StoreServerImpl>(listen_fd, bound_port, address, secret, wake[0], wake[1]);
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
