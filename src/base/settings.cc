#include "base/settings.h"

#include "base/fast_tls.h"

#include <strings.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace rcc::settings {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

Setting integer_row(const char* name, const char* default_value, int64_t min, int64_t max, const char* doc,
                    int64_t multiple = 1, const char* noun = "an integer") {
  Setting s{name, Kind::kInteger, default_value, doc};
  s.min = min;
  s.max = max;
  s.multiple = multiple;
  s.noun = noun;
  return s;
}
Setting auto_row(const char* name, int64_t min, int64_t max, const char* noun, const char* doc) {
  Setting s = integer_row(name, "auto", min, max, doc, 1, noun);
  s.kind = Kind::kAutoOrInteger;
  return s;
}
Setting choice_row(const char* name, const char* default_value, const char* choices, const char* doc) {
  Setting s{name, Kind::kChoice, default_value, doc};
  s.choices = choices;
  return s;
}
Setting list_row(const char* name, const char* choices, const char* doc) {
  Setting s{name, Kind::kAutoOrList, "auto", doc};
  s.choices = choices;
  return s;
}
Setting text_row(const char* name, const char* default_value, const char* doc) {
  return Setting{name, Kind::kText, default_value, doc};
}

const std::vector<Setting>& table() {
  static const std::vector<Setting> rows = {
      // General
      choice_row("RCC_DEBUG", "WARN", "WARN,INFO,TRACE",
                 "Log level on stderr: WARN, INFO (choices such as transport, device, algorithm, CPU mask) or TRACE."),
      choice_row("RCC_TRANSPORT", "auto", "auto,verbs,ucx",
                 "auto (verbs when an active RDMA port exists, else UCX), verbs or ucx."),
      integer_row("RCC_TIMEOUT", "60", 1, 86400 * 7,
                  "Seconds without progress on a pending operation before it fails with RCC_ERR_TIMEOUT; a peer's "
                  "death is reported sooner."),
      integer_row("RCC_PEER_TIMEOUT", "5", 0, 86400,
                  "Seconds without a heartbeat from a peer before every rank reports it unreachable (its host's "
                  "link is cut, or the host or the process is frozen: nothing closes its connections); 0: only a "
                  "closed connection or RCC_TIMEOUT says so."),
      integer_row("RCC_CALL_RECORD", "4096", 0, 1 << 20,
                  "Calls kept in each process's flight recorder (the most recent collectives and point-to-point "
                  "calls, shown when a call times out and by rcc-dump); 0 turns it off. About 80 bytes each."),
      text_row("RCC_DEBUG_DUMP_DIR", "",
               "Directory where a rank that times out (or is asked by rccrun) writes its flight recorder, as "
               "rcc-calls.RANK.txt; read them with rcc-dump DIR. Empty: the record goes to stderr."),
      choice_row("RCC_DEBUG_DUMP_SIGNAL", "0", "0,1",
                 "1: SIGUSR1 makes each rank write its flight recorder (to RCC_DEBUG_DUMP_DIR); rccrun sets it."),
      choice_row("RCC_CHECK", "0", "0,1",
                 "1: collectives verify that all ranks passed the same collective, count, datatype, op and root."),
      text_row("RCC_ALGO", "",
               "Force algorithms, e.g. allreduce:ring,broadcast:tree (names in docs/algorithms.md). Empty: the cost "
               "model chooses."),
      choice_row("RCC_CONNECT", "eager", "eager,lazy",
                 "When a rank connects to a peer: eager (every peer in rcc_comm_init) or lazy (at its first "
                 "message to or from that peer; set-up publishes each rank's address once and a rank fetches a "
                 "peer's when it first needs it, so a job whose ranks talk to few peers holds few connections). "
                 "lazy is not yet the default: under srun across two network namespaces it hung a ring allreduce "
                 "(docs/scaling.md). Backends that need the peer's part to connect (verbs) connect eagerly "
                 "either way."),
      integer_row("RCC_EAGER_LIMIT", "8192", 1024, 64 * kMiB,
                  "Largest message in bytes sent eagerly through pre-registered slots; larger ones are zero-copy "
                  "writes into the receiver's buffer."),
      integer_row("RCC_EAGER_LIMIT_NET", "65536", 1024, 64 * kMiB,
                  "Largest message in bytes sent eagerly to a rank on another host when the transport copies such "
                  "messages anyway (UCX over TCP): a rendezvous there saves no copy and costs a round trip between "
                  "the hosts. Capped by RCC_UCX_NET_EAGER_BYTES and RCC_EAGER_NET_MEMORY, never below "
                  "RCC_EAGER_LIMIT; RDMA transports keep RCC_EAGER_LIMIT."),
      integer_row("RCC_EAGER_NET_MEMORY", "67108864", 0, 1LL << 40,
                  "Most bytes of eager slots (receive and staging areas) a rank sets aside for ranks on other hosts "
                  "at RCC_EAGER_LIMIT_NET: the limit halves until the slots of the rank with the most such peers "
                  "fit."),
      integer_row("RCC_UCX_NET_EAGER_BYTES", "131072", 0, 64 * kMiB,
                  "UCX backend: largest write to a rank on another host that UCX must send eagerly; larger ones go "
                  "by UCX's rendezvous. UCX's own threshold over TCP is a few KiB, and each rendezvous waits for the "
                  "receiver and then the sender to wake up (docs/transport.md). 0: UCX decides every size."),
      integer_row("RCC_EAGER_SLOTS", "32", 4, 4096, "Eager slots each rank offers each peer (credits).", 4),
      list_row("RCC_EAGER_ENCODINGS", "headed,bare,anchored",
               "How eager messages may travel (docs/transport.md): headed (always), bare (payload and a notice, "
               "where notices ride in writes and the header would cost a packet), anchored (payload ending on the "
               "slot's last byte, no notice: polled delivery only). auto: all that the delivery mode allows; a "
               "list: only those (headed is always taken)."),
      choice_row("RCC_REGISTRATION_CACHE", "auto", "auto,0",
                 "Registrations of application buffers (large messages) kept for reuse, dropped when UCX's memory "
                 "hooks report their pages unmapped: auto (on, except in sanitizer builds) or 0 (a registration "
                 "per message: for allocators that unmap memory without going through libc, which the hooks cannot "
                 "see)."),
      auto_row("RCC_SPIN_COUNT", 1, int64_t{1} << 30, "a poll count",
               "Polls a waiting rank makes before it starts giving its core away (yielding, then sleeping; "
               "docs/waiting.md). auto: the wait policy decides from what runs where."),
      choice_row("RCC_REDUCE_ISA", "auto", "auto,avx512,avx2,sse2,scalar",
                 "Reduction kernels: auto (the best this CPU runs), avx512, avx2 or sse2 (alias scalar: the "
                 "baseline x86-64 path). A level the CPU lacks falls back to the best below it."),
      // The tuner's cost model (collectives/cost_model.h): the two levels of a job on several hosts
      integer_row("RCC_TUNER_NET_MBPS", "10000", 1, int64_t{1} << 40,
                  "The network's bandwidth per link in MB/s, as the tuner models it (flat algorithms and the "
                  "between-hosts level of hierarchical ones)."),
      integer_row("RCC_TUNER_NET_LATENCY_NS", "3000", 0, int64_t{1} << 40,
                  "The cost of one message step between hosts in ns, as the tuner models it."),
      integer_row("RCC_TUNER_SHM_MBPS", "20000", 1, int64_t{1} << 40,
                  "The rate at which a rank copies through a host's shared-memory segment in MB/s, as the tuner "
                  "models it (the within-host level of hierarchical algorithms)."),
      integer_row("RCC_TUNER_SHM_LATENCY_NS", "500", 0, int64_t{1} << 40,
                  "The cost of one shared-memory step within a host in ns, as the tuner models it."),
      integer_row("RCC_HIERARCHY", "1", 0, 1,
                  "Communicators whose ranks span hosts, several on some, get two levels (this host's ranks "
                  "through shared memory, one rank per host between hosts) for the hierarchical algorithms "
                  "(docs/hierarchy.md); 0 on any rank: never (flat algorithms only)."),
      // Shared memory
      choice_row("RCC_SHM", "auto", "auto,0,1",
                 "Collectives through a shared-memory segment when every rank is on one host: auto (when it can "
                 "be set up), 0 (never: through the transport), 1 (required: init fails without it)."),
      integer_row("RCC_SHM_SLOT_BYTES", "524288", 1, 1024 * kMiB,
                  "Bytes of each of a rank's two shared-memory slots (the chunk a collective step moves); at least "
                  "64 KiB and 64 bytes per rank; all slots together at most 64 MiB unless that floor needs more."),
      integer_row("RCC_SHM_STREAM_BYTES", "65536", 0, int64_t{1} << 48,
                  "Broadcasts of at least this many bytes go into the shared slots with streaming (non-temporal) "
                  "stores, which bypass the root's cache: the other ranks then read memory instead of the root's "
                  "cache; only the root's value counts; 0: never."),
      auto_row("RCC_SHM_STREAM_OUTPUT_BYTES", 0, int64_t{1} << 48, "a byte count",
               "Results of at least this many bytes copied out of the shared slots into a rank's own buffer (an "
               "out-of-place allreduce or reduce of 2 ranks or small messages; a broadcast's receivers when ranks "
               "outnumber cores) go with streaming stores; auto: a quarter of the last-level cache, at least 4 MiB "
               "(where glibc's memcpy switches to them); 0: never. Each rank's own value counts."),
      integer_row("RCC_SHM_CMA_BYTES", "65536", 0, int64_t{1} << 48,
                  "Broadcasts from this many bytes (when every rank has a core of its own), and scattervs and "
                  "gathervs whose largest block has this many, move straight between the ranks' buffers: in a "
                  "broadcast the root writes a share into every other rank's (process_vm_writev) while each of "
                  "them reads the rest out of the root's (process_vm_readv); in a scatterv (gatherv) each other "
                  "rank reads its block out of (writes it into) the root's buffer; one copy instead of two, made "
                  "by all ranks at once; needs ptrace permission between the ranks (checked at set-up, else off); "
                  "the largest value among the ranks counts, and 0 on any rank turns it off."),
      // Bootstrap
      integer_row("RCC_BOOTSTRAP_TIMEOUT", "60", 1, 86400,
                  "Seconds to wait for all ranks at the rendezvous before failing with RCC_ERR_TIMEOUT."),
      text_row("RCC_RANK", "", "Rank of this process (set by rccrun)."),
      text_row("RCC_SIZE", "", "Number of ranks (set by rccrun)."),
      text_row("RCC_LOCAL_RANK", "", "Rank among the processes on this host (set by rccrun)."),
      text_row("RCC_LOCAL_SIZE", "", "Processes on this host (set by rccrun)."),
      text_row("RCC_STORE_ADDR", "",
               "host:port of the rendezvous store (set by rccrun; for Slurm and MPI launches rank 0 hosts it)."),
      text_row("RCC_JOB_SECRET", "", "Per-job secret every rendezvous connection presents (set by rccrun)."),
      text_row("RCC_JOB_ID", "",
               "Job identifier used to find the store address published by rank 0 under Slurm/MPI (default: "
               "SLURM_JOB_ID)."),
      text_row("RCC_STORE_DIR", "",
               "Shared directory where rank 0 publishes the store address under Slurm/MPI launches (default: "
               "$HOME/.rcc)."),
      choice_row("RCC_PMIX", "auto", "auto,0",
                 "auto: when a PMIx server started the process (srun --mpi=pmix, Open MPI's mpirun), rank, size and "
                 "the rendezvous come from it (no rank hosts a store); 0: ignore PMIx and use the launcher's "
                 "variables (docs/launching.md)."),
      integer_row("RCC_SLURM_PORT_BASE", "21000", 1024, 65535,
                  "Under srun without PMIx, the step's first task hosts the rendezvous on a port derived from the job "
                  "and step ids in [RCC_SLURM_PORT_BASE, RCC_SLURM_PORT_BASE + RCC_SLURM_PORT_COUNT), trying the next "
                  "15 when one is taken."),
      integer_row("RCC_SLURM_PORT_COUNT", "8192", 16, 64512,
                  "How many ports the derived Slurm rendezvous port is chosen from (see RCC_SLURM_PORT_BASE)."),
      text_row("RCC_SOCKET_IFNAME", "",
               "Network interface whose address rank 0 publishes for the rendezvous (default: the first "
               "non-loopback up interface)."),
      // RDMA verbs
      text_row("RCC_IB_DEVICE", "",
               "Verbs device list name[:port],... (leading ^ excludes). Empty: the active port nearest this "
               "process's cores."),
      auto_row("RCC_IB_GID_INDEX", 0, 65535, "a GID index",
               "RoCE GID index. auto: the RoCE v2 GID with an IPv4-mapped address, skipping link-local and empty "
               "entries."),
      integer_row("RCC_IB_TIMEOUT", "14", 1, 31, "Verbs local ACK timeout exponent: 4.096 us * 2^value."),
      integer_row("RCC_IB_RETRY_CNT", "7", 0, 7, "Verbs transport retry count (0-7)."),
      integer_row("RCC_IB_RNR_RETRY", "6", 0, 7,
                  "Verbs RNR retry count, 0-6 (7 would mean forever and is taken as 6; rcc posts receives before "
                  "granting credits, so RNR should not happen)."),
      choice_row("RCC_IB_POLLED_EAGER", "0", "0,1",
                 "0: every eager message, rendezvous FIN and credit update is a notified write (write-with-immediate, "
                 "or on iWARP a write then a send), and the receiver acts on completions only, as the verbs "
                 "specification guarantees. 1 (opt-in): eager messages and credit words are plain RDMA writes that the "
                 "receiver finds by polling (a sequence word at both ends of a message, or the slot's last byte); "
                 "only for devices known to place a write's bytes in address order (current InfiniBand and RoCE "
                 "HCAs, rxe), which the specification does not promise. Refused on iWARP. Every rank must agree."),
      choice_row("RCC_IB_USE_IMM", "auto", "auto,0,1",
                 "auto: write-with-immediate where the device supports it (IB, RoCE), write then send on iWARP; 0 "
                 "forces write then send; 1 requires immediates (not on iWARP)."),
  };
  return rows;
}

