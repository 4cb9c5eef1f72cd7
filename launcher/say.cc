#include "say.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace rccrun {

void say(const char* format, ...) {
  char line[2048];
  va_list args;
  va_start(args, format);
  int n = std::snprintf(line, sizeof line, "rccrun: ");
  std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n) - 1, format, args);
  va_end(args);
  std::string text = std::string(line) + "\n";
  ssize_t ignored = write(STDERR_FILENO, text.data(), text.size());
  (void)ignored;
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return std::to_string(sig) + (abbrev ? std::string(" (SIG") + abbrev + ")" : std::string());
}

}  // namespace rccrun
