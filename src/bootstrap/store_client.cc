// The store client (one connection, one request at a time, every wait bounded by a deadline),
// allgather/barrier on top of it, and make_secret.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "base/log.h"
#include "bootstrap/frame.h"
#include "bootstrap/socket_util.h"
#include "bootstrap/store.h"

namespace rcc::bootstrap {
namespace {

class StoreClientImpl final : public StoreClient {
 public:
  StoreClientImpl(int fd, std::string address) : fd_(fd), address_(std::move(address)) {}
  ~StoreClientImpl() override { close(fd_); }

  // Presents the secret; the server answers kOk or closes.
  Status hello(const std::string& secret, Clock::time_point deadline) {
    Frame reply;
    Status status = request(FrameType::kHello, "", reinterpret_cast<const uint8_t*>(secret.data()), secret.size(),
                            deadline, &reply);
    if (status == RCC_ERR_BOOTSTRAP) {
      return fail(RCC_ERR_BOOTSTRAP, "the store at %s refused this connection (wrong RCC_JOB_SECRET?)",
                  address_.c_str());
    }
    return status;
  }

  std::string describe() const override { return "the store at " + address_; }

  Status set(const std::string& key, const std::vector<uint8_t>& value) override {
    RCC_RETURN_IF_ERROR(check_key(key));
    if (value.size() > kMaxValueBytes) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "store value for '%s' is %zu bytes, over the limit of %zu", key.c_str(),
                  value.size(), kMaxValueBytes);
    }
    Frame reply;
    return request(FrameType::kSet, key, value.data(), value.size(), deadline_after(kIoTimeoutSeconds), &reply);
  }

  Status get(const std::string& key, double timeout_s, std::vector<uint8_t>* value) override {
    RCC_RETURN_IF_ERROR(check_key(key));
    if (value == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "store get: value is null");
    Frame reply;
    Status status = request(FrameType::kGet, key, nullptr, 0, deadline_after(timeout_s), &reply);
    if (status == RCC_ERR_TIMEOUT) {
      return fail_quietly(RCC_ERR_TIMEOUT, "key '%s' was not set in the store at %s within %.3g s", key.c_str(),
                          address_.c_str(), timeout_s);
    }
    RCC_RETURN_IF_ERROR(status);
    *value = std::move(reply.value);
    return RCC_SUCCESS;
  }

  Status try_get(const std::string& key, bool* found, std::vector<uint8_t>* value) override {
    RCC_RETURN_IF_ERROR(check_key(key));
    if (found == nullptr || value == nullptr)
      return fail(RCC_ERR_INVALID_ARGUMENT, "store try_get: found or value is null");
    Frame reply;
    RCC_RETURN_IF_ERROR(request(FrameType::kTryGet, key, nullptr, 0, deadline_after(kIoTimeoutSeconds), &reply));
    *found = reply.type == FrameType::kValue;
    if (*found) *value = std::move(reply.value);
    return RCC_SUCCESS;
  }

  Status delete_prefix(const std::string& prefix) override {
    RCC_RETURN_IF_ERROR(check_key(prefix));
    Frame reply;
    return request(FrameType::kDeletePrefix, prefix, nullptr, 0, deadline_after(kIoTimeoutSeconds), &reply);
  }

  Status set_consumable(const std::string& key, const std::vector<uint8_t>& value, uint32_t reads) override {
    std::vector<uint8_t> framed(4 + value.size());
    for (int i = 0; i < 4; ++i) framed[static_cast<size_t>(i)] = static_cast<uint8_t>(reads >> (8 * i));
    std::copy(value.begin(), value.end(), framed.begin() + 4);
    Frame reply;
    return request(FrameType::kSetConsumable, key, framed.data(), framed.size(), deadline_after(kIoTimeoutSeconds),
                   &reply);
  }

 private:
  // Sets and try-gets are answered at once by a live server; this only bounds a wedged one.
  static constexpr double kIoTimeoutSeconds = 60;

  static Status check_key(const std::string& key) {
    if (key.empty() || key.size() > kMaxKeyBytes) {
      return fail(RCC_ERR_INVALID_ARGUMENT, "store key must be 1..%zu bytes, got %zu", kMaxKeyBytes, key.size());
    }
    return RCC_SUCCESS;
  }

