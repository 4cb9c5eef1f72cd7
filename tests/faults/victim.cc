// Fault-injection rank program, run under rccrun by fault_driver_test.cc.
//
//   victim OP VICTIM_RANK SEED [MARKER]
//
// Every rank loops over OP (p2p, allreduce, broadcast, barrier, allgather, alltoall, reduce,
// gather, scatter, reduce_scatter, scan, exscan, allgatherv, alltoallv, gatherv, scatterv,
// reduce_scatterv; "inflight": six different nonblocking collectives in flight at once; "split":
// an op drawn from SEED on a half of the world, see main; RCC_ALGO picks the algorithm). Rank VICTIM_RANK kills itself
// with SIGKILL at an iteration drawn from SEED (sometimes before the call, sometimes in the middle of a nonblocking
// one). The survivors must get RCC_ERR_PEER_FAILED (or RCC_ERR_TIMEOUT at worst) naming the victim, then destroy the
// communicator promptly. Each survivor prints one line
//   fault-result rank=R status=NAME named_victim=0|1 error_ms=T destroy_ms=D destroy_status=NAME
//     op=OP half=none|victim|other checks=ok|WHAT-FAILED message=TEXT
// and the victim prints "fault-victim rank=R iteration=I kill_ms=T" just before dying (times are
// CLOCK_REALTIME milliseconds, so the driver can compare them across processes).
// RCC_FAULT_MIN_ELEMENTS (default 0) raises the elements per rank to at least that many
// (tests/hosts: a hierarchical allreduce in pieces cut short).
//
//   victim abort
//
// instead checks rcc_comm_abort from another thread: a blocked rcc_recv must return
// RCC_ERR_ABORTED at once, later calls too, and rcc_comm_destroy must return promptly.
// "abort-transfer": an aborted receive whose sender may still write returns only once it cannot.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "rcc/rcc.h"

