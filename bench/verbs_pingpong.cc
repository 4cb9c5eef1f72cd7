// verbs-pingpong: a raw-verbs RDMA-write ping-pong (as perftest's ib_write_lat: post a write, poll
// the last byte of the own buffer) whose settings can be switched one at a time to rcc's, to
// measure what each costs the device (docs/PERFORMANCE.md, "2026-12-01: a slower machine").
//
//   verbs-pingpong DEVICE GID_INDEX BYTES ROUND_TRIPS [setting=value ...]
//
// Two processes (forked) on one RoCE device, connected through a socket pair. Settings and their
// defaults (the plain loop); rcc's values in brackets:
//   slots=1 [32]        buffers written in turn
//   stride=0 [8320]     bytes between buffers (0: the message size rounded up to 64)
//   at_end=0 [1]        place each message at its buffer's end (rcc's anchored messages)
//   send_depth=16 [256] signal_every=8 [128]  send queue depth and how often a write is signalled
//   receives=0 [72]     receive requests posted up front
//   inline=0 [256]      the queue pair's inline limit (messages up to it go inline)
//   channel=0 [1]       create the completion queue with a completion channel
//   copy=0 [1]          copy each payload into the registered buffer and out again
//   poll_cq=0 [1]       poll the completion queue while waiting (else only for signalled writes)
// Prints the one-way latency (half the round trip), median and 10th percentile, in microseconds.
//
// window=W (default 0: the ping-pong) streams instead, as ib_write_bw -t W: rank 0 writes
// ROUND_TRIPS messages with at most W in flight and prints MB/s (10^6 bytes) and messages/s.
// Completions retire the window, so signal_every <= W (rcc's 128 cannot be had with W = 64),
// poll_cq does not apply, and copy copies into the registered buffer only. Rank 1 is idle, as
// perftest's receiver, or with recv_polls=1 [1] spins reading its slots' last bytes: a receiver
// that must find its messages keeps its core busy, as rcc's does (rcc reads only the next slot).
#include <infiniband/verbs.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Per-round-trip timestamps from the cycle counter where there is one: in a VM whose clock source
// is the HPET, reading the clock is a system call of several microseconds (measured in the rxe VM).
uint64_t ticks() {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return static_cast<uint64_t>(Clock::now().time_since_epoch().count());
#endif
}

struct Endpoint {
  uint32_t qp_number;
  uint32_t psn;
  uint32_t rkey;
  uint64_t address;
  uint8_t gid[16];
};

// Every setting: its default (the plain loop) and the values it accepts.
struct SettingSpec {
  const char* name;
  long initial, low, high;
};
constexpr SettingSpec kSettingSpecs[] = {
    {"slots", 1, 1, 4096},          {"stride", 0, 0, 1L << 30},    {"at_end", 0, 0, 1},
    {"send_depth", 16, 1, 32768},   {"signal_every", 8, 1, 32768}, {"receives", 0, 0, 32768},
    {"inline", 0, 0, 4096},         {"channel", 0, 0, 1},          {"copy", 0, 0, 1},
    {"poll_cq", 0, 0, 1},           {"window", 0, 0, 32768},       {"recv_polls", 0, 0, 1}};

struct Settings {
  Settings() {
    for (const SettingSpec& spec : kSettingSpecs) values[spec.name] = spec.initial;
  }
  std::string device;
  int gid_index = 0;
  size_t bytes = 0;
  int round_trips = 0;
  std::map<std::string, long> values;
  long operator[](const char* name) const { return values.at(name); }
};

[[noreturn]] void die(int rank, const char* what) {
  std::fprintf(stderr, "verbs-pingpong: rank %d: %s: %s\n", rank, what, std::strerror(errno));
  std::exit(1);
}

void need(bool ok, int rank, const char* what) {
  if (!ok) die(rank, what);
}

// Bounds a spin without reading the clock on the timed path: the first look comes after 2^20
// spins, and the 30 s run from there.
class SpinLimit {
 public:
  SpinLimit(int rank, const char* what) : rank_(rank), what_(what) {}
  void spin() {
    if ((++spins_ & 0xfffff) != 0) return;
    if (!started_) {
      started_ = true;
      give_up_ = Clock::now() + std::chrono::seconds(30);
    } else if (Clock::now() > give_up_) {
      errno = ETIMEDOUT;
      die(rank_, what_);
    }
  }

