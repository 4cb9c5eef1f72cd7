// The embedding path: a program that starts its own processes. Rank 0 makes a unique id and hands
// it to the others on their command line (standing in for the caller's own channel: MPI_Bcast, a
// file, a socket); every rank calls rcc_comm_init_rank, and they check an allreduce and a broadcast.
// Usage: unique_id_test SIZE   (rank 0; it starts ranks 1..SIZE-1 as copies of itself)
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "rcc/rcc.h"

extern char** environ;

namespace {

std::string to_hex(const rcc_unique_id_t& id) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : id.internal) {
    hex += digits[byte >> 4];
    hex += digits[byte & 15];
  }
  return hex;
}

bool from_hex(const std::string& hex, rcc_unique_id_t* id) {
  if (hex.size() != 2 * sizeof id->internal) return false;
  for (size_t i = 0; i < sizeof id->internal; ++i)
    id->internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return true;
}

int check(rcc_status_t status, const char* what, int rank) {
  if (status == RCC_SUCCESS) return 0;
  std::fprintf(stderr, "rank %d: %s: %s: %s\n", rank, what, rcc_status_string(status), rcc_last_error());
  return 1;
}

// Every rank: join, then an allreduce and a broadcast whose results are known exactly.
int run_rank(const rcc_unique_id_t& id, int rank, int size) {
  rcc_comm_t comm = nullptr;
  if (check(rcc_comm_init_rank(&comm, id, rank, size), "rcc_comm_init_rank", rank)) return 1;
  int got_rank = -1, got_size = -1;
  if (check(rcc_comm_rank(comm, &got_rank), "rcc_comm_rank", rank) ||
      check(rcc_comm_size(comm, &got_size), "rcc_comm_size", rank))
    return 1;
  if (got_rank != rank || got_size != size) {
    std::fprintf(stderr, "rank %d: communicator says rank %d of %d\n", rank, got_rank, got_size);
    return 1;
  }
  std::vector<int64_t> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = rank * 1000 + static_cast<int64_t>(i);
  if (check(rcc_allreduce(comm, values.data(), values.data(), values.size(), RCC_INT64, RCC_SUM), "rcc_allreduce",
            rank))
    return 1;
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t expected = 1000LL * size * (size - 1) / 2 + static_cast<int64_t>(i) * size;
    if (values[i] != expected) {
      std::fprintf(stderr, "rank %d: element %zu is %lld, expected %lld\n", rank, i, static_cast<long long>(values[i]),
                   static_cast<long long>(expected));
      return 1;
    }
  }
  int64_t token = rank == size - 1 ? 424242 : -1;
  if (check(rcc_broadcast(comm, &token, 1, RCC_INT64, size - 1), "rcc_broadcast", rank)) return 1;
  if (token != 424242) {
    std::fprintf(stderr, "rank %d: broadcast gave %lld\n", rank, static_cast<long long>(token));
    return 1;
  }
  if (check(rcc_comm_destroy(comm), "rcc_comm_destroy", rank)) return 1;
  std::printf("rank %d of %d: ok\n", rank, size);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--rank") {
    rcc_unique_id_t id;
    if (!from_hex(argv[4], &id)) return 2;
    return run_rank(id, std::atoi(argv[2]), std::atoi(argv[3]));
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SIZE\n", argv[0]);
    return 2;
  }
  const int size = std::atoi(argv[1]);
  rcc_unique_id_t id;
  if (check(rcc_get_unique_id(&id), "rcc_get_unique_id", 0)) return 1;
  const std::string hex = to_hex(id), size_text = std::to_string(size);
  std::vector<pid_t> children;
  for (int rank = 1; rank < size; ++rank) {
    const std::string rank_text = std::to_string(rank);
    const char* child_argv[] = {"/proc/self/exe", "--rank", rank_text.c_str(), size_text.c_str(), hex.c_str(), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, const_cast<char**>(child_argv), environ) != 0) {
      std::perror("posix_spawn");
      return 1;
    }
    children.push_back(pid);
  }
  int result = run_rank(id, 0, size);
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result = 1;
  }
  return result;
}
