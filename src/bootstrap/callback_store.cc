#include "bootstrap/callback_store.h"

#include <cmath>
#include <cstdlib>

#include "bootstrap/marked_store.h"

namespace rcc::bootstrap {
namespace {

class CallbackStore final : public RawStore {
 public:
  explicit CallbackStore(const rcc_store_t& store) : store_(store) {}

  std::string describe() const override { return "the caller's store (rcc_comm_init_store)"; }
  bool counts() const override { return store_.add != nullptr && store_.remove != nullptr; }

  Status put(const std::string& key, const std::vector<uint8_t>& bytes) override {
    return returned("set", key, store_.set(store_.context, key.c_str(), bytes.data(), bytes.size()));
  }

  Status wait_get(const std::string& key, double timeout_s, std::vector<uint8_t>* bytes) override {
    const int64_t timeout_ms = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(timeout_s * 1000)));
    const Status status = fetch(key, timeout_ms, bytes);
    if (status == RCC_ERR_TIMEOUT) {
      return fail_quietly(RCC_ERR_TIMEOUT, "key '%s' was not set in the caller's store within %.3g s", key.c_str(),
                          timeout_s);
    }
    return status;
  }

  Status try_get(const std::string& key, bool* found, std::vector<uint8_t>* bytes) override {
    const Status status = fetch(key, 0, bytes);
    *found = status == RCC_SUCCESS;
    return status == RCC_ERR_TIMEOUT ? RCC_SUCCESS : status;
  }

  // Quiet: counting and deleting only tidy up (MarkedStoreClient goes on without them).
  Status add(const std::string& key, int64_t amount, int64_t* result) override {
    const rcc_status_t status = store_.add(store_.context, key.c_str(), amount, result);
    return status == RCC_SUCCESS ? RCC_SUCCESS
                                 : fail_quietly(status, "the caller's store: add to '%s' returned %s", key.c_str(),
                                                rcc_status_string(status));
  }

  Status remove(const std::string& key) override {
    const rcc_status_t status = store_.remove(store_.context, key.c_str());
    return status == RCC_SUCCESS ? RCC_SUCCESS
                                 : fail_quietly(status, "the caller's store: remove of '%s' returned %s", key.c_str(),
                                                rcc_status_string(status));
  }

 private:
  // The callback's buffer, copied and freed; RCC_ERR_TIMEOUT passed on quietly.
  Status fetch(const std::string& key, int64_t timeout_ms, std::vector<uint8_t>* bytes) {
    void* value = nullptr;
    size_t size = 0;
    const rcc_status_t status = store_.get(store_.context, key.c_str(), timeout_ms, &value, &size);
    if (status == RCC_ERR_TIMEOUT) {
      std::free(value);
      return RCC_ERR_TIMEOUT;
    }
    if (status == RCC_SUCCESS && size > 0 && value == nullptr) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "the caller's store: get of '%s' gave %zu bytes at NULL", key.c_str(),
                  size);
    }
    if (status == RCC_SUCCESS) bytes->assign(static_cast<uint8_t*>(value), static_cast<uint8_t*>(value) + size);
    std::free(value);
    return returned("get", key, status);
  }

  static Status returned(const char* what, const std::string& key, rcc_status_t status) {
    if (status == RCC_SUCCESS) return RCC_SUCCESS;
    return fail(status, "the caller's store: %s of '%s' returned %s", what, key.c_str(), rcc_status_string(status));
  }

  rcc_store_t store_;
};

}  // namespace

Status make_callback_store(const rcc_store_t& store, std::unique_ptr<StoreClient>* out) {
  if (store.set == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_store: store->set is NULL");
  if (store.get == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "rcc_comm_init_store: store->get is NULL");
  if ((store.add == nullptr) != (store.remove == nullptr)) {
    return fail(RCC_ERR_INVALID_ARGUMENT,
                "rcc_comm_init_store: store->%s is NULL but store->%s is not (both or neither)",
                store.add == nullptr ? "add" : "remove", store.add == nullptr ? "remove" : "add");
  }
  *out = std::make_unique<MarkedStoreClient>(std::make_unique<CallbackStore>(store));
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