namespace {

// Exit codes the driver checks.
constexpr int kSurvivorOk = 3;          // got the error, it named the victim, destroy was fine
constexpr int kSurvivorWrongError = 4;  // an error, but not naming the victim (or an unexpected status)
constexpr int kSurvivorNoError = 5;     // ran out of iterations without noticing the death
constexpr int kSurvivorBadDestroy = 6;  // rcc_comm_destroy failed
constexpr int kUsage = 2;

long long now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Unbuffered, so the line is out before a SIGKILL.
void say(const std::string& line) {
  std::string text = line + "\n";
  ssize_t ignored = write(STDOUT_FILENO, text.data(), text.size());
  (void)ignored;
}

// Whether message mentions "rank R" as a whole number (rank 1 must not match rank 10).
bool names_rank(const std::string& message, int rank) {
  const std::string needle = "rank " + std::to_string(rank);
  for (size_t at = message.find(needle); at != std::string::npos; at = message.find(needle, at + 1)) {
    size_t end = at + needle.size();
    if (end == message.size() || !std::isdigit(static_cast<unsigned char>(message[end]))) return true;
  }
  return false;
}

// The rank in the job (die_now is called with ranks of a sub-communicator too).
int g_job_rank = -1;

[[noreturn]] void die_now(int /*rank in the communicator*/, long iteration) {
  say("fault-victim rank=" + std::to_string(g_job_rank) + " iteration=" + std::to_string(iteration) +
      " kill_ms=" + std::to_string(now_ms()));
  kill(getpid(), SIGKILL);
  for (;;) pause();
}

// The counts of the vector collectives: rank i's block for rank j has count - (i + j) % 2 elements
// (symmetric, so alltoallv's send and receive counts agree).
// At least 1: a rank whose blocks were all empty would never wait for anyone, and could finish its
// loop before the death.
size_t vcount(size_t count, int i, int j) { return count > 1 ? count - static_cast<size_t>((i + j) % 2) : count; }

// Starts one iteration of a collective op (nonblocking) into requests; false for an unknown op.
// "inflight" starts several different collectives at once, each on buffers of its own.
bool start_collective(const std::string& op, rcc_comm_t comm, int rank, int size, long iteration, std::vector<float>& a,
                      std::vector<float>& b, std::vector<std::vector<float>>& extra, std::vector<size_t>& counts,
                      std::vector<size_t>& displs, std::vector<size_t>& counts2, std::vector<size_t>& displs2,
                      std::vector<rcc_request_t>& requests, rcc_status_t* status) {
  const size_t count = a.size() / static_cast<size_t>(size);
  const int root = static_cast<int>(iteration % size);
  rcc_request_t request = nullptr;
  counts.assign(static_cast<size_t>(size), 0);
  displs.assign(static_cast<size_t>(size), 0);
  counts2.assign(static_cast<size_t>(size), 0);
  displs2.assign(static_cast<size_t>(size), 0);
  for (int r = 0; r < size; ++r) displs[r] = displs2[r] = static_cast<size_t>(r) * count;
  auto push = [&](rcc_status_t s) {
    *status = s;
    if (s == RCC_SUCCESS) requests.push_back(request);
    request = nullptr;
    return s == RCC_SUCCESS;
  };
  if (op == "allreduce") {
    push(rcc_iallreduce(comm, a.data(), b.data(), a.size(), RCC_FLOAT32, RCC_SUM, &request));
  } else if (op == "broadcast") {
    push(rcc_ibroadcast(comm, a.data(), a.size(), RCC_FLOAT32, root, &request));
  } else if (op == "barrier") {
    push(rcc_ibarrier(comm, &request));
  } else if (op == "allgather") {
    push(rcc_iallgather(comm, a.data(), b.data(), count, RCC_FLOAT32, &request));
  } else if (op == "alltoall") {
    push(rcc_ialltoall(comm, a.data(), b.data(), count, RCC_FLOAT32, &request));
  } else if (op == "reduce") {
    push(rcc_ireduce(comm, a.data(), b.data(), a.size(), RCC_FLOAT32, RCC_SUM, root, &request));
  } else if (op == "gather") {
    push(rcc_igather(comm, a.data(), b.data(), count, RCC_FLOAT32, root, &request));
  } else if (op == "scatter") {
    push(rcc_iscatter(comm, a.data(), b.data(), count, RCC_FLOAT32, root, &request));
  } else if (op == "reduce_scatter") {
    push(rcc_ireduce_scatter(comm, a.data(), b.data(), count, RCC_FLOAT32, RCC_SUM, &request));
  } else if (op == "scan") {
    push(rcc_iscan(comm, a.data(), b.data(), a.size(), RCC_FLOAT32, RCC_SUM, &request));
  } else if (op == "exscan") {
    push(rcc_iexscan(comm, a.data(), b.data(), a.size(), RCC_FLOAT32, RCC_MAX, &request));
  } else if (op == "allgatherv") {
    for (int r = 0; r < size; ++r) counts[r] = vcount(count, r, 0);
    push(rcc_iallgatherv(comm, a.data(), counts[rank], b.data(), counts.data(), displs.data(), RCC_FLOAT32, &request));
  } else if (op == "alltoallv") {
    for (int r = 0; r < size; ++r) {
      counts[r] = vcount(count, rank, r);   // sent to r
      counts2[r] = vcount(count, r, rank);  // received from r
    }
    push(rcc_ialltoallv(comm, a.data(), counts.data(), displs.data(), b.data(), counts2.data(), displs2.data(),
                        RCC_FLOAT32, &request));
  } else if (op == "gatherv") {
    for (int r = 0; r < size; ++r) counts[r] = vcount(count, r, root);
    push(rcc_igatherv(comm, a.data(), counts[rank], b.data(), counts.data(), displs.data(), RCC_FLOAT32, root,
                      &request));
  } else if (op == "scatterv") {
    for (int r = 0; r < size; ++r) counts[r] = vcount(count, r, root);
    push(rcc_iscatterv(comm, a.data(), counts.data(), displs.data(), b.data(), counts[rank], RCC_FLOAT32, root,
                       &request));
  } else if (op == "reduce_scatterv") {
    for (int r = 0; r < size; ++r) counts[r] = vcount(count, r, 1);
    push(rcc_ireduce_scatterv(comm, a.data(), b.data(), counts.data(), RCC_FLOAT32, RCC_SUM, &request));
  } else if (op == "inflight") {
    // Six collectives in flight at once, waited for in reverse order.
    extra.resize(8);
    for (auto& v : extra) v.assign(a.size(), 1.0f);
    if (push(rcc_iallreduce(comm, extra[0].data(), extra[1].data(), a.size(), RCC_FLOAT32, RCC_SUM, &request)) &&
        push(rcc_ibroadcast(comm, extra[2].data(), a.size(), RCC_FLOAT32, root, &request)) &&
        push(rcc_ialltoall(comm, extra[3].data(), extra[4].data(), count, RCC_FLOAT32, &request)) &&
        push(rcc_ibarrier(comm, &request))) {
      for (int r = 0; r < size; ++r) counts[r] = vcount(count, r, 0);
      if (push(rcc_iallgatherv(comm, extra[5].data(), counts[rank], extra[6].data(), counts.data(), displs.data(),
                               RCC_FLOAT32, &request))) {
        push(rcc_iscan(comm, extra[7].data(), b.data(), a.size(), RCC_FLOAT32, RCC_SUM, &request));
      }
    }
  } else {
    return false;
  }
  return true;
}

// One iteration of op; when die_mid_call, the victim starts a nonblocking form and dies inside it.
rcc_status_t run_once(const std::string& op, rcc_comm_t comm, int rank, int size, long iteration, bool die_mid_call,
                      int mid_call_delay_us, std::vector<float>& a, std::vector<float>& b) {
  const size_t count = a.size() / static_cast<size_t>(size);
  rcc_request_t request = nullptr;
  rcc_status_t status = RCC_SUCCESS;
  if (op == "p2p") {
    // A ring exchange: send right, receive from the left.
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    rcc_request_t recv = nullptr;
    status = rcc_irecv(comm, b.data(), count, RCC_FLOAT32, left, 5, &recv);
    if (status != RCC_SUCCESS) return status;
    status = rcc_isend(comm, a.data(), count, RCC_FLOAT32, right, 5, &request);
    if (status != RCC_SUCCESS) return status;
    if (die_mid_call) {
      std::this_thread::sleep_for(std::chrono::microseconds(mid_call_delay_us));
      die_now(rank, iteration);
    }
    rcc_status_t sent = rcc_wait(request);
    rcc_status_t received = rcc_wait(recv);
    return sent != RCC_SUCCESS ? sent : received;
  }
  // The count and displacement arrays must outlive the requests (rcc.h).
  static thread_local std::vector<std::vector<float>> extra;
  static thread_local std::vector<size_t> counts, displs, counts2, displs2;
  std::vector<rcc_request_t> requests;
  if (!start_collective(op, comm, rank, size, iteration, a, b, extra, counts, displs, counts2, displs2, requests,
                        &status)) {
    std::fprintf(stderr, "victim: unknown op '%s'\n", op.c_str());
    std::exit(kUsage);
  }
  if (die_mid_call) {
    std::this_thread::sleep_for(std::chrono::microseconds(mid_call_delay_us));
    die_now(rank, iteration);
  }
  // Every request started is waited for (even after a failure to start the next), last first.
  rcc_status_t first = status;
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
    rcc_status_t s = rcc_wait(*it);
    if (first == RCC_SUCCESS) first = s;
  }
  return first;
}

