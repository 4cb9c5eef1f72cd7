// Logging to stderr, filtered by RCC_DEBUG (WARN, INFO or TRACE). Lines carry rank, host and pid.
#pragma once

namespace rcc::log {

enum class Level { kWarn = 0, kInfo = 1, kTrace = 2 };

bool enabled(Level level);
[[gnu::format(printf, 2, 3)]] void write(Level level, const char* format, ...);
// Called once the rank is known, so every later line names it.
void set_rank(int rank);

}  // namespace rcc::log

#define RCC_WARN(...) ::rcc::log::write(::rcc::log::Level::kWarn, __VA_ARGS__)
#define RCC_INFO(...)                                                                                            \
  do {                                                                                                           \
    if (::rcc::log::enabled(::rcc::log::Level::kInfo)) ::rcc::log::write(::rcc::log::Level::kInfo, __VA_ARGS__); \
  } while (0)
#define RCC_TRACE(...)                                                                                             \
  do {                                                                                                             \
    if (::rcc::log::enabled(::rcc::log::Level::kTrace)) ::rcc::log::write(::rcc::log::Level::kTrace, __VA_ARGS__); \
  } while (0)
