// Small TCP helpers for the store: address parsing, listening, dialing and deadline-bounded I/O.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "base/status.h"

namespace rcc::bootstrap {

using Clock = std::chrono::steady_clock;

Clock::time_point deadline_after(double seconds);
// Milliseconds left until deadline for poll(), at least 0.
int ms_until(Clock::time_point deadline);

// "host:port" or "[v6]:port" into host and port; what names the argument in errors.
Status split_address(const std::string& address, const char* what, std::string* host, int* port);
// Joins host and port, bracketing IPv6 literals.
std::string join_address(const std::string& host, int port);

// A non-blocking, close-on-exec listening socket on bind_host:port ("" or "0.0.0.0": all IPv4
// addresses, "::": all addresses). *bound_port is the port the kernel chose when port is 0.
Status listen_tcp(const std::string& bind_host, int port, int* fd, int* bound_port);
// One connection attempt bounded by deadline; the socket is blocking-free (O_NONBLOCK) with
// TCP_NODELAY. Refused/unreachable is RCC_ERR_BOOTSTRAP reported quietly (the caller retries).
Status dial_tcp(const std::string& host, int port, Clock::time_point deadline, int* fd);

// Writes/reads exactly size bytes on a non-blocking socket before deadline. A closed peer is
// RCC_ERR_BOOTSTRAP, the deadline RCC_ERR_TIMEOUT; what names the peer in messages.
Status send_all(int fd, const void* data, size_t size, Clock::time_point deadline, const char* what);
// Reads what is available (at least one byte) into buf, waiting until deadline; *received > 0.
Status recv_some(int fd, void* buf, size_t size, Clock::time_point deadline, const char* what, size_t* received);

// "1.2.3.4:5678" for the peer of a connected socket.
std::string peer_address(int fd);

// This machine's host name, "?" if it cannot be read.
std::string host_name();

// The address of this host that other hosts can dial: RCC_SOCKET_IFNAME's, else the first
// non-loopback interface that is up, else 127.0.0.1.
std::string advertised_host();

}  // namespace rcc::bootstrap
