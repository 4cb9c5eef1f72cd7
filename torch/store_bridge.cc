#include "store_bridge.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace rcc_torch {
namespace {

c10d::Store& store_of(void* context) { return *static_cast<c10d::Store*>(context); }

// torch's stores throw; rcc's callbacks return a status (a timeout is how a missing key looks).
rcc_status_t set(void* context, const char* key, const void* value, size_t size) {
  try {
    const auto* bytes = static_cast<const uint8_t*>(value);
    store_of(context).set(key, std::vector<uint8_t>(bytes, bytes + size));
    return RCC_SUCCESS;
  } catch (const std::exception&) {
    return RCC_ERR_BOOTSTRAP;
  }
}

rcc_status_t get(void* context, const char* key, int64_t timeout_ms, void** value, size_t* size) {
  try {
    c10d::Store& store = store_of(context);
    if (timeout_ms == 0) {
      if (!store.check({key})) return RCC_ERR_TIMEOUT;
    } else {
      try {
        store.wait({key}, std::chrono::milliseconds(timeout_ms));
      } catch (const std::exception&) {
        if (!store.check({key})) return RCC_ERR_TIMEOUT;
      }
    }
    const std::vector<uint8_t> bytes = store.get(key);
    void* copy = bytes.empty() ? nullptr : std::malloc(bytes.size());
    if (!bytes.empty() && copy == nullptr) return RCC_ERR_NO_MEMORY;
    if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
    *value = copy;
    *size = bytes.size();
    return RCC_SUCCESS;
  } catch (const std::exception&) {
    return RCC_ERR_BOOTSTRAP;
  }
}

rcc_status_t add(void* context, const char* key, int64_t amount, int64_t* result) {
  try {
    *result = store_of(context).add(key, amount);
    return RCC_SUCCESS;
  } catch (const std::exception&) {
    return RCC_ERR_BOOTSTRAP;
  }
}

rcc_status_t remove(void* context, const char* key) {
  try {
    store_of(context).deleteKey(key);
    return RCC_SUCCESS;
  } catch (const std::exception&) {
    return RCC_ERR_BOOTSTRAP;
  }
}

}  // namespace

StoreBridge::StoreBridge(c10::intrusive_ptr<c10d::Store> store) : store_(std::move(store)) {
  callbacks_.context = store_.get();
  callbacks_.set = &set;
  callbacks_.get = &get;
  callbacks_.add = &add;
  callbacks_.remove = &remove;
}

}  // namespace rcc_torch
