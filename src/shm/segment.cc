// Setting up and tearing down the segment: find out whether every rank is on this host, let rank 0
// create it in /dev/shm, let the others map it, and unlink its name once all have (so a crash never
// leaves it behind).
#include "shm/segment.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "bootstrap/socket_util.h"
#include "core/config.h"
#include "core/log.h"
#include "shm/cross_memory.h"
#include "shm/layout.h"

namespace rcc::shm {
namespace {

// Slots of all ranks together stay below this, so many ranks do not exhaust /dev/shm.
constexpr size_t kMaxSlotsBytes = size_t{64} << 20;
constexpr size_t kMinSlotBytes = size_t{64} << 10;

std::vector<uint8_t> bytes_of(const std::string& text) { return std::vector<uint8_t>(text.begin(), text.end()); }
std::string text_of(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

// Same host = same name and same boot: a rebooted or cloned machine with the same name differs.
std::string host_identity() {
  std::string boot_id;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot_id;
  return bootstrap::host_name() + "/" + boot_id;
}

// The CPUs this process may run on, as a bit string; the union over the ranks says whether the
// ranks outnumber the cores they share.
std::string cpu_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::string mask(CPU_SETSIZE, '0');
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) mask[static_cast<size_t>(cpu)] = '1';
  }
  return mask;
}

size_t configured_slot_bytes(int ranks) {
  const size_t count = static_cast<size_t>(ranks);
  size_t wanted = static_cast<size_t>(std::max<int64_t>(1, config::get_int_or_default("RCC_SHM_SLOT_BYTES")));
  wanted = std::min(wanted, kMaxSlotsBytes / (2 * count));
  wanted -= wanted % kPageBytes;  // down: stays under the cap
  // Collectives cut a slot into one piece per rank: each must hold at least a cache line.
  const size_t floor = round_up(std::max(kMinSlotBytes, 64 * count), kPageBytes);
  return std::max(wanted, floor);
}

// A rank's process as the others see it: its pid, and the address and value of its probe word.
struct RankProcess {
  pid_t pid = 0;
  const void* probe = nullptr;
  uint64_t probe_value = 0;
};

// This rank's RCC_SHM_CMA_BYTES if it can read every other rank's probe word (the right value),
// else 0 (the INFO log says why).
size_t cross_memory_bytes(const std::vector<RankProcess>& processes, int rank) {
  const int64_t wanted = config::get_int_or_default("RCC_SHM_CMA_BYTES");
  if (wanted <= 0) return 0;
  for (size_t r = 0; r < processes.size(); ++r) {
    if (static_cast<int>(r) == rank) continue;
    const RankProcess& other = processes[r];
    uint64_t value = 0;
    // Its pid as this rank's own: another PID namespace, where this rank's pids mean other processes.
    const int error = other.pid == getpid() ? ESRCH : read_across(other.pid, other.probe, &value, sizeof value);
    if (error != 0 || value != other.probe_value) {
      RCC_INFO("shared memory: no cross-memory reads (rank %d cannot read rank %zu, pid %d: %s)", rank, r,
               static_cast<int>(other.pid), error != 0 ? std::strerror(error) : "another process has that pid here");
      return 0;
    }
  }
  return static_cast<size_t>(wanted);
}

// Undoes a half-made segment on every early return: unlinks the name (rank 0) and unmaps.
struct PendingMapping {
  void* mapping = nullptr;
  size_t bytes = 0;
  std::string name;  // to unlink; empty once unlinked or when not the creator
  ~PendingMapping() {
    if (!name.empty()) shm_unlink(name.c_str());
    if (mapping != nullptr) munmap(mapping, bytes);
  }
};

