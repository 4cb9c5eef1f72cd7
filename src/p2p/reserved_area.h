// Zeroed memory that costs only what is touched: the eager slots of every peer are laid out in one
// area (slot_layout.h), but a rank's pages hold memory only for the peers that wrote to it or that
// it wrote to, so a job whose ranks talk to few peers stays small as it grows.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace rcc::p2p {

class ReservedArea {
 public:
  ReservedArea() = default;
  ~ReservedArea();
  ReservedArea(const ReservedArea&) = delete;
  ReservedArea& operator=(const ReservedArea&) = delete;

  // Maps bytes of zeroed memory (rounded up to pages); what, for the error message.
  Status reserve(size_t bytes, const char* what);
  uint8_t* data() const { return data_; }
  size_t size() const { return bytes_; }
  // Bytes of the area that hold memory now (mincore), for the memory report at teardown.
  size_t resident_bytes() const;

 private:
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace rcc::p2p
