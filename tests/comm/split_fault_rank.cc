// A rank's death fails exactly the communicators that contain it. Rank program of
// split_fault_driver_test.cc, run under rccrun with 4 ranks:
//
//   split_fault_rank MARKER
//
// The world splits into pair = {0,1} | {2,3} and trio = {0,1,2} (rank 3: RCC_UNDEFINED). Rank 3
// SIGKILLs itself once every other rank is past the set-up. Rank 2 must get RCC_ERR_PEER_FAILED
// from an allreduce on its pair, naming rank 3; it then tells ranks 0 and 1 so over the trio. Ranks
// 0 and 1 keep allreducing and exchanging messages on their pair until 2 s after that news (so the
// death has certainly been seen), which must all succeed. Then ranks 0..2 allreduce on the world
// (must fail with RCC_ERR_PEER_FAILED naming rank 3) and on the trio (must succeed), and destroy
// everything. A wildcard receive on the world pending across the death must fail too; ranks 0 and
// 1 get rank 2's news through a wildcard receive on the trio posted before it. Each survivor prints
//   comm-fault-result rank=R pair_status=S pair_iterations=N pair_last_ok_ms=T pair_error_ms=T
//     pair_named=0|1 seen=0|1 world_status=S world_named=0|1 world_ms=D world_receive_status=S
//     trio_status=S destroy_status=S destroy_ms=D
// and its error messages on "comm-fault-message" lines; the victim prints
//   comm-fault-victim rank=3 kill_ms=T
// (times in CLOCK_REALTIME milliseconds). The driver checks them.
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "rcc/rcc.h"

namespace {

long long now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

// Unbuffered, so a line is out before a SIGKILL.
void say(const std::string& line) {
  std::string text = line + "\n";
  ssize_t ignored = write(STDOUT_FILENO, text.data(), text.size());
  (void)ignored;
}

// Whether message mentions "rank R" as a whole number (rank 3 must not match rank 30).
bool names_rank(const std::string& message, int rank) {
  const std::string needle = "rank " + std::to_string(rank);
  for (size_t at = message.find(needle); at != std::string::npos; at = message.find(needle, at + 1)) {
    size_t end = at + needle.size();
    if (end == message.size() || !std::isdigit(static_cast<unsigned char>(message[end]))) return true;
  }
  return false;
}

constexpr int kVictim = 3;
constexpr int kSeenTag = 7;
constexpr int kReadyTag = 8;
constexpr int kNeverTag = 9;

}  // namespace