const char* environment_value(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

std::vector<std::string> split_choices(const char* choices) {
  std::vector<std::string> out;
  std::string item;
  for (const char* c = choices;; ++c) {
    if (*c == ',' || *c == '\0') {
      out.push_back(item);
      item.clear();
      if (*c == '\0') break;
    } else {
      item += *c;
    }
  }
  return out;
}

std::string range_text(const Setting& s) {
  std::string text = std::string(s.noun) + " in [" + std::to_string(s.min) + ", " + std::to_string(s.max) + "]";
  if (s.multiple > 1) text += ", a multiple of " + std::to_string(s.multiple);
  return text;
}

Status rejected(const Setting& s, const char* value) {
  return fail(RCC_ERR_INVALID_ARGUMENT, "%s='%s' is not %s", s.name, value, allowed(s).c_str());
}

// Parses a whole decimal integer in the row's range; false if the text is anything else.
bool parse_integer(const Setting& s, const char* text, int64_t* out) {
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  if (parsed < s.min || parsed > s.max || parsed % s.multiple != 0) return false;
  *out = parsed;
  return true;
}

const Setting& expect_kind(const char* name, Kind kind) {
  const Setting& s = find(name);
  if (s.kind != kind) {
    std::fprintf(stderr, "rcc: internal error: setting %s is read as another type than it is registered\n", name);
    std::abort();
  }
  return s;
}

}  // namespace

