#include "strangers.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

namespace strangers {
namespace {

void put_le(std::vector<uint8_t>& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

bool send_bytes(int fd, const std::vector<uint8_t>& bytes) {
  size_t sent = 0;
  while (fd >= 0 && sent < bytes.size()) {
    // Never blocks: a peer that is not reading (yet) gets what fits in the socket buffers.
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return fd >= 0;
}

// The liveness hello (src/bootstrap/liveness_hello.h): u32 magic | i32 rank | 64 bytes secret.
std::vector<uint8_t> liveness_hello(int32_t rank, const std::string& secret) {
  std::vector<uint8_t> out;
  put_le(out, 0x72636c76, 4);
  put_le(out, static_cast<uint32_t>(rank), 4);
  for (size_t i = 0; i < 64; ++i) out.push_back(i < secret.size() && i < 63 ? static_cast<uint8_t>(secret[i]) : 0);
  return out;
}

}  // namespace

int dial(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

std::vector<uint8_t> store_frame(uint8_t type, const std::string& key, const std::string& value,
                                 uint32_t claimed_length) {
  std::vector<uint8_t> out;
  put_le(out, claimed_length != 0 ? claimed_length : 1 + 8 + 4 + key.size() + value.size(), 4);
  out.push_back(type);
  put_le(out, 1, 8);
  put_le(out, key.size(), 4);
  out.insert(out.end(), key.begin(), key.end());
  out.insert(out.end(), value.begin(), value.end());
  return out;
}

std::vector<int> listening_ports(pid_t pid) {
  std::set<std::string> inodes;
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* d = opendir(fd_dir.c_str())) {
    while (dirent* e = readdir(d)) {
      char target[256];
      ssize_t n = readlink((fd_dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      std::string link = target;
      if (link.rfind("socket:[", 0) == 0) inodes.insert(link.substr(8, link.size() - 9));
    }
    closedir(d);
  }
  std::vector<int> ports;
  for (const char* table : {"/net/tcp", "/net/tcp6"}) {
    std::ifstream in("/proc/" + std::to_string(pid) + table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
      words >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
      if (state != "0A" || inodes.count(inode) == 0) continue;  // 0A: LISTEN
      ports.push_back(static_cast<int>(std::strtol(local.substr(local.rfind(':') + 1).c_str(), nullptr, 16)));
    }
  }
  return ports;
}

int open_fds(pid_t pid) {
  DIR* d = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (d == nullptr) return -1;
  int count = 0;
  while (dirent* e = readdir(d)) count += e->d_name[0] != '.';
  closedir(d);
  return count;
}

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

Attack::Attack(int port, Protocol protocol, int flood) {
  std::mt19937 random(12345 + port);
  auto keep = [&](int fd, const std::vector<uint8_t>& bytes) {
    if (fd < 0) return;
    send_bytes(fd, bytes);  // the peer may already have closed it: that is its right
    fds_.push_back(fd);
  };
  // Random bytes, several sizes.
  for (size_t size : {1u, 17u, 200u, 4096u, 100000u}) {
    std::vector<uint8_t> noise(size);
    for (auto& b : noise) b = static_cast<uint8_t>(random());
    keep(dial(port), noise);
  }
  const std::string wrong_secret(32, 'x');
  if (protocol == Protocol::kStore) {
    keep(dial(port), store_frame(1, "", wrong_secret));            // hello, wrong secret
    keep(dial(port), store_frame(1, "", ""));                      // hello, empty secret
    keep(dial(port), store_frame(2, "rcc/comm0/x", "v"));          // a set without a hello
    keep(dial(port), store_frame(3, "rcc/comm0/liveness/0", ""));  // a get without a hello
    std::vector<uint8_t> half = store_frame(1, "", wrong_secret);
    half.resize(half.size() / 2);
    keep(dial(port), half);                                           // truncated, then silence
    keep(dial(port), store_frame(1, "", wrong_secret, 0xfffffff0u));  // claims 4 GiB
    keep(dial(port), store_frame(1, "", std::string(100000, 's')));   // a 100 kB "secret"
    keep(dial(port), store_frame(99, "", wrong_secret));              // unknown type
  } else {
    keep(dial(port), liveness_hello(0, wrong_secret));   // wrong secret
    keep(dial(port), liveness_hello(-5, wrong_secret));  // and a bad rank
    std::vector<uint8_t> half = liveness_hello(0, wrong_secret);
    half.resize(half.size() / 2);
    keep(dial(port), half);  // truncated, then silence
    std::vector<uint8_t> big = liveness_hello(0, wrong_secret);
    big.resize(70000, 0xab);
    keep(dial(port), big);  // oversized
  }
  keep(dial(port), {});            // never sends
  const int slow_fd = dial(port);  // before the flood fills the listen backlog
  // The flood: opened at once (non-blocking connects), then held.
  std::vector<int> flood_fds;
  for (int i = 0; i < flood; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0) break;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
      close(fd);
      continue;
    }
    fds_.push_back(fd);
  }
  // One byte a second of a plausible start (a hello), until the peer closes the connection.
  std::vector<uint8_t> slow_bytes =
      protocol == Protocol::kStore ? store_frame(1, "", wrong_secret) : liveness_hello(0, wrong_secret);
  slow_ = std::thread([this, slow_fd, slow_bytes] {
    for (size_t i = 0; slow_fd >= 0 && !stop_.load(); ++i) {
      uint8_t byte = slow_bytes[i % slow_bytes.size()];
      if (send(slow_fd, &byte, 1, MSG_NOSIGNAL) != 1) {
        slow_closed_ = true;
        break;
      }
      ++slow_sent_;
      pollfd pfd{slow_fd, POLLIN, 0};
      if (poll(&pfd, 1, 1000) > 0) {  // the peer closed it (or sent something: strangers get nothing)
        char c;
        if (recv(slow_fd, &c, 1, MSG_DONTWAIT) <= 0) {
          slow_closed_ = true;
          break;
        }
      }
    }
    if (slow_fd >= 0) close(slow_fd);
  });
}

void Attack::stop() {
  stop_ = true;
  if (slow_.joinable()) slow_.join();
  for (int fd : fds_) close(fd);
  fds_.clear();
}

int Attack::closed_by_peer() const {
  int closed = 0;
  for (int fd : fds_) {
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) ++closed;
  }
  return closed;
}

}  // namespace strangers
