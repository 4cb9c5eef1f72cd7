// Prints docs/configuration.md from the settings registry (scripts/gen-config-doc.sh).
#include <cstdio>

#include "base/settings.h"

int main() {
  std::fputs(rcc::settings::markdown().c_str(), stdout);
  return 0;
}
