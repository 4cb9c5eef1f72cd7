// The shared-memory segment of one communicator whose ranks all run on one host. Collectives move
// their data through it (copy in, reduce straight from the peers' slots, copy out) instead of
// through the p2p engine: one copy per hop instead of two, and a step costs a cache line, not a
// message. See docs/shared-memory.md.
//
// Ranks advance through numbered steps. A rank's counter at s means: it wrote what it had to write
// for step s, and finished reading everything of steps before s. Before arriving at step s a rank
// writes into its slot for s; once the writer arrived, readers may read it until they arrive at
// s + 1. Slots alternate between two buffers per rank, so the writes for s + 1 never touch what a
// slower peer may still be reading for s, and a rank writes a buffer again (for s + 2) only after
// everyone arrived at s + 1 (begin() waits for that when the last step did not already show it).
#pragma once

#include <sys/types.h>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/health.h"
#include "base/status.h"
#include "base/wait.h"
#include "bootstrap/exchange.h"
#include "bootstrap/hosts.h"
#include "shm/shared_buffers.h"

namespace rcc::shm {

struct SegmentHeader;
struct StepControl;

// What a segment is made from: the communicator's ranks, where they run, how to meet and how to
// wait, and who says whether the peers are still alive.
struct SegmentSetup {
  bootstrap::Exchange* exchange = nullptr;  // for the set-up exchanges; its ranks are the segment's
  int rank = 0;
  int size = 1;
  double timeout_s = 60;     // RCC_BOOTSTRAP_TIMEOUT: the set-up exchanges
  double op_timeout_s = 60;  // RCC_TIMEOUT: a step that makes no progress
  const bootstrap::HostMap* hosts = nullptr;
  WaitPolicy wait;               // crowded: the ranks outnumber the host's cores
  PeerHealth* health = nullptr;  // progressed while waiting; reports dead peers and aborts
};

class Segment {
 public:
  // Maps a segment shared by all ranks when every rank is on this host and RCC_SHM allows it.
  // *out stays null when it cannot be used (ranks on several hosts, no /dev/shm space): that is not
  // an error unless RCC_SHM=1 demands the segment. Collective: every rank calls it.
  static Status create(const SegmentSetup& setup, std::unique_ptr<Segment>* out);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // More ranks than the cores they may run on (the union of their affinity masks).
  bool oversubscribed() const { return wait_.crowded; }
  // Bytes of one slot; a multiple of 4096.
  size_t slot_bytes() const { return slot_bytes_; }
  // Whether a broadcast of `bytes` fills the slots with copy_streaming (RCC_SHM_STREAM_BYTES; only
  // the root's value counts, and it changes only how the root copies).
  bool streams_broadcast(size_t bytes) const { return stream_bytes_ > 0 && bytes >= stream_bytes_; }
  // Whether a result of `bytes` copied out of the slots into this rank's buffer goes with
  // copy_streaming (RCC_SHM_STREAM_OUTPUT_BYTES; this rank's own value).
  bool streams_output(size_t bytes) const { return stream_output_bytes_ > 0 && bytes >= stream_output_bytes_; }
  // Whether a transfer of `bytes` may move straight between the ranks' buffers (cross_memory.h):
  // from RCC_SHM_CMA_BYTES, agreed by all ranks at set-up (0 unless every rank can reach every
  // other's memory). The same answer on every rank. Scatterv and gatherv copy across from there
  // (measured faster than the slots from 64 KiB blocks, with or without a core per rank:
  // docs/shared-memory.md).
  bool copies_across(size_t bytes) const { return cma_bytes_ > 0 && bytes >= cma_bytes_; }
  // The same, for a collective where every rank copies at once (broadcast, allgatherv): only with
  // a core per rank. When ranks outnumber cores every copy waits for a core, and the root of a
  // broadcast would wait for those copies, where through the slots it runs a call ahead
  // (docs/shared-memory.md).
  bool copies_across_on_own_cores(size_t bytes) const { return copies_across(bytes) && !wait_.crowded; }
  // Copy `bytes` between `local` and `remote` in `owner`'s memory. A failure (the owner died, or its
  // address is bad) fails this and every later shared-memory collective, like a failed step.
  Status read_from(int owner, const void* remote, void* local, size_t bytes, const char* what);
  Status write_to(int owner, const void* local, void* remote, size_t bytes, const char* what);
  // Whether the ranks can map each other's rcc_mem_alloc buffers (shared_buffers.h): every rank
  // took every other's probe memfd at set-up (pidfd_getfd: the ptrace permission, Linux 5.6, and
  // no seccomp filter against it). The same answer on every rank.
  bool shares_buffers() const { return shares_buffers_; }
  // Whether the last allreduce that looked found every rank's buffers shared (shm_reduce.cc): every
  // rank sets it from the same notes, so the next one tries the shared form on all ranks or none.
  bool buffers_were_shared() const { return buffers_were_shared_; }
  void remember_buffers_shared(bool shared) { buffers_were_shared_ = shared; }
  // The address in this process of `place` in `owner`'s memory. A failure fails this and every later
  // shared-memory collective, like a failed cross copy.
  Status map_buffer(int owner, const SharedPlace& place, uint8_t** buffer, const char* what);
  // The step this rank arrives at next; write into slot(rank(), next_step()) before arriving, and
  // only after begin() (which makes sure no rank still reads what that slot held two steps ago).
  uint64_t next_step() const { return step_ + 1; }
  Status begin(const char* what);
  // The buffer `owner` fills for `step`.
  uint8_t* slot(int owner, uint64_t step) const {
    return data_ + (static_cast<size_t>(owner) * 2 + (step & 1)) * slot_bytes_;
  }
  // The ring of small cells, mapped only when ranks outnumber cores (has_cells()): a step that moves
  // at most kCellBytes can write cell(rank(), next_step()) instead of its slot, after begin_cell().
  // Slots are reused every other step, cells every kCells steps, so a rank filling cells (a
  // broadcast root) can run up to kCells - 1 steps ahead of the slowest reader instead of one.
  static constexpr int kCells = 16;
  static constexpr size_t kCellBytes = 8192;
  bool has_cells() const { return cells_ != nullptr; }
  uint8_t* cell(int owner, uint64_t step) const {
    return cells_ + (static_cast<size_t>(owner) * kCells + step % kCells) * kCellBytes;
  }
  Status begin_cell(const char* what);
  // Arrives at the next step, then waits until every rank has. `what` names the collective in
  // errors: a dead peer (RCC_ERR_PEER_FAILED naming it), an abort, or RCC_TIMEOUT passing.
  Status step(const char* what);

