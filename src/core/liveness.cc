#include "core/liveness.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "bootstrap/job.h"
#include "bootstrap/socket_util.h"
#include "core/log.h"

namespace rcc {
namespace {

constexpr uint32_t kHelloMagic = 0x72636c76;  // "rclv"
constexpr char kGoodbye = 'G';

struct Hello {
  uint32_t magic;
  int32_t rank;
  char secret[64];
};

}  // namespace

LivenessMonitor::LivenessMonitor(int rank, int size, FailureCallback on_failure)
    : rank_(rank), size_(size), on_failure_(std::move(on_failure)), fds_(size, -1), hosts_(size), said_goodbye_(size) {}

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

Status LivenessMonitor::start(bootstrap::StoreClient& store, const std::string& key_prefix, int rank, int size,
                              const std::string& secret, double timeout_s, FailureCallback on_failure,
                              std::unique_ptr<LivenessMonitor>* out) {
  std::unique_ptr<LivenessMonitor> monitor(new LivenessMonitor(rank, size, std::move(on_failure)));
  if (::pipe2(monitor->wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    return fail(RCC_ERR_INTERNAL, "liveness: pipe2 failed: %s", std::strerror(errno));
  }
  RCC_RETURN_IF_ERROR(monitor->connect_mesh(store, key_prefix, secret, timeout_s));
  monitor->watcher_ = std::thread(&LivenessMonitor::watch, monitor.get());
  *out = std::move(monitor);
  return RCC_SUCCESS;
}

Status LivenessMonitor::connect_mesh(bootstrap::StoreClient& store, const std::string& key_prefix,
                                     const std::string& secret, double timeout_s) {
  int port = 0;
  RCC_RETURN_IF_ERROR(bootstrap::listen_tcp("0.0.0.0", 0, &listen_fd_, &port));
  const std::string mine = bootstrap::join_address(bootstrap::advertised_host(), port) + " " + bootstrap::host_name();
  std::vector<std::vector<uint8_t>> all;
  RCC_RETURN_IF_ERROR(bootstrap::allgather(store, key_prefix + "/liveness", rank_, size_,
                                           std::vector<uint8_t>(mine.begin(), mine.end()), timeout_s, &all));
  std::vector<std::string> addresses(size_);
  for (int peer = 0; peer < size_; ++peer) {
    std::string text(all[peer].begin(), all[peer].end());
    size_t space = text.find(' ');
    if (space == std::string::npos) return fail(RCC_ERR_BOOTSTRAP, "liveness: rank %d published a malformed address", peer);
    addresses[peer] = text.substr(0, space);
    hosts_[peer] = text.substr(space + 1);
  }

  Hello hello{};
  hello.magic = kHelloMagic;
  hello.rank = rank_;
  std::strncpy(hello.secret, secret.c_str(), sizeof hello.secret - 1);
  const auto deadline = bootstrap::deadline_after(timeout_s);
  // Dial every higher rank; the lower ranks dial this one.
  for (int peer = rank_ + 1; peer < size_; ++peer) {
    std::string host;
    int peer_port = 0;
    RCC_RETURN_IF_ERROR(bootstrap::split_address(addresses[peer], "liveness address", &host, &peer_port));
    int fd = -1;
    Status status;
    while ((status = bootstrap::dial_tcp(host, peer_port, deadline, &fd)) != RCC_SUCCESS) {
      if (bootstrap::ms_until(deadline) == 0) {
        return fail(RCC_ERR_TIMEOUT, "liveness: cannot reach rank %d at %s: %s", peer, addresses[peer].c_str(),
                    last_error().c_str());
      }
      ::usleep(20000);
    }
    fds_[peer] = fd;
    RCC_RETURN_IF_ERROR(bootstrap::send_all(fd, &hello, sizeof hello, deadline, "liveness peer"));
  }
  for (int accepted = 0; accepted < rank_;) {
    struct pollfd pfd = {listen_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, bootstrap::ms_until(deadline)) <= 0) {
      std::string missing;
      for (int peer = 0; peer < rank_; ++peer) {
        if (fds_[peer] < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(peer);
      }
      return fail(RCC_ERR_TIMEOUT, "liveness: ranks %s did not connect within %.0f s", missing.c_str(), timeout_s);
    }
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) continue;
    Hello theirs{};
    size_t got = 0;
    Status status = RCC_SUCCESS;
    while (got < sizeof theirs && status == RCC_SUCCESS) {
      size_t n = 0;
      status = bootstrap::recv_some(fd, reinterpret_cast<char*>(&theirs) + got, sizeof theirs - got,
                                    bootstrap::deadline_after(5), "liveness peer", &n);
      got += n;
    }
    theirs.secret[sizeof theirs.secret - 1] = '\0';
    if (status != RCC_SUCCESS || theirs.magic != kHelloMagic || theirs.rank < 0 || theirs.rank >= rank_ ||
        fds_[theirs.rank] >= 0 || secret != theirs.secret) {
      RCC_WARN("liveness: refused a connection from %s (bad hello or secret)", bootstrap::peer_address(fd).c_str());
      ::close(fd);
      continue;
    }
    fds_[theirs.rank] = fd;
    ++accepted;
  }
  ::close(listen_fd_);
  listen_fd_ = -1;
  return RCC_SUCCESS;
}

void LivenessMonitor::watch() {
  std::vector<struct pollfd> pfds;
  std::vector<int> peers;
  for (;;) {
    pfds.clear();
    peers.clear();
    pfds.push_back({wake_pipe_[0], POLLIN, 0});
    peers.push_back(-1);
    for (int peer = 0; peer < size_; ++peer) {
      if (fds_[peer] >= 0) {
        pfds.push_back({fds_[peer], POLLIN, 0});
        peers.push_back(peer);
      }
    }
    if (::poll(pfds.data(), pfds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (pfds[0].revents != 0) return;  // stopping
    for (size_t i = 1; i < pfds.size(); ++i) {
      if (pfds[i].revents == 0) continue;
      const int peer = peers[i];
      char buffer[16];
      ssize_t n = ::recv(fds_[peer], buffer, sizeof buffer, 0);
      if (n > 0) {
        if (std::memchr(buffer, kGoodbye, static_cast<size_t>(n)) != nullptr) said_goodbye_[peer] = true;
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      ::close(fds_[peer]);
      fds_[peer] = -1;
      if (said_goodbye_[peer]) continue;
      on_failure_(peer, "rank " + std::to_string(peer) + " (host " + hosts_[peer] +
                            ") died: its connection closed without a goodbye (the process exited or was killed)");
    }
  }
}

}  // namespace rcc
