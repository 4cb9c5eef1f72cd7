// TCPStore's protocol (torch/csrc/distributed/c10d/TCPStore.cpp, 1.13): a request is a query byte
// and its operands; a string or byte vector travels as a little-endian uint64 length and its bytes.
//   SET key value          -> nothing
//   GET key                -> value (the key must exist: WAIT first)
//   ADD key int64          -> the key's new value (an int64 counter)
//   CHECK n key...         -> READY (0) or NOT_READY (1)
//   WAIT n key...          -> STOP_WAITING (0) once all exist; the server keeps no deadline
//   DELETE_KEY key         -> int64 keys deleted
// Torch's clients put "/" before every key; so does this one, so the keys read the same from
// Python. A WAIT that outlives its deadline cannot be withdrawn, and its late answer would be
// taken for another request's: the connection is then dropped and the next request dials anew.
//
// Every value starts with one byte of rcc's. The server answers GET with the length under MSG_MORE
// and then the bytes, so an empty value would leave the length corked in the kernel for 200 ms
// (measured: 207 ms per GET of an empty value, 0.2 ms otherwise). The byte also marks consumable
// keys (set_consumable), followed by their count of reads: each counted get adds one to a counter
// beside the key, and the get that completes the count deletes both, so a finished exchange
// leaves nothing in an agent's store that outlives the job.
#include "bootstrap/torch_store.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "base/log.h"
#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {
namespace {

enum class Query : uint8_t { kSet = 0, kGet = 2, kAdd = 3, kCheck = 4, kWait = 5, kDeleteKey = 8 };
constexpr uint8_t kReady = 0;
constexpr uint8_t kStopWaiting = 0;
constexpr uint8_t kPlainValue = 1;       // then the value
constexpr uint8_t kConsumableValue = 2;  // then uint32 reads, then the value
// A live server answers SET, CHECK, ADD, GET of an existing key and DELETE_KEY at once.
constexpr double kIoTimeoutSeconds = 60;

void append_u64(uint64_t value, std::vector<uint8_t>* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<uint8_t>(value >> (8 * i)));
}
void append_key(const std::string& key, std::vector<uint8_t>* out) {
  append_u64(key.size() + 1, out);
  out->push_back('/');
  out->insert(out->end(), key.begin(), key.end());
}
uint64_t read_u64(const uint8_t* bytes) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  return value;
}

class TorchStoreClient final : public StoreClient {
 public:
  TorchStoreClient(std::string host, int port) : host_(std::move(host)), port_(port) {}
  ~TorchStoreClient() override { drop(); }

  std::string describe() const override { return "torchrun's store at " + join_address(host_, port_); }

  Status dial(Clock::time_point deadline) { return ensure_connected(deadline); }

  Status set(const std::string& key, const std::vector<uint8_t>& value) override {
    return put(key, {kPlainValue}, value);
  }

  Status set_consumable(const std::string& key, const std::vector<uint8_t>& value, uint32_t reads) override {
    std::vector<uint8_t> head{kConsumableValue};
    for (int i = 0; i < 4; ++i) head.push_back(static_cast<uint8_t>(reads >> (8 * i)));
    return put(key, head, value);
  }

