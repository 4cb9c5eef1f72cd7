// A real job whose rendezvous store is attacked while the ranks use it: before rcc_comm_init,
// rank 0 opens connections to RCC_STORE_ADDR that send garbage, a hello with a wrong secret, an
// oversized frame, half a hello (then stall) and nothing at all (stall), and keeps them open for
// the whole job. Every rank must still initialise, run collectives with correct results and
// destroy. Prints "stranger-job rank=R ok" on success. Run by fault_driver_test.cc under rccrun.
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rcc/rcc.h"

namespace {

int connect_to(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return -1;
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  return fd;
}

void put_le(std::vector<uint8_t>& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

// The store's documented frame (src/bootstrap/frame.h): u32 length | u8 type | u64 id | u32 key
// length | key | value. Built by hand: a stranger does not use rcc's code.
std::vector<uint8_t> frame(uint8_t type, const std::string& value, uint32_t claimed_length = 0) {
  std::vector<uint8_t> out;
  put_le(out, claimed_length != 0 ? claimed_length : 1 + 8 + 4 + value.size(), 4);
  out.push_back(type);
  put_le(out, 1, 8);
  put_le(out, 0, 4);
  out.insert(out.end(), value.begin(), value.end());
  return out;
}

bool send_bytes(int fd, const std::vector<uint8_t>& bytes) {
  return fd >= 0 && send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

}  // namespace

int main() {
  const char* address = std::getenv("RCC_STORE_ADDR");
  const char* rank_text = std::getenv("RCC_RANK");
  if (address == nullptr || rank_text == nullptr) {
    std::fprintf(stderr, "stranger_rank: run me under rccrun\n");
    return 2;
  }
  std::vector<int> strangers;
  if (std::atoi(rank_text) == 0) {
    const std::string secret = std::getenv("RCC_JOB_SECRET") ? std::getenv("RCC_JOB_SECRET") : "";
    int garbage = connect_to(address);
    bool sent = send_bytes(garbage, std::vector<uint8_t>(200, 0xee));
    int wrong_secret = connect_to(address);
    sent = send_bytes(wrong_secret, frame(1, std::string(secret.size(), 'x'))) && sent;
    int oversized = connect_to(address);
    sent = send_bytes(oversized, frame(1, secret, 0xfffffff0u)) && sent;
    int half_hello = connect_to(address);
    std::vector<uint8_t> hello = frame(1, secret);
    hello.resize(hello.size() / 2);
    sent = send_bytes(half_hello, hello) && sent;
    int silent = connect_to(address);
    if (!sent || silent < 0) {
      std::fprintf(stderr, "stranger_rank: could not reach the store at %s\n", address);
      return 2;
    }
    strangers = {garbage, wrong_secret, oversized, half_hello, silent};
  }
  rcc_comm_t comm = nullptr;
  if (rcc_comm_init(&comm) != RCC_SUCCESS) {
    std::fprintf(stderr, "stranger_rank: rcc_comm_init: %s\n", rcc_last_error());
    return 1;
  }
  int rank = 0, size = 0;
  rcc_comm_rank(comm, &rank);
  rcc_comm_size(comm, &size);
  int failures = 0;
  for (int round = 0; round < 5; ++round) {
    std::vector<int32_t> data(1000, rank + round);
    if (rcc_allreduce(comm, data.data(), data.data(), data.size(), RCC_INT32, RCC_SUM) != RCC_SUCCESS) {
      std::fprintf(stderr, "stranger_rank: rcc_allreduce: %s\n", rcc_last_error());
      return 1;
    }
    const int32_t expected = size * (size - 1) / 2 + size * round;
    for (int32_t value : data) failures += value != expected;
  }
  if (rcc_barrier(comm) != RCC_SUCCESS || rcc_comm_destroy(comm) != RCC_SUCCESS) {
    std::fprintf(stderr, "stranger_rank: barrier/destroy: %s\n", rcc_last_error());
    return 1;
  }
  for (int fd : strangers) close(fd);
  if (failures != 0) {
    std::fprintf(stderr, "stranger_rank: %d wrong allreduce values\n", failures);
    return 1;
  }
  std::printf("stranger-job rank=%d ok\n", rank);
  return 0;
}