  // Sends one request and waits for the reply with its id. Replies to earlier requests that timed
  // out (a get answered late) are skipped.
  Status request(FrameType type, const std::string& key, const uint8_t* value, size_t value_size,
                 Clock::time_point deadline, Frame* reply) {
    if (broken_) return fail(RCC_ERR_BOOTSTRAP, "the connection to the store at %s is broken", address_.c_str());
    const uint64_t id = ++last_id_;
    std::vector<uint8_t> wire;
    append_frame(type, id, key, value, value_size, &wire);
    Status status = send_all(fd_, wire.data(), wire.size(), deadline, address_.c_str());
    if (status != RCC_SUCCESS) {
      broken_ = true;  // a partial frame may be on the wire
      return status;
    }
    for (;;) {
      size_t consumed = 0;
      std::string error;
      ParseResult result = parse_frame(in_.data(), in_.size(), kMaxValueBytes, reply, &consumed, &error);
      if (result == ParseResult::kMalformed) {
        broken_ = true;
        return fail(RCC_ERR_BOOTSTRAP, "malformed reply from the store at %s: %s", address_.c_str(), error.c_str());
      }
      if (result == ParseResult::kFrame) {
        in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(consumed));
        if (reply->id == id) return RCC_SUCCESS;
        continue;
      }
      uint8_t buffer[65536];
      size_t received = 0;
      status = recv_some(fd_, buffer, sizeof buffer, deadline, address_.c_str(), &received);
      if (status == RCC_ERR_TIMEOUT) return status;  // the reply may still come; its id is skipped then
      if (status != RCC_SUCCESS) {
        broken_ = true;
        return status;
      }
      in_.insert(in_.end(), buffer, buffer + received);
    }
  }

  int fd_;
  std::string address_;
  uint64_t last_id_ = 0;
  bool broken_ = false;
  std::vector<uint8_t> in_;
};

std::string list_ranks(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) text += ", ";
    if (i == 8 && ranks.size() > 10) {
      text += "... (" + std::to_string(ranks.size() - 8) + " more)";
      break;
    }
    text += std::to_string(ranks[i]);
  }
  return text;
}

}  // namespace

Status make_secret(std::string* secret) {
  if (secret == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "make_secret: secret is null");
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(RCC_ERR_INTERNAL, "cannot open /dev/urandom: %s", std::strerror(errno));
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = read(fd, bytes + got, sizeof bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return fail(RCC_ERR_INTERNAL, "cannot read /dev/urandom");
    }
    got += static_cast<size_t>(n);
  }
  close(fd);
  static const char kHex[] = "0123456789abcdef";
  std::string text;
  for (unsigned char b : bytes) {
    text += kHex[b >> 4];
    text += kHex[b & 15];
  }
  *secret = text;
  return RCC_SUCCESS;
}

namespace {

// One dial and hello; *dialed says whether the connection was made (a failure after it is the
// server's answer, not its absence).
Status attempt(const std::string& host, int port, const std::string& address, const std::string& secret,
               Clock::time_point deadline, bool* dialed, std::unique_ptr<StoreClient>* out) {
  int fd = -1;
  *dialed = false;
  RCC_RETURN_IF_ERROR(dial_tcp(host, port, deadline, &fd));
  *dialed = true;
  auto client = std::make_unique<StoreClientImpl>(fd, address);
  RCC_RETURN_IF_ERROR(client->hello(secret, deadline));
  *out = std::move(client);
  return RCC_SUCCESS;
}

Status parse_target(const char* function, const std::string& address, const std::string& secret, const void* out,
                    std::string* host, int* port) {
  if (out == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "StoreClient::%s: out is null", function);
  if (secret.empty()) return fail(RCC_ERR_INVALID_ARGUMENT, "store secret is empty");
  return split_address(address, "store address", host, port);
}

}  // namespace

Status StoreClient::connect_once(const std::string& address, const std::string& secret, double timeout_s,
                                 std::unique_ptr<StoreClient>* out) {
  std::string host;
  int port = 0;
  RCC_RETURN_IF_ERROR(parse_target("connect_once", address, secret, out, &host, &port));
  bool dialed = false;
  return attempt(host, port, address, secret, deadline_after(timeout_s), &dialed, out);
}

