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
#include <optional>
#include <random>

#include "base/log.h"
#include "base/settings.h"
#include "shm/cross_memory.h"
#include "shm/layout.h"
#include "shm/mapping.h"
#include "shm/shared_buffers.h"
#include "shm/stream_copy.h"

namespace rcc::shm {
namespace {

// Slots of all ranks together stay below this, so many ranks do not exhaust /dev/shm.
constexpr size_t kMaxSlotsBytes = size_t{64} << 20;
constexpr size_t kMinSlotBytes = size_t{64} << 10;

std::string text_of(const std::vector<uint8_t>& bytes) { return std::string(bytes.begin(), bytes.end()); }

size_t configured_slot_bytes(int ranks, int64_t setting) {
  const size_t count = static_cast<size_t>(ranks);
  size_t wanted = static_cast<size_t>(setting);
  wanted = std::min(wanted, kMaxSlotsBytes / (2 * count));
  wanted -= wanted % kPageBytes;  // down: stays under the cap
  // Collectives cut a slot into one piece per rank: each must hold at least a cache line.
  const size_t floor = round_up(std::max(kMinSlotBytes, 64 * count), kPageBytes);
  return std::max(wanted, floor);
}

// A rank's process as the others see it: its pid, and the address and value of its probe word.
struct RankProcess {
  pid_t pid = 0;
  void* probe = nullptr;  // in that process: read, and written back, across
  uint64_t probe_value = 0;
  int buffer_probe = -1;  // in that process: a memfd holding probe_value (BufferProbe)
};

// Whether the mapping opened is this communicator's segment (else it is unmapped, and the reason
// is this thread's last error).
bool is_segment_of(void*& mapping, uint64_t nonce, int ranks, size_t bytes, const std::string& name) {
  const auto* header = static_cast<const SegmentHeader*>(mapping);
  if (header->magic == kMagic && header->nonce == nonce && header->ranks == static_cast<uint64_t>(ranks)) return true;
  munmap(mapping, bytes);
  mapping = nullptr;
  fail_quietly(RCC_ERR_NO_MEMORY, "%s is not this communicator's segment", name.c_str());
  return false;
}

// This rank's RCC_SHM_CMA_BYTES if it can read every other rank's probe word (the right value) and
// write it back, else 0 (the INFO log says why).
size_t cross_memory_bytes(const std::vector<RankProcess>& processes, int rank, int64_t wanted) {
  if (wanted <= 0) return 0;
  for (size_t r = 0; r < processes.size(); ++r) {
    if (static_cast<int>(r) == rank) continue;
    const RankProcess& other = processes[r];
    uint64_t value = 0;
    // Its pid as this rank's own: another PID namespace, where this rank's pids mean other processes.
    int error = other.pid == getpid() ? ESRCH : read_across(other.pid, other.probe, &value, sizeof value);
    // Broadcasts write too: the same value back (a seccomp filter may allow one call, not the other).
    if (error == 0 && value == other.probe_value) error = write_across(other.pid, &value, other.probe, sizeof value);
    if (error != 0 || value != other.probe_value) {
      RCC_INFO("shared memory: no cross-memory reads or writes (rank %d cannot reach rank %zu, pid %d: %s)", rank, r,
               static_cast<int>(other.pid), error != 0 ? std::strerror(error) : "another process has that pid here");
      return 0;
    }
  }
  return static_cast<size_t>(wanted);
}

// Whether this rank can map every other rank's rcc_mem_alloc buffers: it takes each one's probe
// memfd (pidfd_getfd) and finds the probe value in it (else the INFO log says why).
bool maps_peer_buffers(const std::vector<RankProcess>& processes, int rank) {
  for (size_t r = 0; r < processes.size(); ++r) {
    if (static_cast<int>(r) == rank) continue;
    const RankProcess& other = processes[r];
    const int error = other.pid == getpid() || other.buffer_probe < 0
                          ? ESRCH
                          : probe_peer_buffer(other.pid, other.buffer_probe, other.probe_value);
    if (error != 0) {
      RCC_INFO(
          "shared memory: allreduces over rcc_mem_alloc buffers go through the slots (rank %d cannot map "
          "rank %zu's, pid %d: %s)",
          rank, r, static_cast<int>(other.pid), std::strerror(error));
      return false;
    }
  }
  return true;
}

}  // namespace

Status Segment::create(const SegmentSetup& setup, std::unique_ptr<Segment>* out) {
  bootstrap::Exchange& exchange = *setup.exchange;
  const int rank = setup.rank, size = setup.size;
  const double timeout_s = setup.timeout_s;
  std::string mode;
  int64_t slot_setting = 0, stream_bytes = 0, cma_setting = 0;
  std::optional<int64_t> stream_output_setting;
  const Status settings_status = settings::choice("RCC_SHM", &mode);
  const bool valid = settings_status == RCC_SUCCESS;
  const std::string invalid_message = valid ? std::string() : last_error();
  if (valid) {
    RCC_RETURN_IF_ERROR(settings::integer("RCC_SHM_SLOT_BYTES", &slot_setting));
    RCC_RETURN_IF_ERROR(settings::integer("RCC_SHM_STREAM_BYTES", &stream_bytes));
    RCC_RETURN_IF_ERROR(settings::integer("RCC_SHM_CMA_BYTES", &cma_setting));
    RCC_RETURN_IF_ERROR(settings::auto_or_integer("RCC_SHM_STREAM_OUTPUT_BYTES", &stream_output_setting));
  }
  const bool required = mode == "1";

  // 1. Does every rank want it, and is every rank on this host? Every rank joins this exchange
  // whatever its RCC_SHM, so a rank with a different value makes the others go without (or fail,
  // with RCC_SHM=1) instead of leaving them waiting. Each entry: the mode, and the address and
  // value of a probe word for cross-memory copies (a random value, so that a read of some other
  // process, say one with the same pid in another PID namespace, cannot pass). The word lives
  // until every rank has reported on its probes (step 3).
  const char my_mode = !valid ? 'x' : mode == "auto" ? 'a' : mode[0];
  std::random_device random;
  const auto probe_word = std::make_unique<uint64_t>((static_cast<uint64_t>(random()) << 32) ^ random());
  const BufferProbe buffer_probe(*probe_word);  // and a memfd holding it, for pidfd_getfd
  char entry_text[128];
  std::snprintf(entry_text, sizeof entry_text, "%c %p %llx %d", my_mode, static_cast<void*>(probe_word.get()),
                static_cast<unsigned long long>(*probe_word), buffer_probe.fd());
  std::vector<std::vector<uint8_t>> entries;
  RCC_RETURN_IF_ERROR(exchange.allgather("shm/probe", bootstrap::bytes_of(entry_text), timeout_s, &entries));
  if (!valid) {  // decided before the exchange, reported after it (the others are not left waiting)
    set_last_error(invalid_message);
    return settings_status;
  }
  const bootstrap::HostMap& hosts = *setup.hosts;
  std::vector<RankProcess> processes(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    const std::string entry = text_of(entries[static_cast<size_t>(r)]);
    char their_mode = 0;
    void* probe = nullptr;
    unsigned long long probe_value = 0;
    int probe_fd = -1;
    if (std::sscanf(entry.c_str(), "%c %p %llx %d", &their_mode, &probe, &probe_value, &probe_fd) != 4) {
      return fail(RCC_ERR_BOOTSTRAP, "rank %d sent a malformed shared-memory entry", r);
    }
    processes[static_cast<size_t>(r)] = RankProcess{hosts.place(r).pid, probe, probe_value, probe_fd};
    std::string why;
    if (their_mode == '0' || their_mode == 'x') {
      why = "rank " + std::to_string(r) + " has RCC_SHM=" + (their_mode == '0' ? "0" : "(invalid)");
    } else if (hosts.host_of(r) != hosts.host_of(rank)) {
      why = "rank " + std::to_string(r) + " runs on " + hosts.place(r).identity + ", this rank on " +
            hosts.place(rank).identity;
    }
    if (!why.empty()) {
      if (required) return fail(RCC_ERR_INVALID_USAGE, "RCC_SHM=1, but %s (shared memory needs one host)", why.c_str());
      RCC_INFO("shared memory: off (%s)", why.c_str());
      return RCC_SUCCESS;
    }
  }

  // 2. Rank 0 creates the segment and publishes its name; the others map it.
  const size_t slot_bytes = configured_slot_bytes(size, slot_setting);
  const bool oversubscribed = setup.wait.crowded;  // the same on every rank (from the host map)
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
    std::snprintf(text, sizeof text, "/rcc-%d-%016llx", static_cast<int>(getpid()),
                  static_cast<unsigned long long>(nonce));
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
        new (static_cast<uint8_t*>(mapping) + kHeaderBytes + sizeof(StepControl) * static_cast<size_t>(r))
            StepControl{};
      }
    } else {
      why = last_error();
      name.clear();
    }
  }
  std::vector<std::vector<uint8_t>> names;
  char nonce_text[17];
  std::snprintf(nonce_text, sizeof nonce_text, "%016llx", static_cast<unsigned long long>(nonce));
  RCC_RETURN_IF_ERROR(exchange.allgather(
      "shm/name", bootstrap::bytes_of(rank == 0 ? name + ' ' + nonce_text : std::string()), timeout_s, &names));
  if (rank != 0) {
    const std::string published = text_of(names[0]);
    const size_t space = published.find(' ');
    name = published.substr(0, space);
    nonce = space == std::string::npos ? 0 : std::strtoull(published.c_str() + space + 1, nullptr, 16);
    if (name.empty()) {
      why = "rank 0 could not create it";
    } else if (open_mapping(name, bytes, &mapping) != RCC_SUCCESS ||
               !is_segment_of(mapping, nonce, size, bytes, name)) {
      why = last_error();
    }
    pending.mapping = mapping;
  }

  const size_t cma_bytes = cross_memory_bytes(processes, rank, cma_setting);
  const bool maps_buffers = maps_peer_buffers(processes, rank);

  // 3. Everyone mapped it (or says why not), and says from what size it reads across processes and
  // whether it can map the others' rcc_mem_alloc buffers; then the name goes, the mapping stays.
  std::vector<std::vector<uint8_t>> opened;
  RCC_RETURN_IF_ERROR(exchange.allgather(
      "shm/opened",
      bootstrap::bytes_of(std::to_string(cma_bytes) + (maps_buffers ? " 1 " : " 0 ") + (mapping ? "" : "x" + why)),
      timeout_s, &opened));
  if (!pending.name.empty()) {
    shm_unlink(pending.name.c_str());
    pending.name.clear();
  }
  // Every rank reads across from the largest of their thresholds, or none does if one cannot.
  size_t agreed_cma_bytes = 0;
  bool cma_refused = false, all_map_buffers = true;
  for (int r = 0; r < size; ++r) {
    const std::string entry = text_of(opened[static_cast<size_t>(r)]);
    const size_t space = entry.find(' ');
    if (space == std::string::npos || entry.size() < space + 3 || entry[space + 2] != ' ') {
      return fail(RCC_ERR_BOOTSTRAP, "rank %d sent a malformed shared-memory entry", r);
    }
    const size_t theirs = std::strtoull(entry.c_str(), nullptr, 10);
    cma_refused = cma_refused || theirs == 0;
    agreed_cma_bytes = std::max(agreed_cma_bytes, theirs);
    all_map_buffers = all_map_buffers && entry[space + 1] == '1';
    const std::string failed = entry.substr(space + 3);
    if (failed.empty()) continue;
    if (required) {
      return fail(RCC_ERR_NO_MEMORY, "RCC_SHM=1, but rank %d could not map the shared segment: %s", r,
                  failed.c_str() + 1);
    }
    RCC_WARN("shared memory: off (rank %d could not map the segment: %s); collectives go through the transport", r,
             failed.c_str() + 1);
    return RCC_SUCCESS;
  }

  std::unique_ptr<Segment> segment(new Segment());
  segment->rank_ = rank;
  segment->size_ = size;
  segment->slot_bytes_ = slot_bytes;
  segment->stream_bytes_ = static_cast<size_t>(stream_bytes);
  segment->stream_output_bytes_ =
      stream_output_setting ? static_cast<size_t>(*stream_output_setting) : default_stream_output_bytes();
  segment->wait_ = setup.wait;
  segment->cma_bytes_ = cma_refused ? 0 : agreed_cma_bytes;
  segment->shares_buffers_ = all_map_buffers;
  for (const RankProcess& process : processes) segment->pids_.push_back(process.pid);
  segment->peer_buffers_.set_capacity(2 * static_cast<size_t>(size));  // an allreduce maps 2 per peer
  segment->timeout_s_ = setup.op_timeout_s;
  segment->health_ = setup.health;
  segment->mapping_bytes_ = bytes;
  segment->header_ = static_cast<SegmentHeader*>(mapping);
  segment->data_ = static_cast<uint8_t*>(mapping) + data_offset(size);
  if (oversubscribed) segment->cells_ = static_cast<uint8_t*>(mapping) + cells_offset(size, slot_bytes);
  pending.mapping = nullptr;  // the segment owns it now
  RCC_INFO("shared memory: on, %d ranks%s, slots of %zu KiB, cross-memory copies %s, rcc_mem_alloc buffers %s", size,
           oversubscribed ? " (more than cores: waiting ranks yield)" : "", slot_bytes >> 10,
           segment->cma_bytes_ > 0 ? ("from " + std::to_string(segment->cma_bytes_) + " bytes").c_str() : "off",
           segment->shares_buffers_ ? "shared" : "not shared");
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