const std::vector<Setting>& all() { return table(); }

const Setting& find(const char* name) {
  for (const Setting& s : table()) {
    if (std::strcmp(s.name, name) == 0) return s;
  }
  std::fprintf(stderr, "rcc: internal error: setting %s is not registered\n", name);
  std::abort();
}

std::string allowed(const Setting& s) {
  switch (s.kind) {
    case Kind::kInteger: return range_text(s);
    case Kind::kAutoOrInteger: return "auto or " + range_text(s);
    case Kind::kChoice: {
      const std::vector<std::string> choices = split_choices(s.choices);
      std::string text;
      for (size_t i = 0; i < choices.size(); ++i) {
        if (i > 0) text += i + 1 == choices.size() ? " or " : ", ";
        text += choices[i];
      }
      return text;
    }
    case Kind::kAutoOrList: {
      const std::vector<std::string> choices = split_choices(s.choices);
      std::string text = "auto or a comma-separated list of";
      for (size_t i = 0; i < choices.size(); ++i) text += (i == 0 ? " " : ", ") + choices[i];
      return text;
    }
    case Kind::kText: break;
  }
  return "text";
}

const char* raw(const Setting& s) {
  const char* value = environment_value(s.name);
  return value != nullptr ? value : s.default_value;
}

namespace {

// What the environment's entries are: the array and the sum and the xor of their addresses (two
// independent one-cycle chains). setenv, putenv and unsetenv change an entry's address, the entry
// count or the array; a value edited in place keeps its address but is read through it anyway
// (the cached value points into the entry). getenv instead compares the name with every entry
// sharing its first two letters, several RCC_* ones under every launcher: a fifth of a 2-rank
// shared-memory allreduce went there. (A check in O(1) was tried, the entry still at its index or
// the array still ending after the same entry: glibc hands back a string it set before, so
// unsetenv(A), setenv(RCC_ALGO), unsetenv(B), setenv(A) left it stale, and the tail of a shrunken
// array is freed memory.)
struct Fingerprint {
  char** array = nullptr;
  uintptr_t sum = 0, mixed = 0;
  bool operator==(const Fingerprint&) const = default;
};
Fingerprint environment_fingerprint() {
  Fingerprint f{environ, 0, 0};
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const auto address = reinterpret_cast<uintptr_t>(*entry);
    f.sum += address;
    f.mixed ^= address;
  }
  return f;
}