Status StoreClient::connect(const std::string& address, const std::string& secret, double timeout_s,
                            std::unique_ptr<StoreClient>* out) {
  std::string host;
  int port = 0;
  RCC_RETURN_IF_ERROR(parse_target("connect", address, secret, out, &host, &port));
  const Clock::time_point deadline = deadline_after(timeout_s);
  std::string last_reason;
  for (;;) {
    bool dialed = false;
    const Status status = attempt(host, port, address, secret, deadline, &dialed, out);
    if (status == RCC_SUCCESS) return RCC_SUCCESS;
    if (dialed && status != RCC_ERR_TIMEOUT) return status;  // the server refused this secret
    last_reason = last_error();
    if (Clock::now() >= deadline) break;
    // The server may not be up yet: retry, without spinning.
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(100, ms_until(deadline))));
  }
  return fail(RCC_ERR_BOOTSTRAP, "could not reach the rendezvous store at %s within %.3g s (RCC_BOOTSTRAP_TIMEOUT): %s",
              address.c_str(), timeout_s, last_reason.c_str());
}

Status allgather(StoreClient& store, const std::string& prefix, int rank, int size, const std::vector<uint8_t>& mine,
                 double timeout_s, std::vector<std::vector<uint8_t>>* all) {
  if (size < 1) return fail(RCC_ERR_INVALID_ARGUMENT, "allgather: size %d must be at least 1", size);
  if (rank < 0 || rank >= size)
    return fail(RCC_ERR_INVALID_ARGUMENT, "allgather: rank %d is not in [0, %d)", rank, size);
  if (all == nullptr) return fail(RCC_ERR_INVALID_ARGUMENT, "allgather: all is null");
  const Clock::time_point deadline = deadline_after(timeout_s);
  if (size > 1) RCC_RETURN_IF_ERROR(store.set_consumable(prefix + "/" + std::to_string(rank), mine, size - 1));
  std::vector<std::vector<uint8_t>> gathered(static_cast<size_t>(size));
  gathered[static_cast<size_t>(rank)] = mine;
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    double left = std::chrono::duration<double>(deadline - Clock::now()).count();
    Status status = store.get(prefix + "/" + std::to_string(r), left > 0 ? left : 0, &gathered[static_cast<size_t>(r)]);
    if (status == RCC_ERR_TIMEOUT) {
      // Name every rank that is missing, not just the first one waited for.
      std::vector<int> missing{r};
      for (int later = r + 1; later < size; ++later) {
        if (later == rank) continue;
        bool found = false;
        std::vector<uint8_t> ignored;
        if (store.try_get(prefix + "/" + std::to_string(later), &found, &ignored) == RCC_SUCCESS && !found) {
          missing.push_back(later);
        }
      }
      return fail(RCC_ERR_TIMEOUT,
                  "rank%s %s of %d did not arrive at the rendezvous '%s' within %.3g s (RCC_BOOTSTRAP_TIMEOUT)",
                  missing.size() > 1 ? "s" : "", list_ranks(missing).c_str(), size, prefix.c_str(), timeout_s);
    }
    if (status != RCC_SUCCESS) {
      // The store went away (its host rank probably gave up or died): name who we were waiting for.
      std::string reason = last_error();
      std::vector<int> pending;
      for (int later = r; later < size; ++later) {
        if (later != rank) pending.push_back(later);
      }
      return fail(status, "rank%s %s of %d did not arrive at the rendezvous '%s' before the store failed: %s",
                  pending.size() > 1 ? "s" : "", list_ranks(pending).c_str(), size, prefix.c_str(), reason.c_str());
    }
  }
  *all = std::move(gathered);
  return RCC_SUCCESS;
}

Status barrier(StoreClient& store, const std::string& prefix, int rank, int size, double timeout_s) {
  std::vector<std::vector<uint8_t>> ignored;
  return allgather(store, prefix, rank, size, {}, timeout_s, &ignored);
}

}  // namespace rcc::bootstrap