 private:
  int rank_;
  const char* what_;
  uint64_t spins_ = 0;
  bool started_ = false;
  Clock::time_point give_up_;
};

char* page_aligned(size_t bytes, char fill) {
  size_t rounded = (bytes + 4095) / 4096 * 4096;
  auto* memory = static_cast<char*>(std::aligned_alloc(4096, rounded));
  if (memory != nullptr) std::memset(memory, fill, rounded);
  return memory;
}

constexpr long kWarmup = 100;  // untimed messages first (the ping-pong's round trips, the stream's writes)

// Rank 0 writes and waits for the answer, rank 1 answers: the median and 10th percentile of half
// the round trip.
template <typename Send, typename Wait>
void ping_pong(int rank, const Settings& s, Send& send, Wait& wait) {
  std::vector<uint64_t> round_trip_ticks(static_cast<size_t>(s.round_trips));
  const auto clock_start = Clock::now();
  const uint64_t ticks_start = ticks();
  for (long i = 0; i < kWarmup + s.round_trips; ++i) {
    const uint64_t start = ticks();
    if (rank == 0) {
      send(i, false);
      wait(i);
    } else {
      wait(i);
      send(i, false);
    }
    if (i >= kWarmup) round_trip_ticks[static_cast<size_t>(i - kWarmup)] = ticks() - start;
  }
  const double us_per_tick =
      std::chrono::duration<double, std::micro>(Clock::now() - clock_start).count() / static_cast<double>(ticks() - ticks_start);
  if (rank == 0) {
    std::sort(round_trip_ticks.begin(), round_trip_ticks.end());
    auto one_way_us = [&](size_t k) { return static_cast<double>(round_trip_ticks[k]) * us_per_tick / 2; };
    std::printf("bytes %zu round_trips %d one-way us: p50 %.2f p10 %.2f\n", s.bytes, s.round_trips,
                one_way_us(round_trip_ticks.size() / 2), one_way_us(round_trip_ticks.size() / 10));
  }
}