struct PerCallEntry {
  const Setting* setting = nullptr;
  Fingerprint fingerprint;
  const char* value = nullptr;  // into the environment's entry, or the row's default
};
constexpr int kPerCallEntries = 2;  // RCC_ALGO and RCC_CHECK (another would take turns)
RCC_FAST_TLS constinit thread_local PerCallEntry t_per_call[kPerCallEntries];

}  // namespace

const char* per_call(const Setting& s) {
  const Fingerprint now = environment_fingerprint();
  PerCallEntry* slot = &t_per_call[0];
  for (PerCallEntry& entry : t_per_call) {
    if (entry.setting == &s) {
      if (entry.fingerprint == now) return entry.value;
      slot = &entry;
      break;
    }
    if (entry.setting == nullptr) {
      slot = &entry;
      break;
    }
  }
  *slot = PerCallEntry{&s, now, raw(s)};
  return slot->value;
}

bool is_set(const char* name) { return environment_value(find(name).name) != nullptr; }

std::string text(const char* name) { return raw(find(name)); }

Status integer(const char* name, int64_t* out) {
  const Setting& s = expect_kind(name, Kind::kInteger);
  const char* value = raw(s);
  int64_t parsed = 0;
  if (!parse_integer(s, value, &parsed)) return rejected(s, value);
  *out = parsed;
  return RCC_SUCCESS;
}

