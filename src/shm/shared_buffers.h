// Buffers the ranks of one host can read and write in each other's memory (rcc_mem_alloc): each
// allocation of kSharedFromBytes or more is its own memfd (while they hold at most half the
// process's file descriptors; else, and when memfd_create fails, it comes from the heap), mapped here and, when a
// collective needs it, in a peer, which takes the file from this process with pidfd_getfd (the ptrace permission,
// probed at set-up with a BufferProbe). A collective over such buffers moves the data once,
// straight between the ranks' buffers, where private buffers take a copy into the shared slots and
// one out of them (docs/shared-memory.md).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace rcc::shm {

// Smaller allocations come from the heap (no collective shares them: below this size the slots are
// as fast, and a memfd each would spend a file descriptor and a page on every small buffer).
constexpr size_t kSharedFromBytes = 16 * 1024;

// Where a buffer lies inside an allocation, in the terms a peer needs to map it.
struct SharedPlace {
  int32_t fd = -1;      // the allocation's memfd, in the owner's file table
  uint64_t serial = 0;  // never reused within a process (fd numbers are)
  uint64_t inode = 0;   // of the memfd: what a peer checks the file it took against
  uint64_t bytes = 0;   // the allocation's size
  uint64_t offset = 0;  // of the buffer within the allocation
  uint64_t length = 0;  // of the buffer
};

// rcc_mem_alloc and rcc_mem_free.
Status allocate_shared(size_t bytes, void** memory);
Status free_shared(void* memory);
// Whether [buffer, buffer + bytes) lies inside one memfd allocation of this process; if so, *place
// says where.
bool find_shared(const void* buffer, size_t bytes, SharedPlace* place);

// A memfd holding a value, for the other ranks to take at set-up (probe_peer_buffer). fd() is -1
// when none could be made (then nobody maps this rank's buffers).
class BufferProbe {
 public:
  explicit BufferProbe(uint64_t value);
  ~BufferProbe();
  BufferProbe(const BufferProbe&) = delete;
  BufferProbe& operator=(const BufferProbe&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};
// 0 if this process can take `fd` from process `pid` and finds `value` in it, else an errno.
int probe_peer_buffer(pid_t pid, int fd, uint64_t value);

// The peers' allocations this process has mapped, by (pid, serial). Mappings of allocations their
// owner freed are unmapped only when they fall out of the cache (the least recently used one goes
// when a new one comes to a full cache) or when the cache is destroyed: until then they keep their
// pages.
class PeerBuffers {
 public:
  static constexpr size_t kCapacity = 16;
  PeerBuffers() = default;
  // At least as many as one collective maps (2 per peer for an allreduce): a mapping still in use
  // in the current call must never be the least recently used one.
  void set_capacity(size_t capacity) { capacity_ = capacity > kCapacity ? capacity : kCapacity; }
  PeerBuffers(const PeerBuffers&) = delete;
  PeerBuffers& operator=(const PeerBuffers&) = delete;
  ~PeerBuffers();
  // The address in this process of `place` in process `pid`; on failure the errno of the call that
  // failed (EFAULT: the place does not fit the allocation, or the file taken is another one).
  int map(pid_t pid, const SharedPlace& place, uint8_t** buffer);

 private:
  struct Entry {
    pid_t pid;
    uint64_t serial;
    uint64_t bytes;
    uint8_t* base;
    uint64_t last_use;
  };
  std::vector<Entry> entries_;
  uint64_t uses_ = 0;
  size_t capacity_ = kCapacity;
};

}  // namespace rcc::shm
