#include "bootstrap/socket_util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "base/log.h"
#include "base/settings.h"

namespace rcc::bootstrap {
namespace {

void set_socket_options(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string sockaddr_text(const sockaddr* sa) {
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (sa->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
    port = ntohs(in->sin_port);
  } else if (sa->sa_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
    port = ntohs(in6->sin6_port);
  }
  return join_address(host, port);
}

}  // namespace

Clock::time_point deadline_after(double seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds > 1e7) seconds = 1e7;  // keeps the duration arithmetic far from overflow
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

int ms_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1000000 ? 1000000 : static_cast<int>(left) + 1;
}

Status split_address(const std::string& address, const char* what, std::string* host, int* port) {
  std::string h;
  std::string p;
  if (!address.empty() && address[0] == '[') {
    size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') {
      return fail(RCC_ERR_INVALID_ARGUMENT, "%s '%s' is not [host]:port", what, address.c_str());
    }
    h = address.substr(1, close - 1);
    p = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "%s '%s' is not host:port", what, address.c_str());
    }
    h = address.substr(0, colon);
    p = address.substr(colon + 1);
  }
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(p.c_str(), &end, 10);
  if (p.empty() || errno != 0 || *end != '\0' || value < 1 || value > 65535) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s '%s' has an invalid port", what, address.c_str());
  }
  *host = h;
  *port = static_cast<int>(value);
  return RCC_SUCCESS;
}

std::string join_address(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

Status listen_tcp(const std::string& bind_host, int port, int* fd_out, int* bound_port) {
  if (port < 0 || port > 65535) return fail(RCC_ERR_INVALID_ARGUMENT, "port %d is out of range", port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  const char* node = bind_host.empty() ? "0.0.0.0" : bind_host.c_str();
  int rc = getaddrinfo(node, service.c_str(), &hints, &list);
  if (rc != 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "store bind address '%s' cannot be resolved: %s", node, gai_strerror(rc));
  }
  int last_errno = 0;
  int fd = -1;
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0) break;
    last_errno = errno;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(list);
  if (fd < 0) {
    return fail(RCC_ERR_BOOTSTRAP, "cannot listen on %s: %s", join_address(node, port).c_str(),
                std::strerror(last_errno));
  }
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  *bound_port = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
                                            : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  *fd_out = fd;
  return RCC_SUCCESS;
}

Status dial_tcp(const std::string& host, int port, Clock::time_point deadline, int* fd_out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &list);
  if (rc != 0) {
    return fail_quietly(RCC_ERR_BOOTSTRAP, "store host '%s' cannot be resolved: %s", host.c_str(), gai_strerror(rc));
  }
  std::string reason = "no address";
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      reason = std::strerror(errno);
      continue;
    }
    int error = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        pollfd pfd{fd, POLLOUT, 0};
        int ready = poll(&pfd, 1, ms_until(deadline));
        if (ready <= 0) {
          error = ready == 0 ? ETIMEDOUT : errno;
        } else {
          socklen_t len = sizeof error;
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
        }
      }
    }
    if (error == 0) {
      set_socket_options(fd);
      freeaddrinfo(list);
      *fd_out = fd;
      return RCC_SUCCESS;
    }
    reason = std::strerror(error);
    close(fd);
  }
  freeaddrinfo(list);
  return fail_quietly(RCC_ERR_BOOTSTRAP, "cannot connect to store at %s: %s", join_address(host, port).c_str(),
                      reason.c_str());
}

Status send_all(int fd, const void* data, size_t size, Clock::time_point deadline, const char* what) {
  auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd, POLLOUT, 0};
      int ready = poll(&pfd, 1, ms_until(deadline));
      if (ready == 0) return fail_quietly(RCC_ERR_TIMEOUT, "sending to %s timed out", what);
      if (ready < 0 && errno != EINTR) return fail(RCC_ERR_BOOTSTRAP, "poll: %s", std::strerror(errno));
      continue;
    }
    return fail(RCC_ERR_BOOTSTRAP, "connection to %s broke: %s", what, std::strerror(errno));
  }
  return RCC_SUCCESS;
}

Status recv_some(int fd, void* buf, size_t size, Clock::time_point deadline, const char* what, size_t* received) {
  for (;;) {
    ssize_t n = recv(fd, buf, size, 0);
    if (n > 0) {
      *received = static_cast<size_t>(n);
      return RCC_SUCCESS;
    }
    if (n == 0) return fail(RCC_ERR_BOOTSTRAP, "%s closed the connection", what);
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return fail(RCC_ERR_BOOTSTRAP, "connection to %s broke: %s", what, std::strerror(errno));
    }
    pollfd pfd{fd, POLLIN, 0};
    int ready = poll(&pfd, 1, ms_until(deadline));
    if (ready == 0) return fail_quietly(RCC_ERR_TIMEOUT, "waiting for %s timed out", what);
    if (ready < 0 && errno != EINTR) return fail(RCC_ERR_BOOTSTRAP, "poll: %s", std::strerror(errno));
  }
}

std::string peer_address(int fd) {
  sockaddr_storage peer{};
  socklen_t len = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return "unknown peer";
  return sockaddr_text(reinterpret_cast<sockaddr*>(&peer));
}

std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

std::string advertised_host() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "127.0.0.1";
  const std::string wanted = settings::text("RCC_SOCKET_IFNAME");
  std::string first_v4;
  std::string first_v6;
  std::string named;
  for (ifaddrs* ifa = list; ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || !(ifa->ifa_flags & IFF_UP)) continue;
    int family = ifa->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[INET6_ADDRSTRLEN] = "";
    if (family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ifa->ifa_addr)->sin_addr, text, sizeof text);
    } else {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(ifa->ifa_addr);
      if (IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) continue;  // needs a scope id to dial
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    }
    if (!wanted.empty() && wanted == ifa->ifa_name && (named.empty() || family == AF_INET)) named = text;
    if (ifa->ifa_flags & IFF_LOOPBACK) continue;
    if (family == AF_INET && first_v4.empty()) first_v4 = text;
    if (family == AF_INET6 && first_v6.empty()) first_v6 = text;
  }
  freeifaddrs(list);
  if (!wanted.empty()) {
    if (!named.empty()) return named;
    // On a host without that interface (RCC_* variables travel to every host) the automatic
    // choice is the best guess left.
    RCC_INFO("RCC_SOCKET_IFNAME=%s: no such interface with an address that is up on this host; choosing one",
             wanted.c_str());
  }
  if (!first_v4.empty()) return first_v4;
  if (!first_v6.empty()) return first_v6;
  return "127.0.0.1";
}

}  // namespace rcc::bootstrap
