#include "base/log.h"

#include <unistd.h>

#include <strings.h>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "base/settings.h"

namespace rcc::log {
namespace {

std::atomic<int> g_rank{-1};

Level configured_level() {
  static const Level level = [] {
    // Not settings::choice: its error would log, and the level is what is being decided. A value
    // RCC_DEBUG does not accept is said once on stderr, in the registry's message shape.
    const settings::Setting& setting = settings::find("RCC_DEBUG");
    const char* value = settings::raw(setting);
    if (strcasecmp(value, "INFO") == 0) return Level::kInfo;
    if (strcasecmp(value, "TRACE") == 0) return Level::kTrace;
    if (strcasecmp(value, "WARN") != 0) {
      std::fprintf(stderr, "rcc WARN RCC_ERR_INVALID_ARGUMENT: RCC_DEBUG='%s' is not %s; logging at WARN\n", value,
                   settings::allowed(setting).c_str());
    }
    return Level::kWarn;
  }();
  return level;
}

const char* level_name(Level level) {
  switch (level) {
    case Level::kWarn: return "WARN";
    case Level::kInfo: return "INFO";
    case Level::kTrace: return "TRACE";
  }
  return "?";
}

}  // namespace

bool enabled(Level level) { return level <= configured_level(); }

void set_rank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

void write(Level level, const char* format, ...) {
  if (!enabled(level)) return;
  static char host[64] = {0};
  if (host[0] == 0 && gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "?");
  char message[1536];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  // One write() per line so lines of concurrent ranks do not interleave.
  char line[1700];
  int rank = g_rank.load(std::memory_order_relaxed);
  int n = rank >= 0 ? std::snprintf(line, sizeof line, "rcc %s:%d rank %d %s %s\n", host, getpid(), rank,
                                    level_name(level), message)
                    : std::snprintf(line, sizeof line, "rcc %s:%d %s %s\n", host, getpid(), level_name(level), message);
  if (n > 0) {
    size_t len = static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1;
    ssize_t ignored = ::write(STDERR_FILENO, line, len);
    (void)ignored;
  }
}

}  // namespace rcc::log
