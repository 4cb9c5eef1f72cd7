#include "base/cpu.h"

#include <pthread.h>

#include <cstdlib>

namespace rcc {

CpuSet CpuSet::of_this_thread() {
  CpuSet cpus;
  if (sched_getaffinity(0, sizeof cpus.set_, &cpus.set_) != 0) CPU_ZERO(&cpus.set_);
  return cpus;
}

CpuSet CpuSet::parse(const std::string& text) {
  CpuSet cpus;
  size_t at = 0;
  while (at < text.size()) {
    char* end = nullptr;
    const long first = std::strtol(text.c_str() + at, &end, 10);
    long last = first;
    if (end == text.c_str() + at || first < 0) return CpuSet();
    at = static_cast<size_t>(end - text.c_str());
    if (at < text.size() && text[at] == '-') {
      const char* start = text.c_str() + at + 1;
      last = std::strtol(start, &end, 10);
      if (end == start || last < first) return CpuSet();
      at = static_cast<size_t>(end - text.c_str());
    }
    if (last >= CPU_SETSIZE) return CpuSet();
    for (long cpu = first; cpu <= last; ++cpu) cpus.add(static_cast<int>(cpu));
    if (at < text.size()) {
      if (text[at] != ',') return CpuSet();
      ++at;
    }
  }
  return cpus;
}

std::string CpuSet::to_text() const {
  std::string text;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!has(cpu)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && has(last + 1)) ++last;
    if (!text.empty()) text += ',';
    text += std::to_string(cpu);
    if (last > cpu) text += '-' + std::to_string(last);
    cpu = last;
  }
  return text;
}

int current_cpu() { return sched_getcpu(); }

void name_this_thread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace rcc
