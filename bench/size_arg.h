// Sizes on benchmark command lines: 8, 64K, 1M, 2G (binary units). Header-only, so the MPI harness
// (built by mpicxx from one file) and the Gloo harness share it with rcc-bench.
#pragma once

#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <string>

namespace rccbench {

inline bool parse_size(const std::string& text, size_t* bytes) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) return false;
  unsigned long long scale = 1;
  const std::string suffix = end;
  if (suffix == "K" || suffix == "k")
    scale = 1ull << 10;
  else if (suffix == "M" || suffix == "m")
    scale = 1ull << 20;
  else if (suffix == "G" || suffix == "g")
    scale = 1ull << 30;
  else if (!suffix.empty())
    return false;
  if (value > (1ull << 40) / scale) return false;  // 1 TiB is far past any sensible run
  *bytes = static_cast<size_t>(value * scale);
  return true;
}

}  // namespace rccbench
