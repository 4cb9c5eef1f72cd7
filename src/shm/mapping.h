// Named shared-memory mappings in /dev/shm: one rank creates (and sizes) the mapping, the others
// open it by name, and the name is unlinked once all have (so a crash never leaves it behind).
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace rcc::shm {

// Creates, sizes (allocating now: a full /dev/shm is an error here, not a SIGBUS later) and maps
// `bytes` at `name`. *mapping is set only on success.
Status create_mapping(const std::string& name, size_t bytes, void** mapping);
// Maps the mapping another rank created, which must be `bytes` long. *mapping is set only on success.
Status open_mapping(const std::string& name, size_t bytes, void** mapping);

// Undoes a half-made mapping on every early return: unlinks the name (the creator) and unmaps.
struct PendingMapping {
  void* mapping = nullptr;
  size_t bytes = 0;
  std::string name;  // to unlink; empty once unlinked or when not the creator
  ~PendingMapping();
};

}  // namespace rcc::shm
