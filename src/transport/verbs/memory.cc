// Registered memory and remote keys of the verbs backend.
#include <cerrno>
#include <cstring>

#include "transport/verbs/transport_impl.h"

namespace rcc::transport::verbs {

Status VerbsTransport::register_memory(void* addr, size_t length, std::unique_ptr<Memory>* out) {
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "register_memory: out is null");
  if (addr == nullptr || length == 0) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "register_memory: addr %p with length %zu is not a range", addr, length);
  }
  auto memory = std::make_unique<VerbsMemory>();
  memory->mr = ibv_reg_mr(pd_, addr, length, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
  if (memory->mr == nullptr) {
    int error = errno;
    return fail(error == ENOMEM ? RCC_ERR_NO_MEMORY : RCC_ERR_TRANSPORT,
                "register_memory: ibv_reg_mr(%p, %zu) on %s: %s%s", addr, length, port_.device.c_str(),
                std::strerror(error), error == ENOMEM ? " (check ulimit -l, the locked-memory limit)" : "");
  }
  memory->addr = addr;
  memory->length = length;
  memory->owner = this;
  *out = std::move(memory);
  return RCC_SUCCESS;
}

Status VerbsTransport::pack_key(Memory& memory, std::vector<uint8_t>* key) {
  auto* verbs_memory = memory.owner == this ? static_cast<VerbsMemory*>(&memory) : nullptr;
  if (verbs_memory == nullptr || verbs_memory->mr == nullptr) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "pack_key: memory was not registered by the verbs transport");
  }
  if (key == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "pack_key: key is null");
  *key = encode_key({verbs_memory->mr->rkey, reinterpret_cast<uintptr_t>(memory.addr), memory.length});
  return RCC_SUCCESS;
}

Status VerbsTransport::import_key(int peer, const std::vector<uint8_t>& key, std::unique_ptr<RemoteKey>* out) {
  if (peer < 0 || peer >= options_.size) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "import_key: peer %d is not in 0..%d", peer, options_.size - 1);
  }
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "import_key: out is null");
  auto remote = std::make_unique<VerbsRemoteKey>();
  if (decode_key(key.data(), key.size(), &remote->key) != RCC_SUCCESS) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "import_key from rank %d: %s", peer, last_error().c_str());
  }
  remote->peer = peer;
  remote->owner = this;
  *out = std::move(remote);
  return RCC_SUCCESS;
}

}  // namespace rcc::transport::verbs