// Rank 0 keeps at most `window` writes in flight (completions retire them, as in ib_write_bw);
// rank 1 idles on the socket, or polls its slots' last bytes until rank 0 says it is done.
template <typename Send, typename Drain, typename InFlight, typename Offset>
void stream(int rank, int socket, const Settings& s, Send& send, Drain& drain, InFlight& in_flight,
            const char* landing, Offset& offset) {
  const uint64_t window = static_cast<uint64_t>(s["window"]);
  if (rank == 0) {
    Clock::time_point start;
    for (long i = 0; i < kWarmup + s.round_trips; ++i) {
      if (i == kWarmup) {
        while (in_flight() > 0) drain(true);
        start = Clock::now();
      }
      while (in_flight() >= window) drain(true);
      // The last write before the timed part and the very last are signalled: the full drains
      // before the clock starts and stops wait for their completions.
      send(i, i == kWarmup - 1 || i == kWarmup + s.round_trips - 1);
    }
    while (in_flight() > 0) drain(true);
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("bytes %zu messages %d window %ld: MB/s %.3f messages/s %.0f\n", s.bytes, s.round_trips,
                s["window"], static_cast<double>(s.bytes) * s.round_trips / seconds / 1e6, s.round_trips / seconds);
    return;
  }
  if (s["recv_polls"] == 0) return;  // idle until the end handshake, as perftest's receiver
  const size_t slots = static_cast<size_t>(s["slots"]);
  const volatile char* polled = landing;  // every pass reads memory the sender's writes change
  for (uint64_t pass = 1;; ++pass) {
    for (size_t k = 0; k < slots; ++k) (void)polled[offset(static_cast<long>(k)) + s.bytes - 1];
    if ((pass & 1023) == 0) {
      // Rank 0's end byte, or its exit (end of file, an error): the end handshake reports which.
      char peek;
      const ssize_t got = recv(socket, &peek, 1, MSG_PEEK | MSG_DONTWAIT);
      if (got >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return;
    }
  }
}

int run_rank(int rank, int socket, const Settings& s) {
  int count = 0;
  ibv_device** devices = ibv_get_device_list(&count);
  need(devices != nullptr, rank, "ibv_get_device_list");
  ibv_device* device = nullptr;
  for (int i = 0; i < count; ++i) {
    if (s.device == ibv_get_device_name(devices[i])) device = devices[i];
  }
  errno = ENODEV;
  need(device != nullptr, rank, ("no RDMA device " + s.device).c_str());
  ibv_context* context = ibv_open_device(device);
  need(context != nullptr, rank, "ibv_open_device");
  ibv_pd* pd = ibv_alloc_pd(context);
  need(pd != nullptr, rank, "ibv_alloc_pd");
  ibv_comp_channel* channel = s["channel"] != 0 ? ibv_create_comp_channel(context) : nullptr;
  need(s["channel"] == 0 || channel != nullptr, rank, "ibv_create_comp_channel");
  const int send_depth = static_cast<int>(s["send_depth"]);
  const int receives = static_cast<int>(s["receives"]);
  ibv_cq* cq = ibv_create_cq(context, send_depth + receives + 16, nullptr, channel, 0);
  need(cq != nullptr, rank, "ibv_create_cq");

  ibv_qp_init_attr init_attr = {};
  init_attr.send_cq = cq;
  init_attr.recv_cq = cq;
  init_attr.qp_type = IBV_QPT_RC;
  init_attr.cap.max_send_wr = static_cast<uint32_t>(send_depth);
  init_attr.cap.max_recv_wr = static_cast<uint32_t>(std::max(receives, 1));
  init_attr.cap.max_send_sge = 1;
  init_attr.cap.max_recv_sge = 1;
  init_attr.cap.max_inline_data = static_cast<uint32_t>(s["inline"]);
  ibv_qp* qp = ibv_create_qp(pd, &init_attr);
  need(qp != nullptr, rank, "ibv_create_qp");

  const size_t slots = static_cast<size_t>(s["slots"]);
  const size_t stride = s["stride"] > 0 ? static_cast<size_t>(s["stride"]) : (s.bytes + 63) / 64 * 64;
  const size_t area = slots * stride;
  char* landing = page_aligned(area, 0);
  char* staging = page_aligned(area, 0);
  char* user = page_aligned(2 * s.bytes + 64, 7);
  std::vector<char> notices(64 * static_cast<size_t>(std::max(receives, 1)));
  need(landing != nullptr && staging != nullptr && user != nullptr, rank, "aligned_alloc");
  const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  ibv_mr* landing_mr = ibv_reg_mr(pd, landing, area, access);
  ibv_mr* staging_mr = ibv_reg_mr(pd, staging, area, access);
  ibv_mr* notice_mr = ibv_reg_mr(pd, notices.data(), notices.size(), IBV_ACCESS_LOCAL_WRITE);
  need(landing_mr != nullptr && staging_mr != nullptr && notice_mr != nullptr, rank, "ibv_reg_mr");

  ibv_qp_attr attr = {};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  attr.qp_access_flags = access;
  errno = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  need(errno == 0, rank, "queue pair to INIT");
  for (int i = 0; i < receives; ++i) {
    ibv_sge sge = {reinterpret_cast<uintptr_t>(notices.data()) + 64 * static_cast<uintptr_t>(i), 64, notice_mr->lkey};
    ibv_recv_wr wr = {};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    errno = ibv_post_recv(qp, &wr, &bad);
    need(errno == 0, rank, "ibv_post_recv");
  }

  Endpoint local = {qp->qp_num, static_cast<uint32_t>(1000 * rank + 7), landing_mr->rkey,
                    reinterpret_cast<uint64_t>(landing), {}};
  ibv_gid gid;
  if (ibv_query_gid(context, 1, s.gid_index, &gid) != 0) {
    errno = EINVAL;
    die(rank, "ibv_query_gid (check the GID index)");
  }
  std::memcpy(local.gid, gid.raw, sizeof local.gid);
  Endpoint remote;
  errno = ECONNRESET;  // a short read means the other rank exited
  need(write(socket, &local, sizeof local) == static_cast<ssize_t>(sizeof local), rank, "sending the address");
  need(read(socket, &remote, sizeof remote) == static_cast<ssize_t>(sizeof remote), rank, "reading the address");

  attr = {};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_1024;
  attr.dest_qp_num = remote.qp_number;
  attr.rq_psn = remote.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.is_global = 1;
  std::memcpy(attr.ah_attr.grh.dgid.raw, remote.gid, 16);
  attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(s.gid_index);
  attr.ah_attr.grh.hop_limit = 64;
  attr.ah_attr.port_num = 1;
  errno = ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                            IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  need(errno == 0, rank, "queue pair to RTR (check the GID index)");
  attr = {};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 6;
  attr.sq_psn = local.psn;
  attr.max_rd_atomic = 1;
  errno = ibv_modify_qp(qp, &attr,
                        IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                            IBV_QP_MAX_QP_RD_ATOMIC);
  need(errno == 0, rank, "queue pair to RTS");
  char ready = 'r';
  errno = ECONNRESET;
  need(write(socket, &ready, 1) == 1 && read(socket, &ready, 1) == 1, rank, "the start handshake");

  const bool copy = s["copy"] != 0, poll_cq = s["poll_cq"] != 0, at_end = s["at_end"] != 0;
  const long signal_every = s["signal_every"];
  const bool inline_sends = s.bytes <= static_cast<size_t>(s["inline"]);
  const bool streaming = s["window"] > 0;
  long unsignalled = 0;
  uint64_t posted = 0, completed = 0;  // work requests; a completion retires all posted before it
  auto offset = [&](long i) { return static_cast<size_t>(i) % slots * stride + (at_end ? stride - s.bytes : 0); };
  // The last byte tells a message from the previous one in the same buffer: it never repeats there.
  auto marker = [&](long i) { return static_cast<char>((static_cast<size_t>(i) / slots) % 250 + 1); };
  // The first byte differs from message to message, so a write to the wrong place is caught.
  auto first_byte = [&](long i) { return static_cast<char>(i * 7 + 3); };
  auto drain = [&](bool until_one) {
    ibv_wc wcs[16];
    int n = 0;
    SpinLimit limit(rank, "waiting 30 s for a completion");
    do {
      n = ibv_poll_cq(cq, 16, wcs);
      need(n >= 0, rank, "ibv_poll_cq");
      for (int k = 0; k < n; ++k) {
        errno = EIO;
        need(wcs[k].status == IBV_WC_SUCCESS, rank, ibv_wc_status_str(wcs[k].status));
        completed = std::max<uint64_t>(completed, wcs[k].wr_id + 1);
      }
      if (n == 0) limit.spin();
    } while (until_one && n == 0);
  };
  auto send = [&](long i, bool force_signal) {
    char* source = staging + offset(i);
    if (copy) std::memcpy(source, user, s.bytes - 1);
    source[0] = first_byte(i);
    source[s.bytes - 1] = marker(i);
    // A full send queue (possible with poll_cq=1, which reads completions only while waiting)
    // frees up once its signalled request completes: signal_every <= send_depth.
    while (posted - completed >= static_cast<uint64_t>(send_depth)) drain(true);
    const bool signalled = ++unsignalled >= signal_every || force_signal;
    if (signalled) unsignalled = 0;
    ibv_sge sge = {reinterpret_cast<uintptr_t>(source), static_cast<uint32_t>(s.bytes), staging_mr->lkey};
    ibv_send_wr wr = {};
    wr.wr_id = posted;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = (signalled ? IBV_SEND_SIGNALED : 0) | (inline_sends ? IBV_SEND_INLINE : 0);
    wr.wr.rdma.remote_addr = remote.address + offset(i);
    wr.wr.rdma.rkey = remote.rkey;
    ibv_send_wr* bad = nullptr;
    errno = ibv_post_send(qp, &wr, &bad);
    need(errno == 0, rank, "ibv_post_send");
    ++posted;
    if (signalled && !poll_cq && !streaming) drain(true);  // streaming drains in its window loop
  };
  auto wait = [&](long i) {
    const volatile char* last = landing + offset(i) + s.bytes - 1;
    const char expected = marker(i);
    SpinLimit limit(rank, "waiting 30 s for the peer's write");
    while (*last != expected) {
      if (poll_cq) drain(false);
      limit.spin();
    }
    errno = EIO;
    need(s.bytes == 1 || landing[offset(i)] == first_byte(i), rank, "a message landed with the wrong first byte");
    if (copy) std::memcpy(user + s.bytes, landing + offset(i), s.bytes);
  };

  if (streaming) {
    auto in_flight = [&] { return posted - completed; };
    stream(rank, socket, s, send, drain, in_flight, landing, offset);
  } else {
    ping_pong(rank, s, send, wait);
  }
  // The sender's last write must leave before its queue pair goes: rank 0 says when it has landed.
  char done = 'd';
  errno = ECONNRESET;
  need(rank == 0 ? write(socket, &done, 1) == 1 : read(socket, &done, 1) == 1, rank, "the end handshake");
  ibv_destroy_qp(qp);
  ibv_dereg_mr(notice_mr);
  ibv_dereg_mr(staging_mr);
  ibv_dereg_mr(landing_mr);
  ibv_destroy_cq(cq);
  if (channel != nullptr) ibv_destroy_comp_channel(channel);
  ibv_dealloc_pd(pd);
  ibv_close_device(context);
  ibv_free_device_list(devices);
  std::free(user);
  std::free(staging);
  std::free(landing);
  return 0;
}

// A whole decimal number in [low, high], else false.
bool parse_integer(const char* text, long low, long high, long* out) {
  if (text == nullptr || *text == '\0') return false;
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < low || value > high) return false;
  *out = value;
  return true;
}

