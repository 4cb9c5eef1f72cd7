// A StoreClient over a store that only sets, gets and counts (torch's TCPStore, a caller's
// rcc_store_t): what every value needs on such a store, in one place. Every value starts with one
// byte of rcc's: a plain value, or a consumable one followed by its count of reads. Each counted
// get of a consumable key adds one to a counter beside it, and the get that completes the count
// deletes both, so a finished exchange leaves nothing behind in a store that outlives the job. A
// store that cannot count keeps consumable keys. The leading byte also means no value is ever
// empty (torch's server holds an empty value's length back for 200 ms, see torch_store.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {

// What such a store offers.
class RawStore {
 public:
  virtual ~RawStore() = default;
  virtual std::string describe() const = 0;
  virtual Status put(const std::string& key, const std::vector<uint8_t>& bytes) = 0;
  // Waits up to timeout_s for key (RCC_ERR_TIMEOUT, quietly, when it is not set by then).
  virtual Status wait_get(const std::string& key, double timeout_s, std::vector<uint8_t>* bytes) = 0;
  // *found false when key is not set.
  virtual Status try_get(const std::string& key, bool* found, std::vector<uint8_t>* bytes) = 0;
  // Counting: whether add and remove work.
  virtual bool counts() const = 0;
  virtual Status add(const std::string& key, int64_t amount, int64_t* result) = 0;
  virtual Status remove(const std::string& key) = 0;
};

class MarkedStoreClient final : public StoreClient {
 public:
  explicit MarkedStoreClient(std::unique_ptr<RawStore> raw) : raw_(std::move(raw)) {}
  std::string describe() const override { return raw_->describe(); }
  Status set(const std::string& key, const std::vector<uint8_t>& value) override;
  Status set_consumable(const std::string& key, const std::vector<uint8_t>& value, uint32_t reads) override;
  Status get(const std::string& key, double timeout_s, std::vector<uint8_t>* value) override;
  Status try_get(const std::string& key, bool* found, std::vector<uint8_t>* value) override;
  // The store cannot list keys: removes the plain keys this client set under prefix (consumable
  // ones go with their last read).
  Status delete_prefix(const std::string& prefix) override;

 private:
  Status decode(const std::string& key, const std::vector<uint8_t>& bytes, bool counted, std::vector<uint8_t>* value);

  std::unique_ptr<RawStore> raw_;
  std::vector<std::string> own_keys_;
};

}  // namespace rcc::bootstrap