// collective: rank 0 is blocked in an allreduce (rank 1 never joins it) instead of a receive.
int run_abort_check(rcc_comm_t comm, int rank, int size, bool collective) {
  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "abort-check rank %d: FAILED: %s (last error: %s)\n", rank, what.c_str(), rcc_last_error());
      ++failures;
    }
  };
  std::atomic<long long> aborted_at{0};
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    aborted_at = now_ms();
    rcc_status_t status = rcc_comm_abort(comm);
    if (status != RCC_SUCCESS) std::fprintf(stderr, "rcc_comm_abort: %s\n", rcc_last_error());
  });
  // Nobody sends this message (nor joins that allreduce): only the abort can end the call.
  int value = 0;
  float sum = 1;
  rcc_status_t status = collective && rank == 0 ? rcc_allreduce(comm, &sum, &sum, 1, RCC_FLOAT32, RCC_SUM)
                                                : rcc_recv(comm, &value, 1, RCC_INT32, (rank + 1) % size, 77);
  const long long returned_at = now_ms();
  aborter.join();
  check(status == RCC_ERR_ABORTED, std::string("blocked call returned ") + rcc_status_string(status));
  check(returned_at - aborted_at.load() < 1000,
        "rcc_recv returned " + std::to_string(returned_at - aborted_at.load()) + " ms after the abort");
  check(rcc_comm_abort(comm) == RCC_SUCCESS, "a second rcc_comm_abort failed");
  check(rcc_send(comm, &value, 1, RCC_INT32, 0, 1) == RCC_ERR_ABORTED, "rcc_send after abort");
  check(rcc_barrier(comm) == RCC_ERR_ABORTED, "rcc_barrier after abort");
  float x = 1;
  check(rcc_allreduce(comm, &x, &x, 1, RCC_FLOAT32, RCC_SUM) == RCC_ERR_ABORTED, "rcc_allreduce after abort");
  rcc_request_t request = nullptr;
  check(rcc_irecv(comm, &value, 1, RCC_INT32, 0, 1, &request) == RCC_ERR_ABORTED && request == nullptr,
        "rcc_irecv after abort");
  const long long destroy_start = now_ms();
  status = rcc_comm_destroy(comm);
  const long long destroy_ms = now_ms() - destroy_start;
  check(status == RCC_SUCCESS, std::string("rcc_comm_destroy after abort: ") + rcc_status_string(status));
  check(destroy_ms < 2000, "rcc_comm_destroy after abort took " + std::to_string(destroy_ms) + " ms");
  say("abort-result rank=" + std::to_string(rank) + " failures=" + std::to_string(failures) + " recv_return_ms=" +
      std::to_string(returned_at - aborted_at.load()) + " destroy_ms=" + std::to_string(destroy_ms));
  return failures == 0 ? 0 : 1;
}

