#include "bootstrap/marked_store.h"

#include <cstring>

namespace rcc::bootstrap {
namespace {

constexpr uint8_t kPlainValue = 1;       // then the value
constexpr uint8_t kConsumableValue = 2;  // then uint32 reads (little-endian), then the value

// head, then value (one buffer sized once: GCC 12 misreads an insert after a one-byte init as
// out of bounds).
std::vector<uint8_t> framed(const uint8_t* head, size_t head_bytes, const std::vector<uint8_t>& value) {
  std::vector<uint8_t> bytes(head_bytes + value.size());
  std::memcpy(bytes.data(), head, head_bytes);
  if (!value.empty()) std::memcpy(bytes.data() + head_bytes, value.data(), value.size());
  return bytes;
}

Status check(const std::string& key, size_t value_bytes) {
  if (key.empty() || key.size() > kMaxKeyBytes) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "store key must be 1..%zu bytes, got %zu", kMaxKeyBytes, key.size());
  }
  if (value_bytes > kMaxValueBytes) {
    return fail(RCC_ERR_INVALID_ARGUMENT, "store value for '%s' is %zu bytes, over the limit of %zu", key.c_str(),
                value_bytes, kMaxValueBytes);
  }
  return RCC_SUCCESS;
}

}  // namespace

Status MarkedStoreClient::set(const std::string& key, const std::vector<uint8_t>& value) {
  RCC_RETURN_IF_ERROR(check(key, value.size()));
  const uint8_t head[1] = {kPlainValue};
  RCC_RETURN_IF_ERROR(raw_->put(key, framed(head, sizeof head, value)));
  own_keys_.push_back(key);
  return RCC_SUCCESS;
}

Status MarkedStoreClient::set_consumable(const std::string& key, const std::vector<uint8_t>& value, uint32_t reads) {
  if (!raw_->counts()) return set(key, value);
  RCC_RETURN_IF_ERROR(check(key, value.size()));
  const uint8_t head[5] = {kConsumableValue, static_cast<uint8_t>(reads), static_cast<uint8_t>(reads >> 8),
                           static_cast<uint8_t>(reads >> 16), static_cast<uint8_t>(reads >> 24)};
  return raw_->put(key, framed(head, sizeof head, value));
}

Status MarkedStoreClient::get(const std::string& key, double timeout_s, std::vector<uint8_t>* value) {
  RCC_RETURN_IF_ERROR(check(key, 0));
  std::vector<uint8_t> bytes;
  RCC_RETURN_IF_ERROR(raw_->wait_get(key, timeout_s, &bytes));
  return decode(key, bytes, true, value);
}

Status MarkedStoreClient::try_get(const std::string& key, bool* found, std::vector<uint8_t>* value) {
  RCC_RETURN_IF_ERROR(check(key, 0));
  std::vector<uint8_t> bytes;
  RCC_RETURN_IF_ERROR(raw_->try_get(key, found, &bytes));
  return *found ? decode(key, bytes, false, value) : RCC_SUCCESS;
}

Status MarkedStoreClient::delete_prefix(const std::string& prefix) {
  if (!raw_->counts()) return RCC_SUCCESS;
  for (auto it = own_keys_.begin(); it != own_keys_.end();) {
    if (it->compare(0, prefix.size(), prefix) != 0) {
      ++it;
      continue;
    }
    RCC_RETURN_IF_ERROR(raw_->remove(*it));
    it = own_keys_.erase(it);
  }
  return RCC_SUCCESS;
}

Status MarkedStoreClient::decode(const std::string& key, const std::vector<uint8_t>& bytes, bool counted,
                                 std::vector<uint8_t>* value) {
  size_t head = 1;
  uint32_t reads = 0;
  if (!bytes.empty() && bytes[0] == kConsumableValue && bytes.size() >= 5) {
    head = 5;
    for (size_t i = 0; i < 4; ++i) reads |= static_cast<uint32_t>(bytes[1 + i]) << (8 * i);
  } else if (bytes.empty() || bytes[0] != kPlainValue) {
    return fail(RCC_ERR_BOOTSTRAP, "key '%s' in %s holds a value rcc did not write", key.c_str(),
                raw_->describe().c_str());
  }
  value->assign(bytes.begin() + static_cast<std::ptrdiff_t>(head), bytes.end());
  // Counting only tidies up: a store that fails to count or delete (torch's FileStore cannot
  // delete) keeps the keys, and the exchange has its value all the same.
  int64_t read_so_far = 0;
  if (counted && reads > 0 && raw_->add(key + "#reads", 1, &read_so_far) == RCC_SUCCESS &&
      read_so_far >= static_cast<int64_t>(reads) && raw_->remove(key) == RCC_SUCCESS) {
    (void)raw_->remove(key + "#reads");
  }
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
