#include "base/status.h"

#include <cstdarg>
#include <cstdio>

#include "base/log.h"

namespace rcc {
namespace {

thread_local std::string t_last_error;

// Makes the message this thread's last error and logs it at `level`.
Status record(Status code, log::Level level, const char* format, va_list args) {
  char buffer[1024];
  std::vsnprintf(buffer, sizeof buffer, format, args);
  t_last_error = buffer;
  if (log::enabled(level)) log::write(level, "%s: %s", rcc_status_string(code), buffer);
  return code;
}

}  // namespace

Status fail(Status code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  record(code, log::Level::kWarn, format, args);
  va_end(args);
  return code;
}

Status fail_quietly(Status code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  record(code, log::Level::kInfo, format, args);
  va_end(args);
  return code;
}

void set_last_error(const std::string& message) { t_last_error = message; }

const std::string& last_error() { return t_last_error; }

}  // namespace rcc

extern "C" const char* rcc_status_string(rcc_status_t status) {
  switch (status) {
    case RCC_SUCCESS: return "RCC_SUCCESS";
    case RCC_ERR_INVALID_ARGUMENT: return "RCC_ERR_INVALID_ARGUMENT";
    case RCC_ERR_INVALID_USAGE: return "RCC_ERR_INVALID_USAGE";
    case RCC_ERR_TIMEOUT: return "RCC_ERR_TIMEOUT";
    case RCC_ERR_PEER_FAILED: return "RCC_ERR_PEER_FAILED";
    case RCC_ERR_TRANSPORT: return "RCC_ERR_TRANSPORT";
    case RCC_ERR_BOOTSTRAP: return "RCC_ERR_BOOTSTRAP";
    case RCC_ERR_TRUNCATED: return "RCC_ERR_TRUNCATED";
    case RCC_ERR_NO_MEMORY: return "RCC_ERR_NO_MEMORY";
    case RCC_ERR_NO_DEVICE: return "RCC_ERR_NO_DEVICE";
    case RCC_ERR_UNSUPPORTED: return "RCC_ERR_UNSUPPORTED";
    case RCC_ERR_ABORTED: return "RCC_ERR_ABORTED";
    case RCC_ERR_MISMATCH: return "RCC_ERR_MISMATCH";
    case RCC_ERR_INTERNAL: return "RCC_ERR_INTERNAL";
    case RCC_ERR_CANCELLED: return "RCC_ERR_CANCELLED";
  }
  return "RCC_ERR_UNKNOWN_STATUS";
}

extern "C" const char* rcc_last_error(void) { return rcc::t_last_error.c_str(); }
