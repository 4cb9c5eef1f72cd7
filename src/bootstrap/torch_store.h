// A client of PyTorch's TCPStore (the key-value store torchrun's agent serves on MASTER_PORT, and
// that torch.distributed's env:// and tcp:// rendezvous use), speaking its wire protocol as torch
// 1.13's own workers do: rcc started by `torchrun --no-python` meets through the agent's store
// instead of opening a port of its own.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {

// Dials host:port, retrying until timeout_s (the agent may not listen yet). The store has no
// secret: whoever reaches it is trusted, as torch trusts it.
Status connect_torch_store(const std::string& address, double timeout_s, std::unique_ptr<StoreClient>* out);

}  // namespace rcc::bootstrap