  Status get(const std::string& key, double timeout_s, std::vector<uint8_t>* value) override {
    RCC_RETURN_IF_ERROR(check(key, 0));
    const Clock::time_point deadline = deadline_after(timeout_s);
    RCC_RETURN_IF_ERROR(ensure_connected(deadline));
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kWait)};
    append_u64(1, &wire);
    append_key(key, &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    uint8_t answer = 0;
    Status status = receive(&answer, 1, deadline);
    if (status == RCC_ERR_TIMEOUT) {
      drop();  // the WAIT stays registered at the server: its late answer must not meet a new request
      return fail_quietly(RCC_ERR_TIMEOUT, "key '%s' was not set in %s within %.3g s", key.c_str(), describe().c_str(),
                          timeout_s);
    }
    RCC_RETURN_IF_ERROR(status);
    if (answer != kStopWaiting) return broken("an unexpected answer to WAIT");
    return fetch(key, true, deadline_after(kIoTimeoutSeconds), value);
  }

  Status try_get(const std::string& key, bool* found, std::vector<uint8_t>* value) override {
    RCC_RETURN_IF_ERROR(check(key, 0));
    const Clock::time_point deadline = deadline_after(kIoTimeoutSeconds);
    RCC_RETURN_IF_ERROR(ensure_connected(deadline));
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kCheck)};
    append_u64(1, &wire);
    append_key(key, &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    uint8_t answer = 0;
    RCC_RETURN_IF_ERROR(receive(&answer, 1, deadline));
    *found = answer == kReady;
    return *found ? fetch(key, false, deadline, value) : RCC_SUCCESS;
  }

  // The store cannot list keys: this removes the keys this client set under prefix (which the
  // counted gets have not removed already).
  Status delete_prefix(const std::string& prefix) override {
    const Clock::time_point deadline = deadline_after(kIoTimeoutSeconds);
    RCC_RETURN_IF_ERROR(ensure_connected(deadline));
    for (auto it = own_keys_.begin(); it != own_keys_.end();) {
      if (it->compare(0, prefix.size(), prefix) != 0) {
        ++it;
        continue;
      }
      RCC_RETURN_IF_ERROR(delete_key(*it, deadline));
      it = own_keys_.erase(it);
    }
    return RCC_SUCCESS;
  }

 private:
  Status check(const std::string& key, size_t value_bytes) const {
    if (key.empty() || key.size() > kMaxKeyBytes) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "store key must be 1..%zu bytes, got %zu", kMaxKeyBytes, key.size());
    }
    if (value_bytes > kMaxValueBytes) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "store value for '%s' is %zu bytes, over the limit of %zu", key.c_str(),
                  value_bytes, kMaxValueBytes);
    }
    return RCC_SUCCESS;
  }

  Status put(const std::string& key, const std::vector<uint8_t>& head, const std::vector<uint8_t>& value) {
    RCC_RETURN_IF_ERROR(check(key, value.size()));
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kSet)};
    append_key(key, &wire);
    append_u64(head.size() + value.size(), &wire);
    wire.insert(wire.end(), head.begin(), head.end());
    wire.insert(wire.end(), value.begin(), value.end());
    const Clock::time_point deadline = deadline_after(kIoTimeoutSeconds);
    RCC_RETURN_IF_ERROR(ensure_connected(deadline));
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    if (head[0] == kPlainValue) {
      own_keys_.push_back(key);
    }
    return RCC_SUCCESS;
  }

  Status ensure_connected(Clock::time_point deadline) {
    if (fd_ >= 0) return RCC_SUCCESS;
    return dial_tcp(host_, port_, deadline, &fd_);
  }

  // GETs an existing key; a counted read of a consumable key adds to its counter and removes the
  // key once every reader has it.
  Status fetch(const std::string& key, bool counted, Clock::time_point deadline, std::vector<uint8_t>* value) {
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kGet)};
    append_key(key, &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    uint8_t length_bytes[8];
    RCC_RETURN_IF_ERROR(receive(length_bytes, sizeof length_bytes, deadline));
    const uint64_t length = read_u64(length_bytes);
    if (length > kMaxValueBytes + 5) return broken("a value over the size limit");
    std::vector<uint8_t> bytes(length);
    if (length > 0) RCC_RETURN_IF_ERROR(receive(bytes.data(), bytes.size(), deadline));
    size_t head = 1;
    uint32_t reads = 0;
    if (!bytes.empty() && bytes[0] == kConsumableValue && bytes.size() >= 5) {
      head = 5;
      for (int i = 0; i < 4; ++i) reads |= static_cast<uint32_t>(bytes[1 + static_cast<size_t>(i)]) << (8 * i);
    } else if (bytes.empty() || bytes[0] != kPlainValue) {
      return fail(RCC_ERR_BOOTSTRAP, "key '%s' in %s holds a value rcc did not write", key.c_str(), describe().c_str());
    }
    value->assign(bytes.begin() + static_cast<std::ptrdiff_t>(head), bytes.end());
    if (counted && reads > 0) {
      int64_t read_so_far = 0;
      RCC_RETURN_IF_ERROR(add(key + "#reads", 1, deadline, &read_so_far));
      if (read_so_far >= static_cast<int64_t>(reads)) {
        RCC_RETURN_IF_ERROR(delete_key(key, deadline));
        RCC_RETURN_IF_ERROR(delete_key(key + "#reads", deadline));
      }
    }
    return RCC_SUCCESS;
  }

  Status add(const std::string& key, int64_t amount, Clock::time_point deadline, int64_t* result) {
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kAdd)};
    append_key(key, &wire);
    append_u64(static_cast<uint64_t>(amount), &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    uint8_t answer[8];
    RCC_RETURN_IF_ERROR(receive(answer, sizeof answer, deadline));
    *result = static_cast<int64_t>(read_u64(answer));
    return RCC_SUCCESS;
  }

  Status delete_key(const std::string& key, Clock::time_point deadline) {
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kDeleteKey)};
    append_key(key, &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    uint8_t deleted[8];
    return receive(deleted, sizeof deleted, deadline);
  }

  Status send(const std::vector<uint8_t>& wire, Clock::time_point deadline) {
    const std::string what = describe();
    Status status = send_all(fd_, wire.data(), wire.size(), deadline, what.c_str());
    if (status != RCC_SUCCESS) drop();  // a partial request may be on the wire
    return status;
  }

  Status receive(void* data, size_t size, Clock::time_point deadline) {
    const std::string what = describe();
    auto* bytes = static_cast<uint8_t*>(data);
    size_t got = 0;
    while (got < size) {
      size_t received = 0;
      Status status = recv_some(fd_, bytes + got, size - got, deadline, what.c_str(), &received);
      if (status != RCC_SUCCESS) {
        if (status != RCC_ERR_TIMEOUT) drop();
        return status;
      }
      got += received;
    }
    return RCC_SUCCESS;
  }

  Status broken(const char* what) {
    drop();
    return fail(RCC_ERR_BOOTSTRAP, "%s answered with %s", describe().c_str(), what);
  }

  void drop() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  std::string host_;
  int port_;
  int fd_ = -1;
  std::vector<std::string> own_keys_;  // plain keys this client set (delete_prefix)
};

}  // namespace

Status connect_torch_store(const std::string& address, double timeout_s, std::unique_ptr<StoreClient>* out) {
  std::string host;
  int port = 0;
  RCC_RETURN_IF_ERROR(split_address(address, "MASTER_ADDR:MASTER_PORT", &host, &port));
  auto client = std::make_unique<TorchStoreClient>(host, port);
  const Clock::time_point deadline = deadline_after(timeout_s);
  while (client->dial(deadline) != RCC_SUCCESS) {
    const std::string reason = last_error();
    if (Clock::now() >= deadline) {
      return fail(RCC_ERR_BOOTSTRAP, "could not reach torchrun's store at %s within %.3g s (RCC_BOOTSTRAP_TIMEOUT): %s",
                  address.c_str(), timeout_s, reason.c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100, ms_until(deadline))));
  }
  *out = std::move(client);
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