Status auto_or_integer(const char* name, std::optional<int64_t>* out) {
  const Setting& s = expect_kind(name, Kind::kAutoOrInteger);
  const char* value = raw(s);
  if (strcasecmp(value, "auto") == 0) {
    *out = std::nullopt;
    return RCC_SUCCESS;
  }
  int64_t parsed = 0;
  if (!parse_integer(s, value, &parsed)) return rejected(s, value);
  *out = parsed;
  return RCC_SUCCESS;
}

Status choice(const char* name, std::string* out) {
  const Setting& s = expect_kind(name, Kind::kChoice);
  const char* value = raw(s);
  for (const std::string& option : split_choices(s.choices)) {
    if (strcasecmp(option.c_str(), value) == 0) {
      *out = option;
      return RCC_SUCCESS;
    }
  }
  return rejected(s, value);
}

Status auto_or_list(const char* name, std::optional<std::vector<std::string>>* out) {
  const Setting& s = expect_kind(name, Kind::kAutoOrList);
  const char* value = raw(s);
  if (strcasecmp(value, "auto") == 0) {
    *out = std::nullopt;
    return RCC_SUCCESS;
  }
  const std::vector<std::string> choices = split_choices(s.choices);
  std::vector<std::string> picked;
  for (const std::string& item : split_choices(value)) {
    const std::string* known = nullptr;
    for (const std::string& option : choices) {
      if (strcasecmp(option.c_str(), item.c_str()) == 0) known = &option;
    }
    bool repeated = false;
    for (const std::string& p : picked) repeated = repeated || (known != nullptr && p == *known);
    if (known == nullptr || repeated) return rejected(s, value);
    picked.push_back(*known);
  }
  *out = std::move(picked);
  return RCC_SUCCESS;
}

