// doorbell-timer: an LD_PRELOAD module that times a process's verbs doorbells, to split where a
// sender's time per message goes on Soft-RoCE (docs/PERFORMANCE.md, "Where a sender's time goes").
//
//   LD_PRELOAD=build/bench/librcc-doorbell-timer.so ib_write_bw ...
//   LD_PRELOAD=build/bench/librcc-doorbell-timer.so build/launcher/rccrun -n 2 build/bench/rcc-bench -c bw ...
//
// rxe's provider rings the doorbell with a POST_SEND command written (write(2)) to the uverbs
// device, and the kernel runs the whole transfer inside that call (requester, loopback, the
// peer's responder, the acknowledgement). So per doorbell the time inside the call is the
// device's work, and the time between one doorbell's return and the next is the process's own
// work per message (plus its waits). Other verbs commands written to the device (such as arming a
// completion queue) are counted apart and do not split the gaps. At exit each process that rang a
// doorbell prints one line on stderr:
//   doorbell-timer: PROGRAM[PID] (rank R): N doorbells, M other verbs commands; inside us: p50
//   p99 mean; long doorbells (over p50 + 150 us): count, per second, their time beyond p50 in % of
//   the run (first doorbell to last);
//   between us: p50 p90 mean; gaps over 20 us: count, total ms; context switches of the main
//   thread: voluntary, not
// "rank R" is RCC_RANK where set. Timed with the cycle counter (the VM's clock_gettime is a
// system call), calibrated at load.
#include <dlfcn.h>
#include <rdma/ib_user_verbs.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace {

constexpr size_t kMaxRecorded = 1 << 20;  // doorbells kept for the percentiles (16 MiB)
constexpr int kMaxFd = 4096;
constexpr double kBigGapUs = 20;
// A doorbell this much longer than the median is "long": the size of the tail that separates rcc's
// bandwidth test from ib_write_bw's on rxe (docs/PERFORMANCE.md), well above the median's spread.
constexpr double kLongDoorbellUs = 150;

using WriteFn = ssize_t (*)(int, const void*, size_t);
using CloseFn = int (*)(int);

struct Doorbell {
  uint64_t inside;   // cycles in write(2)
  uint64_t between;  // cycles since the previous doorbell returned (0 for the first)
};

double cycles_per_us = 0;
std::atomic<size_t> count{0};
std::atomic<size_t> other_commands{0};
std::atomic<uint64_t> last_return{0};
std::atomic<Doorbell*> recorded{nullptr};
// Per fd: 0 unknown, 1 a verbs device, 2 anything else. Closes that bypass close() (fclose, dup2,
// close_range) leave a stale entry; verbs libraries keep their device fds open anyway.
std::atomic<uint8_t> fd_kind[kMaxFd];

WriteFn real_write() {
  static WriteFn fn = reinterpret_cast<WriteFn>(dlsym(RTLD_NEXT, "write"));
  return fn;
}

CloseFn real_close() {
  static CloseFn fn = reinterpret_cast<CloseFn>(dlsym(RTLD_NEXT, "close"));
  return fn;
}

bool is_verbs_device(int fd) {
  if (fd < 0 || fd >= kMaxFd) return false;
  uint8_t kind = fd_kind[fd].load(std::memory_order_relaxed);
  if (kind == 0) {
    char link[64], target[PATH_MAX];
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, target, sizeof target - 1);
    if (length < 0) return false;
    target[length] = '\0';
    kind = std::strncmp(target, "/dev/infiniband/uverbs", 22) == 0 ? 1 : 2;
    fd_kind[fd].store(kind, std::memory_order_relaxed);
  }
  return kind == 1;
}

bool is_post_send(const void* buffer, size_t bytes) {
  if (bytes < sizeof(ib_uverbs_cmd_hdr)) return false;
  ib_uverbs_cmd_hdr header;
  std::memcpy(&header, buffer, sizeof header);
  return (header.command & IB_USER_VERBS_CMD_COMMAND_MASK) == IB_USER_VERBS_CMD_POST_SEND &&
         (header.command & IB_USER_VERBS_CMD_FLAG_EXTENDED) == 0;
}

// Mapped and populated at the first doorbell, before its timing starts, so that no page fault
// lands in a measured gap; never unmapped (read at exit).
Doorbell* doorbell_storage() {
  Doorbell* storage = recorded.load(std::memory_order_acquire);
  if (storage != nullptr) return storage;
  void* mapped = mmap(nullptr, kMaxRecorded * sizeof(Doorbell), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  Doorbell* expected = nullptr;
  if (!recorded.compare_exchange_strong(expected, static_cast<Doorbell*>(mapped))) {
    munmap(mapped, kMaxRecorded * sizeof(Doorbell));  // another thread was first
    return expected;
  }
  return static_cast<Doorbell*>(mapped);
}

double monotonic_us() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) * 1e6 + static_cast<double>(now.tv_nsec) / 1e3;
}

__attribute__((constructor)) void calibrate() {
  const double start_us = monotonic_us();
  const uint64_t start = __rdtsc();
  const timespec pause{0, 20 * 1000 * 1000};
  nanosleep(&pause, nullptr);
  cycles_per_us = static_cast<double>(__rdtsc() - start) / (monotonic_us() - start_us);
}

// Voluntary and involuntary context switches of the main thread so far (from /proc).
void context_switches(long* voluntary, long* involuntary) {
  *voluntary = *involuntary = -1;
  FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return;
  char line[256];
  while (std::fgets(line, sizeof line, status) != nullptr) {
    std::sscanf(line, "voluntary_ctxt_switches: %ld", voluntary);
    std::sscanf(line, "nonvoluntary_ctxt_switches: %ld", involuntary);
  }
  std::fclose(status);
}

