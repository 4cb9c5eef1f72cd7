// A pending send or receive of the p2p engine, owned by the engine until finish() or wait().
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "transport/transport.h"

namespace rcc::p2p {

// Wildcards of a receive or probe (the values of RCC_ANY_SOURCE and RCC_ANY_TAG).
constexpr int kAnySource = -1;
constexpr int kAnyTag = -1;

// What a matched message was: sender, tag and length (a receive may be longer than its message).
struct MessageInfo {
  int source = -1;
  int tag = -1;
  size_t bytes = 0;
};

struct Request {
  enum class Kind { kSend, kRecv } kind = Kind::kSend;
  uint32_t index = 0;
  int peer = -1;  // a receive may have kAnySource
  int tag = 0;    // a receive may have kAnyTag
  uint32_t context = 0;
  void* buffer = nullptr;
  size_t bytes = 0;     // posted length
  uint64_t posted = 0;  // receives: the order of posting (matching takes the earliest)
  MessageInfo matched;  // receives: what arrived
  bool done = false;
  bool in_use = false;
  Status status = RCC_SUCCESS;
  std::string error;
  std::shared_ptr<transport::Memory> memory;  // registration of a large buffer (from the cache)
  std::unique_ptr<transport::RemoteKey> remote_key;
};

}  // namespace rcc::p2p