Status check_all() {
  for (const Setting& s : table()) {
    if (environment_value(s.name) == nullptr) continue;
    int64_t number = 0;
    std::optional<int64_t> maybe_number;
    std::string picked;
    std::optional<std::vector<std::string>> list;
    switch (s.kind) {
      case Kind::kInteger: RCC_RETURN_IF_ERROR(integer(s.name, &number)); break;
      case Kind::kAutoOrInteger: RCC_RETURN_IF_ERROR(auto_or_integer(s.name, &maybe_number)); break;
      case Kind::kChoice: RCC_RETURN_IF_ERROR(choice(s.name, &picked)); break;
      case Kind::kAutoOrList: RCC_RETURN_IF_ERROR(auto_or_list(s.name, &list)); break;
      case Kind::kText: break;
    }
  }
  return RCC_SUCCESS;
}

std::string markdown() {
  std::string out =
      "# Configuration\n\n"
      "rcc reads only these environment variables. This table is generated from the registry in\n"
      "`src/base/settings.cc` by `scripts/gen-config-doc.sh`; a test keeps the two equal. A value a\n"
      "setting does not accept fails `rcc_comm_init` with a message naming the variable, its value and\n"
      "what it accepts.\n\n"
      "| variable | default | accepts | meaning |\n| --- | --- | --- | --- |\n";
  for (const Setting& s : table()) {
    const std::string shown = s.default_value[0] != '\0' ? std::string("`") + s.default_value + "`" : "(unset)";
    std::string doc = s.doc;
    std::string escaped;
    for (char c : doc) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
    out += std::string("| `") + s.name + "` | " + shown + " | " + allowed(s) + " | " + escaped + " |\n";
  }
  out +=
      "\nVariables of other launchers that rcc reads to find rank and size (not settings):\n"
      "`SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`, `SLURM_JOB_ID`, `SLURM_STEP_ID`,\n"
      "`OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`, `OMPI_COMM_WORLD_LOCAL_RANK`, `PMI_RANK`,\n"
      "`PMI_SIZE`, `RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `MASTER_ADDR`, `MASTER_PORT`.\n"
      "UCX's own `UCX_TLS` and `UCX_NET_DEVICES` keep working for the UCX backend.\n";
  return out;
}

}  // namespace rcc::settings