bool parse(int argc, char** argv, Settings* s) {
  if (argc < 5) return false;
  s->device = argv[1];
  long gid_index = 0, bytes = 0, round_trips = 0;
  if (!parse_integer(argv[2], 0, 255, &gid_index) || !parse_integer(argv[3], 1, 1L << 30, &bytes) ||
      !parse_integer(argv[4], 10, 10000000, &round_trips)) {
    std::fprintf(stderr, "verbs-pingpong: GID_INDEX must be 0-255, BYTES 1-2^30, ROUND_TRIPS 10-10000000\n");
    return false;
  }
  s->gid_index = static_cast<int>(gid_index);
  s->bytes = static_cast<size_t>(bytes);
  s->round_trips = static_cast<int>(round_trips);
  for (int i = 5; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t equals = arg.find('=');
    const SettingSpec* spec = nullptr;
    for (const SettingSpec& candidate : kSettingSpecs) {
      if (equals != std::string::npos && arg.compare(0, equals, candidate.name) == 0) spec = &candidate;
    }
    if (spec == nullptr) {
      std::fprintf(stderr, "verbs-pingpong: unknown setting '%s'\n", argv[i]);
      return false;
    }
    if (!parse_integer(arg.c_str() + equals + 1, spec->low, spec->high, &s->values[spec->name])) {
      std::fprintf(stderr, "verbs-pingpong: %s must be a whole number from %ld to %ld\n", spec->name, spec->low,
                   spec->high);
      return false;
    }
  }
  const long stride = (*s)["stride"];
  if (stride != 0 && stride < bytes) {
    std::fprintf(stderr, "verbs-pingpong: stride=%ld is shorter than BYTES (%ld)\n", stride, bytes);
    return false;
  }
  if ((*s)["signal_every"] > (*s)["send_depth"]) {
    std::fprintf(stderr, "verbs-pingpong: signal_every must be at most send_depth (a full queue needs a signalled request)\n");
    return false;
  }
  const long window = (*s)["window"];
  if (window > 0 && (window > (*s)["send_depth"] || (*s)["signal_every"] > window)) {
    std::fprintf(stderr, "verbs-pingpong: window must be at most send_depth and at least signal_every (a full window needs a signalled request)\n");
    return false;
  }
  if (window == 0 && (*s)["recv_polls"] != 0) {
    std::fprintf(stderr, "verbs-pingpong: recv_polls needs window (the ping-pong's receiver always polls)\n");
    return false;
  }
  if (window > 0 && (*s)["poll_cq"] != 0) {
    std::fprintf(stderr, "verbs-pingpong: poll_cq does not apply to window (the stream's sender always polls)\n");
    return false;
  }
  const long slot_bytes = stride != 0 ? stride : (bytes + 63) / 64 * 64;
  if ((*s)["slots"] * slot_bytes > (1L << 34)) {
    std::fprintf(stderr, "verbs-pingpong: slots x stride is more than 16 GiB\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  if (!parse(argc, argv, &settings)) {
    std::fprintf(stderr, "usage: verbs-pingpong DEVICE GID_INDEX BYTES ROUND_TRIPS [setting=value ...] "
                         "(settings: see the head of bench/verbs_pingpong.cc)\n");
    return 2;
  }
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) die(-1, "socketpair");
  for (int rank = 0; rank < 2; ++rank) {
    pid_t child = fork();
    if (child < 0) die(rank, "fork");
    if (child == 0) {
      close(pair[1 - rank]);
      std::exit(run_rank(rank, pair[rank], settings));
    }
  }
  close(pair[0]);
  close(pair[1]);
  int failed = 0, status = 0;
  while (wait(&status) > 0) failed |= !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return failed;
}