// "abort-transfer": rank 0's receive of a large message is aborted after its clear-to-send went
// out, while rank 1 (which knows nothing of the abort) has not written yet. rcc_recv may return
// only when no write can land in the buffer any more: rank 0 reuses the buffer at once, and a
// message on another communicator (sent after rank 1's write, so it arrives after it) checks that
// nothing overwrote it.
int run_abort_transfer_check(rcc_comm_t comm, int rank) {
  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "abort-check rank %d: FAILED: %s (last error: %s)\n", rank, what.c_str(), rcc_last_error());
      ++failures;
    }
  };
  rcc_comm_t side = nullptr;
  if (rcc_comm_dup(comm, &side) != RCC_SUCCESS) {
    std::fprintf(stderr, "victim: rcc_comm_dup: %s\n", rcc_last_error());
    return kUsage;
  }
  std::vector<float> buffer(size_t{1} << 18, 1.0f);  // 1 MiB: a rendezvous, not an eager message
  int token = 0;
  long long recv_ms = 0;
  if (rank == 1) {
    rcc_request_t send = nullptr;
    check(rcc_isend(comm, buffer.data(), buffer.size(), RCC_FLOAT32, 0, 9, &send) == RCC_SUCCESS, "rcc_isend");
    // No rcc call for a while: the clear-to-send waits here until rank 0 has aborted.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    check(rcc_wait(send) == RCC_SUCCESS, "the send to the aborted receive did not complete");
    check(rcc_send(side, &token, 1, RCC_INT32, 0, 1) == RCC_SUCCESS, "rcc_send on the second communicator");
    check(rcc_recv(side, &token, 1, RCC_INT32, 0, 2) == RCC_SUCCESS, "rcc_recv on the second communicator");
  } else if (rank == 0) {
    std::thread aborter([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      check(rcc_comm_abort(comm) == RCC_SUCCESS, "rcc_comm_abort");
    });
    const long long start = now_ms();
    const rcc_status_t status = rcc_recv(comm, buffer.data(), buffer.size(), RCC_FLOAT32, 1, 9);
    recv_ms = now_ms() - start;
    aborter.join();
    check(status == RCC_ERR_ABORTED, std::string("the aborted receive returned ") + rcc_status_string(status));
    std::fill(buffer.begin(), buffer.end(), 7.0f);  // the buffer is the application's again
    check(rcc_recv(side, &token, 1, RCC_INT32, 1, 1) == RCC_SUCCESS, "rcc_recv on the second communicator");
    size_t overwritten = 0;
    for (float v : buffer) overwritten += v != 7.0f;
    check(overwritten == 0, std::to_string(overwritten) + " values were written after rcc_recv returned");
    check(rcc_send(side, &token, 1, RCC_INT32, 1, 2) == RCC_SUCCESS, "rcc_send on the second communicator");
  }
  // Rank 0 left `comm` without a goodbye (it aborted it): rank 1 must not wait for one.
  if (rank != 0) rcc_comm_abort(comm);
  check(rcc_comm_destroy(comm) == RCC_SUCCESS, "rcc_comm_destroy of the aborted communicator");
  check(rcc_comm_destroy(side) == RCC_SUCCESS, "rcc_comm_destroy of the second communicator");
  say("abort-result rank=" + std::to_string(rank) + " failures=" + std::to_string(failures) +
      " recv_ms=" + std::to_string(recv_ms));
  return failures == 0 ? 0 : 1;
}

}  // namespace