double percentile(std::vector<uint64_t>& values, double fraction) {
  const size_t index = std::min(values.size() - 1, static_cast<size_t>(fraction * static_cast<double>(values.size())));
  std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(index), values.end());
  return static_cast<double>(values[index]) / cycles_per_us;
}

__attribute__((destructor)) void report() {
  const size_t total = count.load();
  const size_t kept = std::min(total, kMaxRecorded);
  const Doorbell* doorbells = recorded.load(std::memory_order_acquire);
  if (kept == 0 || doorbells == nullptr || cycles_per_us <= 0) return;
  std::vector<uint64_t> inside(kept), between;
  double inside_sum = 0, between_sum = 0, big_sum = 0;
  size_t big = 0;
  for (size_t i = 0; i < kept; ++i) {
    const Doorbell& d = doorbells[i];
    inside[i] = d.inside;
    inside_sum += static_cast<double>(d.inside);
    if (i == 0) continue;  // no previous doorbell
    between.push_back(d.between);
    between_sum += static_cast<double>(d.between);
    if (static_cast<double>(d.between) / cycles_per_us > kBigGapUs) ++big, big_sum += static_cast<double>(d.between);
  }
  char name[256] = "?";
  ssize_t length = readlink("/proc/self/exe", name, sizeof name - 1);
  if (length > 0) name[length] = '\0';
  const char* base = std::strrchr(name, '/');
  const char* rank = std::getenv("RCC_RANK");
  const double inside_p50 = percentile(inside, 0.5), inside_p99 = percentile(inside, 0.99);
  const double p50_cycles = inside_p50 * cycles_per_us, long_cycles = (inside_p50 + kLongDoorbellUs) * cycles_per_us;
  size_t long_doorbells = 0;
  double beyond_p50 = 0;  // cycles the long doorbells took beyond the median
  for (uint64_t cycles : inside) {
    const double c = static_cast<double>(cycles);
    if (c > long_cycles) ++long_doorbells, beyond_p50 += c - p50_cycles;
  }
  const double run_cycles = std::max(inside_sum + between_sum, 1.0);  // the first doorbell to the last
  char line[768];
  int n = std::snprintf(line, sizeof line, "doorbell-timer: %s[%d]%s%s%s: %zu doorbells%s, %zu other verbs commands; "
                        "inside us: p50 %.2f p99 %.2f mean %.2f; long doorbells (over p50 + %.0f us): %zu, %.0f a "
                        "second, %.1f %% of the run beyond p50",
                        base != nullptr ? base + 1 : name, static_cast<int>(getpid()), rank != nullptr ? " (rank " : "",
                        rank != nullptr ? rank : "", rank != nullptr ? ")" : "", total,
                        total > kept ? " (percentiles over the first 2^20)" : "", other_commands.load(), inside_p50,
                        inside_p99, inside_sum / static_cast<double>(kept) / cycles_per_us, kLongDoorbellUs,
                        long_doorbells, static_cast<double>(long_doorbells) / (run_cycles / cycles_per_us / 1e6),
                        100 * beyond_p50 / run_cycles);
  if (!between.empty() && n > 0 && static_cast<size_t>(n) < sizeof line) {
    const double between_mean = between_sum / static_cast<double>(between.size()) / cycles_per_us;
    const double p50 = percentile(between, 0.5), p90 = percentile(between, 0.9);
    n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n),
                       "; between us: p50 %.2f p90 %.2f mean %.2f; gaps over %.0f us: %zu, %.1f ms total", p50, p90,
                       between_mean, kBigGapUs, big, big_sum / cycles_per_us / 1e3);
  }
  long voluntary = 0, involuntary = 0;
  context_switches(&voluntary, &involuntary);
  if (n > 0 && static_cast<size_t>(n) < sizeof line) {
    n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "; context switches: %ld voluntary, %ld not",
                       voluntary, involuntary);
  }
  if (n > 0) std::fprintf(stderr, "%s\n", line);
}

}  // namespace

extern "C" ssize_t write(int fd, const void* buffer, size_t bytes) {
  if (real_write() == nullptr) {  // no libc write to forward to (cannot happen with glibc)
    errno = ENOSYS;
    return -1;
  }
  const int saved_errno = errno;
  if (!is_verbs_device(fd)) {
    errno = saved_errno;
    return real_write()(fd, buffer, bytes);
  }
  if (!is_post_send(buffer, bytes)) {
    other_commands.fetch_add(1, std::memory_order_relaxed);
    errno = saved_errno;
    return real_write()(fd, buffer, bytes);
  }
  Doorbell* doorbells = doorbell_storage();
  errno = saved_errno;
  const uint64_t entered = __rdtsc();
  const ssize_t result = real_write()(fd, buffer, bytes);
  const uint64_t returned = __rdtsc();
  const int write_errno = errno;
  const size_t index = count.fetch_add(1, std::memory_order_relaxed);
  // With several ringing threads the previous return may be another thread's, even a later one.
  const uint64_t previous = last_return.exchange(returned, std::memory_order_relaxed);
  if (doorbells != nullptr && index < kMaxRecorded) {
    doorbells[index] = Doorbell{returned - entered, previous != 0 && entered > previous ? entered - previous : 0};
  }
  errno = write_errno;
  return result;
}

// A closed fd number may be reused for another file.
extern "C" int close(int fd) {
  if (real_close() == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const int result = real_close()(fd);
  const int close_errno = errno;
  if (fd >= 0 && fd < kMaxFd) fd_kind[fd].store(0, std::memory_order_relaxed);
  errno = close_errno;
  return result;
}
