// rcc.hpp's exception: rcc::Error. Included by rcc/rcc.hpp; not meant to be included on its own.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rcc/rcc.h"

namespace rcc {

// A failed call: its rcc_status_t and its message (rcc_last_error() of the failing call, or the
// C++ layer's own for an argument it rejected). what() is "<status string>: <message>".
class Error : public std::runtime_error {
 public:
  Error(rcc_status_t status, std::string_view message)
      : std::runtime_error(std::string(rcc_status_string(status)).append(": ").append(message)),
        status_(status),
        prefix_(std::strlen(rcc_status_string(status)) + 2) {}
  // The failure the calling thread's last rcc call reported.
  explicit Error(rcc_status_t status) : Error(status, rcc_last_error()) {}

  rcc_status_t status() const noexcept { return status_; }
  // The message without the status string.
  std::string_view message() const noexcept { return std::string_view(what()).substr(prefix_); }

 private:
  rcc_status_t status_;
  std::size_t prefix_;  // characters of "<status string>: " at the start of what()
};

namespace detail {

// The one place a status turns into a throw.
inline void check(rcc_status_t status) {
  if (status != RCC_SUCCESS) throw Error(status);
}

// An argument the C++ layer rejects before calling rcc: function names the member, message the argument.
[[noreturn]] inline void invalid_argument(std::string_view function, std::string_view message) {
  throw Error(RCC_ERR_INVALID_ARGUMENT, std::string(function).append(": ").append(message));
}

}  // namespace detail

}  // namespace rcc
