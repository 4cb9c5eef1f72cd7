// What a layer that waits outside the p2p engine (the shared-memory segment) needs from the layer
// that knows about peers: a progress pass that also says whether the communicator still works.
// The p2p engine implements it; the segment takes it instead of the engine.
#pragma once

#include "base/status.h"

namespace rcc {

class PeerHealth {
 public:
  virtual ~PeerHealth() = default;
  // One progress pass (a peer may wait for a message of ours), then RCC_ERR_ABORTED, or the peer
  // failure naming the rank, if the communicator can no longer be used; else RCC_SUCCESS.
  virtual Status health() = 0;
  // Cheap and lock-free: whether health() may report a failure (call it then).
  virtual bool maybe_unusable() const = 0;
};

}  // namespace rcc