// Creates, sizes and maps the named segment (rank 0). *mapping is set only on success.
Status create_mapping(const std::string& name, size_t bytes, void** mapping) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return fail_quietly(RCC_ERR_NO_MEMORY, "shm_open(%s): %s", name.c_str(), std::strerror(errno));
  // Allocate now: a full /dev/shm is then an error here, not a SIGBUS in the middle of a collective.
  const int allocated = ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? posix_fallocate(fd, 0, static_cast<off_t>(bytes)) : errno;
  void* memory = MAP_FAILED;
  if (allocated == 0) memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  const int error = allocated != 0 ? allocated : errno;
  close(fd);
  if (memory == MAP_FAILED) {
    shm_unlink(name.c_str());
    return fail_quietly(RCC_ERR_NO_MEMORY, "%zu bytes of shared memory at /dev/shm%s: %s (is /dev/shm full or small?)",
                        bytes, name.c_str(), std::strerror(error));
  }
  *mapping = memory;
  return RCC_SUCCESS;
}

// Maps the segment rank 0 created and checks it is that one. *mapping is set only on success.
Status open_mapping(const std::string& name, uint64_t nonce, int ranks, size_t bytes, void** mapping) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    return fail_quietly(RCC_ERR_NO_MEMORY, "shm_open(%s): %s (rank 0 is in another /dev/shm, e.g. another container?)",
                        name.c_str(), std::strerror(errno));
  }
  struct stat info {};
  void* memory = MAP_FAILED;
  if (fstat(fd, &info) == 0 && static_cast<size_t>(info.st_size) == bytes) {
    memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  }
  close(fd);
  if (memory == MAP_FAILED) return fail_quietly(RCC_ERR_NO_MEMORY, "mapping %s failed", name.c_str());
  const auto* header = static_cast<const SegmentHeader*>(memory);
  if (header->magic != kMagic || header->nonce != nonce || header->ranks != static_cast<uint64_t>(ranks)) {
    munmap(memory, bytes);
    return fail_quietly(RCC_ERR_NO_MEMORY, "%s is not this communicator's segment", name.c_str());
  }
  *mapping = memory;
  return RCC_SUCCESS;
}

}  // namespace

