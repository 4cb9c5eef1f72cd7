#include "core/config.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rcc::config {
namespace {

const Setting kSettings[] = {
    // General
    {"RCC_DEBUG", "WARN", "Log level on stderr: WARN, INFO (choices such as transport, device, algorithm) or TRACE."},
    {"RCC_TRANSPORT", "auto", "auto (verbs when an active RDMA port exists, else UCX), verbs or ucx."},
    {"RCC_TIMEOUT", "60", "Seconds without progress on a pending operation before it fails with RCC_ERR_TIMEOUT; a peer's death is reported sooner."},
    {"RCC_CHECK", "0", "1: collectives verify that all ranks passed the same collective, count, datatype, op and root."},
    {"RCC_ALGO", "", "Force algorithms, e.g. allreduce:ring,broadcast:tree. Empty: the cost model chooses."},
    {"RCC_EAGER_LIMIT", "8192", "Largest message in bytes sent eagerly through pre-registered slots; larger ones are zero-copy writes into the receiver's buffer."},
    {"RCC_EAGER_SLOTS", "32", "Eager slots each rank offers each peer (credits)."},
    {"RCC_REGISTRATION_CACHE", "auto", "Registrations of application buffers (large messages) kept for reuse, dropped when UCX's memory hooks report their pages unmapped: auto (on, except in sanitizer builds) or 0 (a registration per message: for allocators that unmap memory without going through libc, which the hooks cannot see)."},
    {"RCC_SPIN_COUNT", "auto", "Progress polls without an event before a waiting rank blocks on the transport's wakeup fd. auto: 65536 when this host has a core per rank (spinning costs less than a wake-up), 2000 when ranks outnumber cores (they also yield while polling)."},
    {"RCC_REDUCE_ISA", "auto", "Reduction kernels: auto (the best this CPU runs), avx512, avx2 or sse2 (alias scalar: the baseline x86-64 path). A level the CPU lacks falls back to the best below it."},
    // Shared memory
    {"RCC_SHM", "auto", "Collectives through a shared-memory segment when every rank is on one host: auto (when it can be set up), 0 (never: through the transport), 1 (required: init fails without it)."},
    {"RCC_SHM_SLOT_BYTES", "524288", "Bytes of each of a rank's two shared-memory slots (the chunk a collective step moves); at least 64 KiB and 64 bytes per rank; all slots together at most 64 MiB unless that floor needs more."},
    {"RCC_SHM_STREAM_BYTES", "65536", "Broadcasts of at least this many bytes go into the shared slots with streaming (non-temporal) stores, which bypass the root's cache: the other ranks then read memory instead of the root's cache; only the root's value counts; 0: never."},
    {"RCC_SHM_CMA_BYTES", "65536", "Broadcasts from this many bytes up to 2 MiB, when every rank has a core of its own, are read by every rank straight out of the root's buffer with process_vm_readv (one copy instead of two; the root returns once all have read); needs ptrace permission between the ranks (checked at set-up, else off); the largest value among the ranks counts, and 0 on any rank turns it off."},
    // Bootstrap
    {"RCC_BOOTSTRAP_TIMEOUT", "60", "Seconds to wait for all ranks at the rendezvous before failing with RCC_ERR_TIMEOUT."},
    {"RCC_RANK", "", "Rank of this process (set by rccrun)."},
    {"RCC_SIZE", "", "Number of ranks (set by rccrun)."},
    {"RCC_LOCAL_RANK", "", "Rank among the processes on this host (set by rccrun)."},
    {"RCC_LOCAL_SIZE", "", "Processes on this host (set by rccrun)."},
    {"RCC_STORE_ADDR", "", "host:port of the rendezvous store (set by rccrun; for Slurm and MPI launches rank 0 hosts it)."},
    {"RCC_JOB_SECRET", "", "Per-job secret every rendezvous connection presents (set by rccrun)."},
    {"RCC_JOB_ID", "", "Job identifier used to find the store address published by rank 0 under Slurm/MPI (default: SLURM_JOB_ID)."},
    {"RCC_STORE_DIR", "", "Shared directory where rank 0 publishes the store address under Slurm/MPI launches (default: $HOME/.rcc)."},
    {"RCC_SOCKET_IFNAME", "", "Network interface whose address rank 0 publishes for the rendezvous (default: the first non-loopback up interface)."},
    // RDMA verbs
    {"RCC_IB_DEVICE", "", "Verbs device list name[:port],... (leading ^ excludes). Empty: the active port nearest this process's cores."},
    {"RCC_IB_GID_INDEX", "", "RoCE GID index. Empty: the RoCE v2 GID with an IPv4-mapped address, skipping link-local and empty entries."},
    {"RCC_IB_TIMEOUT", "14", "Verbs local ACK timeout exponent: 4.096 us * 2^value."},
    {"RCC_IB_RETRY_CNT", "7", "Verbs transport retry count (0-7)."},
    {"RCC_IB_RNR_RETRY", "6", "Verbs RNR retry count, 0-6 (7 would mean forever; rcc posts receives before granting credits, so RNR should not happen)."},
    {"RCC_IB_POLLED_EAGER", "1", "1: eager messages are plain RDMA writes that the receiver finds by polling (a sequence word at both ends of the message, or the slot's last byte for a message that repeats the previous one's tag and length; a receiver about to sleep asks for a notice first); this needs a device that places a write's bytes in address order, as rxe, siw and current HCAs do. 0: every eager message is a notified write."},
    {"RCC_IB_USE_IMM", "auto", "auto: write-with-immediate where the device supports it (IB, RoCE), write then send on iWARP; 0 forces write then send."},
};

const Setting* find(const char* name) {
  for (const Setting& s : kSettings) {
    if (std::strcmp(s.name, name) == 0) return &s;
  }
  std::fprintf(stderr, "rcc: internal error: setting %s is not registered\n", name);
  std::abort();
}

}  // namespace

const std::vector<Setting>& all_settings() {
  static const std::vector<Setting> settings(std::begin(kSettings), std::end(kSettings));
  return settings;
}

const Setting& setting(const char* name) { return *find(name); }

const char* value_of(const Setting& setting) {
  const char* value = std::getenv(setting.name);
  return value != nullptr && value[0] != '\0' ? value : setting.default_value;
}

bool is_set(const char* name) {
  find(name);
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0';
}

std::string get_string(const char* name) {
  const Setting* setting = find(name);
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : setting->default_value;
}

Status get_int(const char* name, int64_t* value) {
  std::string text = get_string(name);
  if (text.empty()) return fail(RCC_ERR_INVALID_ARGUMENT, "%s is not set", name);
  errno = 0;
  char* end = nullptr;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') {
    return fail(RCC_ERR_INVALID_ARGUMENT, "%s='%s' is not an integer", name, text.c_str());
  }
  *value = parsed;
  return RCC_SUCCESS;
}

int64_t get_int_or_default(const char* name) {
  int64_t value = 0;
  if (get_int(name, &value) == RCC_SUCCESS) return value;
  return std::strtoll(find(name)->default_value, nullptr, 10);
}

}  // namespace rcc::config
