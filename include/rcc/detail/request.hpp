// rcc.hpp's requests: rcc::MessageInfo, rcc::Request, rcc::wait_all, rcc::wait_any. Included by
// rcc/rcc.hpp; not meant to be included on its own.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "rcc/detail/error.hpp"
#include "rcc/rcc.h"

namespace rcc {

// What a receive or probe matched: the sender (rank in the communicator), the tag and the length
// in bytes; for a send request: its peer, tag and length.
struct MessageInfo {
  int source = RCC_ANY_SOURCE;
  int tag = RCC_ANY_TAG;
  std::size_t bytes = 0;

  // The length in elements of T.
  template <class T>
  constexpr std::size_t count() const noexcept {
    return bytes / sizeof(T);
  }
  friend constexpr bool operator==(const MessageInfo&, const MessageInfo&) = default;
};

namespace detail {
constexpr MessageInfo to_message_info(const rcc_msg_info_t& info) noexcept {
  return {info.source, info.tag, info.bytes};
}
}  // namespace detail

// A pending nonblocking call (move-only). Empty when default-constructed, moved from, or once it
// completed; an empty request counts as complete: wait() returns at once and test() is true.
// The destructor (and assigning over a pending request) waits for it, ignoring its failure: wait()
// first to see that.
class Request {
 public:
  Request() noexcept = default;
  // Takes ownership of a pending rcc_request_t (nullptr: empty).
  explicit Request(rcc_request_t handle) noexcept : handle_(handle) {}
  Request(Request&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Request& operator=(Request&& other) noexcept {
    if (this != &other) {
      finish_quietly();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { finish_quietly(); }

  bool valid() const noexcept { return handle_ != nullptr; }

  // Waits for completion; the request is empty afterwards, also when this throws.
  void wait() {
    if (handle_ != nullptr) detail::check(rcc_wait(std::exchange(handle_, nullptr)));
  }
  // As wait(), and says what was received (or sent). Throws RCC_ERR_INVALID_USAGE when empty.
  MessageInfo wait_info() {
    rcc_msg_info_t info{};
    require_pending("wait_info");
    detail::check(rcc_wait_info(std::exchange(handle_, nullptr), &info));
    return detail::to_message_info(info);
  }
  // True once complete (the request is then empty), false while pending. Throws when it failed.
  bool test() {
    if (handle_ == nullptr) return true;
    int done = 0;
    const rcc_status_t status = rcc_test(handle_, &done);
    if (done != 0) handle_ = nullptr;
    detail::check(status);
    return done != 0;
  }
  // As test(), with what was received once complete. Throws RCC_ERR_INVALID_USAGE when empty.
  std::optional<MessageInfo> test_info() {
    require_pending("test_info");
    int done = 0;
    rcc_msg_info_t info{};
    const rcc_status_t status = rcc_test_info(handle_, &done, &info);
    if (done != 0) handle_ = nullptr;
    detail::check(status);
    return done != 0 ? std::optional(detail::to_message_info(info)) : std::nullopt;
  }

  rcc_request_t native() const noexcept { return handle_; }
  // Gives up ownership: the caller waits for the handle (rcc_wait) and the request is empty.
  rcc_request_t release() noexcept { return std::exchange(handle_, nullptr); }

 private:
  void require_pending(const char* function) const {
    if (handle_ == nullptr) {
      throw Error(RCC_ERR_INVALID_USAGE, std::string("rcc::Request::") + function + ": the request is empty");
    }
  }
  void finish_quietly() noexcept {
    if (handle_ != nullptr) static_cast<void>(rcc_wait(std::exchange(handle_, nullptr)));
  }

  rcc_request_t handle_ = nullptr;
};

namespace detail {
inline std::vector<rcc_request_t> release_all(std::span<Request> requests, const char* function) {
  if (requests.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    invalid_argument(function, "requests has more entries than an int counts");
  }
  std::vector<rcc_request_t> handles;
  handles.reserve(requests.size());
  for (Request& request : requests) handles.push_back(request.release());
  return handles;
}
}  // namespace detail

// Waits for every request (empty ones are skipped); all are empty afterwards. Throws the first failure.
inline void wait_all(std::span<Request> requests) {
  std::vector<rcc_request_t> handles = detail::release_all(requests, "rcc::wait_all");
  detail::check(rcc_waitall(static_cast<int>(handles.size()), handles.data()));
}

// Waits for one request to complete and returns its index (that request is then empty; a
// failure of it is thrown); std::nullopt when every request is empty.
inline std::optional<std::size_t> wait_any(std::span<Request> requests) {
  std::vector<rcc_request_t> handles = detail::release_all(requests, "rcc::wait_any");
  int index = RCC_UNDEFINED;
  const rcc_status_t status = rcc_waitany(static_cast<int>(handles.size()), handles.data(), &index);
  for (std::size_t i = 0; i < handles.size(); ++i) requests[i] = Request(handles[i]);  // the rest stay pending
  detail::check(status);
  if (index == RCC_UNDEFINED) return std::nullopt;
  return static_cast<std::size_t>(index);
}

}  // namespace rcc
