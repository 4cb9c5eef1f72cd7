// Error reporting: one status type (rcc_status_t) everywhere. The first function that decides an
// error calls fail(), which records the thread-local message and logs it; callers pass it up.
#pragma once

#include <string>

#include "rcc/rcc.h"

namespace rcc {

using Status = rcc_status_t;

// Records "message" as this thread's last error, logs it at WARN and returns code.
[[gnu::format(printf, 2, 3)]] Status fail(Status code, const char* format, ...);
// Like fail() but logs at INFO: for errors a caller is expected to handle (a probe that failed).
[[gnu::format(printf, 2, 3)]] Status fail_quietly(Status code, const char* format, ...);
// Sets the thread-local message without logging (to hand an error from one thread to another).
void set_last_error(const std::string& message);
const std::string& last_error();

#define RCC_RETURN_IF_ERROR(expr)                       \
  do {                                                  \
    ::rcc::Status rcc_status_ = (expr);                 \
    if (rcc_status_ != RCC_SUCCESS) return rcc_status_; \
  } while (0)

}  // namespace rcc
