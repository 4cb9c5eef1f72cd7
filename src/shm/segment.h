// The shared-memory segment of one communicator whose ranks all run on one host. Collectives move
// their data through it (copy in, reduce straight from the peers' slots, copy out) instead of
// through the p2p engine: one copy per hop instead of two, and a step costs a cache line, not a
// message. See docs/shared-memory.md.
//
// Ranks advance through numbered steps together. Before arriving at step s a rank writes what its
// peers need into its slot for s; after every rank has arrived at s, any rank may read any slot for
// s until it arrives at s + 1. Slots alternate between two buffers per rank, so the writes for
// s + 1 never touch what a slower peer may still be reading for s, and a rank writes a buffer again
// (for s + 2) only after everyone arrived at s + 1, so after everyone finished reading it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "bootstrap/store.h"
#include "core/status.h"
#include "p2p/engine.h"

namespace rcc::shm {

struct SegmentHeader;
struct StepControl;

class Segment {
 public:
  // Maps a segment shared by all ranks when every rank is on this host and RCC_SHM allows it.
  // *out stays null when it cannot be used (ranks on several hosts, no /dev/shm space): that is not
  // an error unless RCC_SHM=1 demands the segment. Collective: every rank calls it.
  static Status create(bootstrap::StoreClient& store, const std::string& key_prefix, int rank, int size,
                       double timeout_s, p2p::Engine* engine, std::unique_ptr<Segment>* out);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Bytes of one slot; a multiple of 4096.
  size_t slot_bytes() const { return slot_bytes_; }
  // The step this rank arrives at next; write into slot(rank(), next_step()) before arriving.
  uint64_t next_step() const { return step_ + 1; }
  // The buffer `owner` fills for `step`.
  uint8_t* slot(int owner, uint64_t step) const {
    return data_ + (static_cast<size_t>(owner) * 2 + (step & 1)) * slot_bytes_;
  }
  // Arrives at the next step, then waits until every rank has. `what` names the collective in
  // errors: a dead peer (RCC_ERR_PEER_FAILED naming it), an abort, or RCC_TIMEOUT passing.
  Status step(const char* what);

 private:
  Segment() = default;
  StepControl* control(int owner) const;
  bool all_arrived(uint64_t step, std::memory_order order) const;
  Status wait_all(uint64_t step, const char* what);
  void sleep_until(uint64_t step);
  void wake_sleepers();
  std::string missing_ranks(uint64_t step) const;

  int rank_ = 0;
  int size_ = 0;
  size_t slot_bytes_ = 0;
  uint64_t step_ = 0;
  bool oversubscribed_ = false;  // more ranks than cores: yield instead of spinning
  double timeout_s_ = 60;
  p2p::Engine* engine_ = nullptr;  // progressed while waiting; reports dead peers and aborts
  void* mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  SegmentHeader* header_ = nullptr;
  uint8_t* data_ = nullptr;
};

}  // namespace rcc::shm
