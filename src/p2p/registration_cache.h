// Registrations of the application's buffers, kept for reuse (registering costs a system call and
// page pinning per message otherwise). The cache stays correct when the application frees memory
// and gets the same addresses back: UCX's memory hooks (libucm) report every unmap, mremap, brk
// shrink and madvise(DONTNEED) and the entries over those pages are dropped before the next lookup.
// Off (a registration per message) where those hooks are unavailable, and in sanitizer builds,
// whose allocators unmap memory with raw system calls the hooks cannot see.
// Not thread-safe: the engine calls it under its lock (the hook itself only queues ranges).
#pragma once

#include <cstdint>
#include <map>
#include <memory>

#include "base/status.h"
#include "transport/transport.h"

namespace rcc::p2p {

class RegistrationCache {
 public:
  explicit RegistrationCache(transport::Transport& transport);
  ~RegistrationCache();

  // A registration covering [addr, addr + length), shared with later lookups of the same pages.
  Status acquire(void* addr, size_t length, std::shared_ptr<transport::Memory>* out);
  // From now on every lookup registers anew (RCC_REGISTRATION_CACHE=0). Before the first lookup.
  void disable();

 private:
  void drop_unmapped_ranges();
  void unhook();

  struct Hook;  // the ranges the memory hook reported, drained by the next lookup

  transport::Transport& transport_;
  std::unique_ptr<Hook> hook_;
  std::map<uintptr_t, std::shared_ptr<transport::Memory>> entries_;  // by start address
  bool hooks_active_ = false;
  uint64_t seen_generation_ = 0;  // the hook's report count when the queue was last drained
};

}  // namespace rcc::p2p