Status Segment::create(bootstrap::StoreClient& store, const std::string& key_prefix, int rank, int size,
                       double timeout_s, p2p::Engine* engine, std::unique_ptr<Segment>* out) {
  const std::string mode = config::get_string("RCC_SHM");
  const bool valid = mode == "0" || mode == "1" || mode == "auto";
  const bool required = mode == "1";
  const std::string prefix = key_prefix + "/shm";

  // 1. Does every rank want it, is every rank on this host, and how many cores do they share?
  // Every rank joins this exchange whatever its RCC_SHM, so a rank with a different value makes
  // the others go without (or fail, with RCC_SHM=1) instead of leaving them waiting.
  const char my_mode = !valid ? 'x' : mode == "auto" ? 'a' : mode[0];
  const std::string my_host = host_identity();
  std::vector<std::vector<uint8_t>> hosts;
  // Each entry: mode, host, pid with the address and value of a probe word (for cross-memory
  // reads: a random value, so that a read of some other process, say one with the same pid in
  // another PID namespace, cannot pass), CPU mask; one per line. The word lives until every rank
  // has reported on its probes (step 3).
  std::random_device random;
  const auto probe_word = std::make_unique<uint64_t>((static_cast<uint64_t>(random()) << 32) ^ random());
  char process[96];
  std::snprintf(process, sizeof process, "%d %p %llx", static_cast<int>(getpid()), static_cast<void*>(probe_word.get()),
                static_cast<unsigned long long>(*probe_word));
  RCC_RETURN_IF_ERROR(bootstrap::allgather(store, prefix + "/host", rank, size,
                                           bytes_of(std::string(1, my_mode) + '\n' + my_host + '\n' + process + '\n' +
                                                    cpu_mask()),
                                           timeout_s, &hosts));
  if (!valid) return fail(RCC_ERR_INVALID_ARGUMENT, "RCC_SHM='%s' is not auto, 0 or 1", mode.c_str());
  std::string cpus_union(CPU_SETSIZE, '0');
  std::vector<RankProcess> processes(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    const std::string entry = text_of(hosts[static_cast<size_t>(r)]);
    const size_t first = entry.find('\n'), second = entry.find('\n', first + 1);
    const size_t third = second == std::string::npos ? second : entry.find('\n', second + 1);
    int pid = 0;
    void* probe = nullptr;
    unsigned long long probe_value = 0;
    if (first != 1 || third == std::string::npos ||
        std::sscanf(entry.c_str() + second + 1, "%d %p %llx", &pid, &probe, &probe_value) != 3) {
      return fail(RCC_ERR_BOOTSTRAP, "rank %d sent a malformed shared-memory entry", r);
    }
    processes[static_cast<size_t>(r)] = RankProcess{pid, probe, probe_value};
    const char their_mode = entry[0];
    const std::string host = entry.substr(first + 1, second - first - 1);
    std::string why;
    if (their_mode == '0' || their_mode == 'x') {
      why = "rank " + std::to_string(r) + " has RCC_SHM=" + (their_mode == '0' ? "0" : "(invalid)");
    } else if (host != my_host) {
      why = "rank " + std::to_string(r) + " runs on " + host + ", this rank on " + my_host;
    }
    if (!why.empty()) {
      if (required) return fail(RCC_ERR_INVALID_USAGE, "RCC_SHM=1, but %s (shared memory needs one host)", why.c_str());
      RCC_INFO("shared memory: off (%s)", why.c_str());
      return RCC_SUCCESS;
    }
    for (size_t cpu = third + 1, i = 0; cpu < entry.size() && i < cpus_union.size(); ++cpu, ++i) {
      if (entry[cpu] == '1') cpus_union[i] = '1';
    }
  }
  const long cores = std::count(cpus_union.begin(), cpus_union.end(), '1');

  // 2. Rank 0 creates the segment and publishes its name; the others map it.
  const size_t slot_bytes = configured_slot_bytes(size);
  const bool oversubscribed = cores > 0 && size > cores;  // the same on every rank (the union of masks)
  const size_t bytes = segment_bytes(size, slot_bytes, oversubscribed);
  std::string name;
  uint64_t nonce = 0;
  void* mapping = nullptr;
  std::string why;
  PendingMapping pending;
  pending.bytes = bytes;
  if (rank == 0) {
    nonce = (static_cast<uint64_t>(random()) << 32) ^ random();
    char text[96];
    std::snprintf(text, sizeof text, "/rcc-%d-%016llx", static_cast<int>(getpid()), static_cast<unsigned long long>(nonce));
    name = text;
    if (create_mapping(name, bytes, &mapping) == RCC_SUCCESS) {
      pending.mapping = mapping;
      pending.name = name;
      auto* header = new (mapping) SegmentHeader{};
      header->magic = kMagic;
      header->nonce = nonce;
      header->ranks = static_cast<uint64_t>(size);
      header->slot_bytes = slot_bytes;
      for (int r = 0; r < size; ++r) {
        new (static_cast<uint8_t*>(mapping) + kHeaderBytes + sizeof(StepControl) * static_cast<size_t>(r)) StepControl{};
      }
    } else {
      why = last_error();
      name.clear();
    }
  }
  std::vector<std::vector<uint8_t>> names;
  char nonce_text[17];
  std::snprintf(nonce_text, sizeof nonce_text, "%016llx", static_cast<unsigned long long>(nonce));
  RCC_RETURN_IF_ERROR(bootstrap::allgather(store, prefix + "/name", rank, size,
                                           bytes_of(rank == 0 ? name + ' ' + nonce_text : std::string()), timeout_s,
                                           &names));
  if (rank != 0) {
    const std::string published = text_of(names[0]);
    const size_t space = published.find(' ');
    name = published.substr(0, space);
    nonce = space == std::string::npos ? 0 : std::strtoull(published.c_str() + space + 1, nullptr, 16);
    if (name.empty()) {
      why = "rank 0 could not create it";
    } else if (open_mapping(name, nonce, size, bytes, &mapping) != RCC_SUCCESS) {
      why = last_error();
    }
    pending.mapping = mapping;
  }

  const size_t cma_bytes = cross_memory_bytes(processes, rank);

  // 3. Everyone mapped it (or says why not), and says from what size it reads across processes;
  // then the name goes, the mapping stays.
  std::vector<std::vector<uint8_t>> opened;
  RCC_RETURN_IF_ERROR(bootstrap::allgather(store, prefix + "/opened", rank, size,
                                           bytes_of(std::to_string(cma_bytes) + ' ' + (mapping ? "" : "x" + why)),
                                           timeout_s, &opened));
  if (!pending.name.empty()) {
    shm_unlink(pending.name.c_str());
    pending.name.clear();
  }
  // Every rank reads across from the largest of their thresholds, or none does if one cannot.
  size_t agreed_cma_bytes = 0;
  bool cma_refused = false;
  for (int r = 0; r < size; ++r) {
    const std::string entry = text_of(opened[static_cast<size_t>(r)]);
    const size_t space = entry.find(' ');
    if (space == std::string::npos) return fail(RCC_ERR_BOOTSTRAP, "rank %d sent a malformed shared-memory entry", r);
    const size_t theirs = std::strtoull(entry.c_str(), nullptr, 10);
    cma_refused = cma_refused || theirs == 0;
    agreed_cma_bytes = std::max(agreed_cma_bytes, theirs);
    const std::string failed = entry.substr(space + 1);
    if (failed.empty()) continue;
    if (required) {
      return fail(RCC_ERR_NO_MEMORY, "RCC_SHM=1, but rank %d could not map the shared segment: %s", r,
                  failed.c_str() + 1);
    }
    RCC_WARN("shared memory: off (rank %d could not map the segment: %s); collectives go through the %s transport", r,
             failed.c_str() + 1, engine->transport_name());
    return RCC_SUCCESS;
  }

  std::unique_ptr<Segment> segment(new Segment());
  segment->rank_ = rank;
  segment->size_ = size;
  segment->slot_bytes_ = slot_bytes;
  segment->stream_bytes_ = static_cast<size_t>(std::max<int64_t>(0, config::get_int_or_default("RCC_SHM_STREAM_BYTES")));
  segment->oversubscribed_ = oversubscribed;
  segment->cma_bytes_ = cma_refused ? 0 : agreed_cma_bytes;
  for (const RankProcess& process : processes) segment->pids_.push_back(process.pid);
  segment->timeout_s_ = static_cast<double>(std::max<int64_t>(1, config::get_int_or_default("RCC_TIMEOUT")));
  segment->engine_ = engine;
  segment->mapping_bytes_ = bytes;
  segment->header_ = static_cast<SegmentHeader*>(mapping);
  segment->data_ = static_cast<uint8_t*>(mapping) + data_offset(size);
  if (oversubscribed) segment->cells_ = static_cast<uint8_t*>(mapping) + cells_offset(size, slot_bytes);
  pending.mapping = nullptr;  // the segment owns it now
  RCC_INFO("shared memory: on, %d ranks on %ld cores%s, slots of %zu KiB, cross-memory reads %s", size, cores,
           segment->oversubscribed_ ? " (oversubscribed: waiting ranks yield)" : "", slot_bytes >> 10,
           segment->cma_bytes_ > 0 ? ("from " + std::to_string(segment->cma_bytes_) + " bytes").c_str() : "off");
  *out = std::move(segment);
  return RCC_SUCCESS;
}

Segment::~Segment() {
  if (header_ != nullptr) munmap(header_, mapping_bytes_);
}

StepControl* Segment::control(int owner) const {
  return reinterpret_cast<StepControl*>(reinterpret_cast<uint8_t*>(header_) + kHeaderBytes +
                                        sizeof(StepControl) * static_cast<size_t>(owner));
}

}  // namespace rcc::shm