  // Whose health the waits consult from now on: a host level's segment takes its parent
  // communicator's, so that a hierarchical collective waiting within a host fails when a rank on
  // another host dies or stops answering, not only when a rank of this host does.
  void watch_health_of(PeerHealth* health) { health_ = health; }

  // At the start of every shared-memory collective: fails if a peer failed, the communicator was
  // aborted, or an earlier shared-memory collective failed on any rank (the steps would no longer
  // pair up, so the segment is unusable for good: destroy the communicator).
  Status check_usable(const char* what);

  // One-sided steps, for collectives where only some ranks wait (broadcast: the others wait for the
  // root; the root waits for nobody). publish() arrives without waiting; wait_for() waits for one
  // rank to arrive at next_step() (a rank reading another's slot), then the reader publishes.
  void publish();
  Status wait_for(int owner, const char* what);
  // Waits until every other rank arrived at next_step() (a root collecting), then publishes.
  Status wait_others_then_publish(const char* what);
  // A word for the others that this rank's next arrival shows them (a choice every rank must make
  // alike, such as whether all of them reduce in place, or a count only one rank knows): set it
  // after begin() and before arriving at step s; note(owner, s) is then what owner set. A reader
  // reads it after seeing owner arrive at s: after a one-sided wait (wait_for), before it arrives
  // at s itself; after a full step(), before it arrives at s + 1. Notes for even and odd steps are
  // kept apart, so owner writes this one again only for step s + 2, after a begin() that waited for
  // every rank to reach s + 1: no note is overwritten before every rank read it, even when a
  // collective returns right after the step that showed it (a one-step allreduce of one chunk) or
  // without waiting at all (a one-sided collective's root).
  void set_note(uint64_t value);
  uint64_t note(int owner, uint64_t step) const;

 private:
  Segment() = default;
  StepControl* control(int owner) const;
  bool arrived(int owner, uint64_t step) const;
  // Waits until the ranks in [first, last) other than `except` reached `step`.
  Status wait_ranks(int first, int last, int except, uint64_t step, const char* what);
  Status wait_all(uint64_t step, const char* what) { return wait_ranks(0, size_, -1, step, what); }
  // wait_all unless every rank is already known to have arrived at `step`.
  Status ensure_all_reached(uint64_t step, const char* what);
  void sleep_until(uint64_t step, int first, int last, int except, std::chrono::milliseconds most);
  void wake_sleepers();
  std::string missing_ranks(uint64_t step, int first, int last, int except) const;
  Status cross_copy_failed(int error, const char* verb, int owner, const void* remote, size_t bytes, const char* what);
  // Records that this rank's collective failed (first failure wins) and wakes every sleeper.
  Status give_up(Status status);
  Status failed_elsewhere(const char* what) const;

  int rank_ = 0;
  int size_ = 0;
  size_t slot_bytes_ = 0;
  size_t stream_bytes_ = 0;         // 0: never stream
  size_t stream_output_bytes_ = 0;  // 0: never stream
  size_t cma_bytes_ = 0;            // 0: never copy across processes
  bool shares_buffers_ = false;     // the ranks can map each other's rcc_mem_alloc buffers
  std::vector<pid_t> pids_;         // by rank
  uint64_t step_ = 0;
  uint64_t all_reached_ = 0;  // every rank is known to have arrived at this step
  WaitPolicy wait_;           // crowded: more ranks than cores
  double timeout_s_ = 60;
  PeerHealth* health_ = nullptr;     // progressed while waiting; reports dead peers and aborts
  SegmentHeader* header_ = nullptr;  // the start of the mapping
  size_t mapping_bytes_ = 0;
  uint8_t* data_ = nullptr;
  uint8_t* cells_ = nullptr;
  PeerBuffers peer_buffers_;  // the peers' rcc_mem_alloc buffers mapped here
  bool buffers_were_shared_ = false;
};

}  // namespace rcc::shm