int main(int argc, char** argv) {
  (void)argc;
  (void)argv;  // argv[1]: a marker for the driver's leftover-process check
  rcc_comm_t world = nullptr;
  if (rcc_comm_init(&world) != RCC_SUCCESS) {
    std::fprintf(stderr, "split_fault_rank: rcc_comm_init: %s\n", rcc_last_error());
    return 2;
  }
  int rank = -1, size = 0;
  rcc_comm_rank(world, &rank);
  rcc_comm_size(world, &size);
  if (size != 4) {
    std::fprintf(stderr, "split_fault_rank: needs 4 ranks, not %d\n", size);
    return 2;
  }
  rcc_comm_t pair = nullptr, trio = nullptr;
  if (rcc_comm_split(world, rank / 2, rank, &pair) != RCC_SUCCESS ||
      rcc_comm_split(world, rank < 3 ? 0 : RCC_UNDEFINED, rank, &trio) != RCC_SUCCESS) {
    std::fprintf(stderr, "split_fault_rank %d: rcc_comm_split: %s\n", rank, rcc_last_error());
    return 2;
  }
  if ((rank < 3) != (trio != nullptr)) {
    std::fprintf(stderr, "split_fault_rank %d: trio is %p\n", rank, static_cast<void*>(trio));
    return 2;
  }
  // Everything works before the death.
  int64_t one = 1, sum = 0;
  if (rcc_allreduce(pair, &one, &sum, 1, RCC_INT64, RCC_SUM) != RCC_SUCCESS || sum != 2 ||
      rcc_allreduce(world, &one, &sum, 1, RCC_INT64, RCC_SUM) != RCC_SUCCESS || sum != 4 ||
      (trio != nullptr && (rcc_allreduce(trio, &one, &sum, 1, RCC_INT64, RCC_SUM) != RCC_SUCCESS || sum != 3)) ||
      rcc_barrier(world) != RCC_SUCCESS) {
    std::fprintf(stderr, "split_fault_rank %d: before the kill: %s (sum %lld)\n", rank, rcc_last_error(),
                 static_cast<long long>(sum));
    return 2;
  }

  // A rank that has returned from the barrier may still have messages of it to receive: the victim
  // waits until every survivor says it is past it (and a little more, for their sends to complete).
  if (rank == kVictim) {
    for (int peer = 0; peer < kVictim; ++peer) {
      int32_t ready = -1;
      if (rcc_recv(world, &ready, 1, RCC_INT32, peer, kReadyTag) != RCC_SUCCESS || ready != peer) {
        std::fprintf(stderr, "split_fault_rank %d: ready from %d: %s\n", rank, peer, rcc_last_error());
        return 2;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    say("comm-fault-victim rank=" + std::to_string(rank) + " kill_ms=" + std::to_string(now_ms()));
    kill(getpid(), SIGKILL);
    for (;;) pause();
  }

  // Wildcard receives pending across the death: on the world (which contains the victim) it must
  // fail; on the trio (which does not) it must wait on, and get rank 2's news.
  int32_t never = -1, news_in = -1;
  rcc_request_t world_receive = nullptr, seen_receive = nullptr;
  if (rcc_irecv(world, &never, 1, RCC_INT32, RCC_ANY_SOURCE, kNeverTag, &world_receive) != RCC_SUCCESS ||
      (rank < 2 && rcc_irecv(trio, &news_in, 1, RCC_INT32, RCC_ANY_SOURCE, kSeenTag, &seen_receive) != RCC_SUCCESS)) {
    std::fprintf(stderr, "split_fault_rank %d: irecv: %s\n", rank, rcc_last_error());
    return 2;
  }
  const int32_t ready = rank;
  if (rcc_send(world, &ready, 1, RCC_INT32, kVictim, kReadyTag) != RCC_SUCCESS) {
    std::fprintf(stderr, "split_fault_rank %d: ready to rank %d: %s\n", rank, kVictim, rcc_last_error());
    return 2;
  }

  rcc_status_t pair_status = RCC_SUCCESS;
  std::string pair_message;
  long iterations = 0;
  long long pair_last_ok_ms = 0, pair_error_ms = 0;
  bool seen = false;
  rcc_request_t seen_sends[2] = {};
  if (rank == 2) {
    // The pair with the dead rank: the allreduce must fail.
    pair_status = rcc_allreduce(pair, &one, &sum, 1, RCC_INT64, RCC_SUM);
    pair_error_ms = now_ms();
    if (pair_status != RCC_SUCCESS) pair_message = rcc_last_error();
    // Tell ranks 0 and 1 over the trio, which does not contain the dead rank.
    static int32_t news = 1;
    for (int peer = 0; peer < 2; ++peer) {
      if (rcc_isend(trio, &news, 1, RCC_INT32, peer, kSeenTag, &seen_sends[peer]) != RCC_SUCCESS) {
        pair_message += std::string(" | isend to the trio: ") + rcc_last_error();
      }
    }
    seen = true;
  } else {
    // The pair without it keeps working, until 2 s after rank 2 saw the death (at most 60 s).
    const long long start = now_ms();
    long long seen_ms = 0;
    const int partner = 1 - rank;
    for (;; ++iterations) {
      if (!seen) {
        int done = 0;
        rcc_msg_info_t info{};
        rcc_status_t status = rcc_test_info(seen_receive, &done, &info);
        if (status == RCC_SUCCESS && done) {
          seen_receive = nullptr;
          seen = true;
          seen_ms = now_ms();
          if (news_in != 1 || info.source != 2 || info.tag != kSeenTag) {
            status = RCC_ERR_INTERNAL;
            rcc_comm_abort(trio);
          }
        }
        if (status != RCC_SUCCESS) {
          pair_status = status;
          pair_message = std::string("the trio's wildcard receive: ") +
                         (status == RCC_ERR_INTERNAL ? "wrong news, source or tag" : rcc_last_error());
          break;
        }
      }
      const long long now = now_ms();
      const int64_t stop = (seen && now - seen_ms >= 2000) || now - start > 60000 ? 1 : 0;
      int64_t in[2] = {rank + 1 + iterations, stop}, out[2] = {-1, -1};
      pair_status = rcc_allreduce(pair, in, out, 2, RCC_INT64, RCC_SUM);
      if (pair_status != RCC_SUCCESS) {
        pair_message = rcc_last_error();
        pair_error_ms = now_ms();
        break;
      }
      if (out[0] != 3 + 2 * iterations) {
        pair_status = RCC_ERR_INTERNAL;
        pair_message = "allreduce " + std::to_string(iterations) + " gave " + std::to_string(out[0]);
        break;
      }
      int32_t mine[2] = {rank, static_cast<int32_t>(iterations)}, theirs[2] = {-1, -1};
      rcc_msg_info_t info{};
      pair_status = rcc_sendrecv(pair, mine, 2, partner, 1, theirs, 2, RCC_ANY_SOURCE, RCC_ANY_TAG, RCC_INT32, &info);
      if (pair_status != RCC_SUCCESS) {
        pair_message = std::string("sendrecv: ") + rcc_last_error();
        pair_error_ms = now_ms();
        break;
      }
      if (theirs[0] != partner || theirs[1] != iterations || info.source != partner) {
        pair_status = RCC_ERR_INTERNAL;
        pair_message = "sendrecv " + std::to_string(iterations) + " got (" + std::to_string(theirs[0]) + "," +
                       std::to_string(theirs[1]) + ") from " + std::to_string(info.source);
        break;
      }
      pair_last_ok_ms = now_ms();
      if (out[1] > 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // The world contains the dead rank: fails on every survivor.
  const long long world_start = now_ms();
  const rcc_status_t world_status = rcc_allreduce(world, &one, &sum, 1, RCC_INT64, RCC_SUM);
  const long long world_ms = now_ms() - world_start;
  const std::string world_message = world_status == RCC_SUCCESS ? "" : rcc_last_error();
  const rcc_status_t world_receive_status = rcc_wait(world_receive);
  for (rcc_request_t& request : seen_sends) {
    if (request != nullptr) rcc_wait(request);
  }
  // The trio does not: still works after the world failed.
  sum = 0;
  rcc_status_t trio_status = rcc_allreduce(trio, &one, &sum, 1, RCC_INT64, RCC_SUM);
  std::string trio_message = trio_status == RCC_SUCCESS ? "" : rcc_last_error();
  if (trio_status == RCC_SUCCESS && sum != 3) {
    trio_status = RCC_ERR_INTERNAL;
    trio_message = "sum " + std::to_string(sum);
  }

  const long long destroy_start = now_ms();
  rcc_status_t destroy_status = RCC_SUCCESS;
  std::string destroy_message;
  for (rcc_comm_t c : {pair, trio, world}) {
    rcc_status_t status = rcc_comm_destroy(c);
    if (status != RCC_SUCCESS && destroy_status == RCC_SUCCESS) {
      destroy_status = status;
      destroy_message = rcc_last_error();
    }
  }
  const long long destroy_ms = now_ms() - destroy_start;

  const std::string r = std::to_string(rank);
  say("comm-fault-message rank=" + r + " comm=pair text=" + pair_message);
  say("comm-fault-message rank=" + r + " comm=world text=" + world_message);
  say("comm-fault-message rank=" + r + " comm=trio text=" + trio_message);
  say("comm-fault-message rank=" + r + " comm=destroy text=" + destroy_message);
  say("comm-fault-result rank=" + r + " pair_status=" + rcc_status_string(pair_status) +
      " pair_iterations=" + std::to_string(iterations) + " pair_last_ok_ms=" + std::to_string(pair_last_ok_ms) +
      " pair_error_ms=" + std::to_string(pair_error_ms) +
      " pair_named=" + std::to_string(names_rank(pair_message, kVictim) ? 1 : 0) + " seen=" + (seen ? "1" : "0") +
      " world_status=" + rcc_status_string(world_status) +
      " world_named=" + std::to_string(names_rank(world_message, kVictim) ? 1 : 0) +
      " world_ms=" + std::to_string(world_ms) + " world_receive_status=" + rcc_status_string(world_receive_status) +
      " trio_status=" + rcc_status_string(trio_status) + " destroy_status=" + rcc_status_string(destroy_status) +
      " destroy_ms=" + std::to_string(destroy_ms));
  return 0;
}
