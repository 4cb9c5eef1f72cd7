// rccrun's own messages on stderr, one write per line ("rccrun: ...").
#pragma once

#include <string>

namespace rccrun {

void say(const char* format, ...) __attribute__((format(printf, 1, 2)));
// "9 (SIGKILL)".
std::string signal_text(int sig);

}  // namespace rccrun
