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
// The server answers GET with the length under MSG_MORE and then the bytes, so an empty value
// leaves the length corked in the kernel for 200 ms (measured: 207 ms per GET of an empty value,
// 0.2 ms otherwise); MarkedStoreClient never stores one.
#include "bootstrap/torch_store.h"

#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "base/log.h"
#include "bootstrap/marked_store.h"
#include "bootstrap/socket_util.h"

namespace rcc::bootstrap {
namespace {

enum class Query : uint8_t { kSet = 0, kGet = 2, kAdd = 3, kCheck = 4, kWait = 5, kDeleteKey = 8 };
constexpr uint8_t kReady = 0;
constexpr uint8_t kStopWaiting = 0;
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

class TorchStoreConnection final : public RawStore {
 public:
  TorchStoreConnection(std::string host, int port) : host_(std::move(host)), port_(port) {}
  ~TorchStoreConnection() override { drop(); }

  std::string describe() const override { return "torchrun's store at " + join_address(host_, port_); }
  bool counts() const override { return true; }

  Status dial(Clock::time_point deadline) { return fd_ >= 0 ? RCC_SUCCESS : dial_tcp(host_, port_, deadline, &fd_); }

  Status put(const std::string& key, const std::vector<uint8_t>& bytes) override {
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kSet)};
    append_key(key, &wire);
    append_u64(bytes.size(), &wire);
    wire.insert(wire.end(), bytes.begin(), bytes.end());
    const Clock::time_point deadline = deadline_after(kIoTimeoutSeconds);
    RCC_RETURN_IF_ERROR(dial(deadline));
    return send(wire, deadline);
  }

  Status wait_get(const std::string& key, double timeout_s, std::vector<uint8_t>* bytes) override {
    const Clock::time_point deadline = deadline_after(timeout_s);
    uint8_t answer = 0;
    Status status = ask_about(Query::kWait, key, deadline, &answer);
    if (status == RCC_ERR_TIMEOUT) {
      drop();  // the WAIT stays registered at the server: its late answer must not meet a new request
      return fail_quietly(RCC_ERR_TIMEOUT, "key '%s' was not set in %s within %.3g s", key.c_str(), describe().c_str(),
                          timeout_s);
    }
    RCC_RETURN_IF_ERROR(status);
    if (answer != kStopWaiting) return broken("an unexpected answer to WAIT");
    return fetch(key, deadline_after(kIoTimeoutSeconds), bytes);
  }

  Status try_get(const std::string& key, bool* found, std::vector<uint8_t>* bytes) override {
    const Clock::time_point deadline = deadline_after(kIoTimeoutSeconds);
    uint8_t answer = 0;
    RCC_RETURN_IF_ERROR(ask_about(Query::kCheck, key, deadline, &answer));
    *found = answer == kReady;
    return *found ? fetch(key, deadline, bytes) : RCC_SUCCESS;
  }

  Status add(const std::string& key, int64_t amount, int64_t* result) override {
    const Clock::time_point deadline = deadline_after(kIoTimeoutSeconds);
    RCC_RETURN_IF_ERROR(dial(deadline));
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kAdd)};
    append_key(key, &wire);
    append_u64(static_cast<uint64_t>(amount), &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    uint8_t answer[8];
    RCC_RETURN_IF_ERROR(receive(answer, sizeof answer, deadline));
    *result = static_cast<int64_t>(read_u64(answer));
    return RCC_SUCCESS;
  }

  Status remove(const std::string& key) override {
    const Clock::time_point deadline = deadline_after(kIoTimeoutSeconds);
    RCC_RETURN_IF_ERROR(dial(deadline));
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kDeleteKey)};
    append_key(key, &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    uint8_t deleted[8];
    return receive(deleted, sizeof deleted, deadline);
  }

 private:
  // WAIT or CHECK of one key: its one-byte answer (RCC_ERR_TIMEOUT, the connection kept, when the
  // deadline passes first).
  Status ask_about(Query query, const std::string& key, Clock::time_point deadline, uint8_t* answer) {
    RCC_RETURN_IF_ERROR(dial(deadline));
    std::vector<uint8_t> wire{static_cast<uint8_t>(query)};
    append_u64(1, &wire);
    append_key(key, &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    return receive(answer, 1, deadline);
  }

  Status fetch(const std::string& key, Clock::time_point deadline, std::vector<uint8_t>* bytes) {
    std::vector<uint8_t> wire{static_cast<uint8_t>(Query::kGet)};
    append_key(key, &wire);
    RCC_RETURN_IF_ERROR(send(wire, deadline));
    uint8_t length_bytes[8];
    RCC_RETURN_IF_ERROR(receive(length_bytes, sizeof length_bytes, deadline));
    const uint64_t length = read_u64(length_bytes);
    if (length > kMaxValueBytes + 16) return broken("a value over the size limit");
    bytes->resize(length);
    return length == 0 ? RCC_SUCCESS : receive(bytes->data(), bytes->size(), deadline);
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
};

}  // namespace

Status connect_torch_store(const std::string& address, double timeout_s, std::unique_ptr<StoreClient>* out) {
  std::string host;
  int port = 0;
  RCC_RETURN_IF_ERROR(split_address(address, "MASTER_ADDR:MASTER_PORT", &host, &port));
  auto connection = std::make_unique<TorchStoreConnection>(host, port);
  const Clock::time_point deadline = deadline_after(timeout_s);
  while (connection->dial(deadline) != RCC_SUCCESS) {
    const std::string reason = last_error();
    if (Clock::now() >= deadline) {
      return fail(RCC_ERR_BOOTSTRAP, "could not reach torchrun's store at %s within %.3g s (RCC_BOOTSTRAP_TIMEOUT): %s",
                  address.c_str(), timeout_s, reason.c_str());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100, ms_until(deadline))));
  }
  *out = std::make_unique<MarkedStoreClient>(std::move(connection));
  return RCC_SUCCESS;
}

}  // namespace rcc::bootstrap