// The last rank joins an allreduce long after the others gave up on it (RCC_TIMEOUT=1): nobody may
// return success (over shared memory the late rank would otherwise pair with a later call), and the
// next allreduce fails on every rank too.
int run_late_check(rcc_comm_t comm, int rank, int size) {
  if (rank == size - 1) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  float x = 1.0f;
  const long long start = now_ms();
  const rcc_status_t first = rcc_allreduce(comm, &x, &x, 1, RCC_FLOAT32, RCC_SUM);
  const std::string first_message = first == RCC_SUCCESS ? "" : rcc_last_error();
  const long long first_ms = now_ms() - start;
  const rcc_status_t second = rcc_allreduce(comm, &x, &x, 1, RCC_FLOAT32, RCC_SUM);
  say("late-result rank=" + std::to_string(rank) + " first=" + rcc_status_string(first) +
      " first_ms=" + std::to_string(first_ms) + " second=" + rcc_status_string(second) + " message=" + first_message);
  rcc_comm_abort(comm);  // the ranks' steps no longer match: leave without waiting for each other
  rcc_comm_destroy(comm);
  return first != RCC_SUCCESS && second != RCC_SUCCESS ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || (std::string(argv[1]).rfind("abort", 0) != 0 && std::string(argv[1]) != "late" && argc < 4)) {
    std::fprintf(stderr,
                 "usage: victim OP VICTIM_RANK SEED [MARKER] | victim abort|abort-collective|abort-transfer|late\n");
    return kUsage;
  }
  const std::string op = argv[1];
  rcc_comm_t comm = nullptr;
  if (rcc_comm_init(&comm) != RCC_SUCCESS) {
    std::fprintf(stderr, "victim: rcc_comm_init: %s\n", rcc_last_error());
    return kUsage;
  }
  int rank = 0, size = 0;
  rcc_comm_rank(comm, &rank);
  rcc_comm_size(comm, &size);
  g_job_rank = rank;
  if (op == "abort" || op == "abort-collective") return run_abort_check(comm, rank, size, op == "abort-collective");
  if (op == "abort-transfer") return run_abort_transfer_check(comm, rank);
  if (op == "late") return run_late_check(comm, rank, size);

  const int victim = std::atoi(argv[2]);
  const unsigned seed = static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10));
  if (victim < 0 || victim >= size) {
    std::fprintf(stderr, "victim: VICTIM_RANK %d is not a rank of %d\n", victim, size);
    return kUsage;
  }
  // Every rank draws the same values; only the victim acts on them.
  std::mt19937 random(seed);
  const long kill_at = static_cast<long>(random() % 60);
  const bool die_mid_call = random() % 2 == 1;
  const int mid_call_delay_us = static_cast<int>(random() % 2000);
  // Sizes vary with the seed too, so both eager and larger transfers are cut short.
  const char* min_elements = std::getenv("RCC_FAULT_MIN_ELEMENTS");
  const size_t per_rank = std::max(size_t{1} << (random() % 15),
                                   min_elements != nullptr ? std::strtoul(min_elements, nullptr, 10) : size_t{0});

  // "split": the world splits into halves {0..size/2-1} and {size/2..size-1} and the loop runs an
  // op drawn from the seed on the victim's half, which must fail on its survivors naming the victim.
  // The other half runs kill_at + 10 iterations on its own half, which must all succeed; then every
  // survivor calls an allreduce on the world, which must fail naming the victim, and the other half
  // allreduces on its half again, which must still work (docs/communicators.md, "Failure").
  const bool split = op == "split";
  std::string loop_op = op;
  rcc_comm_t half = nullptr;
  bool in_victim_half = true;
  if (split) {
    static const char* const kHalfOps[] = {"allreduce", "broadcast", "allgather", "alltoall",        "barrier",
                                           "p2p",       "scan",      "alltoallv", "reduce_scatterv", "inflight"};
    loop_op = kHalfOps[random() % (sizeof kHalfOps / sizeof kHalfOps[0])];
    const int color = rank < size / 2 ? 0 : 1;
    in_victim_half = color == (victim < size / 2 ? 0 : 1);
    if (rcc_comm_split(comm, color, rank, &half) != RCC_SUCCESS) {
      std::fprintf(stderr, "victim %d: rcc_comm_split: %s\n", rank, rcc_last_error());
      return kUsage;
    }
  }
  rcc_comm_t loop_comm = split ? half : comm;
  int loop_rank = rank, loop_size = size;
  rcc_comm_rank(loop_comm, &loop_rank);
  rcc_comm_size(loop_comm, &loop_size);
  std::vector<float> a(per_rank * static_cast<size_t>(loop_size), 1.0f), b(a.size(), 0.0f);

  rcc_status_t status = RCC_SUCCESS;
  long iteration = 0;
  const long max_iterations = in_victim_half ? kill_at + 100000 : kill_at + 10;
  for (; iteration < max_iterations; ++iteration) {
    if (rank == victim && iteration == kill_at && !die_mid_call) die_now(rank, iteration);
    status = run_once(loop_op, loop_comm, loop_rank, loop_size, iteration,
                      rank == victim && iteration == kill_at && die_mid_call, mid_call_delay_us, a, b);
    if (status != RCC_SUCCESS) break;
  }
  std::string checks = "ok";
  std::string message = status == RCC_SUCCESS ? "" : rcc_last_error();
  if (split) {
    // The world holds the victim: fails on every survivor.
    float x = 1.0f;
    const rcc_status_t world = rcc_allreduce(comm, &x, &x, 1, RCC_FLOAT32, RCC_SUM);
    const std::string world_message = world == RCC_SUCCESS ? "" : rcc_last_error();
    if (world == RCC_SUCCESS)
      checks = "world-allreduce-succeeded";
    else if (!names_rank(world_message, victim))
      checks = "world-error-does-not-name-the-victim";
    if (!in_victim_half) {
      if (status != RCC_SUCCESS) {
        checks = std::string("half-without-the-victim-failed:") + rcc_status_string(status);
      } else {
        // Still works after the world failed; the error reported is the world's.
        float y = 1.0f;
        const rcc_status_t again = rcc_allreduce(half, &y, &y, 1, RCC_FLOAT32, RCC_SUM);
        if (again != RCC_SUCCESS || y != static_cast<float>(loop_size)) {
          checks = std::string("half-without-the-victim-failed-after-the-world:") + rcc_status_string(again);
        }
      }
      status = world;
      message = world_message;
    }
  }
  const long long error_ms = now_ms();
  const bool expected_status = status == RCC_ERR_PEER_FAILED || status == RCC_ERR_TIMEOUT;
  const bool named = names_rank(message, victim);

  const long long destroy_start = now_ms();
  rcc_status_t destroyed = half != nullptr ? rcc_comm_destroy(half) : RCC_SUCCESS;
  const rcc_status_t destroyed_world = rcc_comm_destroy(comm);
  if (destroyed == RCC_SUCCESS) destroyed = destroyed_world;
  const long long destroy_ms = now_ms() - destroy_start;
  say("fault-result rank=" + std::to_string(rank) + " status=" + rcc_status_string(status) +
      " named_victim=" + std::to_string(named ? 1 : 0) + " iteration=" + std::to_string(iteration) +
      " error_ms=" + std::to_string(error_ms) + " destroy_ms=" + std::to_string(destroy_ms) +
      " destroy_status=" + rcc_status_string(destroyed) + " op=" + loop_op + " half=" +
      (split ? (in_victim_half ? "victim" : "other") : "none") + " checks=" + checks + " message=" + message);
  if (checks != "ok") return kSurvivorWrongError;
  if (status == RCC_SUCCESS) return kSurvivorNoError;
  if (!expected_status || !named) return kSurvivorWrongError;
  if (destroyed != RCC_SUCCESS) return kSurvivorBadDestroy;
  return kSurvivorOk;
}
